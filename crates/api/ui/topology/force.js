// The force iteration of the layout (Fruchterman and Reingold's, with a grid so that an
// iteration is O(n)) on plain arrays, so that it runs the same in the page and in the
// layout's worker (force-worker.js).

/** The length a cable settles to, in world units (a switch is 12 wide). */
export const L = 60;
/** Switches farther apart than this do not push each other. */
export const CUTOFF = 2.5 * L;
/** Each iteration multiplies the temperature by this. */
export const COOLING = 0.98;
/** Below this temperature (a share of L per iteration) the layout stops. */
export const FROZEN = 0.01;

/**
 * One iteration: moves the switches at (xs[i], ys[i]) by the forces, each by at most
 * L·alpha (0.5 at least).
 * @param {Float64Array} xs
 * @param {Float64Array} ys
 * @param {Int32Array} edges the cables as pairs of indices
 * @param {number} alpha the temperature, 1 when hot
 */
export function iterate(xs, ys, edges, alpha) {
  const n = xs.length;
  if (n === 0) return;
  const fx = new Float64Array(n);
  const fy = new Float64Array(n);
  // The grid: cell -> switch indices.
  /** @type {Map<number, number[]>} */
  const grid = new Map();
  for (let i = 0; i < n; i++) {
    const k = key(Math.floor(xs[i] / CUTOFF), Math.floor(ys[i] / CUTOFF));
    let list = grid.get(k);
    if (!list) grid.set(k, (list = []));
    list.push(i);
  }
  // Repulsion between switches in neighbouring cells: L²/d along the unit vector.
  const L2 = L * L;
  for (let i = 0; i < n; i++) {
    const cx = Math.floor(xs[i] / CUTOFF);
    const cy = Math.floor(ys[i] / CUTOFF);
    for (let gx = cx - 1; gx <= cx + 1; gx++) {
      for (let gy = cy - 1; gy <= cy + 1; gy++) {
        const list = grid.get(key(gx, gy));
        if (!list) continue;
        for (const j of list) {
          if (j <= i) continue;
          let dx = xs[i] - xs[j];
          let dy = ys[i] - ys[j];
          let d2 = dx * dx + dy * dy;
          if (d2 > CUTOFF * CUTOFF) continue;
          if (d2 < 1e-6) {
            // Two switches on one spot: nudge apart in a direction of their own.
            dx = (i - j) * 0.01 + Math.random() - 0.5;
            dy = Math.random() - 0.5;
            d2 = dx * dx + dy * dy;
          }
          const f = L2 / d2;
          fx[i] += dx * f;
          fy[i] += dy * f;
          fx[j] -= dx * f;
          fy[j] -= dy * f;
        }
      }
    }
  }
  // Attraction along cables: d²/L along the unit vector.
  for (let e = 0; e < edges.length; e += 2) {
    const i = edges[e];
    const j = edges[e + 1];
    const dx = xs[i] - xs[j];
    const dy = ys[i] - ys[j];
    const f = Math.sqrt(dx * dx + dy * dy) / L;
    fx[i] -= dx * f;
    fy[i] -= dy * f;
    fx[j] += dx * f;
    fy[j] += dy * f;
  }
  // A weak pull to the middle keeps separate components from drifting apart.
  let mx = 0;
  let my = 0;
  for (let i = 0; i < n; i++) {
    mx += xs[i];
    my += ys[i];
  }
  mx /= n;
  my /= n;
  const maxMove = Math.max(0.5, L * alpha);
  for (let i = 0; i < n; i++) {
    fx[i] -= (xs[i] - mx) * 0.01;
    fy[i] -= (ys[i] - my) * 0.01;
    const m = Math.sqrt(fx[i] * fx[i] + fy[i] * fy[i]);
    if (m < 1e-9) continue;
    const move = Math.min(m, maxMove);
    xs[i] += (fx[i] / m) * move;
    ys[i] += (fy[i] / m) * move;
  }
}

/** A grid cell's key: a small integer (fast to hash) for |g| < 2048 cells (300,000
 * units, beyond any drawing; farther cells share keys, which costs time, not
 * correctness). */
function key(/** @type {number} */ gx, /** @type {number} */ gy) {
  return ((gx + 2048) & 4095) * 4096 + ((gy + 2048) & 4095);
}
