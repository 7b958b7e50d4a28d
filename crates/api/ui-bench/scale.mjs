// The web UI's scale benchmark: opens the UI of a running Pharos in headless Chromium
// (Debian's, never a downloaded one) and measures what issue 14 sets targets for.
//
//   node scale.mjs http://127.0.0.1:PORT SWITCHES HOSTS [OUT.json]
//
// 1. Time to first topology render: navigation start to the first frame whose canvas
//    says it drew every switch (`data-switches`, `data-rendered-at`).
// 2. Time to interactive: navigation start to the end of the last long task (> 50 ms,
//    PerformanceObserver "longtask") before a quiet second, at the earliest the first
//    full render (Lighthouse's definition with a one-second window instead of five).
// 3. Frame times while panning the topology (hosts shown): a drag of 3 s, one mouse
//    move per 16 ms; every requestAnimationFrame delta is kept; p50, p95, the share
//    under 33 ms.
// 4. Frame times while scrolling the hosts table (/hosts): wheel steps every 16 ms for
//    3 s over the virtualised list.
// 5. Memory: the tab's JS heap (CDP Performance.getMetrics) and its renderer process's
//    resident memory (/proc), after the above.
//
// Prints one JSON object; screenshots go next to OUT.json when given.

import { chromium } from 'playwright-core';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const [base, nSwitches, nHosts, out] = process.argv.slice(2);
if (!base || !nSwitches) {
  console.error('usage: node scale.mjs URL SWITCHES HOSTS [OUT.json]');
  process.exit(2);
}
const wantSwitches = Number(nSwitches);
const outDir = out ? path.dirname(out) : null;

const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'pharos-ui-bench-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  viewport: { width: 1400, height: 900 },
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
    '--enable-precise-memory-info',
  ],
});
const result = { url: base, switches: wantSwitches, hosts: Number(nHosts) };
try {
  const page = context.pages()[0] ?? (await context.newPage());
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  await page.addInitScript((want) => {
    // Long tasks and the first full render, recorded from the start.
    /** @type {any} */ (window).__bench = { longtasks: [], firstFull: null };
    const b = /** @type {any} */ (window).__bench;
    new PerformanceObserver((l) => {
      for (const e of l.getEntries()) b.longtasks.push([e.startTime, e.startTime + e.duration]);
    }).observe({ type: 'longtask', buffered: true });
    new MutationObserver(() => {
      const c = document.getElementById('topology-canvas');
      if (b.firstFull === null && c && Number(c.dataset.switches) >= want) b.firstFull = Number(c.dataset.renderedAt);
    }).observe(document, { subtree: true, attributes: true, attributeFilter: ['data-rendered-at'] });
  }, wantSwitches);

  // 1, 2: load with hosts shown.
  await page.goto(`${base}/?hosts=1`);
  await page.waitForFunction(() => /** @type {any} */ (window).__bench.firstFull !== null, null, { timeout: 60000 });
  // A quiet second: no long task in the last 1000 ms.
  await page.waitForFunction(
    () => {
      const b = /** @type {any} */ (window).__bench;
      const last = b.longtasks.length ? b.longtasks[b.longtasks.length - 1][1] : 0;
      return performance.now() - Math.max(last, b.firstFull) > 1000;
    },
    null,
    { timeout: 60000, polling: 100 },
  );
  const load = await page.evaluate(() => {
    const b = /** @type {any} */ (window).__bench;
    const ends = b.longtasks.map((t) => t[1]);
    return {
      first_render_ms: b.firstFull,
      interactive_ms: Math.max(b.firstFull, ...ends, 0),
      long_tasks: b.longtasks.length,
      longest_task_ms: Math.max(0, ...b.longtasks.map((t) => t[1] - t[0])),
      dom_content_loaded_ms: performance.getEntriesByType('navigation')[0]?.domContentLoadedEventEnd ?? null,
    };
  });
  Object.assign(result, load);
  result.drawn = await page.$eval('#topology-canvas', (c) => ({ ...c.dataset }));
  // Let the layout finish (frames stop), then screenshot the whole network.
  await page.waitForFunction(
    () => {
      const c = document.getElementById('topology-canvas');
      const t = Number(c?.dataset.renderedAt ?? 0);
      return performance.now() - t > 1500;
    },
    null,
    { timeout: 60000, polling: 250 },
  );
  result.layout_settled_ms = await page.$eval('#topology-canvas', (c) => Number(c.dataset.renderedAt));
  if (outDir) await page.screenshot({ path: path.join(outDir, 'topology-fit.png') });

  // 3: pan by dragging for 3 s (hosts shown), zoomed in twice so culling and labels work
  // as a user sees them, then at the fitted view.
  const box = await page.$eval('#topology-canvas', (c) => {
    const r = c.getBoundingClientRect();
    return { x: r.left, y: r.top, w: r.width, h: r.height };
  });
  const pan = async (label) => {
    await recordFrames(page);
    const cx = box.x + box.w / 2;
    const cy = box.y + box.h / 2;
    await page.mouse.move(cx, cy);
    await page.mouse.down();
    const start = Date.now();
    let i = 0;
    while (Date.now() - start < 3000) {
      const a = (i++ / 60) * 2 * Math.PI;
      await page.mouse.move(cx + Math.cos(a) * 200, cy + Math.sin(a) * 150);
      await page.waitForTimeout(16);
    }
    await page.mouse.up();
    const frames = await page.evaluate(() => {
      const b = /** @type {any} */ (window).__bench;
      b.recording = false;
      return b.frames;
    });
    result[label] = summarise(frames);
  };
  await pan('pan_fit');
  await page.focus('#topology-canvas');
  await page.keyboard.press('0');
  await page.keyboard.press('+');
  await page.keyboard.press('+');
  await page.keyboard.press('+');
  await page.waitForTimeout(300);
  await pan('pan_zoomed');
  if (outDir) await page.screenshot({ path: path.join(outDir, 'topology-zoomed.png') });

  // 5 (topology): memory with the topology shown.
  result.memory_topology = await memory(page, profile);

  // 4: the hosts table.
  await page.goto(`${base}/hosts`);
  const table = await page.waitForSelector('#hosts', { timeout: 15000 }).catch(() => null);
  if (!table) {
    result.scroll_hosts = 'not measured: no #hosts on /hosts';
  } else {
    await page.waitForFunction(
      (want) => Number(document.getElementById('hosts')?.getAttribute('aria-rowcount') ?? 0) >= want,
      Number(nHosts),
      { timeout: 30000 },
    ).catch(() => {});
    result.hosts_rowcount = await table.getAttribute('aria-rowcount');
    const hb = await table.boundingBox();
    await recordFrames(page);
    if (hb) await page.mouse.move(hb.x + hb.width / 2, hb.y + Math.min(hb.height / 2, 300));
    const start = Date.now();
    while (Date.now() - start < 3000) {
      await page.mouse.wheel(0, 400);
      await page.waitForTimeout(16);
    }
    const frames = await page.evaluate(() => {
      const b = /** @type {any} */ (window).__bench;
      b.recording = false;
      return b.frames;
    });
    result.scroll_hosts = summarise(frames);
    result.memory_hosts = await memory(page, profile);
    if (outDir) await page.screenshot({ path: path.join(outDir, 'hosts-scrolled.png') });
  }
  result.errors = errors;
} finally {
  await context.close();
  fs.rmSync(profile, { recursive: true, force: true });
}
const text = JSON.stringify(result, null, 2);
if (out) fs.writeFileSync(out, text);
console.log(text);

/** Frame deltas as p50, p95, max and the share under 33 ms. */
function summarise(/** @type {number[]} */ frames) {
  const f = frames.filter((d) => d > 0).sort((a, b) => a - b);
  const q = (p) => (f.length ? f[Math.min(f.length - 1, Math.floor(p * f.length))] : null);
  const round = (v) => (v === null ? null : Math.round(v * 10) / 10);
  return {
    frames: f.length,
    p50_ms: round(q(0.5)),
    p95_ms: round(q(0.95)),
    max_ms: round(f.length ? f[f.length - 1] : null),
    under_33ms: f.length ? Math.round((f.filter((d) => d < 33).length / f.length) * 1000) / 10 : null,
  };
}

/** The tab's JS heap (CDP) and its renderer's resident memory (/proc), in MB. */
async function memory(page, profileDir) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Performance.enable');
  await cdp.send('HeapProfiler.collectGarbage').catch(() => {});
  const { metrics } = await cdp.send('Performance.getMetrics');
  const m = Object.fromEntries(metrics.map((x) => [x.name, x.value]));
  await cdp.detach();
  // The renderer processes of this browser (its profile directory is in their
  // command line); one tab, one renderer.
  let rss = 0;
  for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!cmd.includes('--type=renderer') || cmd.includes('--extension-process')) continue;
      if (!cmd.includes(path.basename(profileDir)) && !isChildOfProfile(pid, profileDir)) continue;
      const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
      const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
      rss = Math.max(rss, kb);
    } catch {
      /* gone */
    }
  }
  const mb = (v) => Math.round((v / 1048576) * 10) / 10;
  return {
    js_heap_used_mb: mb(m.JSHeapUsedSize ?? 0),
    js_heap_total_mb: mb(m.JSHeapTotalSize ?? 0),
    renderer_rss_mb: Math.round((rss / 1024) * 10) / 10,
    dom_nodes: m.Nodes ?? null,
  };
}

/** Whether process `pid` descends from a browser started with `profileDir`. */
function isChildOfProfile(pid, profileDir) {
  let p = pid;
  for (let depth = 0; depth < 5; depth++) {
    const stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
    const ppid = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1];
    if (!ppid || ppid === '0' || ppid === '1') return false;
    const cmd = fs.readFileSync(`/proc/${ppid}/cmdline`, 'utf8');
    if (cmd.includes(profileDir)) return true;
    p = ppid;
  }
  return false;
}

/** Starts recording every frame's time since the one before (into `window.__bench.frames`,
 * until `recording` is set false). */
async function recordFrames(page) {
  await page.evaluate(() => {
    const b = /** @type {any} */ (window).__bench;
    b.frames = [];
    b.recording = true;
    let last = performance.now();
    const tick = (t) => {
      if (!b.recording) return;
      b.frames.push(t - last);
      last = t;
      requestAnimationFrame(tick);
    };
    requestAnimationFrame((t) => {
      last = t;
      requestAnimationFrame(tick);
    });
  });
}
