"""The geometry of the page a screenshot clips: where the viewport is scrolled to, and how big page and view are."""

from __future__ import annotations

from typing import NamedTuple

from playwright.async_api import Page

from browserd.daemon.runtime.page_js import load_js

_PAGE_BOX_JS = load_js("browserd.daemon.snapshots", "page_box.js")


class PageBox(NamedTuple):
    scroll_x: float
    scroll_y: float
    view_w: float
    view_h: float
    page_w: float
    page_h: float


async def page_box(page: Page) -> PageBox:
    """The viewport's scroll offset and size, and the document's size, in CSS pixels."""
    return PageBox(*await page.evaluate(_PAGE_BOX_JS))
