// Hosts: a searchable table that stays smooth at 10,000 rows: only the rows in view
// (and a few around them) exist in the DOM, placed over a spacer as tall as all the
// rows. Live from host events; read again in full every 10 s and after a reconnect.
// The search is in the URL (?q=).

import { h, ago, errorBox, every } from '../dom.js';

/** Row height in CSS pixels (matches .vrow in style.css). */
const ROW = 32;
/** The list box's least height in CSS pixels (a few rows). */
const MIN_HEIGHT = 4 * ROW;
/** Room kept below the list box: the page's bottom padding (2em) and the box's border. */
const BOTTOM = 40;
/** Rows drawn beyond the visible ones, each side. */
const OVERSCAN = 8;

/**
 * @typedef {object} HostRow
 * @property {string} mac
 * @property {number | null} vlan
 * @property {{dpid: string, port: number} | null} attachment
 * @property {string[]} ips
 * @property {number} seenAt Date.now() when it was last seen
 * @property {string} text what the search looks in (lower case)
 */

/** @param {HostRow} r */
function searchText(r) {
  const at = r.attachment ? `${r.attachment.dpid} ${r.attachment.dpid}:${r.attachment.port} port ${r.attachment.port}` : '';
  return `${r.mac} ${r.ips.join(' ')} ${r.vlan ?? ''} ${at}`.toLowerCase();
}

/** @param {string} mac @param {number | null} vlan */
const keyOf = (mac, vlan) => `${mac}/${vlan ?? ''}`;

/**
 * @param {HTMLElement} el
 * @param {import('../app.js').PageContext} ctx
 */
export function mount(el, ctx) {
  ctx.setTitle('Hosts');
  const search = h('input', { id: 'host-search', type: 'search', class: 'grow', autocomplete: 'off', value: ctx.params.get('q') || '' });
  const summary = h('p', { class: 'summary', 'aria-live': 'polite' }, 'Loading…');
  const error = h('div');
  const spacer = h('div', { class: 'spacer', role: 'presentation' });
  const viewport = h('div', { class: 'viewport', role: 'rowgroup', tabindex: '0', 'aria-label': 'Hosts, scrollable' }, spacer);
  const cols = ['MAC', 'IP addresses', 'VLAN', 'Attached to', 'Last seen'];
  const table = h(
    'div',
    { id: 'hosts', role: 'table', 'aria-label': 'Hosts', 'aria-rowcount': '0', class: 'vtable' },
    h('div', { role: 'rowgroup' }, h('div', { role: 'row', class: 'vhead' }, ...cols.map((c) => h('div', { role: 'columnheader' }, c)))),
    viewport,
  );
  el.append(
    h('h1', {}, 'Hosts'),
    h('div', { class: 'row' }, h('label', { for: 'host-search' }, 'Search hosts'), search),
    summary,
    error,
    table,
  );

  /** @type {Map<string, HostRow>} */
  const hosts = new Map();
  /** @type {HostRow[]} */
  let shown = [];
  /** @type {HTMLElement[]} */
  let pool = [];
  let frame = 0;
  /** @type {number | undefined} */
  let refilterTimer;

  function refilter() {
    const q = search.value.trim().toLowerCase();
    const all = [...hosts.values()];
    shown = q ? all.filter((r) => r.text.includes(q)) : all;
    shown.sort((a, b) => (a.mac < b.mac ? -1 : a.mac > b.mac ? 1 : (a.vlan ?? -1) - (b.vlan ?? -1)));
    table.setAttribute('aria-rowcount', String(shown.length));
    spacer.style.height = `${shown.length * ROW}px`;
    fit();
    summary.textContent = q
      ? `${shown.length.toLocaleString('en-US')} of ${hosts.size.toLocaleString('en-US')} hosts match “${search.value.trim()}”.`
      : `${hosts.size.toLocaleString('en-US')} hosts.`;
    draw();
  }

  /** Re-filters soon (events come in bursts). */
  function refilterSoon() {
    if (refilterTimer === undefined) refilterTimer = window.setTimeout(() => ((refilterTimer = undefined), refilter()), 200);
  }

  /**
   * Sizes the list box to its rows, at most to the window's remaining height (at least
   * MIN_HEIGHT): every row shows when there is room, a long list scrolls (virtualised)
   * within the window.
   */
  function fit() {
    const top = viewport.getBoundingClientRect().top + window.scrollY;
    const room = Math.max(MIN_HEIGHT, window.innerHeight - top - BOTTOM);
    const want = Math.max(MIN_HEIGHT, shown.length * ROW);
    const px = `${Math.min(want, room)}px`;
    if (viewport.style.height !== px) viewport.style.height = px;
  }

  /** Draws the rows in view, reusing the row elements. */
  function draw() {
    const top = viewport.scrollTop;
    const height = viewport.clientHeight || 600;
    const first = Math.max(0, Math.floor(top / ROW) - OVERSCAN);
    const last = Math.min(shown.length, Math.ceil((top + height) / ROW) + OVERSCAN);
    const n = Math.max(0, last - first);
    while (pool.length < n) {
      const row = h('div', { role: 'row', class: 'vrow' }, ...cols.map(() => h('div', { role: 'cell' })));
      pool.push(row);
      spacer.append(row);
    }
    const now = Date.now();
    for (let i = 0; i < pool.length; i++) {
      const row = pool[i];
      if (i >= n) {
        row.hidden = true;
        continue;
      }
      const r = shown[first + i];
      row.hidden = false;
      row.style.top = `${(first + i) * ROW}px`;
      row.setAttribute('aria-rowindex', String(first + i + 1));
      const c = row.children;
      c[0].textContent = r.mac;
      c[1].textContent = r.ips.join(', ') || '—';
      c[2].textContent = r.vlan === null ? '—' : String(r.vlan);
      c[3].textContent = r.attachment ? `${r.attachment.dpid} port ${r.attachment.port}` : '—';
      c[4].textContent = `${ago((now - r.seenAt) / 1000)} ago`;
    }
  }

  viewport.addEventListener('scroll', () => {
    if (!frame) frame = requestAnimationFrame(() => ((frame = 0), draw()));
  });
  viewport.addEventListener('keydown', (e) => {
    const page = Math.max(1, Math.floor(viewport.clientHeight / ROW) - 1) * ROW;
    const step = { ArrowDown: ROW, ArrowUp: -ROW, PageDown: page, PageUp: -page }[e.key];
    if (step) {
      viewport.scrollTop += step;
      e.preventDefault();
    } else if (e.key === 'Home' || e.key === 'End') {
      viewport.scrollTop = e.key === 'Home' ? 0 : viewport.scrollHeight;
      e.preventDefault();
    }
  });
  const resize = new ResizeObserver(() => draw());
  resize.observe(viewport);
  const onWindowResize = () => {
    fit();
    draw();
  };
  window.addEventListener('resize', onWindowResize);

  /** @type {number | undefined} */
  let urlTimer;
  search.addEventListener('input', () => {
    refilter();
    viewport.scrollTop = 0;
    clearTimeout(urlTimer);
    urlTimer = window.setTimeout(() => {
      const q = search.value.trim();
      ctx.navigate(q ? `/hosts?q=${encodeURIComponent(q)}` : '/hosts', { replace: true });
    }, 300);
  });

  async function load() {
    try {
      /** @type {any[]} */
      const list = await ctx.api.get('hosts');
      const now = Date.now();
      hosts.clear();
      for (const x of list) {
        /** @type {HostRow} */
        const r = { mac: x.mac, vlan: x.vlan ?? null, attachment: x.attachment, ips: x.ips, seenAt: now - x.last_seen_secs_ago * 1000, text: '' };
        r.text = searchText(r);
        hosts.set(keyOf(r.mac, r.vlan), r);
      }
      error.replaceChildren();
      refilter();
    } catch (e) {
      error.replaceChildren(errorBox(e));
    }
  }

  /** @param {any} ev a host event */
  function onHost(ev) {
    const k = keyOf(ev.mac, ev.vlan ?? null);
    const at = typeof ev.time === 'number' ? ev.time * 1000 : Date.now();
    let r = hosts.get(k);
    if (ev.event === 'removed') {
      hosts.delete(k);
    } else {
      if (!r) {
        r = { mac: ev.mac, vlan: ev.vlan ?? null, attachment: null, ips: [], seenAt: at, text: '' };
        hosts.set(k, r);
      }
      if (ev.attachment) r.attachment = ev.attachment;
      for (const ip of ev.ips || []) if (!r.ips.includes(ip)) r.ips.push(ip);
      r.seenAt = at;
      r.text = searchText(r);
    }
    refilterSoon();
  }

  const stop = every(load, 10000);
  const offs = [ctx.live.subscribe('host', onHost), ctx.live.onReconnect(() => void load())];
  const tick = window.setInterval(draw, 5000); // "last seen" ages
  return {
    update(params) {
      const q = params.get('q') || '';
      if (q !== search.value.trim()) {
        search.value = q;
        refilter();
      }
    },
    unmount() {
      stop();
      offs.forEach((f) => f());
      clearInterval(tick);
      clearTimeout(refilterTimer);
      clearTimeout(urlTimer);
      cancelAnimationFrame(frame);
      resize.disconnect();
      window.removeEventListener('resize', onWindowResize);
      pool = [];
    },
  };
}
