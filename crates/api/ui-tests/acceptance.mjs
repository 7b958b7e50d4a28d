// Issue 14's browser acceptance: Debian's chromium driven by playwright-core against a
// Pharos serving its UI, with an Open vSwitch `fattree,4` lab behind it.
//
// Run by crates/pharos/tests/lab_ui.rs, which owns the lab and the `pharos run` process
// and does what only it can on request: this script writes `@@ctl {"op": ...}` lines on
// stdout and reads one JSON answer per request on stdin (take a cable down or up, dump a
// switch's flows, stop or start Pharos). Its own log goes to stderr.
//
// Environment (set by lab_ui.rs):
//   PHAROS_UI_URL        http://127.0.0.1:PORT, the UI and API
//   PHAROS_UI_TOKEN      the API token writes need
//   PHAROS_UI_LAB        JSON: {switches, links, hosts, flow_dpid, flow_switch, host_mac,
//                        host_macs}
//   PHAROS_UI_ARTEFACTS  where the screenshots go (target/ui-artefacts)
//
// Every phase runs even when one before it failed (each failure is reported with a
// screenshot, fail-*.png); the exit status is 1 when any check failed. Guards over the
// whole run: no console error, no uncaught exception, no request to another origin, and
// axe-core finds no serious or critical violation on any page.

import { chromium } from 'playwright-core';
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import readline from 'node:readline';

const require = createRequire(import.meta.url);
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

const BASE = mustEnv('PHAROS_UI_URL').replace(/\/+$/, '');
const ORIGIN = new URL(BASE).origin;
const TOKEN = mustEnv('PHAROS_UI_TOKEN');
const LAB = JSON.parse(mustEnv('PHAROS_UI_LAB'));
const ARTEFACTS = mustEnv('PHAROS_UI_ARTEFACTS');
/** The whole run's budget; the Rust side kills us a little later. */
const BUDGET_MS = 170_000;
/** How soon a cable taken down must leave the view (the acceptance). */
const LINK_VIEW_MS = 2_000;

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

function mustEnv(name) {
  const v = process.env[name];
  if (!v) {
    console.error(`acceptance.mjs: ${name} is not set (run by crates/pharos/tests/lab_ui.rs)`);
    process.exit(2);
  }
  return v;
}

const t0 = Date.now();
function log(...args) {
  const s = ((Date.now() - t0) / 1000).toFixed(1).padStart(6);
  console.error(`[${s}s]`, ...args);
}

// ---------------------------------------------------------------------------------------
// The control channel to lab_ui.rs.

const lines = readline.createInterface({ input: process.stdin });
/** @type {((v: any) => void)[]} */
const waiting = [];
lines.on('line', (l) => {
  const r = waiting.shift();
  if (r) r(JSON.parse(l));
});

/** Asks lab_ui.rs to do `op`; resolves to its answer, throws on its error. */
async function ctl(op, args = {}) {
  const answer = new Promise((resolve) => waiting.push(resolve));
  process.stdout.write(`@@ctl ${JSON.stringify({ op, ...args })}\n`);
  const a = await answer;
  if (!a.ok) throw new Error(`lab_ui.rs could not ${op}: ${a.error}`);
  return a;
}

// ---------------------------------------------------------------------------------------
// Checks, guards and artefacts.

/** @type {{phase: string, ok: boolean, detail: string, ms: number}[]} */
const results = [];
const guards = { console: [], pageErrors: [], otherOrigin: [], axe: [], allowedConsole: 0 };
/** Console errors a phase expects, each `{name, test(text, url)}`, active while listed. */
const allowances = new Set();
let shot = 0;

/** Runs a phase; a failure is recorded (with a screenshot) and the next phase runs. */
async function phase(name, page, fn) {
  const start = Date.now();
  log(`phase: ${name}`);
  try {
    const detail = (await fn()) || '';
    results.push({ phase: name, ok: true, detail, ms: Date.now() - start });
    log(`  ok ${detail}`);
  } catch (e) {
    const detail = String(e && e.stack ? e.stack : e).split('\n').slice(0, 6).join('\n    ');
    results.push({ phase: name, ok: false, detail, ms: Date.now() - start });
    log(`  FAILED: ${detail}`);
    if (page) await screenshot(page, `fail-${name}`).catch(() => {});
  } finally {
    allowances.clear();
  }
}

function assert(cond, msg) {
  if (!cond) throw new Error(msg);
}

/** A screenshot under ARTEFACTS, numbered in the order taken. */
async function screenshot(page, name) {
  shot += 1;
  const file = path.join(ARTEFACTS, `${String(shot).padStart(2, '0')}-${name.replace(/[^a-z0-9-]+/gi, '-')}.png`);
  // The viewport (1280x800), not the full page: a flow table thousands of pixels long
  // cannot be looked at.
  await page.screenshot({ path: file });
  log(`  screenshot ${file}`);
  return file;
}

/** axe-core in the page: every serious or critical violation is kept for the report. */
async function axeCheck(page, where) {
  // Evaluated through the DevTools protocol, so the page's CSP (script-src 'self') need
  // not be loosened for the test.
  await page.evaluate(AXE_SOURCE);
  const { passes, violations } = await page.evaluate(async () => {
    // @ts-ignore axe is the script just evaluated
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return { passes: r.passes.length, violations: r.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.slice(0, 4).map((n) => `${n.target.join(' ')}: ${n.failureSummary || ''}`.slice(0, 300)),
    })) };
  });
  log(`  axe: ${passes} rules passed, ${violations.length} violated`);
  for (const v of violations) {
    const line = `${where}: ${v.impact} ${v.id} (${v.help}) at ${v.nodes.join(' | ')}`;
    if (v.impact === 'serious' || v.impact === 'critical') guards.axe.push(line);
    else log(`  axe (${v.impact}, tolerated): ${line}`);
  }
}

/** Page is ready and checked: screenshot and axe. */
async function snapshot(page, name) {
  await screenshot(page, name);
  await axeCheck(page, name);
}

function watch(context, page) {
  context.on('request', (req) => {
    const u = new URL(req.url());
    if (u.protocol === 'data:' || u.protocol === 'blob:') return;
    if (u.origin !== ORIGIN) guards.otherOrigin.push(req.url());
  });
  page.on('console', (msg) => {
    if (msg.type() !== 'error') return;
    const text = msg.text();
    const url = (msg.location() && msg.location().url) || '';
    for (const a of allowances) {
      if (a.test(text, url)) {
        guards.allowedConsole += 1;
        log(`  console error expected by ${a.name}: ${text}`);
        return;
      }
    }
    guards.console.push(`${text} (at ${url})`);
    log(`  CONSOLE ERROR: ${text} (at ${url})`);
  });
  page.on('pageerror', (e) => {
    guards.pageErrors.push(String(e));
    log(`  UNCAUGHT: ${e}`);
  });
  // window.confirm() and the like are accepted (and said).
  page.on('dialog', (d) => {
    log(`  browser dialog (${d.type()}): ${d.message()}: accepted`);
    void d.accept();
  });
}

/** The browser logs a refused request itself ("Failed to load resource: ... 400"). */
function allowFailedLoad(name, urlPart, statuses) {
  allowances.add({
    name,
    test: (text, url) =>
      text.startsWith('Failed to load resource') &&
      url.includes(urlPart) &&
      statuses.some((s) => text.includes(`status of ${s}`)),
  });
}

// In every document before its scripts: counts the token dialog's openings per browser
// session (sessionStorage, so a reload keeps counting), and marks the document so that a
// reload shows (the mark is gone).
function initScript() {
  const key = '__pharosTestTokenAsks';
  new MutationObserver((records) => {
    for (const r of records) {
      const t = /** @type {Element} */ (r.target);
      if (t.id === 'token-dialog' && t.hasAttribute('open') && r.oldValue === null) {
        sessionStorage.setItem(key, String(Number(sessionStorage.getItem(key) || '0') + 1));
      }
    }
  }).observe(document, { subtree: true, attributes: true, attributeFilter: ['open'], attributeOldValue: true });
}

async function tokenAsks(page) {
  return page.evaluate(() => Number(sessionStorage.getItem('__pharosTestTokenAsks') || '0'));
}

async function markDocument(page) {
  const mark = `doc-${Math.random()}`;
  await page.evaluate((m) => {
    // @ts-ignore a test mark
    window.__pharosTestMark = m;
  }, mark);
  return mark;
}

async function sameDocument(page, mark) {
  // @ts-ignore the test mark
  return (await page.evaluate(() => window.__pharosTestMark)) === mark;
}

// ---------------------------------------------------------------------------------------
// Page helpers following the selector contract (I14PLAN.md).

const canvas = (page) => page.locator('#topology-canvas');

/** The canvas's drawn counts. */
async function drawn(page) {
  return page.evaluate(() => {
    const c = document.getElementById('topology-canvas');
    if (!c) return null;
    return {
      switches: Number(c.dataset.switches),
      links: Number(c.dataset.links),
      hosts: Number(c.dataset.hosts),
      renderedAt: Number(c.dataset.renderedAt),
    };
  });
}

/** Waits until the canvas draws `want` (a subset of switches/links/hosts). */
async function waitDrawn(page, want, timeout) {
  try {
    await page.waitForFunction(
      (w) => {
        const c = document.getElementById('topology-canvas');
        if (!c) return false;
        return Object.entries(w).every(([k, v]) => Number(c.dataset[k]) === v);
      },
      want,
      { timeout, polling: 50 },
    );
  } catch {
    throw new Error(`the canvas never drew ${JSON.stringify(want)} in ${timeout} ms; it drew ${JSON.stringify(await drawn(page))}`);
  }
}

/** A tab of the switch page: a tab, button or link named `name`. */
function tab(page, name) {
  const main = page.locator('main');
  return main
    .getByRole('tab', { name, exact: true })
    .or(main.getByRole('button', { name, exact: true }))
    .or(main.getByRole('link', { name, exact: true }))
    .first();
}

/** A nav link ("Topology", "Switches", ...). */
function nav(page, name) {
  return page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name, exact: true });
}

/**
 * Presses Tab (at most `max` times) until the focused element satisfies `pred` (given
 * `{tag, text, label, table}`: its tag name, text, aria-label and the id of the table it
 * is in); the number of presses, 0 when never reached. Keyboard only: nothing is clicked.
 */
async function tabTo(page, pred, max = 250) {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab');
    const el = await page.evaluate(() => {
      const a = document.activeElement;
      if (!a || a === document.body) return null;
      const t = a.closest('table, [role=table]');
      return {
        tag: a.tagName,
        text: (a.textContent || '').trim(),
        label: a.getAttribute('aria-label'),
        table: t ? t.id : null,
      };
    });
    if (el && pred(el)) return i + 1;
  }
  return 0;
}

async function api(pathname) {
  const r = await fetch(`${BASE}/api/v1${pathname}`, { headers: { Authorization: `Bearer ${TOKEN}` } });
  assert(r.ok, `GET /api/v1${pathname}: ${r.status}`);
  return r.json();
}

async function appState(name) {
  const apps = await api('/apps');
  const a = apps.find((x) => x.name === name);
  return a ? a.state : `(no app ${name})`;
}

/** Polls `fn` until it returns truthy or `ms` pass; the last value. */
async function poll(ms, fn, every = 100) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, every));
  }
}

function param(page, name) {
  return new URL(page.url()).searchParams.get(name);
}

// ---------------------------------------------------------------------------------------

const FLOW = 'priority=300,dl_dst=00:00:00:00:00:99,actions=drop';
const BAD_FLOW = 'priority=300,dl_dts=00:00:00:00:00:99,actions=drop';

async function main() {
  mkdirSync(ARTEFACTS, { recursive: true });
  const killer = setTimeout(() => {
    log(`the run passed its budget of ${BUDGET_MS / 1000} s`);
    report();
    process.exit(1);
  }, BUDGET_MS);

  // A fresh profile: launch() gives every run a new temporary user-data-dir.
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: CHROMIUM_ARGS,
  });
  log(`chromium ${browser.version()}`);
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await context.addInitScript(initScript);
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  watch(context, page);

  const dpid = LAB.flow_dpid;

  await phase('topology', page, async () => {
    await page.goto(`${BASE}/`);
    await waitDrawn(page, { switches: LAB.switches, links: LAB.links }, 20_000);
    const label = page.getByLabel('Show hosts');
    await label.check();
    await waitDrawn(page, { switches: LAB.switches, links: LAB.links, hosts: LAB.hosts }, 10_000);
    assert(param(page, 'hosts') === '1', `"Show hosts" is not in the URL: ${page.url()}`);
    await page.waitForTimeout(300);
    await snapshot(page, 'topology-with-hosts');
    const d = await drawn(page);
    return `drew ${JSON.stringify(d)}`;
  });

  await phase('link-down-live', page, async () => {
    const mark = await markDocument(page);
    const before = await drawn(page);
    assert(before && before.links === LAB.links, `not at ${LAB.links} links before: ${JSON.stringify(before)}`);
    const down = await ctl('link', { state: 'down' });
    const t = Date.now();
    await waitDrawn(page, { links: LAB.links - 1 }, LINK_VIEW_MS);
    const took = Date.now() - t;
    // The Details panel (nothing selected) follows the live model: its summary counts
    // the cable that went down.
    // (Checked after the cable is up again, so that a failure leaves the lab whole.)
    const summary = (n) =>
      page
        .locator('#details')
        .getByText(`${n} links`)
        .waitFor({ timeout: 2_000 })
        .then(
          () => null,
          () => page.locator('#details').innerText(),
        );
    const stale = await summary(LAB.links - 1);
    await screenshot(page, 'topology-link-down');
    assert(await sameDocument(page, mark), 'the page was reloaded');
    await ctl('link', { state: 'up' });
    await waitDrawn(page, { links: LAB.links }, 20_000);
    assert(stale === null, `with the cable down the Details summary does not say ${LAB.links - 1} links: ${JSON.stringify(stale)}`);
    const back = await summary(LAB.links);
    assert(back === null, `with the cable up again the Details summary does not say ${LAB.links} links: ${JSON.stringify(back)}`);
    assert(await sameDocument(page, mark), 'the page was reloaded');
    return `${down.what}: ${LAB.links - 1} links drawn ${took} ms after the command returned; back to ${LAB.links} after up; no reload`;
  });

  await phase('select-and-reload', page, async () => {
    const find = page.getByLabel('Find', { exact: true });
    await find.fill(dpid);
    await find.press('Enter');
    await poll(5_000, async () => (param(page, 'select') || '').includes(dpid));
    const sel = param(page, 'select');
    assert(sel === `switch:${dpid}`, `the URL does not name the selection switch:${dpid}: ${page.url()}`);
    const details = page.locator('#details');
    await details.getByText(dpid).first().waitFor();
    const url = page.url();
    await page.reload();
    assert(page.url() === url, `the reload changed the URL: ${url} -> ${page.url()}`);
    await waitDrawn(page, { switches: LAB.switches, hosts: LAB.hosts }, 15_000);
    await details.getByText(dpid).first().waitFor();
    await snapshot(page, 'topology-selected-switch');
    return `${url} kept its selection across a reload`;
  });

  await phase('topology-keyboard', page, async () => {
    // Keyboard only: Tab to the canvas, zoom with +, clear the selection with Escape.
    await page.locator('body').focus();
    const presses = await tabTo(page, (el) => el.tag === 'CANVAS', 60);
    assert(presses, 'Tab never reached the topology canvas');
    // Whether the canvas draws while nothing happens (said, not judged: live rates
    // redraw it now and then).
    const idle0 = (await drawn(page)).renderedAt;
    await page.waitForTimeout(500);
    const before = await drawn(page);
    const idle = before.renderedAt !== idle0 ? 'it also drew during 0.5 s idle' : 'no frame during 0.5 s idle';
    await page.keyboard.press('+');
    await page.keyboard.press('+');
    await page.keyboard.press('ArrowLeft');
    const redrawn = await poll(2_000, async () => (await drawn(page)).renderedAt > before.renderedAt);
    assert(redrawn, 'no frame drawn after + and an arrow key on the focused canvas');
    await page.waitForTimeout(300);
    await screenshot(page, 'topology-zoomed-by-keyboard');
    await page.keyboard.press('Escape');
    await poll(2_000, async () => param(page, 'select') === null);
    assert(param(page, 'select') === null, `Escape on the canvas did not clear the selection: ${page.url()}`);
    await page.keyboard.press('0');
    return `${presses} Tab presses to the canvas; + and an arrow key redrew it (${idle}); Escape cleared the selection`;
  });

  await phase('switches-keyboard', page, async () => {
    await nav(page, 'Switches').click();
    await page.waitForURL(`${BASE}/switches`);
    const rows = page.locator('table#switches tbody tr');
    await poll(10_000, async () => (await rows.count()) === LAB.switches);
    assert((await rows.count()) === LAB.switches, `table#switches has ${await rows.count()} rows, not ${LAB.switches}`);
    await snapshot(page, 'switches');
    // Keyboard only: Tab to the switch's link, Enter.
    await page.locator('body').focus();
    const presses = await tabTo(page, (el) => el.tag === 'A' && el.table === 'switches' && el.text === dpid);
    assert(presses, `Tab never reached the link ${dpid} in table#switches`);
    await page.keyboard.press('Enter');
    await page.waitForURL((u) => decodeURIComponent(u.pathname) === `/switches/${dpid}`);
    await page.locator('main').getByText(dpid).first().waitFor();
    await snapshot(page, 'switch-ports');
    return `${presses} Tab presses and Enter opened /switches/${dpid}`;
  });

  await phase('switch-tabs', page, async () => {
    const seen = [];
    for (const name of ['Ports', 'Groups', 'Meters', 'Flows']) {
      await tab(page, name).click();
      await poll(5_000, async () => param(page, 'tab') === name.toLowerCase());
      assert(param(page, 'tab') === name.toLowerCase(), `the URL does not name the tab ${name}: ${page.url()}`);
      await page.waitForTimeout(500);
      if (name !== 'Ports') await snapshot(page, `switch-${name.toLowerCase()}`);
      seen.push(name);
    }
    const url = page.url();
    await page.reload();
    await page.getByLabel('New flow').waitFor();
    assert(page.url() === url, `the reload changed the URL: ${url} -> ${page.url()}`);
    return `tabs ${seen.join(', ')} each named in the URL; ?tab=flows kept across a reload`;
  });

  await phase('flow-add-token-once', page, async () => {
    assert((await tokenAsks(page)) === 0, 'the token was asked before any write');
    // The first write is refused (401) and asks for the token: the browser logs the 401.
    allowFailedLoad('the first write (no token yet)', `/api/v1/switches/`, [401]);
    await page.getByLabel('New flow').fill(FLOW);
    await page.getByRole('button', { name: 'Add flow' }).click();
    const dialog = page.locator('#token-dialog');
    await dialog.and(page.locator('[open]')).waitFor({ timeout: 5_000 });
    const input = page.getByLabel('API token');
    await input.fill(TOKEN);
    await input.press('Enter');
    const inOvs = await poll(8_000, async () => {
      const d = await ctl('dump-flows', { switch: LAB.flow_switch });
      return d.lines.find((l) => l.includes('priority=300') && l.includes('dl_dst=00:00:00:00:00:99') && l.includes('actions=drop'));
    });
    assert(inOvs, `the flow added in the UI is not in ovs-ofctl dump-flows of ${LAB.flow_switch}`);
    await page.locator('main').getByText('dl_dst=00:00:00:00:00:99').first().waitFor({ timeout: 5_000 });
    await snapshot(page, 'switch-flows-added');
    assert((await tokenAsks(page)) === 1, `the token was asked ${await tokenAsks(page)} times for one write`);
    return `ovs-ofctl: ${inOvs.trim()}`;
  });

  await phase('flow-error-marked', page, async () => {
    allowFailedLoad('the bad flow', `/api/v1/switches/`, [400]);
    await page.getByLabel('New flow').fill(BAD_FLOW);
    await page.getByRole('button', { name: 'Add flow' }).click();
    const err = page.locator('#flow-error[role=alert]');
    await err.waitFor({ state: 'visible', timeout: 5_000 });
    await poll(3_000, async () => (await err.textContent()).includes('dl_dts'));
    const text = (await err.textContent()).trim();
    assert(text.includes('dl_dts'), `#flow-error does not name the token dl_dts: ${text}`);
    const marks = await err.locator('mark').allTextContents();
    assert(marks.some((m) => m.includes('dl_dts') && BAD_FLOW.includes(m)), `no <mark> on the token dl_dts in #flow-error (marks: ${JSON.stringify(marks)}; text: ${text})`);
    await snapshot(page, 'switch-flow-error');
    assert((await tokenAsks(page)) === 1, 'the token was asked again for a second write');
    return `${text} / marked ${JSON.stringify(marks)}`;
  });

  await phase('flow-delete', page, async () => {
    const row = page.locator('main tr', { hasText: 'dl_dst=00:00:00:00:00:99' }).first();
    await row.getByRole('button', { name: /Delete/ }).click();
    const gone = await poll(8_000, async () => {
      const d = await ctl('dump-flows', { switch: LAB.flow_switch });
      return !d.lines.some((l) => l.includes('dl_dst=00:00:00:00:00:99'));
    });
    assert(gone, 'the flow deleted in the UI is still in ovs-ofctl dump-flows');
    assert((await tokenAsks(page)) === 1, 'the token was asked again for a third write');
    return 'gone from ovs-ofctl dump-flows; the token asked once for three writes';
  });

  await phase('apps-keyboard-stop-start', page, async () => {
    await nav(page, 'Apps').click();
    await page.waitForURL(`${BASE}/apps`);
    const state = page.locator('table#apps tr[data-app="routing"] td.state');
    await poll(5_000, async () => (await state.count()) > 0 && (await state.textContent()).trim() === 'running');
    assert((await state.textContent()).trim() === 'running', `routing is not shown running: ${await state.textContent()}`);
    await snapshot(page, 'apps');
    await page.locator('body').focus();
    const presses = await tabTo(page, (el) => el.label === 'Stop routing');
    assert(presses, 'Tab never reached the button "Stop routing"');
    await page.keyboard.press('Enter');
    await poll(5_000, async () => (await state.textContent()).trim() === 'stopped');
    assert((await state.textContent()).trim() === 'stopped', `routing is not shown stopped: ${await state.textContent()}`);
    const apiSays = await appState('routing');
    assert(apiSays === 'stopped', `the UI shows routing stopped, the API says ${apiSays}`);
    await snapshot(page, 'apps-routing-stopped');
    const back = await tabTo(page, (el) => el.label === 'Start routing', 60);
    assert(back, 'Tab never reached the button "Start routing"');
    await page.keyboard.press('Enter');
    await poll(5_000, async () => (await state.textContent()).trim() === 'running');
    assert((await state.textContent()).trim() === 'running', `routing is not shown running again: ${await state.textContent()}`);
    assert((await appState('routing')) === 'running', 'the API does not say routing runs again');
    assert((await tokenAsks(page)) === 1, 'the token was asked again in the same session');
    return `stopped (API agrees) and started again, keyboard only (${presses} + ${back} Tab presses)`;
  });

  await phase('hosts', page, async () => {
    await nav(page, 'Hosts').click();
    await page.waitForURL(`${BASE}/hosts`);
    const table = page.locator('#hosts[role=table]');
    await poll(10_000, async () => (await table.getAttribute('aria-rowcount')) === String(LAB.hosts));
    assert((await table.getAttribute('aria-rowcount')) === String(LAB.hosts), `#hosts aria-rowcount is ${await table.getAttribute('aria-rowcount')}, not ${LAB.hosts}`);
    // The window has room for every row: the list box shows them all without a scroll.
    const viewport = table.locator('.viewport');
    const fits = () => viewport.evaluate((el) => el.scrollHeight <= el.clientHeight + 1);
    await poll(3_000, fits);
    const box = await viewport.evaluate((el) => `${el.clientHeight} px for ${el.scrollHeight} px of rows`);
    assert(await fits(), `#hosts needs a scroll for ${LAB.hosts} rows in a 800 px high window: ${box}`);
    // Every host can be scrolled to: the list rendered at its end shows the last MAC.
    const last = [...LAB.host_macs].sort().pop();
    await table.evaluate((el) => {
      const scroller = [el, ...el.querySelectorAll('*')].find((e) => e.scrollHeight > e.clientHeight + 1);
      (scroller || document.scrollingElement).scrollTop = 1e9;
      window.scrollTo(0, 1e9);
    });
    await page.waitForTimeout(300);
    const lastRow = table.getByText(last, { exact: true });
    await poll(3_000, async () => (await lastRow.count()) > 0 && (await lastRow.first().isVisible()));
    const seen = (await lastRow.count()) > 0 && (await lastRow.first().isVisible());
    await table.evaluate((el) => {
      for (const e of [el, ...el.querySelectorAll('*')]) e.scrollTop = 0;
      window.scrollTo(0, 0);
    });
    await snapshot(page, 'hosts');
    assert(seen, `the last host ${last} cannot be scrolled into view in #hosts (aria-rowcount ${LAB.hosts})`);
    const mac = LAB.host_mac;
    await page.getByLabel('Search hosts').fill(mac);
    await poll(5_000, async () => (await table.getAttribute('aria-rowcount')) === '1');
    assert((await table.getAttribute('aria-rowcount')) === '1', `searching ${mac}: aria-rowcount ${await table.getAttribute('aria-rowcount')}`);
    await poll(3_000, async () => param(page, 'q') === mac);
    assert(param(page, 'q') === mac, `the URL does not name the search: ${page.url()}`);
    await page.reload();
    await poll(10_000, async () => (await table.getAttribute('aria-rowcount')) === '1');
    assert((await table.getAttribute('aria-rowcount')) === '1', 'the search was lost on reload');
    assert((await page.getByLabel('Search hosts').inputValue()) === mac, 'the search box is empty after a reload');
    await snapshot(page, 'hosts-search');
    return `${LAB.hosts} rows; ${mac} → 1, kept across a reload`;
  });

  await phase('controller', page, async () => {
    await nav(page, 'Controller').click();
    await page.waitForURL(`${BASE}/controller`);
    for (const name of ['PACKET_INs per second', 'Messages in and out', 'Switches connected', 'Admission refusals']) {
      await page.locator(`canvas[aria-label="${name}"]`).waitFor();
    }
    await page.waitForTimeout(2_500);
    await snapshot(page, 'controller');
    return 'four charts';
  });

  await phase('stale-banner', page, async () => {
    // On the topology, but the banner is the shell's: checked even if the view is not
    // drawn; the view filling again after the restart is checked last.
    await nav(page, 'Topology').click();
    await page.waitForURL((u) => u.pathname === '/');
    // The nav link comes back to the topology as it was left: "Show hosts" stays on.
    assert(param(page, 'hosts') === '1', `the nav link "Topology" dropped hosts=1: ${page.url()}`);
    assert(await page.getByLabel('Show hosts').isChecked(), '"Show hosts" is not checked after the nav link');
    await page.waitForTimeout(1_000);
    const mark = await markDocument(page);
    const banner = page.locator('#stale-banner[role=alert]');
    assert(await banner.isHidden(), 'the banner shows while Pharos runs');
    allowances.add({
      name: 'Pharos stopped',
      test: (text, url) => text.startsWith('Failed to load resource') && url.startsWith(ORIGIN),
    });
    await ctl('pharos', { state: 'stop' });
    const t = Date.now();
    await banner.waitFor({ state: 'visible', timeout: 10_000 });
    const shown = Date.now() - t;
    const text = (await banner.textContent()).trim();
    assert(/Disconnected from Pharos/.test(text) && /\d\d:\d\d:\d\d/.test(text), `the banner says: ${text}`);
    await screenshot(page, 'stale-banner');
    // The network changes while Pharos is away: after the reconnection the view must
    // show the new Pharos's network (a cable fewer), not the one it had drawn.
    await ctl('link', { state: 'down' });
    await ctl('pharos', { state: 'start' });
    const t2 = Date.now();
    await banner.waitFor({ state: 'hidden', timeout: 15_000 });
    const gone = Date.now() - t2;
    await waitDrawn(page, { switches: LAB.switches, links: LAB.links - 1 }, 30_000);
    const fresh = Date.now() - t2;
    await ctl('link', { state: 'up' });
    await waitDrawn(page, { switches: LAB.switches, links: LAB.links }, 30_000);
    assert(await sameDocument(page, mark), 'the page was reloaded');
    return `shown ${shown} ms after the kill ("${text}"), gone ${gone} ms after the restart; the cable taken down meanwhile gone from the view ${fresh} ms after the restart, back after up`;
  });

  // A new browser session: the token is asked again; a wrong one is refused (403) and
  // asked again with the error shown.
  const context2 = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await context2.addInitScript(initScript);
  const page2 = await context2.newPage();
  page2.setDefaultTimeout(10_000);
  watch(context2, page2);
  await phase('token-new-session', page2, async () => {
    await page2.goto(`${BASE}/apps`);
    const state = page2.locator('table#apps tr[data-app="routing"] td.state');
    await poll(10_000, async () => (await state.count()) > 0 && (await state.textContent()).trim() === 'running');
    allowFailedLoad('writes without, then with a wrong token', '/api/v1/apps/', [401, 403]);
    await page2.getByRole('button', { name: 'Stop routing', exact: true }).click();
    const open = page2.locator('#token-dialog[open]');
    await open.waitFor({ timeout: 5_000 });
    await page2.getByLabel('API token').fill('not-the-token');
    await page2.getByLabel('API token').press('Enter');
    await poll(5_000, async () => (await page2.locator('#token-error').isVisible()) && (await open.count()) === 1);
    assert(await page2.locator('#token-error').isVisible(), 'a wrong token: the dialog does not show the error');
    await screenshot(page2, 'token-dialog-wrong-token');
    await page2.getByLabel('API token').fill(TOKEN);
    await page2.getByLabel('API token').press('Enter');
    await poll(5_000, async () => (await state.textContent()).trim() === 'stopped');
    assert((await state.textContent()).trim() === 'stopped', 'routing did not stop after the token was given');
    await page2.getByRole('button', { name: 'Start routing', exact: true }).click();
    await poll(5_000, async () => (await state.textContent()).trim() === 'running');
    assert((await appState('routing')) === 'running', 'routing does not run again');
    const asks = await tokenAsks(page2);
    assert(asks === 2, `the new session asked ${asks} times (want 2: none, then the wrong one)`);
    assert((await tokenAsks(page)) === 1, 'the first session was asked again');
    return 'a new session asks again; a wrong token is refused with the error shown, then asked again';
  });

  await browser.close();
  clearTimeout(killer);
  return report();
}

function report() {
  const g = [];
  if (guards.console.length) g.push(`console errors:\n    ${guards.console.join('\n    ')}`);
  if (guards.pageErrors.length) g.push(`uncaught exceptions:\n    ${guards.pageErrors.join('\n    ')}`);
  if (guards.otherOrigin.length) g.push(`requests to other origins:\n    ${guards.otherOrigin.join('\n    ')}`);
  if (guards.axe.length) g.push(`axe-core serious/critical violations:\n    ${guards.axe.join('\n    ')}`);
  console.error('\n==== UI acceptance ====');
  for (const r of results) {
    console.error(`${r.ok ? 'ok  ' : 'FAIL'} ${r.phase} (${(r.ms / 1000).toFixed(1)} s): ${r.detail}`);
  }
  console.error(`guards: ${g.length ? 'FAIL' : 'ok'} (${guards.allowedConsole} expected console errors of refused requests)`);
  for (const x of g) console.error(`  ${x}`);
  console.error(`screenshots in ${ARTEFACTS}; took ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  const failed = results.filter((r) => !r.ok).length + g.length;
  return failed;
}

main().then(
  (failed) => process.exit(failed ? 1 : 0),
  (e) => {
    log(`crashed: ${e && e.stack ? e.stack : e}`);
    report();
    process.exit(1);
  },
);
