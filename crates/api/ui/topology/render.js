// Drawing the topology on a 2D canvas, and finding what is under a point.
//
// A frame strokes at most a dozen paths: the host edges in one, the cables in one per
// utilisation step, the host dots and the switches in one fill each. What lies outside
// the view is skipped (and not counted as drawn). Level of detail: host edges and
// switch outlines only when zoomed in enough to see them, labels only when they fit.

import { Model } from './model.js';
import { STEPS, UNKNOWN, step } from './colour.js';
import { L } from './force.js';

/**
 * World to screen: screen = world · k + (tx, ty), in CSS pixels.
 * @typedef {{k: number, tx: number, ty: number}} View
 */

/**
 * What is selected.
 * @typedef {{kind: 'switch' | 'link' | 'host', id: string}} Selection
 */

/** A switch's size in world units. */
export const SWITCH_SIZE = 12;
/** A host's dot size in world units. */
const HOST_SIZE = 4;
/** A switch's label: its dpid, monospace (every dpid is as wide as the widest). */
const DPID_FONT = '11px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace';
const DPID_WIDEST = '00:00:00:00:00:00:00:00';

/** The palette (the page's light theme; a dark one would swap these). */
const C = {
  background: '#ffffff',
  switchFill: '#1864ab',
  switchStroke: '#ffffff',
  hostFill: '#7950f2',
  hostEdge: 'rgba(121, 80, 242, 0.35)',
  label: '#1d2433',
  labelHalo: 'rgba(255, 255, 255, 0.85)',
  select: '#111827',
  selectHalo: 'rgba(17, 24, 39, 0.14)',
  halfLink: '#adb5bd',
};

/**
 * Draws a frame; returns what it drew.
 * @param {CanvasRenderingContext2D} g
 * @param {Model} model
 * @param {{width: number, height: number, dpr: number, view: View, hosts: boolean,
 *   selection: Selection | null, util: (c: import('./model.js').Cable) => number | null}} o
 */
export function draw(g, model, o) {
  const { width, height, dpr, view, hosts } = o;
  const { k, tx, ty } = view;
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.fillStyle = C.background;
  g.fillRect(0, 0, width, height);
  // The world rectangle in view, with a margin for symbols that straddle the edge.
  const m = 40 / k;
  const x0 = -tx / k - m;
  const y0 = -ty / k - m;
  const x1 = (width - tx) / k + m;
  const y1 = (height - ty) / k + m;
  const inView = (/** @type {number} */ x, /** @type {number} */ y) => x >= x0 && x <= x1 && y >= y0 && y <= y1;
  const sw = model.switches;
  let nSwitches = 0;
  let nLinks = 0;
  let nHosts = 0;

  // Hosts: edges to their switch when big enough to tell apart, then dots.
  const hostPx = Math.max(1.5, Math.min(7, HOST_SIZE * k));
  if (hosts) {
    const groups = model.bySwitch();
    if (k >= 0.5) {
      g.beginPath();
      for (const [dpid, list] of groups) {
        const s = sw.get(dpid);
        if (!s || !inView(s.x, s.y)) continue;
        const sx = s.x * k + tx;
        const sy = s.y * k + ty;
        for (const h of list) {
          g.moveTo(sx, sy);
          g.lineTo((s.x + h.dx) * k + tx, (s.y + h.dy) * k + ty);
        }
      }
      g.strokeStyle = C.hostEdge;
      g.lineWidth = 1;
      g.stroke();
    }
    g.fillStyle = C.hostFill;
    const half = hostPx / 2;
    for (const [dpid, list] of groups) {
      const s = sw.get(dpid);
      if (!s || !inView(s.x, s.y)) continue;
      for (const h of list) {
        g.fillRect((s.x + h.dx) * k + tx - half, (s.y + h.dy) * k + ty - half, hostPx, hostPx);
      }
      nHosts += list.length;
    }
  }

  // Cables, one path per colour step (index 11: unknown; 12: one direction only).
  /** @type {import('./model.js').Cable[][]} */
  const buckets = Array.from({ length: 13 }, () => []);
  for (const c of model.cables.values()) {
    const a = sw.get(c.a);
    const b = sw.get(c.b);
    if (!a || !b) continue;
    if (!inView(a.x, a.y) && !inView(b.x, b.y) && !crosses(a, b, x0, y0, x1, y1)) continue;
    const s = c.dirs === 3 ? step(o.util(c)) : 12;
    buckets[s === -1 ? 11 : s].push(c);
    nLinks++;
  }
  g.lineWidth = Math.max(1.25, Math.min(4, 1.6 * k));
  g.lineCap = 'round';
  for (let i = 0; i < buckets.length; i++) {
    if (buckets[i].length === 0) continue;
    g.beginPath();
    for (const c of buckets[i]) {
      const a = /** @type {import('./model.js').SwitchNode} */ (sw.get(c.a));
      const b = /** @type {import('./model.js').SwitchNode} */ (sw.get(c.b));
      g.moveTo(a.x * k + tx, a.y * k + ty);
      g.lineTo(b.x * k + tx, b.y * k + ty);
    }
    g.strokeStyle = i <= 10 ? STEPS[i] : i === 11 ? UNKNOWN : C.halfLink;
    if (i === 12) g.setLineDash([4, 4]);
    g.stroke();
    if (i === 12) g.setLineDash([]);
  }

  // Switches: squares, outlined when they are big enough for an outline to show.
  const swPx = Math.max(4, Math.min(30, SWITCH_SIZE * k));
  const half = swPx / 2;
  g.beginPath();
  for (const s of sw.values()) {
    if (!inView(s.x, s.y)) continue;
    g.rect(s.x * k + tx - half, s.y * k + ty - half, swPx, swPx);
    nSwitches++;
  }
  g.fillStyle = C.switchFill;
  g.fill();
  if (swPx >= 8) {
    g.strokeStyle = C.switchStroke;
    g.lineWidth = 1.5;
    g.stroke();
  }

  // The selection, drawn over everything.
  const sel = o.selection;
  if (sel) {
    g.strokeStyle = C.select;
    g.lineWidth = 3;
    if (sel.kind === 'switch') {
      const s = sw.get(sel.id);
      if (s) {
        g.fillStyle = C.selectHalo;
        g.beginPath();
        g.arc(s.x * k + tx, s.y * k + ty, half + 14, 0, 2 * Math.PI);
        g.fill();
        g.strokeRect(s.x * k + tx - half - 4, s.y * k + ty - half - 4, swPx + 8, swPx + 8);
      }
    } else if (sel.kind === 'link') {
      const c = model.cables.get(sel.id);
      const a = c && sw.get(c.a);
      const b = c && sw.get(c.b);
      if (a && b) {
        g.lineWidth = Math.max(4, g.lineWidth + 3);
        g.beginPath();
        g.moveTo(a.x * k + tx, a.y * k + ty);
        g.lineTo(b.x * k + tx, b.y * k + ty);
        g.stroke();
      }
    } else {
      const h = model.hosts.get(sel.id);
      const s = h && sw.get(h.attachment.dpid);
      if (h && s) {
        g.beginPath();
        g.arc((s.x + h.dx) * k + tx, (s.y + h.dy) * k + ty, hostPx / 2 + 5, 0, 2 * Math.PI);
        g.stroke();
      }
    }
  }

  // Labels, when they fit: a switch's dpid, in the one form Pharos prints it
  // (00:00:00:00:00:00:00:01), once switches a cable apart (L world units) have room for
  // it; hosts from zoom 4 (hosts sit 7 to 14 world units apart: 28 to 56 px, about an
  // address in a small font).
  const hostLabels = hosts && k >= 4;
  g.font = DPID_FONT;
  const swLabels = swPx >= 16 && L * k >= g.measureText(DPID_WIDEST).width + 8;
  if (swLabels || hostLabels) {
    g.textAlign = 'center';
    g.textBaseline = 'top';
    g.lineWidth = 3;
    g.strokeStyle = C.labelHalo;
    g.fillStyle = C.label;
    if (swLabels) {
      for (const s of sw.values()) {
        if (!inView(s.x, s.y)) continue;
        const t = s.dpid;
        const lx = s.x * k + tx;
        const ly = s.y * k + ty + half + 3;
        g.strokeText(t, lx, ly);
        g.fillText(t, lx, ly);
      }
    }
    if (hostLabels) {
      g.font = '10px system-ui, sans-serif';
      for (const [dpid, list] of model.bySwitch()) {
        const s = sw.get(dpid);
        if (!s || !inView(s.x, s.y)) continue;
        for (const h of list) {
          const t = h.ips[0] ?? h.mac.slice(9);
          const lx = (s.x + h.dx) * k + tx;
          const ly = (s.y + h.dy) * k + ty + hostPx / 2 + 2;
          g.strokeText(t, lx, ly);
          g.fillText(t, lx, ly);
        }
      }
    }
  }
  return { switches: nSwitches, links: nLinks, hosts: nHosts };
}

/** Whether segment a-b crosses the rectangle (both ends outside it). */
function crosses(
  /** @type {{x: number, y: number}} */ a,
  /** @type {{x: number, y: number}} */ b,
  /** @type {number} */ x0,
  /** @type {number} */ y0,
  /** @type {number} */ x1,
  /** @type {number} */ y1,
) {
  // Cheap and conservative: the segment's bounding box overlaps the rectangle.
  return Math.max(a.x, b.x) >= x0 && Math.min(a.x, b.x) <= x1 && Math.max(a.y, b.y) >= y0 && Math.min(a.y, b.y) <= y1;
}

/**
 * What is at screen point (px, py): the nearest switch or host within reach, else the
 * nearest cable within reach; null when nothing is.
 * @param {Model} model
 * @param {View} view
 * @param {boolean} hosts
 * @param {number} px
 * @param {number} py
 * @returns {Selection | null}
 */
export function hit(model, view, hosts, px, py) {
  const { k, tx, ty } = view;
  const wx = (px - tx) / k;
  const wy = (py - ty) / k;
  const grid = spatialGrid(model, hosts);
  const reach = Math.max(8 / k, (SWITCH_SIZE / 2) * Math.min(1, 30 / (SWITCH_SIZE * k)) + 2 / k);
  /** @type {Selection | null} */
  let best = null;
  let bestD = reach * reach;
  const c = grid.cell;
  for (let gx = Math.floor((wx - reach) / c); gx <= Math.floor((wx + reach) / c); gx++) {
    for (let gy = Math.floor((wy - reach) / c); gy <= Math.floor((wy + reach) / c); gy++) {
      for (const e of grid.map.get(`${gx},${gy}`) ?? []) {
        const d = (e.x - wx) ** 2 + (e.y - wy) ** 2;
        // A switch wins a tie with a host (it is drawn over it).
        if (d < bestD || (d === bestD && e.sel.kind === 'switch')) {
          bestD = d;
          best = e.sel;
        }
      }
    }
  }
  if (best) return best;
  // Cables: the nearest within 6 px.
  let bestL = (6 / k) ** 2;
  for (const cab of model.cables.values()) {
    const a = model.switches.get(cab.a);
    const b = model.switches.get(cab.b);
    if (!a || !b) continue;
    const d = segDist2(wx, wy, a.x, a.y, b.x, b.y);
    if (d < bestL) {
      bestL = d;
      best = { kind: 'link', id: cab.key };
    }
  }
  return best;
}

/** @type {{version: number, hosts: boolean, iterations: number, cell: number, map: Map<string, {x: number, y: number, sel: Selection}[]>} | null} */
let cached = null;

/**
 * The switches and hosts in a grid of 20-unit cells, made again when the model or the
 * positions changed.
 * @param {Model} model
 * @param {boolean} hosts
 */
function spatialGrid(model, hosts) {
  let sum = 0;
  for (const s of model.switches.values()) sum += s.x + s.y;
  if (cached && cached.version === model.version && cached.hosts === hosts && cached.iterations === sum) return cached;
  const cell = 20;
  /** @type {Map<string, {x: number, y: number, sel: Selection}[]>} */
  const map = new Map();
  const put = (/** @type {number} */ x, /** @type {number} */ y, /** @type {Selection} */ sel) => {
    const key = `${Math.floor(x / cell)},${Math.floor(y / cell)}`;
    let list = map.get(key);
    if (!list) map.set(key, (list = []));
    list.push({ x, y, sel });
  };
  for (const s of model.switches.values()) put(s.x, s.y, { kind: 'switch', id: s.dpid });
  if (hosts) {
    for (const [dpid, list] of model.bySwitch()) {
      const s = model.switches.get(dpid);
      if (!s) continue;
      for (const h of list) put(s.x + h.dx, s.y + h.dy, { kind: 'host', id: h.mac });
    }
  }
  cached = { version: model.version, hosts, iterations: sum, cell, map };
  return cached;
}

function segDist2(
  /** @type {number} */ px,
  /** @type {number} */ py,
  /** @type {number} */ ax,
  /** @type {number} */ ay,
  /** @type {number} */ bx,
  /** @type {number} */ by,
) {
  const dx = bx - ax;
  const dy = by - ay;
  const len2 = dx * dx + dy * dy;
  let t = len2 === 0 ? 0 : ((px - ax) * dx + (py - ay) * dy) / len2;
  t = Math.max(0, Math.min(1, t));
  const x = ax + t * dx - px;
  const y = ay + t * dy - py;
  return x * x + y * y;
}
