// The topology page: the network on a canvas (switches, cables coloured by utilisation,
// hosts on demand), laid out by itself, live from the event stream; pan and zoom with
// the mouse, touch or keys; select by click or by the "Find" box; the selection's
// details beside it; the selection and the host toggle in the URL.
//
// Frames are drawn only when something changed (the model, the view, the layout still
// moving); the layout gets LAYOUT_BUDGET_MS of each frame at most.

import { Model } from '../topology/model.js';
import { Layout, placeHosts, hostReach, L } from '../topology/layout.js';
import { draw, hit } from '../topology/render.js';
import { legend } from '../topology/colour.js';
import { h, rate } from '../dom.js';

/** Of a 16 ms frame, what the layout may take. */
const LAYOUT_BUDGET_MS = 6;
/** How often port rates are read while the page is shown. */
const RATES_MS = 5000;
/** Zoom limits. */
const K_MIN = 0.01;
const K_MAX = 8;
/** Above this many switches and hosts drawn, frames go through the pan bitmap. */
const HEAVY = 3000;
/** The pan bitmap's margin around the view, in CSS pixels. */
const PAN_MARGIN = 400;
/** Suggestions in the Find box's list. */
const SUGGESTIONS = 20;

/**
 * A port's rates, as GET /api/v1/port_rates gives them.
 * @typedef {{dpid: string, port: number, rx_bps: number, tx_bps: number,
 *   speed_bps: number | null}} PortRate
 */

/** @typedef {import('../topology/render.js').Selection} Selection */

/**
 * @param {HTMLElement} el
 * @param {import('../app.js').PageContext} ctx
 */
export function mount(el, ctx) {
  ctx.setTitle('Topology');
  ensureStyles();
  const model = new Model();
  const layout = new Layout(model);
  layout.onmove = () => schedule();

  // The page.
  const find = /** @type {HTMLInputElement} */ (
    h('input', {
      id: 'topo-find',
      type: 'search',
      autocomplete: 'off',
      placeholder: 'dpid, MAC or IP',
      list: 'topo-find-list',
    })
  );
  const findList = h('datalist', { id: 'topo-find-list' });
  const hostsBox = /** @type {HTMLInputElement} */ (h('input', { type: 'checkbox', id: 'topo-hosts' }));
  const fitButton = h('button', { type: 'button', title: 'Fit the network in view (key 0)' }, 'Fit');
  const status = h('span', { class: 'topo-status', role: 'status' });
  const canvas = /** @type {HTMLCanvasElement} */ (
    h('canvas', { id: 'topology-canvas', tabindex: 0, role: 'img', 'aria-describedby': 'topo-keys' })
  );
  const details = h('aside', { id: 'details', role: 'region', 'aria-label': 'Details', class: 'topo-details' });
  const keysText = 'Drag or arrow keys to pan, wheel or + and − to zoom, 0 to fit, click to select, Escape to clear.';
  const stage = h('div', { class: 'topo-stage' }, canvas, h('p', { id: 'topo-keys', class: 'topo-keys' }, keysText));
  const root = h(
    'section',
    { class: 'topo', 'aria-labelledby': 'topo-title' },
    h('h1', { id: 'topo-title', class: 'topo-title' }, 'Topology'),
    h(
      'div',
      { class: 'topo-bar' },
      h('label', { for: 'topo-find' }, 'Find'),
      find,
      findList,
      h('label', { class: 'topo-check' }, hostsBox, ' Show hosts'),
      fitButton,
      legend(document),
      status,
    ),
    h(
      'div',
      { class: 'topo-body' },
      stage,
      details,
    ),
  );
  el.append(root);

  const g = /** @type {CanvasRenderingContext2D} */ (canvas.getContext('2d', { alpha: false }));

  // State.
  /** @type {import('../topology/render.js').View} */
  const view = { k: 1, tx: 0, ty: 0 };
  /** Fit the view to the network each frame until the user moves it. */
  let autoFit = true;
  let hostsOn = ctx.params.get('hosts') === '1';
  /** @type {Selection | null} */
  let selection = parseSelection(ctx.params.get('select'));
  /** @type {Map<string, PortRate>} by `dpid/port` */
  let rates = new Map();
  let ratesKnown = false;
  let width = 0;
  let height = 0;
  let dpr = 1;
  let frame = 0;
  let drawnVersion = -1;
  let viewChanged = true;
  let gone = false;
  let loaded = false;
  /** The details panel shows this model version of the selection. */
  let detailsFor = '';
  hostsBox.checked = hostsOn;

  // Frames.
  function schedule() {
    if (!frame && !gone) frame = requestAnimationFrame(render);
  }
  function render() {
    frame = 0;
    if (gone || width === 0) return;
    let moved = false;
    if (layout.active) {
      const wasTiered = layout.tiered;
      moved = layout.step(LAYOUT_BUDGET_MS);
      if (layout.tiered !== wasTiered) model.hostsDirty = true;
    }
    if (hostsOn && model.hostsDirty) placeHosts(model, layout.tiered);
    if (autoFit && (moved || viewChanged || drawnVersion !== model.version)) fitView();
    if (moved || viewChanged || drawnVersion !== model.version) {
      const n = paint(moved);
      canvas.dataset.switches = String(n.switches);
      canvas.dataset.links = String(n.links);
      canvas.dataset.hosts = String(n.hosts);
      canvas.dataset.renderedAt = String(performance.now());
      canvas.setAttribute(
        'aria-label',
        `Network topology: ${model.switches.size} switches, ${model.cables.size} links, ${model.hosts.size} hosts` +
          (hostsOn ? '' : ' (hidden)'),
      );
      drawnVersion = model.version;
      viewChanged = false;
      refreshDetails(false);
    }
    if (layout.active) schedule();
  }

  // A big scene is drawn into a bitmap larger than the view by PAN_MARGIN on each side,
  // then copied: a pan (same zoom, nothing else changed) within the margin is one copy.
  /** @type {{canvas: HTMLCanvasElement, k: number, tx: number, ty: number, key: string,
   *   counts: {switches: number, links: number, hosts: number}} | null} */
  let cache = null;
  /** @param {boolean} moved the layout moved things this frame */
  function paint(moved) {
    const heavy = model.switches.size + (hostsOn ? model.hosts.size : 0) > HEAVY;
    const opts = { dpr, view, hosts: hostsOn, selection, util: cableUtil };
    // While the layout moves things, each frame is new anyway: straight to the screen.
    if (!heavy || moved) {
      cache = null;
      return draw(g, model, { ...opts, width, height });
    }
    const key = `${model.version}/${hostsOn}/${selection ? selection.kind + selection.id : ''}/${width}x${height}@${dpr}`;
    const dx = view.tx - (cache?.tx ?? 0);
    const dy = view.ty - (cache?.ty ?? 0);
    if (!cache || cache.key !== key || cache.k !== view.k || Math.abs(dx) > PAN_MARGIN || Math.abs(dy) > PAN_MARGIN) {
      const c = cache?.canvas ?? document.createElement('canvas');
      const w = width + 2 * PAN_MARGIN;
      const h = height + 2 * PAN_MARGIN;
      if (c.width !== Math.round(w * dpr) || c.height !== Math.round(h * dpr)) {
        c.width = Math.round(w * dpr);
        c.height = Math.round(h * dpr);
      }
      const cg = /** @type {CanvasRenderingContext2D} */ (c.getContext('2d', { alpha: false }));
      const shifted = { k: view.k, tx: view.tx + PAN_MARGIN, ty: view.ty + PAN_MARGIN };
      const counts = draw(cg, model, { ...opts, view: shifted, width: w, height: h });
      cache = { canvas: c, k: view.k, tx: view.tx, ty: view.ty, key, counts };
    }
    g.setTransform(1, 0, 0, 1, 0, 0);
    g.drawImage(cache.canvas, Math.round((view.tx - cache.tx - PAN_MARGIN) * dpr), Math.round((view.ty - cache.ty - PAN_MARGIN) * dpr));
    return cache.counts;
  }

  // Sizing.
  const resize = new ResizeObserver(() => {
    const r = stage.getBoundingClientRect();
    const w = Math.max(1, Math.floor(r.width));
    const h = Math.max(1, Math.floor(r.height));
    dpr = Math.min(2, window.devicePixelRatio || 1);
    if (w === width && h === height && canvas.width === Math.round(w * dpr)) return;
    // Keep the world point at the middle in the middle.
    if (width > 0) {
      view.tx += (w - width) / 2;
      view.ty += (h - height) / 2;
    }
    width = w;
    height = h;
    canvas.width = Math.round(w * dpr);
    canvas.height = Math.round(h * dpr);
    canvas.style.width = `${w}px`;
    canvas.style.height = `${h}px`;
    viewChanged = true;
    schedule();
  });
  resize.observe(stage);

  // The view.
  function fitView() {
    let minX = Infinity;
    let minY = Infinity;
    let maxX = -Infinity;
    let maxY = -Infinity;
    const groups = hostsOn ? model.bySwitch() : null;
    for (const s of model.switches.values()) {
      const r = groups ? hostReach(groups.get(s.dpid)?.length ?? 0) + 4 : 0;
      minX = Math.min(minX, s.x - r);
      minY = Math.min(minY, s.y - r);
      maxX = Math.max(maxX, s.x + r);
      maxY = Math.max(maxY, s.y + r);
    }
    if (!Number.isFinite(minX)) {
      view.k = 1;
      view.tx = width / 2;
      view.ty = height / 2;
      return;
    }
    const pad = 40;
    const bw = Math.max(maxX - minX, L);
    const bh = Math.max(maxY - minY, L);
    view.k = clamp(Math.min((width - 2 * pad) / bw, (height - 2 * pad) / bh), K_MIN, 3);
    view.tx = width / 2 - ((minX + maxX) / 2) * view.k;
    view.ty = height / 2 - ((minY + maxY) / 2) * view.k;
  }
  function fit() {
    autoFit = true;
    viewChanged = true;
    schedule();
  }
  /** Zooms by `f` around screen point (px, py). */
  function zoom(/** @type {number} */ f, /** @type {number} */ px, /** @type {number} */ py) {
    const k = clamp(view.k * f, K_MIN, K_MAX);
    view.tx = px - ((px - view.tx) * k) / view.k;
    view.ty = py - ((py - view.ty) * k) / view.k;
    view.k = k;
    autoFit = false;
    viewChanged = true;
    schedule();
  }
  function pan(/** @type {number} */ dx, /** @type {number} */ dy) {
    view.tx += dx;
    view.ty += dy;
    autoFit = false;
    viewChanged = true;
    schedule();
  }

  // Mouse, pen and touch: one pointer pans, two pinch; a press that hardly moved selects.
  /** @type {Map<number, {x: number, y: number}>} */
  const pointers = new Map();
  let pressX = 0;
  let pressY = 0;
  let dragged = false;
  /** @param {PointerEvent} e */
  function local(e) {
    const r = canvas.getBoundingClientRect();
    return { x: e.clientX - r.left, y: e.clientY - r.top };
  }
  canvas.addEventListener('pointerdown', (e) => {
    canvas.focus({ preventScroll: true });
    canvas.setPointerCapture(e.pointerId);
    const p = local(e);
    pointers.set(e.pointerId, p);
    if (pointers.size === 1) {
      pressX = p.x;
      pressY = p.y;
      dragged = false;
    }
  });
  canvas.addEventListener('pointermove', (e) => {
    const prev = pointers.get(e.pointerId);
    if (!prev) return;
    const p = local(e);
    if (pointers.size === 1) {
      if (Math.abs(p.x - pressX) + Math.abs(p.y - pressY) > 4) dragged = true;
      if (dragged) pan(p.x - prev.x, p.y - prev.y);
    } else if (pointers.size === 2) {
      dragged = true;
      const other = [...pointers.entries()].find(([id]) => id !== e.pointerId)?.[1];
      if (other) {
        const before = Math.hypot(prev.x - other.x, prev.y - other.y);
        const after = Math.hypot(p.x - other.x, p.y - other.y);
        pan((p.x - prev.x) / 2, (p.y - prev.y) / 2);
        if (before > 0) zoom(after / before, (p.x + other.x) / 2, (p.y + other.y) / 2);
      }
    }
    pointers.set(e.pointerId, p);
  });
  const release = (/** @type {PointerEvent} */ e) => {
    if (!pointers.delete(e.pointerId)) return;
    if (pointers.size === 0 && !dragged && e.type === 'pointerup') {
      const p = local(e);
      select(hit(model, view, hostsOn, p.x, p.y), true);
    }
  };
  canvas.addEventListener('pointerup', release);
  canvas.addEventListener('pointercancel', release);
  canvas.addEventListener(
    'wheel',
    (e) => {
      e.preventDefault();
      const p = local(/** @type {PointerEvent} */ (/** @type {unknown} */ (e)));
      const dy = e.deltaMode === 1 ? e.deltaY * 16 : e.deltaY;
      zoom(Math.exp(-dy * 0.0015), p.x, p.y);
    },
    { passive: false },
  );
  canvas.addEventListener('keydown', (e) => {
    const stepPx = e.shiftKey ? 200 : 60;
    switch (e.key) {
      case 'ArrowLeft':
        pan(stepPx, 0);
        break;
      case 'ArrowRight':
        pan(-stepPx, 0);
        break;
      case 'ArrowUp':
        pan(0, stepPx);
        break;
      case 'ArrowDown':
        pan(0, -stepPx);
        break;
      case '+':
      case '=':
        zoom(1.25, width / 2, height / 2);
        break;
      case '-':
      case '_':
        zoom(0.8, width / 2, height / 2);
        break;
      case '0':
        fit();
        break;
      case 'Escape':
        select(null, true);
        break;
      default:
        return;
    }
    e.preventDefault();
  });
  fitButton.addEventListener('click', () => fit());

  // Selection and the URL.
  function select(/** @type {Selection | null} */ s, /** @type {boolean} */ record) {
    selection = s;
    if (s && s.kind === 'host' && !hostsOn) setHosts(true, false);
    viewChanged = true;
    refreshDetails(true);
    schedule();
    if (record) writeUrl();
  }
  function setHosts(/** @type {boolean} */ on, /** @type {boolean} */ record) {
    hostsOn = on;
    hostsBox.checked = on;
    if (on) model.hostsDirty = true;
    if (!on && selection?.kind === 'host') {
      selection = null;
      refreshDetails(true);
    }
    viewChanged = true;
    schedule();
    if (record) writeUrl();
  }
  function writeUrl() {
    const q = new URLSearchParams(location.search);
    if (selection) q.set('select', `${selection.kind}:${selection.id}`);
    else q.delete('select');
    if (hostsOn) q.set('hosts', '1');
    else q.delete('hosts');
    const s = q.toString();
    const target = location.pathname + (s ? `?${s}` : '');
    if (target !== location.pathname + location.search) history.replaceState(history.state, '', target);
  }
  hostsBox.addEventListener('change', () => setHosts(hostsBox.checked, true));

  // Find: a switch whose dpid (as printed, 00:00:00:00:00:00:00:01) or address contains
  // the text, a host by MAC or IP. No other dpid form is guessed at here: the API reads
  // those, with its one set of rules.
  function matches(/** @type {string} */ text, /** @type {number} */ limit) {
    const t = text.trim().toLowerCase();
    /** @type {{label: string, sel: Selection}[]} */
    const out = [];
    if (!t) return out;
    for (const s of model.switches.values()) {
      if (s.dpid.includes(t) || s.peer.includes(t)) {
        out.push({ label: s.dpid, sel: { kind: 'switch', id: s.dpid } });
        if (out.length >= limit) return out;
      }
    }
    for (const h of model.hosts.values()) {
      if (h.mac.includes(t) || h.ips.some((ip) => ip === t || ip.startsWith(t))) {
        out.push({ label: h.ips.length ? `${h.mac} ${h.ips[0]}` : h.mac, sel: { kind: 'host', id: h.mac } });
        if (out.length >= limit) return out;
      }
    }
    return out;
  }
  function findNow() {
    const t = find.value.trim().toLowerCase();
    if (!t) return;
    const exact =
      (model.switches.has(t) && { kind: 'switch', id: t }) ||
      (model.hosts.has(t) && { kind: 'host', id: t }) ||
      null;
    const first = exact ?? matches(t.split(' ')[0], 1)[0]?.sel ?? null;
    if (!first) {
      status.textContent = `Nothing matches “${find.value.trim()}”.`;
      return;
    }
    status.textContent = '';
    select(/** @type {Selection} */ (first), true);
    centreOn(/** @type {Selection} */ (first));
  }
  find.addEventListener('input', () => {
    const opts = matches(find.value, SUGGESTIONS).map((m) => {
      const o = document.createElement('option');
      o.value = m.label.split(' ')[0];
      o.label = m.label;
      return o;
    });
    findList.replaceChildren(...opts);
  });
  find.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') {
      e.preventDefault();
      findNow();
    }
  });
  find.addEventListener('change', () => findNow());

  /** Brings the selection into view, zoomed in enough to see it. */
  function centreOn(/** @type {Selection} */ s) {
    const p = positionOf(s);
    if (!p) return;
    autoFit = false;
    view.k = Math.max(view.k, 1);
    view.tx = width / 2 - p.x * view.k;
    view.ty = height / 2 - p.y * view.k;
    viewChanged = true;
    schedule();
  }
  function positionOf(/** @type {Selection} */ s) {
    if (s.kind === 'switch') return model.switches.get(s.id) ?? null;
    if (s.kind === 'host') {
      const h = model.hosts.get(s.id);
      const sw = h && model.switches.get(h.attachment.dpid);
      if (hostsOn && model.hostsDirty) placeHosts(model, layout.tiered);
      return h && sw ? { x: sw.x + h.dx, y: sw.y + h.dy } : null;
    }
    const c = model.cables.get(s.id);
    const a = c && model.switches.get(c.a);
    const b = c && model.switches.get(c.b);
    return a && b ? { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 } : null;
  }

  // Utilisation.
  function endUtil(/** @type {string} */ dpid, /** @type {number} */ port) {
    const r = rates.get(`${dpid}/${port}`);
    if (!r || !r.speed_bps) return null;
    return Math.max(r.tx_bps, r.rx_bps) / r.speed_bps;
  }
  /** @type {Map<string, number | null>} each cable's utilisation, until the next rates */
  let utilCache = new Map();
  /** @param {import('../topology/model.js').Cable} c */
  function cableUtil(c) {
    let u = utilCache.get(c.key);
    if (u !== undefined) return u;
    const a = endUtil(c.a, c.ap);
    const b = endUtil(c.b, c.bp);
    u = a === null ? b : b === null ? a : Math.max(a, b);
    utilCache.set(c.key, u);
    return u;
  }

  // Details.
  function refreshDetails(/** @type {boolean} */ force) {
    // With nothing selected the panel shows the counts: it follows the model's version too.
    const key = selection ? `${selection.kind}:${selection.id}:${model.version}:${ratesKnown}` : `none:${loaded}:${model.version}`;
    if (!force && key === detailsFor) return;
    detailsFor = key;
    details.replaceChildren(...detailsOf(selection));
  }
  /** @returns {Node[]} */
  function detailsOf(/** @type {Selection | null} */ s) {
    const h2 = document.createElement('h2');
    if (!s) {
      h2.textContent = 'Details';
      const p = document.createElement('p');
      p.textContent = loaded
        ? `${model.switches.size} switches, ${model.cables.size} links, ${model.hosts.size} hosts. Select a switch, link or host to see it here.`
        : 'Loading the network…';
      return [h2, p];
    }
    if (s.kind === 'switch') {
      const sw = model.switches.get(s.id);
      h2.textContent = `Switch ${s.id}`;
      if (!sw) return [h2, para('This switch is not connected.')];
      const a = document.createElement('a');
      a.href = `/switches/${encodeURIComponent(sw.dpid)}`;
      a.textContent = 'Open its switch page';
      const cables = model.cablesOf(sw.dpid);
      // Its links, each a button that selects it (the keyboard's way to a link).
      const list = document.createElement('ul');
      list.className = 'topo-links';
      list.setAttribute('aria-label', 'Its links');
      for (const c of cables.slice(0, 64)) {
        const [port, other, otherPort] = c.a === sw.dpid ? [c.ap, c.b, c.bp] : [c.bp, c.a, c.ap];
        const li = document.createElement('li');
        const b = document.createElement('button');
        b.type = 'button';
        b.className = 'linkish';
        b.append(`port ${port} → `, endOf(other, otherPort));
        b.addEventListener('click', () => select({ kind: 'link', id: c.key }, true));
        li.append(b);
        list.append(li);
      }
      return [
        h2,
        dl([
          ['DPID', dpidSpan(sw.dpid)],
          ['OpenFlow', sw.version],
          ['Address', sw.peer],
          ['Ports', `${sw.n_ports} (${sw.ports_up} up)`],
          ['Links', String(cables.length)],
          ['Hosts', String(model.bySwitch().get(sw.dpid)?.length ?? 0)],
          ['Connected', new Date(sw.connected_since * 1000).toLocaleString()],
        ]),
        para(a),
        ...(cables.length ? [list] : []),
      ];
    }
    if (s.kind === 'link') {
      const c = model.cables.get(s.id);
      h2.textContent = 'Link';
      if (!c) return [h2, para('This link is gone.')];
      const u = cableUtil(c);
      return [
        h2,
        dl([
          ['End A', endOf(c.a, c.ap)],
          ['End B', endOf(c.b, c.bp)],
          ['Found', c.dirs === 3 ? 'both ways' : c.dirs === 1 ? 'A to B only' : 'B to A only'],
          ['A → B', rateText(c.a, c.ap, 'tx')],
          ['B → A', rateText(c.b, c.bp, 'tx')],
          ['Utilisation', u === null ? 'unknown' : `${(u * 100).toFixed(1)} %`],
        ]),
      ];
    }
    const h = model.hosts.get(s.id);
    h2.textContent = `Host ${s.id}`;
    if (!h) return [h2, para('This host is gone.')];
    const att = document.createElement('button');
    att.type = 'button';
    att.className = 'linkish';
    att.append(endOf(h.attachment.dpid, h.attachment.port));
    att.addEventListener('click', () => {
      select({ kind: 'switch', id: h.attachment.dpid }, true);
      centreOn({ kind: 'switch', id: h.attachment.dpid });
    });
    return [
      h2,
      dl([
        ['MAC', h.mac],
        ['IPs', h.ips.length ? h.ips.join(', ') : 'none seen'],
        ['VLAN', h.vlan === null ? 'untagged' : String(h.vlan)],
        ['Attached to', att],
        ['Last seen', `${Math.max(0, Math.round((performance.now() - h.seenAt) / 1000))} s ago`],
      ]),
    ];
  }
  function rateText(/** @type {string} */ dpid, /** @type {number} */ port, /** @type {'tx'} */ _dir) {
    const r = rates.get(`${dpid}/${port}`);
    if (!r) return ratesKnown ? 'no rate for this port' : 'waiting for port statistics';
    const speed = r.speed_bps ? ` of ${rate(r.speed_bps, 'b/s')} (${((r.tx_bps / r.speed_bps) * 100).toFixed(1)} %)` : ' (port speed unknown)';
    return `${rate(r.tx_bps, 'b/s')}${speed}`;
  }

  // Data: the document, then the events; again after a reconnect or a lag. Events that
  // come while the document is on its way are kept and applied after it (applying one
  // the document already reflects changes nothing).
  let loading = false;
  /** @type {[string, any][] | null} events held while loading */
  let held = null;
  async function load() {
    if (loading || gone) return;
    loading = true;
    held = [];
    try {
      const doc = await ctx.api.get('topology');
      if (gone) return;
      model.load(doc);
      for (const [type, d] of held) apply(type, d);
      loaded = true;
      status.textContent = '';
      refreshDetails(true);
      schedule();
    } catch (e) {
      status.textContent = `Could not read the topology: ${e instanceof Error ? e.message : e}`;
    } finally {
      held = null;
      loading = false;
    }
  }
  function apply(/** @type {string} */ type, /** @type {any} */ d) {
    if (type === 'switch') model.switchEvent(d);
    else if (type === 'port') model.portEvent(d);
    else if (type === 'link') model.linkEvent(d);
    else if (type === 'host') model.hostEvent(d);
  }
  const onEvent = (/** @type {string} */ type) => (/** @type {any} */ d) => {
    if (held) held.push([type, d]);
    apply(type, d);
    schedule();
  };
  const unsubs = [
    ...['switch', 'port', 'link', 'host'].map((t) => ctx.live.subscribe(t, onEvent(t))),
    ctx.live.subscribe('lagged', () => void load()),
    ctx.live.onReconnect(() => void load()),
  ];

  // Port rates, while the page is shown (the server polls the switches only while asked).
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let ratesTimer;
  async function readRates() {
    ratesTimer = undefined;
    if (gone) return;
    let next = RATES_MS;
    try {
      if (!document.hidden) {
        const doc = await ctx.api.get('port_rates');
        if (gone) return;
        /** @type {Map<string, PortRate>} */
        const m = new Map();
        for (const r of doc.ports ?? []) m.set(`${r.dpid}/${r.port}`, r);
        // The first read starts the server's polling: rates come one interval later.
        if (m.size === 0 && doc.interval_secs > 0) next = Math.min(RATES_MS, doc.interval_secs * 1000 + 300);
        rates = m;
        utilCache = new Map();
        ratesKnown = true;
        model.version++;
        schedule();
      }
    } catch {
      // No rates: links stay "unknown" (grey); try again later.
    }
    if (!gone) ratesTimer = setTimeout(() => void readRates(), next);
  }

  void load();
  void readRates();
  refreshDetails(true);

  return {
    update(/** @type {URLSearchParams} */ params) {
      const h = params.get('hosts') === '1';
      if (h !== hostsOn) setHosts(h, false);
      const s = parseSelection(params.get('select'));
      if (JSON.stringify(s) !== JSON.stringify(selection)) select(s, false);
    },
    unmount() {
      gone = true;
      layout.stop();
      if (frame) cancelAnimationFrame(frame);
      if (ratesTimer) clearTimeout(ratesTimer);
      resize.disconnect();
      for (const u of unsubs) u();
    },
  };
}

/** `switch:DPID`, `link:KEY` or `host:MAC` into a selection. */
function parseSelection(/** @type {string | null} */ text) {
  if (!text) return null;
  const i = text.indexOf(':');
  const kind = text.slice(0, i);
  const id = text.slice(i + 1);
  if ((kind === 'switch' || kind === 'link' || kind === 'host') && id) return /** @type {Selection} */ ({ kind, id });
  return null;
}

function clamp(/** @type {number} */ v, /** @type {number} */ lo, /** @type {number} */ hi) {
  return Math.max(lo, Math.min(hi, v));
}

function para(/** @type {string | Node} */ content) {
  return h('p', {}, content);
}

/** A DPID kept on one line (a smaller monospace so that it fits the panel). */
function dpidSpan(/** @type {string} */ dpid) {
  return h('span', { class: 'topo-dpid' }, dpid);
}

/** "DPID port N": may wrap before "port", never inside the DPID. */
function endOf(/** @type {string} */ dpid, /** @type {number} */ port) {
  const f = document.createDocumentFragment();
  f.append(dpidSpan(dpid), ` port ${port}`);
  return f;
}

/** A definition list of [term, value] pairs. */
function dl(/** @type {[string, string | Node][]} */ rows) {
  return h('dl', { class: 'topo-dl' }, ...rows.flatMap(([term, value]) => [h('dt', {}, term), h('dd', {}, value)]));
}

/** The page's stylesheet, added once. */
function ensureStyles() {
  if (document.getElementById('topo-css')) return;
  const link = document.createElement('link');
  link.id = 'topo-css';
  link.rel = 'stylesheet';
  link.href = new URL('../topology/topology.css', import.meta.url).pathname;
  document.head.append(link);
}
