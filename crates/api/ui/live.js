// The live event stream: GET /api/v1/events read with fetch and a stream reader
// (EventSource cannot send an Authorization header), its events handed to subscribers
// by type. When the stream drops (or /api/v1/healthz stops answering) the banner
// #stale-banner says since when the data is stale; the stream is opened again with a
// backoff of at most 2 s, and once it is back the onReconnect hooks run so pages read
// their resources again (events are not replayed), then the banner goes.

import { authHeaders, askToken } from './api.js';

/** Heartbeat interval asked of the server, in seconds. */
const HEARTBEAT = 5;
/** Silence after which the stream is taken for dead, in ms (2.5 heartbeats). */
const SILENCE_MS = 12500;
/** Backoff steps between attempts, in ms (never more than 2 s). */
const BACKOFF = [250, 500, 1000, 2000];
/** How often /api/v1/healthz is polled, in ms. */
const HEALTH_MS = 3000;

/** @typedef {(data: any, type: string) => void} Listener */

/** @type {Map<string, Set<Listener>>} */
const listeners = new Map();
/** @type {Set<() => void>} */
const reconnectHooks = new Set();

const state = {
  /** The stream is open and the server answers. */
  connected: false,
  /** Date.now() when data was last known current (bytes seen, or a healthz answer). */
  freshAt: Date.now(),
  /** The stream was open once: the next open is a reconnect. */
  wasOpen: false,
  /** Attempts since the last open. */
  failures: 0,
  started: false,
  /** @type {AbortController | null} */
  abort: null,
  /** @type {number | undefined} */
  watchdog: undefined,
};

/** @param {number} t */
function clock(t) {
  return new Date(t).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });
}

function banner() {
  return /** @type {HTMLElement | null} */ (document.getElementById('stale-banner'));
}

/** Shows the banner: data as of the last moment it was known fresh. */
function showStale() {
  const b = banner();
  if (!b) return;
  b.textContent = `Disconnected from Pharos — data as of ${clock(state.freshAt)}. Reconnecting…`;
  b.hidden = false;
  document.body.classList.add('stale');
}

function hideStale() {
  const b = banner();
  if (b) b.hidden = true;
  document.body.classList.remove('stale');
}

/**
 * @param {string} type
 * @param {string} data
 */
function dispatch(type, data) {
  // Events were skipped (this client fell behind): pages read their resources again,
  // as after a reconnect.
  if (type === 'lagged') runReconnectHooks();
  const set = listeners.get(type);
  if (!set || set.size === 0) return;
  let v;
  try {
    v = JSON.parse(data);
  } catch {
    v = data;
  }
  for (const fn of [...set]) {
    try {
      fn(v, type);
    } catch (e) {
      console.error(`a ${type} event listener failed`, e);
    }
  }
}

function runReconnectHooks() {
  for (const fn of [...reconnectHooks]) {
    try {
      fn();
    } catch (e) {
      console.error('a reconnect hook failed', e);
    }
  }
}

function armWatchdog() {
  clearTimeout(state.watchdog);
  state.watchdog = window.setTimeout(() => {
    if (state.abort) state.abort.abort();
  }, SILENCE_MS);
}

/** Marks the stream down (banner shown), once per drop. */
function down() {
  if (state.connected) state.connected = false;
  showStale();
}

/** Opens the stream and reads it until it ends; then schedules the next attempt. */
async function connect() {
  const abort = new AbortController();
  state.abort = abort;
  try {
    const res = await fetch(`/api/v1/events?heartbeat=${HEARTBEAT}`, {
      headers: { Accept: 'text/event-stream', ...authHeaders() },
      signal: abort.signal,
      cache: 'no-store',
    });
    if (res.status === 401 || res.status === 403) {
      const token = await askToken(res.status === 403 ? 'That token was refused.' : '');
      if (!token) throw new Error('no token');
      throw new Error('retry with the token');
    }
    if (!res.ok || !res.body) throw new Error(`events: ${res.status}`);
    const reconnect = state.wasOpen;
    state.connected = true;
    state.wasOpen = true;
    state.failures = 0;
    state.freshAt = Date.now();
    armWatchdog();
    if (reconnect) runReconnectHooks();
    hideStale();
    await read(res.body);
  } catch (e) {
    // A dropped stream is the normal way to get here; the banner says it.
  } finally {
    clearTimeout(state.watchdog);
    state.abort = null;
  }
  down();
  const wait = BACKOFF[Math.min(state.failures, BACKOFF.length - 1)];
  state.failures++;
  setTimeout(() => void connect(), wait);
}

/**
 * Parses the SSE text: `event:` and `data:` lines, a blank line ends an event, `:`
 * lines are comments (heartbeats).
 * @param {ReadableStream<Uint8Array>} body
 */
async function read(body) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  let type = 'message';
  /** @type {string[]} */
  let data = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    state.freshAt = Date.now();
    armWatchdog();
    buf += decoder.decode(value, { stream: true });
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      let line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (line.endsWith('\r')) line = line.slice(0, -1);
      if (line === '') {
        if (data.length) dispatch(type, data.join('\n'));
        type = 'message';
        data = [];
      } else if (line.startsWith(':')) {
        // a comment: the heartbeat
      } else {
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        let val = colon < 0 ? '' : line.slice(colon + 1);
        if (val.startsWith(' ')) val = val.slice(1);
        if (field === 'event') type = val;
        else if (field === 'data') data.push(val);
      }
    }
  }
}

/** Polls healthz: a failure shows the banner even before the stream notices. */
async function health() {
  try {
    const res = await fetch('/api/v1/healthz', { cache: 'no-store' });
    if (!res.ok) throw new Error(String(res.status));
    if (state.connected) state.freshAt = Date.now();
  } catch {
    if (state.connected && state.abort) state.abort.abort();
    showStale();
  }
}

/** The event stream pages use (ctx.live). */
export const live = {
  /**
   * Calls `fn(data, type)` for each event of `type` (`switch`, `port`, `link`,
   * `host`, `app`, `lagged`). Returns the function that unsubscribes.
   * @param {string} type
   * @param {Listener} fn
   * @returns {() => void}
   */
  subscribe(type, fn) {
    let set = listeners.get(type);
    if (!set) listeners.set(type, (set = new Set()));
    set.add(fn);
    return () => set.delete(fn);
  },
  /**
   * Calls `fn` each time the stream is back after a drop, or said this client
   * lagged (events were missed: read the resources again). Returns the function
   * that unsubscribes.
   * @param {() => void} fn
   * @returns {() => void}
   */
  onReconnect(fn) {
    reconnectHooks.add(fn);
    return () => reconnectHooks.delete(fn);
  },
  /** @returns {boolean} whether the stream is open */
  isConnected() {
    return state.connected;
  },
  /** Opens the stream (app.js calls it once). */
  start() {
    if (state.started) return;
    state.started = true;
    void connect();
    setInterval(() => void health(), HEALTH_MS);
  },
};
