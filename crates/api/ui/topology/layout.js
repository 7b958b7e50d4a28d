// The layout: switches by a force simulation run a slice at a time (so a frame never
// waits for it), hosts in rings around the switch they are attached to.
//
// 1. A switch that comes with cables is seeded: a component no switch of which has a
//    place yet is laid out radially from its best-connected switch (a tree, the usual
//    shape of a data centre, is then almost untangled before the forces start); a switch
//    joining a placed component starts beside its placed neighbour. A switch with no
//    cable waits on a spiral around the drawing.
// 2. Forces (Fruchterman and Reingold's): cables pull as d²/L, switches closer than
//    CUTOFF push as L²/d. Only pairs in neighbouring cells of a grid are compared, so an
//    iteration costs O(n) instead of O(n²): 1,000 switches take well under a millisecond.
// 3. Each move is capped by a temperature that cools by COOLING per iteration; a change
//    to the switches or cables warms it again, a little for a small change.

import { Model } from './model.js';

/** The length a cable settles to, in world units (a switch is 10 wide). */
export const L = 60;
/** Switches farther apart than this do not push each other. */
const CUTOFF = 2.5 * L;
/** Each iteration multiplies the temperature by this. */
const COOLING = 0.985;
/** Below this temperature (a share of L per iteration) the layout stops. */
const FROZEN = 0.01;
/** Host rings: the first one's radius, the gap between rings, the room each host takes. */
const HOST_R0 = 16;
const HOST_GAP = 7;
const HOST_ROOM = 7;

export class Layout {
  constructor(/** @type {Model} */ model) {
    this.model = model;
    /** 1 when hot, decays to FROZEN. */
    this.alpha = 0;
    /** The model's `structure` the seeding last saw. */
    this._seen = -1;
    /** Iterations run so far (for tests and the benchmark). */
    this.iterations = 0;
  }

  /** Whether the layout still moves things. */
  get active() {
    return this.alpha > FROZEN || this._seen !== this.model.structure;
  }

  /**
   * Runs iterations for up to `budgetMs` milliseconds; returns whether anything moved.
   * @param {number} budgetMs
   */
  step(budgetMs) {
    const start = performance.now();
    let moved = false;
    if (this._seen !== this.model.structure) {
      const placedNew = this._seed();
      this._seen = this.model.structure;
      // A few new switches warm the layout a little; a new network, fully.
      const n = this.model.switches.size || 1;
      this.alpha = Math.max(this.alpha, Math.min(1, 0.15 + placedNew / n));
      moved = true;
    }
    while (this.alpha > FROZEN && performance.now() - start < budgetMs) {
      this._iterate();
      this.alpha *= COOLING;
      this.iterations++;
      moved = true;
    }
    return moved;
  }

  /** Runs the layout to the end (tests, and small networks at load). */
  settle(/** @type {number} */ maxMs) {
    this.step(maxMs);
  }

  /** Places the switches that have no place yet; returns how many it placed. */
  _seed() {
    const { switches, cables } = this.model;
    /** @type {Map<string, string[]>} */
    const adj = new Map();
    for (const d of switches.keys()) adj.set(d, []);
    for (const c of cables.values()) {
      if (!adj.has(c.a) || !adj.has(c.b)) continue;
      adj.get(c.a)?.push(c.b);
      adj.get(c.b)?.push(c.a);
    }
    let placedNew = 0;
    const bounds = placedBounds(this.model);
    const seen = new Set();
    /** @type {import('./model.js').SwitchNode[]} */
    const lonely = [];
    // Components, biggest first, so the main network takes the middle.
    /** @type {string[][]} */
    const comps = [];
    for (const d of switches.keys()) {
      if (seen.has(d)) continue;
      const comp = [d];
      seen.add(d);
      for (let i = 0; i < comp.length; i++) {
        for (const n of adj.get(comp[i]) ?? []) {
          if (!seen.has(n)) {
            seen.add(n);
            comp.push(n);
          }
        }
      }
      comps.push(comp);
    }
    comps.sort((p, q) => q.length - p.length);
    /** @type {number | null} where the next new component goes */
    let offsetX = bounds ? bounds.maxX + 2 * L : null;
    for (const comp of comps) {
      const nodes = comp.map((d) => /** @type {import('./model.js').SwitchNode} */ (switches.get(d)));
      if (nodes.length === 1) {
        if (!nodes[0].placed) lonely.push(nodes[0]);
        continue;
      }
      const anchored = nodes.filter((s) => s.placed && s.degree > 0);
      if (anchored.length === 0) {
        // 1: radially, from the best-connected switch.
        const root = nodes.reduce((p, q) => (q.degree > p.degree ? q : p));
        const r = radial(root.dpid, adj, switches);
        const cx = offsetX === null ? 0 : offsetX + r.radius;
        for (const s of nodes) {
          const p = r.pos.get(s.dpid);
          if (!p) continue;
          s.x = cx + p[0];
          s.y = p[1];
          s.placed = true;
          s.vx = s.vy = 0;
        }
        offsetX = cx + r.radius + 2 * L;
        placedNew += nodes.length;
      } else {
        // Beside a placed neighbour, breadth first from the placed ones.
        const queue = anchored.map((s) => s.dpid);
        const done = new Set(queue);
        for (let i = 0; i < queue.length; i++) {
          const here = /** @type {import('./model.js').SwitchNode} */ (switches.get(queue[i]));
          for (const n of adj.get(queue[i]) ?? []) {
            if (done.has(n)) continue;
            done.add(n);
            queue.push(n);
            const s = /** @type {import('./model.js').SwitchNode} */ (switches.get(n));
            if (s.placed && s.degree > 0) continue;
            const a = Math.random() * 2 * Math.PI;
            s.x = here.x + Math.cos(a) * L;
            s.y = here.y + Math.sin(a) * L;
            s.placed = true;
            placedNew++;
          }
        }
      }
    }
    // Switches with no cable: on a spiral (a sunflower's) outside the rest.
    if (lonely.length > 0) {
      const b = placedBounds(this.model);
      const r0 = b ? Math.max(b.maxX - b.minX, b.maxY - b.minY) / 2 + L : 0;
      const cx = b ? (b.minX + b.maxX) / 2 : 0;
      const cy = b ? (b.minY + b.maxY) / 2 : 0;
      const golden = Math.PI * (3 - Math.sqrt(5));
      let i = countPlacedLonely(this.model);
      for (const s of lonely) {
        const r = r0 + L * 0.6 * Math.sqrt(i + 1);
        s.x = cx + r * Math.cos(i * golden);
        s.y = cy + r * Math.sin(i * golden);
        s.placed = true;
        i++;
      }
      placedNew += lonely.length;
    }
    return placedNew;
  }

  /** One iteration of the forces. */
  _iterate() {
    const nodes = [...this.model.switches.values()];
    const n = nodes.length;
    if (n === 0) return;
    /** @type {Map<string, number>} */
    const index = new Map();
    const fx = new Float64Array(n);
    const fy = new Float64Array(n);
    // The grid: cell -> switch indices.
    /** @type {Map<number, number[]>} */
    const grid = new Map();
    for (let i = 0; i < n; i++) {
      const s = nodes[i];
      index.set(s.dpid, i);
      const k = cell(s.x, s.y);
      let list = grid.get(k);
      if (!list) grid.set(k, (list = []));
      list.push(i);
    }
    // 2: repulsion between switches in neighbouring cells.
    const L2 = L * L;
    for (let i = 0; i < n; i++) {
      const s = nodes[i];
      const cx = Math.floor(s.x / CUTOFF);
      const cy = Math.floor(s.y / CUTOFF);
      for (let gx = cx - 1; gx <= cx + 1; gx++) {
        for (let gy = cy - 1; gy <= cy + 1; gy++) {
          const list = grid.get(key(gx, gy));
          if (!list) continue;
          for (const j of list) {
            if (j <= i) continue;
            const o = nodes[j];
            let dx = s.x - o.x;
            let dy = s.y - o.y;
            let d2 = dx * dx + dy * dy;
            if (d2 > CUTOFF * CUTOFF) continue;
            if (d2 < 1e-6) {
              // Two switches on one spot: nudge apart in a direction of their own.
              dx = (i - j) * 0.01 + Math.random() - 0.5;
              dy = Math.random() - 0.5;
              d2 = dx * dx + dy * dy;
            }
            // L²/d along the unit vector: L² dx / d².
            const f = L2 / d2;
            fx[i] += dx * f;
            fy[i] += dy * f;
            fx[j] -= dx * f;
            fy[j] -= dy * f;
          }
        }
      }
    }
    // Attraction along cables: d²/L along the unit vector: d dx / L.
    for (const c of this.model.cables.values()) {
      const i = index.get(c.a);
      const j = index.get(c.b);
      if (i === undefined || j === undefined || i === j) continue;
      const dx = nodes[i].x - nodes[j].x;
      const dy = nodes[i].y - nodes[j].y;
      const d = Math.sqrt(dx * dx + dy * dy);
      const f = d / L;
      fx[i] -= dx * f;
      fy[i] -= dy * f;
      fx[j] += dx * f;
      fy[j] += dy * f;
    }
    // A weak pull to the middle keeps separate components from drifting apart.
    let mx = 0;
    let my = 0;
    for (const s of nodes) {
      mx += s.x;
      my += s.y;
    }
    mx /= n;
    my /= n;
    const maxMove = Math.max(0.5, L * this.alpha);
    for (let i = 0; i < n; i++) {
      const s = nodes[i];
      fx[i] -= (s.x - mx) * 0.01;
      fy[i] -= (s.y - my) * 0.01;
      const m = Math.sqrt(fx[i] * fx[i] + fy[i] * fy[i]);
      if (m < 1e-9) continue;
      const move = Math.min(m, maxMove);
      s.x += (fx[i] / m) * move;
      s.y += (fy[i] / m) * move;
    }
  }
}

/** Puts each host in rings around its switch (offsets only: they follow the switch). */
export function placeHosts(/** @type {Model} */ model) {
  for (const list of model.bySwitch().values()) {
    let ring = 0;
    let inRing = 0;
    let cap = ringCapacity(0);
    const rings = [];
    // How many hosts each ring holds, the last one spread evenly.
    let left = list.length;
    while (left > 0) {
      const take = Math.min(left, cap);
      rings.push(take);
      left -= take;
      cap = ringCapacity(rings.length);
    }
    for (const h of list) {
      if (inRing >= rings[ring]) {
        ring++;
        inRing = 0;
      }
      const r = HOST_R0 + ring * HOST_GAP;
      const a = (2 * Math.PI * inRing) / rings[ring] + ring * 0.5 - Math.PI / 2;
      h.dx = r * Math.cos(a);
      h.dy = r * Math.sin(a);
      inRing++;
    }
  }
  model.hostsDirty = false;
}

/** The extent of a switch's host rings (for fitting the view). */
export function hostReach(/** @type {number} */ count) {
  let ring = 0;
  let left = count;
  while (left > 0) {
    left -= ringCapacity(ring);
    ring++;
  }
  return HOST_R0 + Math.max(0, ring - 1) * HOST_GAP;
}

function ringCapacity(/** @type {number} */ ring) {
  return Math.max(6, Math.floor((2 * Math.PI * (HOST_R0 + ring * HOST_GAP)) / HOST_ROOM));
}

function key(/** @type {number} */ gx, /** @type {number} */ gy) {
  // Exact for |g| < 2^20, far beyond any drawing.
  return (gx + 1048576) * 2097152 + (gy + 1048576);
}

function cell(/** @type {number} */ x, /** @type {number} */ y) {
  return key(Math.floor(x / CUTOFF), Math.floor(y / CUTOFF));
}

/**
 * A radial tree from `root` (breadth first): depth d on a circle of radius d·L, or more
 * when the circle must hold more switches; each subtree gets an angle in proportion to
 * its leaves.
 * @param {string} root
 * @param {Map<string, string[]>} adj
 * @param {Map<string, import('./model.js').SwitchNode>} switches
 */
function radial(root, adj, switches) {
  /** @type {Map<string, string[]>} */
  const children = new Map();
  /** @type {Map<string, number>} */
  const depth = new Map([[root, 0]]);
  const order = [root];
  for (let i = 0; i < order.length; i++) {
    const d = order[i];
    const kids = [];
    for (const n of adj.get(d) ?? []) {
      if (depth.has(n)) continue;
      depth.set(n, (depth.get(d) ?? 0) + 1);
      kids.push(n);
      order.push(n);
    }
    // Sorted, so that the same network is drawn the same way each time.
    kids.sort();
    children.set(d, kids);
  }
  /** @type {Map<string, number>} */
  const leaves = new Map();
  for (let i = order.length - 1; i >= 0; i--) {
    const kids = children.get(order[i]) ?? [];
    leaves.set(order[i], kids.length === 0 ? 1 : kids.reduce((a, k) => a + (leaves.get(k) ?? 1), 0));
  }
  /** @type {number[]} switches per depth */
  const perDepth = [];
  for (const d of depth.values()) perDepth[d] = (perDepth[d] ?? 0) + 1;
  const radii = perDepth.map((count, d) => Math.max(d * L, (count * L * 0.9) / (2 * Math.PI)));
  for (let d = 1; d < radii.length; d++) radii[d] = Math.max(radii[d], radii[d - 1] + L * 0.8);
  /** @type {Map<string, [number, number]>} */
  const pos = new Map();
  /** @type {[string, number, number][]} switch, angle from, angle to */
  const stack = [[root, 0, 2 * Math.PI]];
  while (stack.length > 0) {
    const [d, a0, a1] = /** @type {[string, number, number]} */ (stack.pop());
    const r = radii[depth.get(d) ?? 0];
    const a = (a0 + a1) / 2;
    pos.set(d, [r * Math.cos(a), r * Math.sin(a)]);
    const kids = children.get(d) ?? [];
    const total = leaves.get(d) ?? 1;
    let from = a0;
    for (const k of kids) {
      const span = ((a1 - a0) * (leaves.get(k) ?? 1)) / total;
      stack.push([k, from, from + span]);
      from += span;
    }
  }
  void switches;
  return { pos, radius: radii[radii.length - 1] ?? 0 };
}

/** @returns {{minX: number, minY: number, maxX: number, maxY: number} | null} */
function placedBounds(/** @type {Model} */ model) {
  let b = null;
  for (const s of model.switches.values()) {
    if (!s.placed) continue;
    if (!b) b = { minX: s.x, minY: s.y, maxX: s.x, maxY: s.y };
    else {
      b.minX = Math.min(b.minX, s.x);
      b.minY = Math.min(b.minY, s.y);
      b.maxX = Math.max(b.maxX, s.x);
      b.maxY = Math.max(b.maxY, s.y);
    }
  }
  return b;
}

function countPlacedLonely(/** @type {Model} */ model) {
  let n = 0;
  for (const s of model.switches.values()) if (s.placed && s.degree === 0) n++;
  return n;
}
