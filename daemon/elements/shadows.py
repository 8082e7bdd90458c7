"""Closed shadow roots named when a selector finds nothing: no selector, ref or snapshot reaches them.

A component built with `attachShadow({mode: 'closed'})` hides its inside from every script of the page,
and so from Playwright's selectors and ARIA snapshot: `x-rating button` matches nothing, and the
snapshot shows the host with nothing in it. Only the DevTools protocol sees those roots (DOM.getDocument
with pierce). When a selector matched nothing, the page's closed roots are looked up there, and the error
names their hosts and the ways in that do work: a click on the host (at a position inside it) lands on
what it draws there, and the keyboard reaches its controls from a focused host.
"""

from __future__ import annotations

from typing import Any

import anyio
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from browserd.daemon.errors import ElementNotFound

# Hosts named in an error: enough to recognise the component.
MAX_HOSTS = 5
# The look-up is one protocol call on the failure path; a relay that does not answer adds nothing.
LOOKUP_TIMEOUT_S = 2.0


async def closed_hosts(page: Page) -> list[str]:
    """The hosts of the page's closed shadow roots (frames included), as `<tag id="…">`; none when the
    protocol cannot tell within LOOKUP_TIMEOUT_S (a backend without a CDP session of our own)."""
    hosts: list[str] = []
    with anyio.move_on_after(LOOKUP_TIMEOUT_S):
        try:
            session = await page.context.new_cdp_session(page)
        except PlaywrightError:
            return hosts
        try:
            document = await session.send("DOM.getDocument", {"depth": -1, "pierce": True})
            _walk(document["root"], hosts)
        except PlaywrightError:
            pass  # the page went away meanwhile: the error stands as it was
        finally:
            await session.detach()
    return hosts


def _walk(node: dict[str, Any], hosts: list[str]) -> None:
    if any(root.get("shadowRootType") == "closed" for root in node.get("shadowRoots", [])):
        hosts.append(_named(node))
    for child in (*node.get("children", []), *node.get("shadowRoots", []), node.get("contentDocument")):
        if child:
            _walk(child, hosts)


def _named(node: dict[str, Any]) -> str:
    pairs = node.get("attributes", [])
    attributes = dict(zip(pairs[::2], pairs[1::2], strict=True))
    tag = node.get("localName") or node.get("nodeName", "").lower()
    shown = next((f' {key}="{attributes[key]}"' for key in ("id", "aria-label", "class") if attributes.get(key)), "")
    return f"<{tag}{shown}>"


async def explained(page: Page, exc: ElementNotFound) -> ElementNotFound:
    """`exc` (a selector that matched nothing), saying where closed shadow roots hide elements, if any."""
    if not str(exc.details.get("target", "")).startswith("selector "):
        return exc
    hosts = await closed_hosts(page)
    if not hosts:
        return exc
    listed = ", ".join(hosts[:MAX_HOSTS]) + (f" and {len(hosts) - MAX_HOSTS} more" if len(hosts) > MAX_HOSTS else "")
    return ElementNotFound(
        f"{exc.message}; the page has closed shadow roots, whose inside no selector, ref or snapshot reaches: {listed}",
        hint="If the element is inside one of them, act on its host: browser_click the host (its ref, or a "
        "selector for it, with a position to aim at a part of it), or click it and move through its controls "
        "with browser_press (Tab, arrow keys, Enter).",
        **{**exc.details, "closedShadowHosts": hosts[:MAX_HOSTS]},
    )
