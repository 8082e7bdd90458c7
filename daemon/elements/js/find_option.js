// The option named `wanted` on screen, or null: an option of the widget's popup (else any visible one)
// by exact text, then ignoring case; else, for dropdowns without ARIA, the innermost visible element
// outside the widget whose whole text is `wanted` (or whose data-value is).
([start, wanted]) => {
  const want = wanted.replace(/\s+/g, ' ').trim();
  const listed = optionsOf(start);
  const byValue = (el) => el.getAttribute('data-value') === want;
  const exact = listed.find((el) => text(el) === want || byValue(el));
  if (exact) return exact;
  const folded = listed.find((el) => text(el).toLowerCase() === want.toLowerCase());
  if (folded || listed.length) return folded || null;
  const all = document.body.querySelectorAll('li, div, span, a, p, button, label, td');
  for (const el of all) {
    if (start.contains(el) || !shown(el)) continue;
    if ((text(el) === want || byValue(el)) && ![...el.children].some((child) => text(child) === want)) return el;
  }
  return null;
}
