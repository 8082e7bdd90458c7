// Whether the action at rest reached its element, as the guard rest_point.js set says ('hit', 'missed', or ''
// when no event of it came to this document), and the guard taken away. 'gone': no guard (another document).
() => {
  const s = window.__browserdSettle;
  const guard = s && s.restGuard;
  if (!guard) return 'gone';
  s.restGuard = null;
  guard.remove();
  return guard.verdict;
}
