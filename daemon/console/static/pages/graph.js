// A V2 flow's nodes and edges drawn as inline SVG (read-only): nodes in layers by their distance from the
// entry, edges labelled when they are not `next`.
const SVG = 'http://www.w3.org/2000/svg';
const W = 150, H = 40, GAP_X = 40, GAP_Y = 50;

function el(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  if (text !== undefined) node.textContent = text;
  return node;
}

// `statusOf(nodeId)`: the node's status in the replay under way or the last one (drawn as its outline), or null.
export function graphView(flow, onPick, statusOf = () => null) {
  const nodes = flow.nodes, edges = flow.edges;
  const depth = new Map([[nodes[0]?.id, 0]]);
  const queue = nodes.length ? [nodes[0].id] : [];
  while (queue.length) {
    const id = queue.shift();
    for (const edge of edges.filter((e) => e.from === id && !depth.has(e.to))) {
      depth.set(edge.to, depth.get(id) + 1);
      queue.push(edge.to);
    }
  }
  const layers = new Map();
  for (const node of nodes) {
    const d = depth.get(node.id) ?? 0;
    if (!layers.has(d)) layers.set(d, []);
    layers.get(d).push(node.id);
  }
  const at = new Map();
  for (const [d, ids] of layers) ids.forEach((id, i) => at.set(id, { x: 10 + i * (W + GAP_X), y: 10 + d * (H + GAP_Y) }));
  const width = 20 + Math.max(...[...layers.values()].map((ids) => ids.length)) * (W + GAP_X);
  const height = 20 + layers.size * (H + GAP_Y);
  const svg = el('svg', { class: 'graph', viewBox: `0 0 ${width} ${height}`, width, height, role: 'img',
    'aria-label': `Graph of ${nodes.length} nodes` });
  const marker = el('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 10, refY: 5, markerWidth: 6,
    markerHeight: 6, orient: 'auto-start-reverse' });
  marker.append(el('path', { d: 'M 0 0 L 10 5 L 0 10 z' }));
  const defs = el('defs', {});
  defs.append(marker);
  svg.append(defs);
  for (const edge of edges) {
    const a = at.get(edge.from), b = at.get(edge.to);
    if (!a || !b) continue;
    const back = b.y <= a.y;
    const x1 = a.x + W / 2, y1 = back ? a.y + H / 2 : a.y + H, x2 = b.x + W / 2 + (back ? W / 2 : 0), y2 = back ? b.y + H / 2 : b.y;
    svg.append(el('path', { class: `edge ${edge.on || 'next'}`, 'marker-end': 'url(#arrow)',
      d: back ? `M ${x1 + W / 2} ${y1} C ${x1 + W} ${y1}, ${x2 + W / 2} ${y2}, ${x2} ${y2}` : `M ${x1} ${y1} L ${x2} ${y2}` }));
    if (edge.on && edge.on !== 'next') svg.append(el('text', { class: 'label', x: (x1 + x2) / 2 + 4, y: (y1 + y2) / 2 }, edge.on));
  }
  for (const node of nodes) {
    const { x, y } = at.get(node.id);
    const status = statusOf(node.id);
    const group = el('g', { class: `node ${node.type}${node.disabled ? ' disabled' : ''}${status ? ` ${status}` : ''}`, tabindex: 0,
      'data-step-id': node.id });
    group.append(el('rect', { x, y, width: W, height: H, rx: 6 }),
      el('text', { x: x + 8, y: y + 16 }, node.id), el('text', { x: x + 8, y: y + 32, class: 'type' }, node.type));
    group.addEventListener('click', () => onPick(node.id));
    svg.append(group);
  }
  return svg;
}
