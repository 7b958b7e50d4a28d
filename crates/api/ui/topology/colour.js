// Link colours by utilisation: a scale in eleven steps (0 %, 10 %, ... 100 %) from green
// through amber to red, and grey for "not known" (no rates yet, or a port whose speed
// the switch does not report). Steps, not a continuous scale, so that the renderer
// strokes at most twelve paths a frame.

/** The scale's stops: utilisation and colour. */
const STOPS = /** @type {[number, [number, number, number]][]} */ ([
  [0, [47, 158, 68]],
  [0.3, [116, 184, 22]],
  [0.6, [245, 159, 0]],
  [0.8, [247, 103, 7]],
  [1, [201, 42, 42]],
]);

/** The colour of a link whose utilisation is not known. */
export const UNKNOWN = '#98a2b3';

/** The colour of step `i` of 0..10. */
function stepColour(/** @type {number} */ i) {
  const u = i / 10;
  let k = 1;
  while (k < STOPS.length - 1 && STOPS[k][0] < u) k++;
  const [u0, c0] = STOPS[k - 1];
  const [u1, c1] = STOPS[k];
  const t = u1 === u0 ? 0 : (u - u0) / (u1 - u0);
  const c = c0.map((v, j) => Math.round(v + (c1[j] - v) * t));
  return `rgb(${c[0]}, ${c[1]}, ${c[2]})`;
}

/** The eleven colours, step 0 (idle) to step 10 (full). */
export const STEPS = Array.from({ length: 11 }, (_, i) => stepColour(i));

/**
 * The step of a utilisation (0..1, more is clamped), or -1 when it is not known.
 * @param {number | null | undefined} u
 */
export function step(u) {
  if (u === null || u === undefined || !Number.isFinite(u)) return -1;
  return Math.max(0, Math.min(10, Math.round(u * 10)));
}

/** Builds the legend: a row of swatches with their labels. */
export function legend(/** @type {Document} */ doc) {
  const box = doc.createElement('div');
  box.className = 'topo-legend';
  box.setAttribute('role', 'group');
  box.setAttribute('aria-label', 'Link utilisation legend');
  const title = doc.createElement('span');
  title.className = 'topo-legend-title';
  title.textContent = 'Link utilisation';
  box.append(title);
  for (const [label, colour] of [
    ['0 %', STEPS[0]],
    ['30 %', STEPS[3]],
    ['60 %', STEPS[6]],
    ['80 %', STEPS[8]],
    ['100 %', STEPS[10]],
    ['unknown', UNKNOWN],
  ]) {
    const item = doc.createElement('span');
    item.className = 'topo-legend-item';
    const sw = doc.createElement('span');
    sw.className = 'topo-swatch';
    sw.style.backgroundColor = colour;
    sw.setAttribute('aria-hidden', 'true');
    item.append(sw, doc.createTextNode(label));
    box.append(item);
  }
  return box;
}
