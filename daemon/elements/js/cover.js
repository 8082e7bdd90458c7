// The overlay over the element's centre: the nearest dialog, named landmark or fixed/sticky box that
// holds the topmost element there, else the nearest popup (an absolutely placed box: an open dropdown);
// a backdrop (no content of its own) stands for the open modal dialog.
// Answered as [role and name, names of the buttons and links inside it (what closes it)].
(el) => {
  const box = el.getBoundingClientRect();
  const top = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
  if (!top || el.contains(top)) return null;
  const clean = (text) => (text || '').replace(/\s+/g, ' ').trim();
  const named = (node) => clean(node.getAttribute('aria-label') || (node.getAttribute('aria-labelledby') || '')
    .split(' ').map((id) => document.getElementById(id)).filter(Boolean).map((n) => n.textContent).join(' '));
  const shown = (node) => { const r = node.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  const IMPLICIT = { A: 'link', BUTTON: 'button', DIALOG: 'dialog', HEADER: 'banner', FOOTER: 'contentinfo',
    NAV: 'navigation', UL: 'list', ASIDE: 'complementary', FORM: 'form' };
  const roleOf = (node) => node.getAttribute('role') || IMPLICIT[node.tagName] || 'generic';
  const LANDMARKS = ['dialog', 'alertdialog', 'region', 'banner', 'alert', 'complementary', 'navigation', 'menu',
    'listbox', 'tooltip'];
  const modal = [...document.querySelectorAll('[aria-modal=true], dialog[open], [role=dialog], [role=alertdialog]')]
    .find((node) => shown(node) && node.getAttribute('aria-hidden') !== 'true');
  let cover = null; let popup = null;
  for (let node = top; node && node !== document.body; node = node.parentElement) {
    if (LANDMARKS.includes(roleOf(node)) || node.getAttribute('aria-modal') === 'true') { cover = node; break; }
    const style = getComputedStyle(node);
    if (style.position === 'fixed' || style.position === 'sticky') cover = node;
    else if (!popup && style.position === 'absolute') popup = node;
  }
  if ((!cover || !cover.querySelector('button, a, [role=button]')) && modal) cover = modal;
  cover = cover || popup || top;
  const name = named(cover) || (cover.children.length ? '' : clean(cover.textContent).slice(0, 40));
  const label = (node) => clean(node.getAttribute('aria-label') || node.textContent);
  const buttons = [...cover.querySelectorAll('button, a[href], [role=button]')].filter(shown).map(label)
    .filter(Boolean).slice(0, 6);
  const tag = cover.tagName.toLowerCase();
  const what = name ? `${roleOf(cover)} ${JSON.stringify(name)}` : `a ${roleOf(cover)} <${tag}>`;
  return [what, buttons, cover === popup];
}
