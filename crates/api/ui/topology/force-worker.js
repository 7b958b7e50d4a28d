// The layout's worker: runs the force iterations (force.js) off the page's thread and
// posts the positions back about once a frame, until the layout is frozen or the page
// starts another run (a new `run` message replaces the one under way).
//
// in:  {run: number, xs: Float64Array, ys: Float64Array, edges: Int32Array, alpha: number}
// out: {run: number, xs: Float64Array, ys: Float64Array, done: boolean, iterations: number}

import { iterate, COOLING, FROZEN } from './force.js';

/** The run under way (a newer message makes the older one stop). */
let current = 0;

self.onmessage = (/** @type {MessageEvent} */ e) => {
  const { run, xs, ys, edges } = e.data;
  let alpha = e.data.alpha;
  current = run;
  let iterations = 0;
  const slice = () => {
    if (run !== current) return;
    const start = performance.now();
    while (alpha > FROZEN && performance.now() - start < 16) {
      iterate(xs, ys, edges, alpha);
      alpha *= COOLING;
      iterations++;
    }
    const done = alpha <= FROZEN;
    self.postMessage({ run, xs: xs.slice(), ys: ys.slice(), done, iterations });
    // Back to the event loop between slices, so a new run is seen at once.
    if (!done) setTimeout(slice, 0);
  };
  slice();
};
