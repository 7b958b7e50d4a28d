// The shell: a History-API router, the page navigation and page mounting.
//
// A page is an ES module under ./pages/ exporting
//   mount(el, ctx) -> { update(params), unmount() }
// `el` is the <main> element, emptied for the page. `ctx` is a PageContext (below).
// `update(params)` is called when only the query string of the same page changed
// (e.g. /?select=... or /switches/X?tab=flows); any other change unmounts the page and
// mounts the next one. `unmount()` must stop its timers and unsubscribe its events.

import { api } from './api.js';
import { live } from './live.js';

/**
 * @typedef {object} PageContext
 * @property {typeof api} api the REST client (api.js): get/post/put/del, ApiError on failure
 * @property {typeof live} live the event stream (live.js): subscribe(type, fn), onReconnect(fn)
 * @property {(path: string, opts?: {replace?: boolean}) => void} navigate go to a path
 *   of this app (pushes history; `replace` replaces the current entry)
 * @property {URLSearchParams} params the query string at mount time
 * @property {Record<string, string>} route the path's parameters (`dpid` on /switches/{dpid})
 * @property {(title: string) => void} setTitle sets the document title ("TITLE · Pharos")
 */

/**
 * @typedef {object} Page
 * @property {(params: URLSearchParams) => void} update
 * @property {() => void} unmount
 */

/**
 * @typedef {object} Route
 * @property {string} module file under ./pages/, without .js
 * @property {string} nav the nav link this route lights up
 * @property {Record<string, string>} route path parameters
 */

/** The nav links, in order: [label, path]. */
const NAV = [
  ['Topology', '/'],
  ['Switches', '/switches'],
  ['Hosts', '/hosts'],
  ['Apps', '/apps'],
  ['Controller', '/controller'],
];

/**
 * Which page a path shows; `null` for no page.
 * @param {string} path
 * @returns {Route | null}
 */
export function resolve(path) {
  const p = path.replace(/\/+$/, '') || '/';
  if (p === '/') return { module: 'topology', nav: '/', route: {} };
  if (p === '/switches') return { module: 'switches', nav: '/switches', route: {} };
  const m = /^\/switches\/([^/]+)$/.exec(p);
  if (m) return { module: 'switch', nav: '/switches', route: { dpid: decodeURIComponent(m[1]) } };
  if (p === '/hosts') return { module: 'hosts', nav: '/hosts', route: {} };
  if (p === '/apps') return { module: 'apps', nav: '/apps', route: {} };
  if (p === '/controller') return { module: 'controller', nav: '/controller', route: {} };
  return null;
}

/** @type {{key: string, page: Page} | null} */
let current = null;
/** Counts navigations, so a slow import does not mount a page that was left. */
let generation = 0;

/** @param {string} title */
function setTitle(title) {
  document.title = title ? `${title} · Pharos` : 'Pharos';
}

/**
 * @param {string} path
 * @param {{replace?: boolean}} [opts]
 */
export function navigate(path, opts = {}) {
  rememberTopology();
  const url = new URL(path, location.href);
  if (url.origin !== location.origin) {
    location.href = url.href;
    return;
  }
  const target = url.pathname + url.search + url.hash;
  if (target !== location.pathname + location.search + location.hash) {
    if (opts.replace) history.replaceState(null, '', target);
    else history.pushState(null, '', target);
  }
  void render();
}

/** Where the topology page's last query (Show hosts, selection) is kept. */
const TOPOLOGY_QUERY = 'pharos.topology.query';

/** Keeps the topology page's query when on it (the page writes it with replaceState). */
function rememberTopology() {
  if (resolve(location.pathname)?.module !== 'topology') return;
  try {
    sessionStorage.setItem(TOPOLOGY_QUERY, location.search);
  } catch {
    // Storage refused (private mode, quota): the link then goes to a plain /.
  }
}

/** The URL the nav link "Topology" goes to: the page as it was left, in this session. */
function topologyHref() {
  if (resolve(location.pathname)?.module === 'topology') return location.pathname + location.search;
  let q = null;
  try {
    q = sessionStorage.getItem(TOPOLOGY_QUERY);
  } catch {
    // As above.
  }
  return q && q.startsWith('?') ? `/${q}` : '/';
}

/** Builds the nav once. */
function buildNav() {
  const nav = /** @type {HTMLElement} */ (document.getElementById('nav'));
  const ul = document.createElement('ul');
  for (const [label, path] of NAV) {
    const li = document.createElement('li');
    const a = document.createElement('a');
    a.href = path;
    a.textContent = label;
    a.dataset.nav = path;
    li.append(a);
    ul.append(li);
  }
  nav.replaceChildren(ul);
}

/** @param {string} navPath */
function highlightNav(navPath) {
  for (const a of document.querySelectorAll('#nav a')) {
    const link = /** @type {HTMLAnchorElement} */ (a);
    if (link.dataset.nav === navPath) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
    if (link.dataset.nav === '/') link.href = topologyHref();
  }
}

/** Shows the page for the current location (mounting, updating or replacing). */
async function render() {
  const main = /** @type {HTMLElement} */ (document.getElementById('main'));
  const r = resolve(location.pathname);
  const params = new URLSearchParams(location.search);
  const key = r ? `${r.module}:${JSON.stringify(r.route)}` : `none:${location.pathname}`;
  if (current && current.key === key) {
    current.page.update(params);
    return;
  }
  const gen = ++generation;
  if (current) {
    try {
      current.page.unmount();
    } catch (e) {
      console.warn('unmount failed', e);
    }
    current = null;
  }
  main.replaceChildren();
  if (!r) {
    highlightNav('');
    setTitle('Not found');
    const h1 = document.createElement('h1');
    h1.textContent = 'No such page';
    const p = document.createElement('p');
    p.append(`Nothing at ${location.pathname}. `);
    const a = document.createElement('a');
    a.href = '/';
    a.textContent = 'Go to the topology';
    p.append(a);
    main.append(h1, p);
    current = { key, page: { update() {}, unmount() {} } };
    return;
  }
  highlightNav(r.nav);
  /** @type {{mount: (el: HTMLElement, ctx: PageContext) => Page}} */
  let mod;
  try {
    mod = await import(`./pages/${r.module}.js`);
  } catch (e) {
    if (gen !== generation) return;
    main.textContent = `This page could not be loaded: ${e}`;
    return;
  }
  if (gen !== generation) return;
  /** @type {PageContext} */
  const ctx = { api, live, navigate, params, route: r.route, setTitle };
  /** @type {Page} */
  let page;
  try {
    page = mod.mount(main, ctx);
  } catch (e) {
    main.replaceChildren();
    const p = document.createElement('p');
    p.className = 'error';
    p.setAttribute('role', 'alert');
    p.textContent = `This page failed: ${e}`;
    main.append(p);
    page = { update() {}, unmount() {} };
  }
  current = { key, page };
  // After a navigation in the app (not the first load), the keyboard starts at the page.
  if (mounted++ > 0 && !main.contains(document.activeElement)) main.focus({ preventScroll: true });
}

/** Pages mounted so far. */
let mounted = 0;

/**
 * Follows same-origin links inside the app without reloading (plain clicks only:
 * a click with a modifier, or on a link with a target or download, is the browser's).
 * @param {MouseEvent} e
 */
function onClick(e) {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const t = /** @type {Element | null} */ (e.target);
  const a = t && t.closest ? t.closest('a') : null;
  if (!a || a.target || a.hasAttribute('download')) return;
  if ((a.getAttribute('href') || '').startsWith('#')) return; // in-page (the skip link)
  if (a.closest('#nav') && a.dataset.nav === '/') a.href = topologyHref();
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin) return;
  if (url.pathname.startsWith('/api/') || url.pathname === '/metrics') return;
  e.preventDefault();
  navigate(url.pathname + url.search + url.hash);
}

function start() {
  buildNav();
  document.addEventListener('click', onClick);
  window.addEventListener('popstate', () => void render());
  window.addEventListener('pagehide', rememberTopology);
  live.start();
  void render();
}

start();
