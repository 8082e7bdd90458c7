// Where a person's pointer lands on the element, when it can land there now without Playwright's waits: the
// element is in the top document, enabled, in view, on top at that point and at rest (no animation of it or
// of a box around it running, no animation frame the page asked for lately). null when any of that is not
// sure: Playwright's own action then waits for it and checks it over frames.
//
// With a point, the action's first event of `events` (a click's button events, a hover's moves) decides
// whether it reached the element, as Playwright's own actions check: a page that moved something under the
// point meanwhile (a bar the pointer's arrival shows, a re-render) gets none of those events, and
// rest_hit.js tells the daemon so.
(el, [quietMs, events]) => {
  const GUARD_MS = 1000;
  if (window.top !== window || !el.isConnected) return null;
  if (el.matches(':disabled') || el.closest('[aria-disabled="true"], [inert]')) return null;
  const s = window.__browserdSettle;
  // A page that never asked for a frame has 0 there: the page's clock starts at its navigation, so reading 0
  // as a frame asked for would hold every young document for quietMs.
  if (!s || (s.lastFrameRequest && performance.now() - s.lastFrameRequest < quietMs)) return null;
  const box = [...el.getClientRects()].find((r) => r.width >= 1 && r.height >= 1);
  if (!box) return null;
  const x = box.left + box.width / 2, y = box.top + box.height / 2;
  if (x < 0 || y < 0 || x >= window.innerWidth || y >= window.innerHeight) return null;
  // The element itself or one inside it takes the pointer there, through open shadow roots.
  let hit = document.elementFromPoint(x, y);
  while (hit && hit.shadowRoot) {
    const inner = hit.shadowRoot.elementFromPoint(x, y);
    if (!inner || inner === hit) break;
    hit = inner;
  }
  const within = (node, outer) => {
    for (let n = node; n; n = n.parentNode || n.host) if (n === outer) return true;
    return false;
  };
  if (!hit || !within(hit, el)) return null;
  const moving = document.getAnimations().some((a) => a.playState === 'running' && a.effect
    && a.effect.target && within(el, a.effect.target));
  if (moving) return null;
  const guard = { verdict: '', since: performance.now() };
  const check = (e) => {
    // The action's events come within moments of this script and of each other. A guard the daemon never
    // took away (its call was cancelled on the way) judges no later action, whoever makes it.
    const now = performance.now();
    if (now - guard.since > GUARD_MS) return guard.remove();
    if (!guard.verdict) {
      guard.verdict = e.composedPath().includes(el) ? 'hit' : 'missed';
      guard.since = now;
    }
    if (guard.verdict === 'missed') {
      e.preventDefault();
      e.stopImmediatePropagation();
    }
    if (e.type === events[events.length - 1]) guard.remove();
  };
  guard.remove = () => events.forEach((type) => window.removeEventListener(type, check, true));
  if (s.restGuard) s.restGuard.remove();
  s.restGuard = guard;
  events.forEach((type) => window.addEventListener(type, check, true));
  return { x, y };
}
