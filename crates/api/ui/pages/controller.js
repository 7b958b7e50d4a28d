// Controller: its facts, and live charts of the last 5 minutes sampled from
// GET /api/v1/controller every second: PACKET_INs/s, messages in and out per second,
// switches connected, admission refusals per second. Each chart has a text summary.

import { h, num, rate, ago, errorBox, every } from '../dom.js';
import { LineChart } from '../chart.js';

const WINDOW = 5 * 60 * 1000;

/**
 * Samples kept while the page is away, so coming back shows what was seen.
 * @type {{t: number, pps: number, inRate: number, outRate: number, switches: number, refusals: number}[]}
 */
const history = [];
/** @type {{t: number, msgsIn: number, msgsOut: number, refused: number} | null} */
let previous = null;

/** @param {Record<string, number>} m */
const sum = (m) => Object.values(m || {}).reduce((a, b) => a + b, 0);

/**
 * @param {HTMLElement} el
 * @param {import('../app.js').PageContext} ctx
 */
export function mount(el, ctx) {
  ctx.setTitle('Controller');
  const facts = h('dl', { class: 'facts' });
  const error = h('div');
  /**
   * @param {string} label
   * @param {{name: string, color: string}[]} series
   */
  const chart = (label, series) => {
    const canvas = h('canvas', { role: 'img', 'aria-label': label });
    const text = h('p', { 'aria-live': 'off' });
    const legend = series.length > 1
      ? h('p', { class: 'legend' }, ...series.map((s) => h('span', { class: `swatch swatch-${s.color.slice(1)}` }, s.name)))
      : null;
    const box = h('section', { class: 'chart' }, h('h2', {}, label), canvas, legend, text);
    return { box, text, chart: new LineChart(canvas, series, WINDOW) };
  };
  const charts = {
    pps: chart('PACKET_INs per second', [{ name: 'PACKET_INs/s', color: '#0b5cad' }]),
    msgs: chart('Messages in and out', [
      { name: 'in/s', color: '#0b5cad' },
      { name: 'out/s', color: '#bc4c00' },
    ]),
    switches: chart('Switches connected', [{ name: 'switches', color: '#116329' }]),
    refusals: chart('Admission refusals', [{ name: 'refusals/s', color: '#a40e26' }]),
  };
  el.append(
    h('h1', {}, 'Controller'),
    error,
    facts,
    h('div', { class: 'charts' }, ...Object.values(charts).map((c) => c.box)),
  );

  /** @param {number[]} vs @param {(v: number) => string} f */
  const describe = (vs, f) => {
    if (!vs.length) return 'No samples yet.';
    const max = Math.max(...vs);
    const mean = vs.reduce((a, b) => a + b, 0) / vs.length;
    return `Now ${f(vs[vs.length - 1])}; over the last ${ago(Math.min(WINDOW, Date.now() - history[0].t) / 1000)}: mean ${f(mean)}, peak ${f(max)}.`;
  };

  async function sample() {
    /** @type {any} */
    let info;
    try {
      info = await ctx.api.get('controller');
      error.replaceChildren();
    } catch (e) {
      error.replaceChildren(errorBox(e));
      return;
    }
    const c = info.counters;
    const t = Date.now();
    const now = { t, msgsIn: sum(c.msgs_in), msgsOut: sum(c.msgs_out), refused: sum(c.refused) };
    const dt = previous ? (t - previous.t) / 1000 : 0;
    const ok = previous && dt > 0 && dt < 10;
    history.push({
      t,
      pps: c.packet_ins_per_sec,
      inRate: ok && previous ? Math.max(0, (now.msgsIn - previous.msgsIn) / dt) : NaN,
      outRate: ok && previous ? Math.max(0, (now.msgsOut - previous.msgsOut) / dt) : NaN,
      switches: c.connected_switches,
      refusals: ok && previous ? Math.max(0, (now.refused - previous.refused) / dt) : NaN,
    });
    previous = now;
    while (history.length && history[0].t < t - WINDOW) history.shift();
    const rows = [
      ['Version', info.version],
      ['Up for', ago(info.uptime_secs)],
      ['Workers', String(info.workers)],
      ['OpenFlow listens on', info.listen.join(', ')],
      ['Apps', info.apps.join(', ')],
      ['Switches connected', num(c.connected_switches)],
      ['PACKET_INs', num(c.packet_ins)],
      ['Refused connections', num(now.refused)],
    ];
    facts.replaceChildren(...rows.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
    draw();
  }

  function draw() {
    const finite = (/** @type {number} */ v) => Number.isFinite(v);
    charts.pps.chart.update(history.map((s) => ({ t: s.t, v: [s.pps] })));
    charts.pps.text.textContent = describe(history.map((s) => s.pps), (v) => rate(v));
    charts.msgs.chart.update(history.map((s) => ({ t: s.t, v: [s.inRate, s.outRate] })));
    const ins = history.map((s) => s.inRate).filter(finite);
    const outs = history.map((s) => s.outRate).filter(finite);
    charts.msgs.text.textContent = `In: ${describe(ins, (v) => rate(v))} Out: ${describe(outs, (v) => rate(v))}`;
    charts.switches.chart.update(history.map((s) => ({ t: s.t, v: [s.switches] })));
    charts.switches.text.textContent = describe(history.map((s) => s.switches), (v) => num(Math.round(v)));
    charts.refusals.chart.update(history.map((s) => ({ t: s.t, v: [s.refusals] })));
    charts.refusals.text.textContent = describe(history.map((s) => s.refusals).filter(finite), (v) => rate(v));
  }

  draw();
  const stop = every(sample, 1000);
  return {
    update() {},
    unmount() {
      stop();
      Object.values(charts).forEach((c) => c.chart.destroy());
    },
  };
}
