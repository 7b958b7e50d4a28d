// The REST client: JSON in and out, the API's `{"error": "..."}` refusals thrown as
// ApiError, and the token. Reads go without a token until one is asked for (on
// loopback they need none); a 401 or 403 opens the token dialog (index.html's
// #token-dialog) and the request is sent again with the token given. The token is kept
// in sessionStorage: asked once per browser session.

const TOKEN_KEY = 'pharos-api-token';

/** A refusal from the API (or the network), with the server's message. */
export class ApiError extends Error {
  /**
   * @param {number} status the HTTP status (0: no answer)
   * @param {string} message the server's `error` text, or what went wrong
   */
  constructor(status, message) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
  }
}

/** @returns {string | null} */
function storedToken() {
  try {
    return sessionStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

/** @returns {Record<string, string>} the Authorization header, when a token is known */
export function authHeaders() {
  const t = storedToken();
  return t ? { Authorization: `Bearer ${t}` } : {};
}

/** @type {Promise<string | null> | null} */
let asking = null;

/**
 * Opens the token dialog (one at a time) and resolves to the token given, or null
 * when cancelled. `message` says why it is asked again (a 403's error).
 * @param {string} [message]
 * @returns {Promise<string | null>}
 */
export function askToken(message) {
  if (asking) return asking;
  const dialog = /** @type {HTMLDialogElement | null} */ (document.getElementById('token-dialog'));
  if (!dialog) return Promise.resolve(null);
  const form = /** @type {HTMLFormElement} */ (dialog.querySelector('form'));
  const input = /** @type {HTMLInputElement} */ (dialog.querySelector('#token-input'));
  const error = /** @type {HTMLElement} */ (dialog.querySelector('#token-error'));
  const cancel = /** @type {HTMLButtonElement} */ (dialog.querySelector('#token-cancel'));
  error.hidden = !message;
  error.textContent = message || '';
  input.value = '';
  asking = new Promise((resolve) => {
    /** @param {string | null} v */
    const done = (v) => {
      form.removeEventListener('submit', onSubmit);
      cancel.removeEventListener('click', onCancel);
      dialog.removeEventListener('cancel', onCancel);
      if (dialog.open) dialog.close();
      asking = null;
      resolve(v);
    };
    /** @param {Event} e */
    const onSubmit = (e) => {
      e.preventDefault();
      const v = input.value.trim();
      if (!v) return;
      try {
        sessionStorage.setItem(TOKEN_KEY, v);
      } catch {
        /* private mode: the token lasts this page */
      }
      done(v);
    };
    /** @param {Event} e */
    const onCancel = (e) => {
      e.preventDefault();
      done(null);
    };
    form.addEventListener('submit', onSubmit);
    cancel.addEventListener('click', onCancel);
    dialog.addEventListener('cancel', onCancel);
    dialog.showModal();
    input.focus();
  });
  return asking;
}

/**
 * @typedef {object} RequestOptions
 * @property {unknown} [json] a body sent as JSON
 * @property {BodyInit} [body] a raw body (with `type`)
 * @property {string} [type] the raw body's content type
 * @property {AbortSignal} [signal]
 */

/**
 * Sends a request to the API. `path` is under /api/v1 unless it starts with `/`.
 * Resolves to the parsed JSON (or text, or null for an empty body).
 * @param {string} method
 * @param {string} path
 * @param {RequestOptions} [opts]
 * @returns {Promise<any>}
 */
export async function request(method, path, opts = {}) {
  const url = path.startsWith('/') ? path : `/api/v1/${path}`;
  for (let attempt = 0; ; attempt++) {
    /** @type {Record<string, string>} */
    const headers = { Accept: 'application/json', ...authHeaders() };
    /** @type {BodyInit | undefined} */
    let body;
    if (opts.json !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(opts.json);
    } else if (opts.body !== undefined) {
      if (opts.type) headers['Content-Type'] = opts.type;
      body = opts.body;
    }
    /** @type {Response} */
    let res;
    try {
      res = await fetch(url, { method, headers, body, signal: opts.signal });
    } catch (e) {
      if (e instanceof DOMException && e.name === 'AbortError') throw e;
      throw new ApiError(0, `Pharos did not answer (${method} ${url})`);
    }
    if ((res.status === 401 || res.status === 403) && attempt < 3) {
      const why = await errorText(res);
      const token = await askToken(res.status === 403 ? why : '');
      if (token) continue;
      throw new ApiError(res.status, why);
    }
    if (!res.ok) throw new ApiError(res.status, await errorText(res));
    const text = await res.text();
    if (!text) return null;
    const type = res.headers.get('Content-Type') || '';
    return type.includes('json') ? JSON.parse(text) : text;
  }
}

/**
 * The error text of a refusal: the `error` field of the API's JSON, else the body.
 * @param {Response} res
 */
async function errorText(res) {
  const text = await res.text().catch(() => '');
  try {
    const v = JSON.parse(text);
    if (v && typeof v.error === 'string') return v.error;
  } catch {
    /* not JSON */
  }
  return text || `${res.status} ${res.statusText}`;
}

/** The client pages use (ctx.api). */
export const api = {
  request,
  askToken,
  authHeaders,
  ApiError,
  /** @param {string} path @param {{signal?: AbortSignal}} [o] */
  get: (path, o = {}) => request('GET', path, o),
  /** @param {string} path @param {unknown} [json] */
  post: (path, json) => request('POST', path, { json }),
  /** @param {string} path @param {unknown} [json] */
  put: (path, json) => request('PUT', path, { json }),
  /** @param {string} path @param {unknown} [json] */
  del: (path, json) => request('DELETE', path, { json }),
};
