// Where a person points at a block whose content is narrower than its box (a paragraph holding a short
// inline trigger): the middle of its first line of content, relative to the box; null for the box centre.
(el) => {
  const box = el.getBoundingClientRect();
  const range = document.createRange();
  range.selectNodeContents(el);
  const line = [...range.getClientRects()].find((r) => r.width > 0 && r.height > 0);
  if (!line || (line.width > box.width / 2 && line.height > box.height / 2)) return null;
  return { x: line.left - box.left + Math.min(line.width / 2, 8), y: line.top - box.top + line.height / 2 };
}
