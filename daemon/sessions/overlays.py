"""What covers an element a pointer action was meant for, said so that a model can clear it.

Cookie banners, sticky bars and modal dialogs sit on top of the page; Playwright then retries a click
until its timeout and says only that some element "intercepts pointer events". Here a covered click
gives up after a short patience (a fading toast clears by then; a banner never does), and the error
names the overlay (`dialog "Terms of use"`, `region "Cookie banner"`) and the buttons that close it.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Locator
from playwright.async_api import TimeoutError as PlaywrightTimeout

from browserd.daemon.errors import ElementNotInteractable

# How long a pointer action waits for a cover to go before it reports it (a toast or an animation
# clears within this; a cookie banner or a modal waits for the agent).
COVER_PATIENCE_MS = 2_000
_INTERCEPTS = "intercepts pointer events"
# Playwright's log line: `<p>cover</p> from <div class="modal-backdrop">…</div> subtree intercepts pointer events`.
_INTERCEPTOR = re.compile(r"- (<.*?) intercepts pointer events")

# The overlay over the element's centre: the nearest dialog, named landmark or fixed/sticky box that
# holds the topmost element there; a backdrop (no content of its own) stands for the open modal dialog.
# Answered as [role and name, names of the buttons and links inside it (what closes it)].
_COVER_JS = """(el) => {
  const box = el.getBoundingClientRect();
  const top = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
  if (!top || el.contains(top)) return null;
  const named = (node) => node.getAttribute('aria-label') || (node.getAttribute('aria-labelledby') || '').split(' ')
    .map((id) => document.getElementById(id)).filter(Boolean).map((n) => n.textContent.trim()).join(' ');
  const shown = (node) => { const r = node.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  const modal = [...document.querySelectorAll('[aria-modal=true], dialog[open], [role=dialog], [role=alertdialog]')]
    .find((node) => shown(node) && node.getAttribute('aria-hidden') !== 'true');
  let cover = null;
  for (let node = top; node && node !== document.body; node = node.parentElement) {
    const role = node.getAttribute('role') || (node.tagName === 'DIALOG' ? 'dialog' : '');
    if (['dialog', 'alertdialog', 'region', 'banner', 'alert', 'complementary', 'navigation'].includes(role)
        || node.getAttribute('aria-modal') === 'true') { cover = node; break; }
    const position = getComputedStyle(node).position;
    if (position === 'fixed' || position === 'sticky') cover = node;
  }
  if ((!cover || !cover.querySelector('button, a, [role=button]')) && modal) cover = modal;
  if (!cover) cover = top;
  const role = cover.getAttribute('role') || (cover.tagName === 'DIALOG' ? 'dialog'
    : cover.tagName === 'HEADER' ? 'banner' : cover.tagName.toLowerCase());
  const name = named(cover);
  const label = (node) => (node.getAttribute('aria-label') || node.textContent || '').replace(/\\s+/g, ' ').trim();
  const buttons = [...cover.querySelectorAll('button, a[href], [role=button]')].filter(shown).map(label)
    .filter(Boolean).slice(0, 6);
  return [name ? `${role} ${JSON.stringify(name)}` : `<${cover.tagName.toLowerCase()}> (${role})`, buttons];
}"""


async def patiently(act: Callable[[float], Awaitable[Any]], timeout_ms: float) -> None:
    """Run a pointer action within `timeout_ms`; if a cover is what holds it after COVER_PATIENCE_MS,
    fail then (Playwright's own error), else go on waiting for the rest of the time."""
    first = min(timeout_ms, COVER_PATIENCE_MS)
    try:
        await act(first)
    except PlaywrightTimeout as exc:
        if _INTERCEPTS in str(exc) or timeout_ms <= first:
            raise
        # Not covered: the element was still on its way (appearing, enabling); nothing was clicked yet.
        await act(timeout_ms - first)


@asynccontextmanager
async def covers_named(locator: Locator, described: str, action: str) -> AsyncIterator[None]:
    """A covered-element error that names the overlay and the buttons that close it."""
    try:
        yield
    except ElementNotInteractable as exc:
        if not exc.details.get("covered"):
            raise
        try:
            found = await locator.first.evaluate(_COVER_JS, timeout=COVER_PATIENCE_MS)
        except PlaywrightError:
            found = None
        if not found:
            raise
        cover, buttons = found
        closers = " or ".join(repr(name) for name in buttons)
        raise ElementNotInteractable(
            f"{described} is covered by {cover}, which would receive the {action}",
            hint=(
                f"Close {cover} first: browser_click its {closers} (refs in browser_snapshot)"
                if buttons
                else f"Close or dismiss {cover} first (browser_snapshot shows it), or press Escape"
            )
            + "; then retry.",
            **{**exc.details, "coveredBy": cover, "closers": buttons},
        ) from exc


def interceptor(text: str) -> str | None:
    """The element Playwright's log says intercepts the pointer, as it wrote it."""
    found = _INTERCEPTOR.findall(text)
    return found[-1] if found else None
