// A small canvas line chart: time on x (the last `windowMs`), one or more series on
// y from 0 to a rounded maximum, drawn at the device's pixel ratio. No dependencies.

/**
 * @typedef {object} Series
 * @property {string} name
 * @property {string} color
 */

/**
 * @typedef {object} Sample
 * @property {number} t Date.now() of the sample
 * @property {number[]} v one value per series
 */

/** A "nice" ceiling for an axis: 1, 2 or 5 times a power of ten. @param {number} x */
function niceMax(x) {
  if (!(x > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(x));
  for (const m of [1, 2, 5, 10]) if (m * p >= x) return m * p;
  return 10 * p;
}

/** @param {number} v */
function short(v) {
  if (v >= 1e6) return `${(v / 1e6).toFixed(v % 1e6 ? 1 : 0)}M`;
  if (v >= 1e3) return `${(v / 1e3).toFixed(v % 1e3 ? 1 : 0)}k`;
  return String(Math.round(v * 100) / 100);
}

export class LineChart {
  /**
   * @param {HTMLCanvasElement} canvas
   * @param {Series[]} series
   * @param {number} windowMs how much time the x axis shows
   */
  constructor(canvas, series, windowMs) {
    this.canvas = canvas;
    this.series = series;
    this.windowMs = windowMs;
    /** @type {Sample[]} */
    this.samples = [];
    this.resize = new ResizeObserver(() => this.draw());
    this.resize.observe(canvas);
  }

  /** @param {Sample[]} samples */
  update(samples) {
    this.samples = samples;
    this.draw();
  }

  destroy() {
    this.resize.disconnect();
  }

  draw() {
    const c = this.canvas;
    const dpr = window.devicePixelRatio || 1;
    const w = c.clientWidth;
    const hgt = c.clientHeight;
    if (!w || !hgt) return;
    if (c.width !== Math.round(w * dpr) || c.height !== Math.round(hgt * dpr)) {
      c.width = Math.round(w * dpr);
      c.height = Math.round(hgt * dpr);
    }
    const g = /** @type {CanvasRenderingContext2D} */ (c.getContext('2d'));
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, w, hgt);
    const left = 44;
    const right = 8;
    const top = 8;
    const bottom = 20;
    const pw = w - left - right;
    const ph = hgt - top - bottom;
    const now = Date.now();
    const t0 = now - this.windowMs;
    const seen = this.samples.filter((s) => s.t >= t0);
    let max = 0;
    for (const s of seen) for (const v of s.v) if (Number.isFinite(v) && v > max) max = v;
    const ymax = niceMax(max);
    // Grid and labels.
    g.font = '11px system-ui, sans-serif';
    g.fillStyle = '#57606a';
    g.strokeStyle = '#d0d7de';
    g.lineWidth = 1;
    g.textBaseline = 'middle';
    g.textAlign = 'right';
    for (let i = 0; i <= 4; i++) {
      const y = top + ph - (ph * i) / 4;
      g.beginPath();
      g.moveTo(left, Math.round(y) + 0.5);
      g.lineTo(left + pw, Math.round(y) + 0.5);
      g.stroke();
      g.fillText(short((ymax * i) / 4), left - 6, y);
    }
    g.textAlign = 'center';
    g.textBaseline = 'top';
    const mins = this.windowMs / 60000;
    for (let m = 0; m <= mins; m++) {
      const x = left + pw - (pw * m) / mins;
      g.fillText(m === 0 ? 'now' : `−${m} min`, Math.min(Math.max(x, left + 14), left + pw - 10), top + ph + 5);
    }
    // Lines.
    g.lineWidth = 2;
    g.lineJoin = 'round';
    this.series.forEach((ser, k) => {
      g.strokeStyle = ser.color;
      g.beginPath();
      let started = false;
      for (const s of seen) {
        const v = s.v[k];
        if (!Number.isFinite(v)) {
          started = false;
          continue;
        }
        const x = left + ((s.t - t0) / this.windowMs) * pw;
        const y = top + ph - (v / ymax) * ph;
        if (started) g.lineTo(x, y);
        else g.moveTo(x, y);
        started = true;
      }
      g.stroke();
    });
  }
}
