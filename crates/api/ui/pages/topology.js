// Placeholder for the topology page (ui-topo writes the real one).

/**
 * @param {HTMLElement} el
 * @param {import('../app.js').PageContext} ctx
 */
export function mount(el, ctx) {
  ctx.setTitle('Topology');
  const h1 = document.createElement('h1');
  h1.textContent = 'Topology';
  el.append(h1);
  return { update() {}, unmount() {} };
}
