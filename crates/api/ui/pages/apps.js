// Apps: state, order, handler timings, counters, quarantine reasons; start, stop,
// restart, move up or down (PUT /apps/order), load a WebAssembly module (POST /apps)
// and unload it. Live from app events; read again every 3 s.

import { h, num, errorBox, every } from '../dom.js';

/**
 * @typedef {object} App
 * @property {string} name
 * @property {number} order
 * @property {'running' | 'stopped' | 'quarantined'} state
 * @property {string[]} requires
 * @property {string[]} required_by
 * @property {boolean} loaded
 * @property {number} starts
 * @property {number} panics
 * @property {{handler: string, panic: string, dpid?: string | null} | null} reason
 * @property {{handler: string, calls: number, time_secs: number}[]} handlers
 * @property {{name: string, help: string, value: number}[]} counters
 */

/** @param {number} secs */
function micros(secs) {
  const us = secs * 1e6;
  return us >= 1000 ? `${(us / 1000).toFixed(1)} ms` : `${us.toFixed(us < 10 ? 1 : 0)} µs`;
}

/**
 * @param {HTMLElement} el
 * @param {import('../app.js').PageContext} ctx
 */
export function mount(el, ctx) {
  ctx.setTitle('Apps');
  const status = h('div', { role: 'status' });
  const tbody = h('tbody');
  const file = h('input', { id: 'app-file', type: 'file', accept: '.wasm,application/wasm' });
  const name = h('input', { id: 'app-name', type: 'text', autocomplete: 'off', pattern: '[A-Za-z0-9_\\-]{1,64}', required: true });
  const loadError = h('div');
  el.append(
    h('h1', {}, 'Apps'),
    h('p', { class: 'summary' }, 'Apps run in this order for each event; an app that panics is quarantined (stopped) with the reason.'),
    status,
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { id: 'apps' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            h('th', { scope: 'col', class: 'num' }, 'Order'),
            h('th', { scope: 'col' }, 'App'),
            h('th', { scope: 'col' }, 'State'),
            h('th', { scope: 'col' }, 'Handlers (calls, mean time)'),
            h('th', { scope: 'col' }, 'Counters'),
            h('th', { scope: 'col' }, 'Actions'),
          ),
        ),
        tbody,
      ),
    ),
    h('h2', {}, 'Load a WebAssembly app'),
    h(
      'form',
      { class: 'row', onsubmit: (/** @type {Event} */ e) => (e.preventDefault(), void loadModule()) },
      h('label', { for: 'app-file' }, 'WebAssembly module'),
      file,
      h('label', { for: 'app-name' }, 'App name'),
      name,
      h('button', { type: 'submit', class: 'primary' }, 'Load'),
    ),
    loadError,
  );
  /** @type {App[]} */
  let apps = [];

  /** @param {App} a */
  function row(a) {
    const i = apps.indexOf(a);
    /**
     * @param {string} label
     * @param {string} aria
     * @param {() => Promise<unknown>} fn
     * @param {boolean} enabled
     */
    const btn = (label, aria, fn, enabled) =>
      h('button', { type: 'button', 'aria-label': aria, disabled: !enabled, onclick: () => void act(aria, fn) }, label);
    const state = h('td', { class: `state state-${a.state}`, tabindex: '-1' }, a.state);
    const reason = a.reason
      ? h('div', { class: 'error' }, `Quarantined in ${a.reason.handler}${a.reason.dpid ? ` for ${a.reason.dpid}` : ''}: ${a.reason.panic}`)
      : null;
    const handlers = a.handlers.length
      ? h('ul', { class: 'plain' }, ...a.handlers.map((x) => h('li', {}, `${x.handler}: ${num(x.calls)}, ${x.calls ? micros(x.time_secs / x.calls) : '—'}`)))
      : h('span', { class: 'muted' }, 'none');
    const counters = a.counters.length
      ? h('ul', { class: 'plain' }, ...a.counters.map((c) => h('li', { title: c.help }, `${c.name}: ${num(c.value)}`)))
      : h('span', { class: 'muted' }, '—');
    const path = `apps/${encodeURIComponent(a.name)}`;
    return h(
      'tr',
      { 'data-app': a.name },
      h('td', { class: 'num' }, String(a.order)),
      h(
        'td',
        {},
        h('strong', {}, a.name),
        a.requires.length ? h('div', { class: 'muted' }, `requires ${a.requires.join(', ')}`) : null,
        h('div', { class: 'muted' }, `${a.starts} start${a.starts === 1 ? '' : 's'}, ${a.panics} panic${a.panics === 1 ? '' : 's'}${a.loaded ? ', loaded module' : ''}`),
      ),
      state,
      h('td', {}, handlers, reason),
      h('td', {}, counters),
      h(
        'td',
        { class: 'actions' },
        btn('Start', `Start ${a.name}`, () => ctx.api.post(`${path}/start`), a.state !== 'running'),
        btn('Stop', `Stop ${a.name}`, () => ctx.api.post(`${path}/stop`), a.state === 'running'),
        btn('Restart', `Restart ${a.name}`, () => ctx.api.post(`${path}/restart`), true),
        btn('Move up', `Move up ${a.name}`, () => move(i, -1), i > 0),
        btn('Move down', `Move down ${a.name}`, () => move(i, 1), i < apps.length - 1),
        a.loaded ? btn('Unload', `Unload ${a.name}`, () => ctx.api.del(path), true) : null,
      ),
    );
  }

  /** @param {number} i @param {number} by */
  function move(i, by) {
    const names = apps.map((a) => a.name);
    const [n] = names.splice(i, 1);
    names.splice(i + by, 0, n);
    return ctx.api.put('apps/order', names);
  }

  /**
   * Runs an action; the focus goes back to the same row's button after the redraw.
   * @param {string} label
   * @param {() => Promise<unknown>} fn
   */
  async function act(label, fn) {
    status.replaceChildren();
    try {
      await fn();
      status.replaceChildren(h('p', { class: 'ok' }, `Done: ${label}.`));
    } catch (e) {
      status.replaceChildren(errorBox(e));
    }
    await load();
    // Keep the keyboard where it was: on the same button if it is still enabled, else
    // on the row's state (which says what happened), just before the row's buttons.
    const appName = label.replace(/^(Start|Stop|Restart|Move up|Move down|Unload) /, '');
    const r = tbody.querySelector(`tr[data-app="${CSS.escape(appName)}"]`);
    if (r) {
      const same = /** @type {HTMLButtonElement | null} */ (r.querySelector(`button[aria-label="${CSS.escape(label)}"]`));
      const target = same && !same.disabled ? same : /** @type {HTMLElement | null} */ (r.querySelector('td.state'));
      if (target) target.focus();
    }
  }

  async function load() {
    try {
      apps = await ctx.api.get('apps');
      apps.sort((a, b) => a.order - b.order);
      // The rows are made again: the focus goes back to the same button (or state cell).
      const active = document.activeElement;
      const inRow = active && tbody.contains(active) ? active.closest('tr') : null;
      const app = inRow ? inRow.dataset.app : null;
      const label = active ? active.getAttribute('aria-label') : null;
      tbody.replaceChildren(...apps.map(row));
      if (app) {
        const r = tbody.querySelector(`tr[data-app="${CSS.escape(app)}"]`);
        const b = r && label ? /** @type {HTMLButtonElement | null} */ (r.querySelector(`button[aria-label="${CSS.escape(label)}"]`)) : null;
        const target = b && !b.disabled ? b : r ? /** @type {HTMLElement | null} */ (r.querySelector('td.state')) : null;
        if (target) target.focus();
      }
    } catch (e) {
      status.replaceChildren(errorBox(e));
    }
  }

  async function loadModule() {
    loadError.replaceChildren();
    const f = file.files && file.files[0];
    const n = name.value.trim();
    if (!f || !n) {
      loadError.replaceChildren(errorBox('Choose a .wasm file and give the app a name.'));
      return;
    }
    try {
      await ctx.api.request('POST', `apps?name=${encodeURIComponent(n)}`, { body: await f.arrayBuffer(), type: 'application/wasm' });
      status.replaceChildren(h('p', { class: 'ok' }, `Loaded ${n}.`));
      name.value = '';
      file.value = '';
      await load();
    } catch (e) {
      loadError.replaceChildren(errorBox(e));
    }
  }

  // A redraw replaces the rows: skip the periodic one while the pointer or the keyboard is in the table.
  const stop = every(() => (tbody.contains(document.activeElement) ? null : load()), 3000);
  const offs = [ctx.live.subscribe('app', () => void load()), ctx.live.onReconnect(() => void load())];
  return {
    update() {},
    unmount() {
      stop();
      offs.forEach((f) => f());
    },
  };
}
