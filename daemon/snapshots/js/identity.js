// What a clickable is now, read the way page_facts.js read it: [tag, label, width, height].
(e) => {
  const r = e.getBoundingClientRect();
  return [e.tagName, (e.textContent || '').trim().replace(/\s+/g, ' ').slice(0, 80), Math.round(r.width),
          Math.round(r.height)];
}
