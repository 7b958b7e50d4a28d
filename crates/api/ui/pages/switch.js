// One switch: its facts, and tabs Ports (live rates, up/down), Flows (filter, add in
// ovs-ofctl syntax with the server's error shown at its token, delete), Groups and
// Meters (OpenFlow 1.3). The tab is in the URL (?tab=ports|flows|groups|meters).

import { h, num, bits, rate, since, errorBox, every, keyed, setText } from '../dom.js';
import { ApiError } from '../api.js';

const TABS = ['ports', 'flows', 'groups', 'meters'];

/**
 * @typedef {object} Tab
 * @property {() => void} stop
 */

/**
 * @param {HTMLElement} el
 * @param {import('../app.js').PageContext} ctx
 */
export function mount(el, ctx) {
  // The URL's dpid may be in any form the API reads (/switches/1); the page prints the
  // one form, 00:00:00:00:00:00:00:01, as the server sends it, once it has answered.
  let dpid = ctx.route.dpid;
  const base = `switches/${encodeURIComponent(dpid)}`;
  ctx.setTitle(`Switch ${dpid}`);
  const heading = h('span', { class: 'mono' }, dpid);
  const facts = h('dl', { class: 'facts' });
  const error = h('div');
  const tablist = h('div', { role: 'tablist', 'aria-label': 'Switch details' });
  const panel = h('div', { role: 'tabpanel', id: 'tab-panel', tabindex: '0' });
  el.append(
    h('p', {}, h('a', { href: '/switches' }, '← Switches')),
    h('h1', {}, 'Switch ', heading),
    error,
    facts,
    tablist,
    panel,
  );
  /** @type {any} */
  let detail = null;
  /** @type {(v?: unknown) => void} */
  let detailLoaded = () => {};
  /** Settles once the switch's detail was read (or could not be). */
  const detailReady = new Promise((resolve) => (detailLoaded = resolve));
  /** @type {Tab | null} */
  let tab = null;
  let tabName = '';

  /** @type {Record<string, HTMLButtonElement>} */
  const buttons = {};
  for (const name of TABS) {
    const b = h('button', {
      role: 'tab',
      id: `tab-${name}`,
      'aria-controls': 'tab-panel',
      type: 'button',
      text: name[0].toUpperCase() + name.slice(1),
      onclick: () => select(name),
      onkeydown: (/** @type {KeyboardEvent} */ e) => {
        const i = TABS.indexOf(name);
        const j = e.key === 'ArrowRight' ? i + 1 : e.key === 'ArrowLeft' ? i - 1 : -2;
        if (j === -2) return;
        e.preventDefault();
        const next = TABS[(j + TABS.length) % TABS.length];
        buttons[next].focus();
        select(next);
      },
    });
    buttons[name] = b;
    tablist.append(b);
  }

  /** @param {string} name */
  function select(name) {
    const params = new URLSearchParams(location.search);
    params.set('tab', name);
    ctx.navigate(`${location.pathname}?${params}`, { replace: true });
  }

  /** @param {URLSearchParams} params */
  function show(params) {
    const name = TABS.includes(params.get('tab') || '') ? /** @type {string} */ (params.get('tab')) : 'ports';
    if (name === tabName) return;
    if (tab) tab.stop();
    tabName = name;
    for (const n of TABS) {
      buttons[n].setAttribute('aria-selected', String(n === name));
      buttons[n].tabIndex = n === name ? 0 : -1;
    }
    panel.setAttribute('aria-labelledby', `tab-${name}`);
    panel.replaceChildren();
    const make = { ports: portsTab, flows: flowsTab, groups: groupsTab, meters: metersTab }[name];
    tab = make(panel);
  }

  async function loadDetail() {
    try {
      detail = await ctx.api.get(base);
      error.replaceChildren();
      if (typeof detail.dpid === 'string' && detail.dpid !== dpid) {
        dpid = detail.dpid;
        heading.textContent = dpid;
        ctx.setTitle(`Switch ${dpid}`);
      }
      const d = detail.description;
      const rows = [
        ['OpenFlow', detail.version],
        ['Address', detail.peer],
        ['Connected since', since(detail.connected_since)],
        ['Ports', `${detail.ports.filter((/** @type {any} */ p) => p.up).length} up of ${detail.ports.length}`],
        ['Tables', String(detail.features.n_tables)],
        ['PACKET_INs/s', detail.counters ? rate(detail.counters.packet_ins_per_sec) : '—'],
      ];
      if (d) rows.push(['Made by', `${d.mfr} ${d.hw} (${d.sw})`.trim()]);
      facts.replaceChildren(...rows.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
    } catch (e) {
      error.replaceChildren(errorBox(e));
    }
    detailLoaded();
  }

  // ---- Ports ----------------------------------------------------------------------

  /** @param {HTMLElement} p @returns {Tab} */
  function portsTab(p) {
    const msg = h('div');
    const tbody = h('tbody');
    p.append(
      msg,
      h(
        'div',
        { class: 'table-wrap' },
        h(
        'table',
        { id: 'ports' },
        h('caption', { class: 'muted', text: 'Ports; rates from the port statistics, read every 2 s' }),
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ...['Port', 'Name', 'MAC', 'State', 'Receive', 'Transmit', 'Received', 'Sent', ''].map((t, i) =>
              h('th', { scope: 'col', class: i >= 4 && i < 8 ? 'num' : '' }, t || h('span', { class: 'visually-hidden' }, 'Action')),
            ),
          ),
        ),
        tbody,
        ),
      ),
    );
    /** @type {Map<number, {t: number, rx: number, tx: number}>} */
    const last = new Map();
    /** @type {Map<number, {rx: number, tx: number}>} */
    const rates = new Map();

    async function load() {
      const list = await ctx.api.get(`${base}/ports?stats=true`).catch((e) => {
        msg.replaceChildren(errorBox(e));
        return null;
      });
      if (!list) return;
      msg.replaceChildren();
      const now = performance.now();
      for (const e of list.ports) {
        if (!e.stats) continue;
        const prev = last.get(e.port_no);
        if (prev && now > prev.t) {
          const dt = (now - prev.t) / 1000;
          rates.set(e.port_no, {
            rx: Math.max(0, (e.stats.rx_bytes - prev.rx) / dt),
            tx: Math.max(0, (e.stats.tx_bytes - prev.tx) / dt),
          });
        }
        last.set(e.port_no, { t: now, rx: e.stats.rx_bytes, tx: e.stats.tx_bytes });
      }
      const LOCAL = 0xfffffffe;
      list.ports.sort((/** @type {any} */ a, /** @type {any} */ b) => a.port_no - b.port_no);
      keyed(
        tbody,
        list.ports,
        (/** @type {any} */ e) => String(e.port_no),
        (e) => {
          const row = h('tr', { 'data-port': e.port_no });
          for (let i = 0; i < 8; i++) row.append(h('td', { class: i >= 4 ? 'num' : i === 2 ? 'mono' : '' }));
          const button = h('button', { type: 'button', onclick: () => void toggle(row, button) });
          row.append(h('td', {}, button));
          return row;
        },
        (row, e) => {
          const c = /** @type {HTMLTableRowElement} */ (row).cells;
          const r = rates.get(e.port_no);
          setText(c[0], e.port_no === LOCAL ? 'LOCAL' : String(e.port_no));
          setText(c[1], e.name);
          setText(c[2], e.hw_addr);
          const state = e.admin_down ? 'down (set)' : e.link_down ? 'down (no link)' : 'up';
          setText(c[3], state);
          c[3].className = e.up ? 'up' : 'down';
          setText(c[4], r ? bits(r.rx) : '—');
          setText(c[5], r ? bits(r.tx) : '—');
          setText(c[6], e.stats ? `${num(e.stats.rx_packets)} pkts` : '—');
          setText(c[7], e.stats ? `${num(e.stats.tx_packets)} pkts` : '—');
          const b = /** @type {HTMLButtonElement} */ (c[8].firstElementChild);
          row.dataset.adminDown = String(e.admin_down);
          setText(b, e.admin_down ? 'Up' : 'Down');
          b.title = `${e.admin_down ? 'Bring up' : 'Take down'} port ${e.port_no} (${e.name})`;
        },
      );
    }

    /**
     * @param {HTMLElement} row
     * @param {HTMLButtonElement} button
     */
    async function toggle(row, button) {
      const port = row.dataset.port;
      const up = row.dataset.adminDown === 'true';
      button.disabled = true;
      try {
        await ctx.api.post(`${base}/ports/${port}`, { up });
        msg.replaceChildren(h('p', { class: 'ok', role: 'status' }, `Port ${port} set ${up ? 'up' : 'down'}.`));
        await load();
      } catch (e) {
        msg.replaceChildren(errorBox(e));
      } finally {
        button.disabled = false;
      }
    }

    const stop = every(load, 2000);
    const off = ctx.live.subscribe('port', (/** @type {any} */ ev) => {
      if (ev.dpid === dpid) void load();
    });
    return { stop: () => (stop(), off()) };
  }

  // ---- Flows ----------------------------------------------------------------------

  /** @param {HTMLElement} p @returns {Tab} */
  function flowsTab(p) {
    const input = h('input', { id: 'new-flow', type: 'text', class: 'grow mono', autocomplete: 'off', spellcheck: 'false', placeholder: 'priority=300,dl_dst=00:00:00:00:00:99,actions=drop' });
    const flowError = h('div', { id: 'flow-error', role: 'alert', class: 'error', hidden: true });
    const status = h('p', { role: 'status', class: 'ok' });
    const form = h(
      'form',
      { class: 'row', onsubmit: (/** @type {Event} */ e) => (e.preventDefault(), void add()) },
      h('label', { for: 'new-flow' }, 'New flow'),
      input,
      h('button', { type: 'submit', class: 'primary' }, 'Add flow'),
    );
    const filter = h('input', { id: 'flow-filter', type: 'search', autocomplete: 'off', oninput: () => render() });
    const count = h('p', { class: 'summary', 'aria-live': 'polite' });
    const tbody = h('tbody');
    const loadError = h('div');
    p.append(
      form,
      flowError,
      status,
      h('div', { class: 'row' }, h('label', { for: 'flow-filter' }, 'Filter flows'), filter),
      count,
      loadError,
      h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          { id: 'flows' },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              h('th', { scope: 'col', class: 'num' }, 'Table'),
              h('th', { scope: 'col', class: 'num' }, 'Priority'),
              h('th', { scope: 'col' }, 'Owner'),
              h('th', { scope: 'col', class: 'num' }, 'Packets'),
              h('th', { scope: 'col', class: 'num' }, 'Bytes'),
              h('th', { scope: 'col' }, 'Flow (ovs-ofctl)'),
              h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Action')),
            ),
          ),
          tbody,
        ),
      ),
    );
    /** @type {any[]} */
    let flows = [];

    /** @param {any} f */
    const matchText = (f) =>
      Object.entries(f.match)
        .map(([k, v]) => (v === '' ? k : `${k}=${v}`))
        .join(',');
    /** @param {any} f */
    const flowKey = (f) => `${f.table}/${f.priority}/${matchText(f)}`;

    function render() {
      const q = filter.value.trim().toLowerCase();
      const shown = q ? flows.filter((f) => `${f.ofctl} ${f.owner || ''}`.toLowerCase().includes(q)) : flows;
      count.textContent = q ? `${shown.length} of ${flows.length} flows match.` : `${flows.length} flows.`;
      keyed(
        tbody,
        shown,
        flowKey,
        (f) => {
          const row = h('tr');
          for (let i = 0; i < 6; i++) row.append(h('td', { class: i === 5 ? 'mono' : i === 2 ? '' : 'num' }));
          const del = h('button', { type: 'button', class: 'danger', text: 'Delete', onclick: () => void remove(f, del) });
          row.append(h('td', {}, del));
          return row;
        },
        (row, f) => {
          const c = /** @type {HTMLTableRowElement} */ (row).cells;
          setText(c[0], String(f.table));
          setText(c[1], String(f.priority));
          setText(c[2], f.owner || '—');
          setText(c[3], num(f.packets));
          setText(c[4], num(f.bytes));
          setText(c[5], f.ofctl);
          /** @type {HTMLElement} */ (c[6].firstElementChild).setAttribute('aria-label', `Delete flow ${f.ofctl}`);
        },
      );
    }

    async function load() {
      try {
        const list = await ctx.api.get(`${base}/flows`);
        flows = list.flows;
        flows.sort((a, b) => a.table - b.table || b.priority - a.priority || flowKey(a).localeCompare(flowKey(b)));
        loadError.replaceChildren();
        render();
      } catch (e) {
        loadError.replaceChildren(errorBox(e));
      }
    }

    async function add() {
      const text = input.value.trim();
      if (!text) return;
      flowError.hidden = true;
      status.textContent = '';
      try {
        const r = await ctx.api.post(`${base}/flows`, { flow: text });
        status.textContent = `Added: ${r.flow}`;
        input.value = '';
        await load();
      } catch (e) {
        showFlowError(flowError, text, e);
        input.focus();
      }
    }

    /**
     * @param {any} f
     * @param {HTMLButtonElement} button
     */
    async function remove(f, button) {
      button.disabled = true;
      status.textContent = '';
      try {
        await ctx.api.del(`${base}/flows`, { match: matchText(f), strict: true, priority: f.priority, table: f.table });
        status.textContent = `Deleted: ${f.ofctl}`;
        await load();
        filter.focus();
      } catch (e) {
        loadError.replaceChildren(errorBox(e));
        button.disabled = false;
      }
    }

    const stop = every(load, 3000);
    const off = ctx.live.onReconnect(() => void load());
    return { stop: () => (stop(), off()) };
  }

  // ---- Groups and meters (OpenFlow 1.3) -------------------------------------------

  /**
   * @param {HTMLElement} p
   * @param {string} what `groups` or `meters`
   * @param {(list: any) => HTMLElement} table
   * @returns {Tab}
   */
  function v13Tab(p, what, table) {
    const out = h('div', { 'aria-live': 'polite' }, 'Loading…');
    p.append(out);
    async function load() {
      await detailReady;
      if (detail && detail.version === '1.0') {
        out.replaceChildren(h('p', {}, `OpenFlow 1.0 has no ${what}.`));
        return;
      }
      try {
        out.replaceChildren(table(await ctx.api.get(`${base}/${what}`)));
      } catch (e) {
        if (e instanceof ApiError && e.status === 409) out.replaceChildren(h('p', {}, `OpenFlow 1.0 has no ${what}.`));
        else out.replaceChildren(errorBox(e));
      }
    }
    const stop = every(load, 5000);
    return { stop };
  }

  /** @param {HTMLElement} p */
  function groupsTab(p) {
    return v13Tab(p, 'groups', (list) =>
      list.groups.length === 0
        ? h('p', {}, 'No groups.')
        : h(
            'table',
            { id: 'groups' },
            h('thead', {}, h('tr', {}, ...['Group', 'Type', 'Buckets', 'Packets', 'Bytes'].map((t) => h('th', { scope: 'col' }, t)))),
            h(
              'tbody',
              {},
              ...list.groups.map((/** @type {any} */ g) =>
                h(
                  'tr',
                  {},
                  h('td', {}, String(g.group_id)),
                  h('td', {}, g.type || g.group_type),
                  h('td', { class: 'mono' }, g.buckets.map((/** @type {any} */ b) => `weight=${b.weight}: ${b.actions.join(',') || 'drop'}`).join('; ')),
                  h('td', { class: 'num' }, num(g.packets)),
                  h('td', { class: 'num' }, num(g.bytes)),
                ),
              ),
            ),
          ),
    );
  }

  /** @param {HTMLElement} p */
  function metersTab(p) {
    return v13Tab(p, 'meters', (list) =>
      list.meters.length === 0
        ? h('p', {}, 'No meters.')
        : h(
            'table',
            { id: 'meters' },
            h('thead', {}, h('tr', {}, ...['Meter', 'Flags', 'Bands', 'Flows', 'Packets', 'Bytes'].map((t) => h('th', { scope: 'col' }, t)))),
            h(
              'tbody',
              {},
              ...list.meters.map((/** @type {any} */ m) =>
                h(
                  'tr',
                  {},
                  h('td', {}, String(m.meter_id)),
                  h('td', {}, m.flags.join(', ')),
                  h('td', { class: 'mono' }, m.bands.map((/** @type {any} */ b) => `${b.type} rate=${b.rate} burst=${b.burst_size}`).join('; ')),
                  h('td', { class: 'num' }, num(m.flow_count)),
                  h('td', { class: 'num' }, num(m.packets)),
                  h('td', { class: 'num' }, num(m.bytes)),
                ),
              ),
            ),
          ),
    );
  }

  const stopDetail = every(loadDetail, 5000);
  const offs = [
    ctx.live.subscribe('switch', (/** @type {any} */ ev) => {
      if (ev.dpid === dpid) void loadDetail();
    }),
    ctx.live.onReconnect(() => void loadDetail()),
  ];
  show(ctx.params);
  return {
    update: show,
    unmount() {
      stopDetail();
      offs.forEach((f) => f());
      if (tab) tab.stop();
    },
  };
}

/**
 * Shows a refused flow: the server's message, and the flow with the token it names
 * marked. The message reads `WHAT: TOKEN: why (at byte N)`.
 * @param {HTMLElement} box #flow-error
 * @param {string} text the flow sent
 * @param {unknown} e
 */
export function showFlowError(box, text, e) {
  const message = e instanceof Error ? e.message : String(e);
  box.replaceChildren(h('p', {}, message));
  const at = /\(at byte (\d+)\)\s*$/.exec(message);
  if (at) {
    const start = Number(at[1]);
    // The token is the longest part of the message (split at ": ") that stands at
    // that byte of the flow.
    let token = '';
    for (const part of message.split(': ')) {
      if (part.length > token.length && text.startsWith(part, start)) token = part;
    }
    const end = Math.min(text.length, start + Math.max(1, token.length));
    const pre = h('pre', { class: 'mono' });
    pre.append(text.slice(0, start), h('mark', {}, text.slice(start, end) || ' '), text.slice(end));
    box.append(pre);
  }
  box.hidden = false;
}
