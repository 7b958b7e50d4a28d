// Switches: every connected switch, live from switch and port events, its PACKET_IN
// rate read again every 2 s.

import { h, num, rate, since, errorBox, every, setText } from '../dom.js';

/** @typedef {{dpid: string, version: string, peer: string, connected_since: number, n_ports: number, ports_up: number, packet_ins_per_sec: number}} SwitchSummary */

/**
 * @param {HTMLElement} el
 * @param {import('../app.js').PageContext} ctx
 */
export function mount(el, ctx) {
  ctx.setTitle('Switches');
  const summary = h('p', { class: 'summary', 'aria-live': 'polite' }, 'Loading…');
  const tbody = h('tbody');
  const table = h(
    'table',
    { id: 'switches' },
    h('caption', { class: 'muted', text: 'Connected switches' }),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        h('th', { scope: 'col' }, 'DPID'),
        h('th', { scope: 'col' }, 'Version'),
        h('th', { scope: 'col' }, 'Address'),
        h('th', { scope: 'col', class: 'num' }, 'Ports up / total'),
        h('th', { scope: 'col', class: 'num' }, 'PACKET_INs/s'),
        h('th', { scope: 'col' }, 'Connected since'),
      ),
    ),
    tbody,
  );
  const error = h('div');
  /** @type {Map<string, HTMLTableRowElement>} */
  const rows = new Map();
  el.append(h('h1', {}, 'Switches'), summary, error, h('div', { class: 'table-wrap' }, table));

  /** @param {SwitchSummary[]} list */
  function render(list) {
    list.sort((a, b) => a.dpid.localeCompare(b.dpid));
    const up = list.reduce((n, s) => n + s.ports_up, 0);
    const ports = list.reduce((n, s) => n + s.n_ports, 0);
    summary.textContent = `${num(list.length)} switch${list.length === 1 ? '' : 'es'} connected; ${num(up)} of ${num(ports)} ports up.`;
    // Rows are kept and updated in place, so a focused link keeps its focus.
    const seen = new Set();
    /** @type {HTMLTableRowElement | null} */
    let prev = null;
    for (const s of list) {
      seen.add(s.dpid);
      let row = rows.get(s.dpid);
      if (!row) {
        row = h('tr', { 'data-dpid': s.dpid });
        row.append(
          h('td', { class: 'mono' }, h('a', { href: `/switches/${s.dpid}` }, s.dpid)),
          h('td'), h('td', { class: 'mono' }), h('td', { class: 'num' }), h('td', { class: 'num' }), h('td'),
        );
        rows.set(s.dpid, row);
      }
      const cells = row.cells;
      setText(cells[1], s.version);
      setText(cells[2], s.peer);
      setText(cells[3], `${s.ports_up} / ${s.n_ports}`);
      setText(cells[4], rate(s.packet_ins_per_sec || 0));
      setText(cells[5], since(s.connected_since));
      const want = prev ? prev.nextSibling : tbody.firstChild;
      if (want !== row) tbody.insertBefore(row, want);
      prev = row;
    }
    for (const [dpid, row] of rows) {
      if (!seen.has(dpid)) {
        row.remove();
        rows.delete(dpid);
      }
    }
  }

  async function load() {
    try {
      render(await ctx.api.get('switches'));
      error.replaceChildren();
    } catch (e) {
      error.replaceChildren(errorBox(e));
    }
  }

  // Events say something changed; the list is read again (at most every 250 ms).
  /** @type {number | undefined} */
  let pending;
  const soon = () => {
    if (pending === undefined) pending = window.setTimeout(() => ((pending = undefined), void load()), 250);
  };
  const stop = every(load, 2000);
  const offs = [ctx.live.subscribe('switch', soon), ctx.live.subscribe('port', soon), ctx.live.onReconnect(soon)];
  return {
    update() {},
    unmount() {
      stop();
      clearTimeout(pending);
      offs.forEach((f) => f());
    },
  };
}
