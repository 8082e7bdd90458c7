"""Screenshots of a page (browser_screenshot): the viewport, the whole page or one element's box, taken
over CDP and shrunk to at most [browser] screenshot_max_px, so a large page costs a model few tokens."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any, Literal

from playwright.async_api import Locator, Page

from browserd.daemon.runtime.images import image_size
from browserd.daemon.sessions.page_errors import page_errors
from browserd.daemon.snapshots.page_box import page_box

ImageFormat = Literal["png", "jpeg"]
MIN_READABLE_WIDTH_PX = 400


@dataclass(frozen=True)
class Clip:
    """A rectangle of the page, in CSS pixels from the document's top left corner."""

    x: float
    y: float
    width: float
    height: float


@dataclass(frozen=True)
class Shot:
    data: bytes
    width: int
    height: int
    scale: float
    # A very tall page is cut rather than scaled to a sliver: how many px of it the image keeps (None: all).
    cut_at_px: float | None = None


async def page_clip(page: Page, full_page: bool) -> Clip:
    box = await page_box(page)
    if full_page:
        return Clip(0, 0, box.page_w, box.page_h)
    return Clip(box.scroll_x, box.scroll_y, box.view_w, box.view_h)


async def element_clip(page: Page, element: Locator, timeout_ms: float | None) -> Clip | None:
    """The element's box once scrolled into view; None when it has none on screen."""
    await element.scroll_into_view_if_needed(timeout=timeout_ms)
    box = await element.bounding_box(timeout=timeout_ms)
    if box is None:
        return None
    scroll_x, scroll_y, *_ = await page_box(page)
    return Clip(box["x"] + scroll_x, box["y"] + scroll_y, box["width"], box["height"])


async def capture(page: Page, clip: Clip, image_format: ImageFormat, quality: int, limit_px: int) -> Shot:
    scale = min(1.0, limit_px / max(clip.width, clip.height, 1))
    height, cut_at = clip.height, None
    if clip.width * scale < MIN_READABLE_WIDTH_PX <= clip.width:
        # A very tall page scaled to fit would be a sliver: keep it readable, cut it at the limit instead.
        scale = min(1.0, limit_px / clip.width)
        height = cut_at = limit_px / scale
    area = {"x": clip.x, "y": clip.y, "width": clip.width, "height": height, "scale": scale}
    shot: dict[str, Any] = {"format": image_format, "clip": area, "captureBeyondViewport": True}
    if image_format == "jpeg":
        shot["quality"] = quality
    with page_errors("screenshot"):
        cdp = await page.context.new_cdp_session(page)
        try:
            # CDP rather than page.screenshot: its clip scale shrinks a large page without an image library.
            result = await cdp.send("Page.captureScreenshot", shot)
        finally:
            await cdp.detach()
    data = base64.b64decode(result["data"])
    width, image_height = image_size(data)
    return Shot(data, width, image_height, scale, cut_at)
