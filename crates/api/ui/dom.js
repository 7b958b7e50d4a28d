// Small DOM and formatting helpers the pages share.

/**
 * @typedef {Record<string, string | number | boolean | null | undefined | EventListener>} Attrs
 * Attributes; `on*` keys (`onclick`) add listeners; `class`, `text` (textContent),
 * `hidden`, `disabled`, `checked`, `value` set properties; `false`/null/undefined skip.
 */

/**
 * Makes an element.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Attrs} [attrs]
 * @param {...(Node | string | number | null | undefined | false)} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === false || v === null || v === undefined) continue;
    if (k.startsWith('on') && typeof v === 'function') {
      el.addEventListener(k.slice(2), /** @type {EventListener} */ (v));
    } else if (k === 'text') {
      el.textContent = String(v);
    } else if (k === 'class') {
      el.className = String(v);
    } else if (k === 'hidden' || k === 'disabled' || k === 'checked') {
      /** @type {any} */ (el)[k] = Boolean(v);
    } else if (k === 'value') {
      /** @type {any} */ (el).value = String(v);
    } else {
      el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.append(typeof c === 'number' ? String(c) : c);
  }
  return el;
}

/**
 * A rate with a unit, readably (`1.2 k/s`).
 * @param {number} n per second
 * @param {string} [unit]
 */
export function rate(n, unit = '/s') {
  if (!Number.isFinite(n)) return '—';
  /** @type {[number, string]} */
  const [v, p] = n >= 1e9 ? [n / 1e9, 'G'] : n >= 1e6 ? [n / 1e6, 'M'] : n >= 1e3 ? [n / 1e3, 'k'] : [n, ''];
  const s = p ? v.toFixed(1) : v >= 10 || v === 0 ? v.toFixed(0) : v.toFixed(1);
  return unit.startsWith('/') ? `${s}${p}${unit}` : `${s} ${p}${unit}`;
}

/**
 * A count with thousands separators.
 * @param {number | null | undefined} n
 */
export function num(n) {
  return n === null || n === undefined ? '—' : n.toLocaleString('en-US');
}

/**
 * A byte rate in bits per second (`12.3 Mb/s`).
 * @param {number} bytesPerSec
 */
export function bits(bytesPerSec) {
  return rate(bytesPerSec * 8, 'b/s');
}

/**
 * Unix seconds as local date and time, and how long ago.
 * @param {number} unix
 */
export function since(unix) {
  const d = new Date(unix * 1000);
  return `${d.toLocaleString()} (${ago(Date.now() / 1000 - unix)} ago)`;
}

/**
 * A duration in seconds, short (`3 min`, `2 h 5 min`).
 * @param {number} secs
 */
export function ago(secs) {
  const s = Math.max(0, Math.round(secs));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
}

/**
 * An error message element for a failed request (role=alert).
 * @param {unknown} e
 */
export function errorBox(e) {
  return h('p', { class: 'error', role: 'alert' }, e instanceof Error ? e.message : String(e));
}

/**
 * Runs `fn` every `ms` while the page is mounted; the returned function stops it.
 * The first run is immediate. A run still in flight is not overlapped.
 * @param {() => Promise<unknown> | unknown} fn
 * @param {number} ms
 * @returns {() => void}
 */
export function every(fn, ms) {
  let stopped = false;
  /** @type {number | undefined} */
  let timer;
  const tick = async () => {
    if (stopped) return;
    try {
      await fn();
    } catch (e) {
      console.warn(e);
    }
    if (!stopped) timer = window.setTimeout(tick, ms);
  };
  void tick();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

/**
 * Updates `parent`'s children to one per item, in order, keyed: a row whose key is
 * still there is kept (and `update`d), so focus and selection inside it survive.
 * @template T
 * @param {HTMLElement} parent
 * @param {T[]} items
 * @param {(item: T) => string} key
 * @param {(item: T) => HTMLElement} create
 * @param {(el: HTMLElement, item: T) => void} update
 */
export function keyed(parent, items, key, create, update) {
  /** @type {Map<string, HTMLElement>} */
  const old = new Map();
  for (const c of [...parent.children]) {
    const k = /** @type {HTMLElement} */ (c).dataset.key;
    if (k !== undefined) old.set(k, /** @type {HTMLElement} */ (c));
  }
  /** @type {Element | null} */
  let prev = null;
  for (const item of items) {
    const k = key(item);
    let el = old.get(k);
    if (el) old.delete(k);
    else {
      el = create(item);
      el.dataset.key = k;
    }
    update(el, item);
    const want = prev ? prev.nextElementSibling : parent.firstElementChild;
    if (want !== el) parent.insertBefore(el, want);
    prev = el;
  }
  for (const el of old.values()) el.remove();
}

/**
 * Sets an element's text if it changed.
 * @param {Element} el
 * @param {string} text
 */
export function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}
