// Draws one outline with its label over an element (args: [label, outlineMs]) and returns its box.
(el, [label, outlineMs]) => {
  const r = el.getBoundingClientRect();
  const box = document.createElement('div');
  box.setAttribute('data-browserd-dry-run', '');
  // Out of the accessibility tree (a snapshot never shows it), and gone after a while on its own.
  box.setAttribute('aria-hidden', 'true');
  setTimeout(() => box.remove(), outlineMs);
  const colour = '#2f9e44';
  Object.assign(box.style, { position: 'absolute', left: `${r.left + scrollX}px`, top: `${r.top + scrollY}px`,
    width: `${r.width}px`, height: `${r.height}px`, outline: `3px solid ${colour}`, zIndex: '2147483647',
    pointerEvents: 'none', boxSizing: 'border-box' });
  const tag = document.createElement('span');
  tag.textContent = label;
  Object.assign(tag.style, { position: 'absolute', left: '0', top: '-1.4em', background: colour, color: '#fff',
    font: '12px/1.3 sans-serif', padding: '0 4px', whiteSpace: 'nowrap' });
  box.append(tag);
  document.documentElement.append(box);
  return { x: r.left, y: r.top, width: r.width, height: r.height };
}
