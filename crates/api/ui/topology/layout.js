// The layout: switches placed by one of the methods below, run a slice at a time or in a
// worker (so a frame never waits for it), hosts around the switch they are attached to.
//
// 1. A switch that comes with cables is seeded: a component no switch of which has a
//    place yet is laid out radially from its best-connected switch (a tree, the usual
//    shape of a data centre, is then almost untangled before the forces start); a switch
//    joining a placed component starts beside its placed neighbour. A switch with no
//    cable waits on a spiral around the drawing.
// 1'. A network whose switches fall into a few tiers by their hop distance from the
//    switches hosts are attached to (edge, aggregation, core: a fat tree, a leaf and
//    spine) is drawn in rows instead, core on top, each row ordered to cut crossings
//    (the barycentre heuristic of Sugiyama et al.), as data-centre people draw it.
// 2. Up to SGD_MAX switches: the stress layout of Zheng, Pawar and Goodman ("Graph
//    Drawing by Stochastic Gradient Descent", 2018): every pair of switches in a
//    component is pulled or pushed towards L times its hop distance, pair by pair in a
//    shuffled order, with a step that shrinks each iteration. Thirty iterations draw
//    a fat tree or a data-centre tree with its symmetry plain; a change (a link down)
//    starts from the current places with small steps, so the drawing barely moves.
//    An iteration is n²/2 pair updates, cut into slices.
// 2'. Beyond that, forces (Fruchterman and Reingold's, force.js): cables pull as d²/L,
//    switches closer than CUTOFF push as L²/d. Only pairs in neighbouring cells of a grid
//    are compared, so an iteration costs O(n) instead of O(n²): 1,000 switches take under
//    a millisecond. They run in a worker (force-worker.js) that posts the places about
//    once a frame; where no worker can start, here, a slice per frame.
// 3. Each move is capped by a temperature that cools by COOLING per iteration; a change
//    to the switches or cables warms it again, a little for a small change.

import { Model } from './model.js';
import { iterate, L, COOLING, FROZEN } from './force.js';

export { L };

/** Networks up to this many switches get the stress layout (its pairs are n²/2; beyond, the
 * forces draw a big tree better in the time there is). */
const SGD_MAX = 400;
/** Stress layout iterations from scratch, and after a change. */
const SGD_FRESH = 30;
const SGD_WARM = 12;

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
    /** @type {import('./model.js').SwitchNode[] | null} the switches, for the iterations */
    this._nodes = null;
    /** @type {Int32Array | null} the cables as pairs of indices into _nodes */
    this._edges = null;
    /** The model's `structure` the arrays were made for. */
    this._arraysFor = -1;
    /** @type {Sgd | null} the stress layout under way */
    this._sgd = null;
    /** @type {Worker | null | undefined} the forces' worker (undefined: not made yet) */
    this._w = undefined;
    /** Runs handed to the worker; its answers for older ones are dropped. */
    this._run = 0;
    /** @type {import('./model.js').SwitchNode[]} the switches of the run, in its order */
    this._runNodes = [];
    /** The worker is moving things. */
    this._busy = false;
    /** The worker moved things since the last step. */
    this._fresh = false;
    /** Called when the worker moved things (the page draws a frame). */
    this.onmove = () => {};
    /** The `_key()` the layout was last made for. */
    this._seenKey = '';
    /** The switches are drawn in tiers (see `tiers`). */
    this.tiered = false;
    /** Each switch's tier, as a string, when the rows were last made. */
    this._tierKey = '';
  }

  /** Whether the layout still moves things. */
  get active() {
    return this._sgd !== null || this._fresh || this.alpha > FROZEN || this._key() !== this._seenKey;
  }

  /** The worker is moving things (frames come when it posts). */
  get busy() {
    return this._busy;
  }

  /** What decides the layout: the switches and cables, and which switches have hosts. */
  _key() {
    this.model.bySwitch();
    return `${this.model.structure}/${this.model.hostsVersion}`;
  }

  /**
   * Runs iterations for up to `budgetMs` milliseconds; returns whether anything moved.
   * @param {number} budgetMs
   */
  step(budgetMs) {
    const start = performance.now();
    let moved = false;
    const key = this._key();
    if (key !== this._seenKey) {
      const structural = this._seen !== this.model.structure;
      this._seenKey = key;
      const placedNew = this._seed();
      this._seen = this.model.structure;
      const n = this.model.switches.size || 1;
      const tiered = tiers(this.model);
      // The same switches in the same tiers (a cable down or up between them): the rows
      // stay as they are, so the drawing does not jump for a small change.
      const tierKey = tiered ? [...tiered.tier].sort().join(';') : '';
      if (tiered && this.tiered && tierKey === this._tierKey) {
        this._sgd = null;
        return true;
      }
      this._tierKey = tierKey;
      if (tiered) {
        // 1': a data-centre network, in rows.
        for (const [d, [x, y]] of tiered.pos) {
          const s = this.model.switches.get(d);
          if (s) {
            s.x = x;
            s.y = y;
            s.placed = true;
          }
        }
        this._sgd = null;
        this.alpha = 0;
        this.tiered = true;
        return true;
      }
      if (!structural && !this.tiered) return moved;
      this.tiered = false;
      if (n <= SGD_MAX) {
        // A new network from scratch; a change, from where things are.
        this._sgd = prepareSgd(this.model, placedNew / n > 0.5);
        this.alpha = 0;
      } else {
        // A few new switches warm the layout a little; a new network, fully. The
        // worker runs the forces if there is one.
        this._sgd = null;
        this.alpha = Math.max(this.alpha, Math.min(1, 0.15 + placedNew / n));
        this._startWorker();
      }
      moved = true;
    }
    if (this._fresh) {
      this._fresh = false;
      moved = true;
    }
    if (this._sgd) {
      moved = true;
      if (runSgd(this._sgd, start + budgetMs)) this._sgd = null;
      this.iterations = this._sgd ? this._sgd.iter : this.iterations + 1;
      return moved;
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

  /** The switches as an array and the cables as index pairs, made once per structure. */
  _arrays() {
    if (this._arraysFor === this.model.structure && this._nodes) return;
    const nodes = [...this.model.switches.values()];
    /** @type {Map<string, number>} */
    const index = new Map();
    nodes.forEach((s, i) => index.set(s.dpid, i));
    const edges = [];
    for (const c of this.model.cables.values()) {
      const i = index.get(c.a);
      const j = index.get(c.b);
      if (i !== undefined && j !== undefined && i !== j) edges.push(i, j);
    }
    this._nodes = nodes;
    this._edges = Int32Array.from(edges);
    this._arraysFor = this.model.structure;
  }

  /** One iteration of the forces, here (when there is no worker). */
  _iterate() {
    this._arrays();
    const nodes = /** @type {import('./model.js').SwitchNode[]} */ (this._nodes);
    const xs = Float64Array.from(nodes, (s) => s.x);
    const ys = Float64Array.from(nodes, (s) => s.y);
    iterate(xs, ys, /** @type {Int32Array} */ (this._edges), this.alpha);
    nodes.forEach((s, i) => {
      s.x = xs[i];
      s.y = ys[i];
    });
  }

  /** Hands the forces to the worker, from the current places and temperature. */
  _startWorker() {
    const w = this._worker();
    if (!w) return false;
    this._arrays();
    const nodes = /** @type {import('./model.js').SwitchNode[]} */ (this._nodes);
    this._run++;
    this._runNodes = nodes;
    w.postMessage({
      run: this._run,
      xs: Float64Array.from(nodes, (s) => s.x),
      ys: Float64Array.from(nodes, (s) => s.y),
      edges: this._edges,
      alpha: this.alpha,
    });
    this._busy = true;
    this.alpha = 0;
    return true;
  }

  /** The worker, made at first use; null where workers cannot run (it is then here). */
  _worker() {
    if (this._w !== undefined) return this._w;
    this._w = null;
    try {
      if (typeof Worker === 'function') {
        const w = new Worker(new URL('./force-worker.js', import.meta.url), { type: 'module' });
        w.onmessage = (/** @type {MessageEvent} */ e) => {
          const { run, xs, ys, done } = e.data;
          if (run !== this._run) return;
          const nodes = this._runNodes;
          for (let i = 0; i < nodes.length; i++) {
            nodes[i].x = xs[i];
            nodes[i].y = ys[i];
          }
          this.iterations += 1;
          this._fresh = true;
          if (done) this._busy = false;
          this.onmove();
        };
        w.onerror = () => {
          // Forces go on here, from where the worker left them.
          this._w = null;
          this._busy = false;
          this.alpha = Math.max(this.alpha, 0.1);
          this.onmove();
        };
        this._w = w;
      }
    } catch {
      this._w = null;
    }
    return this._w;
  }

  /** Stops the worker (the page is left). */
  stop() {
    this._w?.terminate();
    this._w = null;
    this._busy = false;
  }
}

/**
 * Puts each host in rings around its switch (offsets only: they follow the switch), or
 * in rows under it when the switches are drawn in tiers (`below`).
 * @param {Model} model
 * @param {boolean} below
 */
export function placeHosts(model, below) {
  for (const list of model.bySwitch().values()) {
    if (below) {
      const perRow = 8;
      list.forEach((h, i) => {
        const row = Math.floor(i / perRow);
        const inRow = Math.min(perRow, list.length - row * perRow);
        h.dx = ((i % perRow) - (inRow - 1) / 2) * HOST_ROOM * 2;
        h.dy = 30 + row * HOST_GAP * 2;
      });
      continue;
    }
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

/**
 * A stress layout under way.
 * @typedef {Object} Sgd
 * @property {import('./model.js').SwitchNode[]} nodes
 * @property {Int32Array} pairs i, j, hop distance: three entries a pair
 * @property {number} iter the iteration running
 * @property {number} iters how many to run
 * @property {number} at the next pair of this iteration (an index into pairs / 3)
 * @property {number} etaMax
 * @property {number} lambda the step's decay per iteration
 */

/**
 * Hop distances between the switches of each component, as pairs.
 * @param {Model} model
 * @param {boolean} fresh
 * @returns {Sgd | null}
 */
function prepareSgd(model, fresh) {
  const nodes = [...model.switches.values()];
  const n = nodes.length;
  /** @type {Map<string, number>} */
  const index = new Map();
  nodes.forEach((s, i) => index.set(s.dpid, i));
  /** @type {number[][]} */
  const adj = nodes.map(() => []);
  for (const c of model.cables.values()) {
    const i = index.get(c.a);
    const j = index.get(c.b);
    if (i === undefined || j === undefined || i === j) continue;
    adj[i].push(j);
    adj[j].push(i);
  }
  // Breadth first from each switch; a pair once (i < j).
  const dist = new Int32Array(n);
  const queue = new Int32Array(n);
  /** @type {number[]} */
  const pairs = [];
  let dMax = 1;
  for (let s = 0; s < n; s++) {
    if (adj[s].length === 0) continue;
    dist.fill(-1);
    dist[s] = 0;
    let head = 0;
    let tail = 0;
    queue[tail++] = s;
    while (head < tail) {
      const u = queue[head++];
      for (const v of adj[u]) {
        if (dist[v] < 0) {
          dist[v] = dist[u] + 1;
          queue[tail++] = v;
          if (v > s) {
            pairs.push(s, v, dist[v]);
            if (dist[v] > dMax) dMax = dist[v];
          }
        }
      }
    }
  }
  if (pairs.length === 0) return null;
  // Step sizes (the paper's): from 1/w_min = d_max² down to ε / w_max = 0.1, in world
  // units squared over L²; a warm start begins small so places change little.
  const etaMax = fresh ? dMax * dMax : 1;
  const etaMin = 0.1;
  const iters = fresh ? SGD_FRESH : SGD_WARM;
  return {
    nodes,
    pairs: Int32Array.from(pairs),
    iter: 0,
    iters,
    at: 0,
    etaMax,
    lambda: Math.log(etaMax / etaMin) / Math.max(1, iters - 1),
  };
}

/**
 * Runs the stress layout until `deadline` (performance.now()); returns whether it ended.
 * @param {Sgd} g
 * @param {number} deadline
 */
function runSgd(g, deadline) {
  const { nodes, pairs } = g;
  const count = pairs.length / 3;
  while (g.iter < g.iters) {
    if (g.at === 0) shufflePairs(pairs);
    const eta = g.etaMax * Math.exp(-g.lambda * g.iter);
    while (g.at < count) {
      const end = Math.min(count, g.at + 4096);
      for (let k = g.at; k < end; k++) {
        const a = nodes[pairs[3 * k]];
        const b = nodes[pairs[3 * k + 1]];
        const d = pairs[3 * k + 2];
        const target = d * L;
        let dx = a.x - b.x;
        let dy = a.y - b.y;
        let m = Math.sqrt(dx * dx + dy * dy);
        if (m < 1e-6) {
          dx = Math.random() - 0.5;
          dy = Math.random() - 0.5;
          m = Math.sqrt(dx * dx + dy * dy);
        }
        // w = 1/d²; mu = min(w·eta, 1); each end moves half the error.
        const mu = Math.min(eta / (d * d), 1);
        const r = (mu * (m - target)) / (2 * m);
        const rx = r * dx;
        const ry = r * dy;
        a.x -= rx;
        a.y -= ry;
        b.x += rx;
        b.y += ry;
      }
      g.at = end;
      if (performance.now() >= deadline) return false;
    }
    g.at = 0;
    g.iter++;
  }
  return true;
}

/** Shuffles the (i, j, d) triples in place (Fisher and Yates). */
function shufflePairs(/** @type {Int32Array} */ p) {
  for (let k = p.length / 3 - 1; k > 0; k--) {
    const r = Math.floor(Math.random() * (k + 1));
    for (let o = 0; o < 3; o++) {
      const t = p[3 * k + o];
      p[3 * k + o] = p[3 * r + o];
      p[3 * r + o] = t;
    }
  }
}

/** At most this many switches, rows and switches in a row for the tiered drawing. */
const TIER_MAX_SWITCHES = 400;
const TIER_MAX_ROWS = 6;

/**
 * Rows for a tiered network: tier = hop distance from the nearest switch with hosts;
 * `null` when the network is not like that (no hosts, one tier, a switch out of reach,
 * or too big to read as rows).
 * @param {Model} model
 * @returns {{pos: Map<string, [number, number]>, tier: Map<string, number>} | null}
 */
function tiers(model) {
  const n = model.switches.size;
  if (n < 3 || n > TIER_MAX_SWITCHES) return null;
  const groups = model.bySwitch();
  /** @type {Map<string, string[]>} */
  const adj = new Map();
  for (const d of model.switches.keys()) adj.set(d, []);
  for (const c of model.cables.values()) {
    if (!adj.has(c.a) || !adj.has(c.b) || c.a === c.b) continue;
    adj.get(c.a)?.push(c.b);
    adj.get(c.b)?.push(c.a);
  }
  /** @type {Map<string, number>} */
  const tier = new Map();
  const queue = [];
  for (const d of model.switches.keys()) {
    if ((groups.get(d)?.length ?? 0) > 0) {
      tier.set(d, 0);
      queue.push(d);
    }
  }
  if (queue.length === 0 || queue.length === n) return null;
  for (let i = 0; i < queue.length; i++) {
    const t = /** @type {number} */ (tier.get(queue[i]));
    for (const v of adj.get(queue[i]) ?? []) {
      if (!tier.has(v)) {
        tier.set(v, t + 1);
        queue.push(v);
      }
    }
  }
  if (tier.size !== n) return null;
  /** @type {string[][]} */
  const rows = [];
  for (const [d, t] of tier) (rows[t] ??= []).push(d);
  if (rows.length < 2 || rows.length > TIER_MAX_ROWS) return null;
  // A cable inside a row would be drawn along it, over the switches between: no rows.
  for (const c of model.cables.values()) if (tier.get(c.a) === tier.get(c.b)) return null;
  for (const r of rows) r.sort();
  // Barycentre sweeps: each row ordered by the mean place of its neighbours in the row
  // before, down from the core and back up, four times.
  /** @type {Map<string, number>} */
  const place = new Map();
  const number = () => rows.forEach((r) => r.forEach((d, i) => place.set(d, i - (r.length - 1) / 2)));
  number();
  for (let sweep = 0; sweep < 4; sweep++) {
    const down = sweep % 2 === 0;
    for (let k = 1; k < rows.length; k++) {
      const t = down ? rows.length - 1 - k : k;
      const from = down ? t + 1 : t - 1;
      const bary = (/** @type {string} */ d) => {
        const ns = (adj.get(d) ?? []).filter((v) => tier.get(v) === from);
        return ns.length ? ns.reduce((a, v) => a + (place.get(v) ?? 0), 0) / ns.length : (place.get(d) ?? 0);
      };
      const b = new Map(rows[t].map((d) => [d, bary(d)]));
      rows[t].sort((p, q) => (b.get(p) ?? 0) - (b.get(q) ?? 0) || (p < q ? -1 : 1));
      number();
    }
  }
  // Room for each switch's hosts beside it.
  let widest = 0;
  for (const list of groups.values()) widest = Math.max(widest, list.length);
  const gap = Math.max(L * 1.1, 2 * hostReach(widest) + 12);
  /** @type {Map<string, [number, number]>} */
  const pos = new Map();
  rows.forEach((r, t) => {
    r.forEach((d, i) => pos.set(d, [(i - (r.length - 1) / 2) * gap, -t * L * 1.6]));
  });
  return { pos, tier };
}
