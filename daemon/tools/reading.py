"""Reading and waiting: browser_wait, browser_get, browser_is, browser_screenshot."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import anyio
import msgspec
from playwright.async_api import TimeoutError as PlaywrightTimeout

from browserd.daemon.elements.fields import field_value
from browserd.daemon.errors import ExecutionError, InvalidParameter
from browserd.daemon.sessions.page_errors import action_errors
from browserd.daemon.sessions.screenshots import ImageFormat, capture, element_clip, page_clip
from browserd.daemon.snapshots.tab_call import TabCall
from browserd.daemon.tools.context import ToolContext
from browserd.daemon.tools.response import Response
from browserd.daemon.tools.tabtool import ActionParams, TabParams, TargetText, TimeoutMs, tab_tool
from browserd.daemon.tools.tool_registry import Tool

MAX_WAIT_MS = 60_000
DEFAULT_WAIT_MS = 30_000


class WaitParams(ActionParams, kw_only=True):
    text: Annotated[str, msgspec.Meta(description="Wait until this text is visible.")] | None = None
    text_gone: Annotated[str, msgspec.Meta(description="Wait until this text is no longer visible.")] | None = None
    selector: Annotated[TargetText, msgspec.Meta(description="Wait for this element to reach `state`.")] | None = None
    state: Literal["visible", "hidden", "attached", "detached"] = "visible"
    url: Annotated[str, msgspec.Meta(description="Wait until the URL matches this glob (**/done*).")] | None = None
    network_idle: Annotated[bool, msgspec.Meta(description="Wait until no request for 500 ms.")] = False
    time_ms: Annotated[int, msgspec.Meta(ge=1, le=MAX_WAIT_MS, description="Just wait this long.")] | None = None
    timeout: Annotated[int, msgspec.Meta(ge=1, le=MAX_WAIT_MS)] = DEFAULT_WAIT_MS


class GetParams(TabParams, kw_only=True):
    what: Literal["text", "html", "value", "attribute", "title", "url", "count", "box"]
    target: TargetText | None = None
    name: Annotated[str, msgspec.Meta(description="The attribute to read (what=attribute).")] | None = None


class IsParams(TabParams, kw_only=True):
    state: Literal["visible", "enabled", "checked", "editable"]
    target: TargetText


class ScreenshotParams(TabParams, kw_only=True):
    full_page: Annotated[bool, msgspec.Meta(description="The whole scrollable page, not just the viewport.")] = False
    target: Annotated[TargetText, msgspec.Meta(description="Only this element.")] | None = None
    format: ImageFormat = "png"
    quality: Annotated[int, msgspec.Meta(ge=1, le=100, description="JPEG quality.")] = 80
    timeout: TimeoutMs | None = None


@tab_tool(
    "browser_wait", "pages", "Wait for text, an element, a URL, network idle, or a time (at most 60 s).", WaitParams
)
async def browser_wait(ctx: ToolContext, call: TabCall, params: WaitParams, response: Response) -> None:
    tab = call.tab
    page = tab.page
    waited: list[str] = []
    timeout = params.timeout
    waiting_for = ""
    try:
        if params.time_ms is not None:
            await anyio.sleep(params.time_ms / 1000)
            waited.append(f"{params.time_ms} ms")
        if params.text is not None:
            waiting_for = f"text {params.text!r} to appear"
            await page.get_by_text(params.text).first.wait_for(state="visible", timeout=timeout)
            waited.append(f"text {params.text!r} to appear")
        if params.text_gone is not None:
            waiting_for = f"text {params.text_gone!r} to disappear"
            await page.get_by_text(params.text_gone).first.wait_for(state="hidden", timeout=timeout)
            waited.append(f"text {params.text_gone!r} to disappear")
        if params.selector is not None:
            target = await call.locate(params.selector)
            waiting_for = f"{target.described} to be {params.state}"
            with action_errors("wait", target.described):
                await target.locator.first.wait_for(state=params.state, timeout=timeout)
            waited.append(f"{target.described} to be {params.state}")
        if params.url is not None:
            waiting_for = f"URL {params.url}"
            await page.wait_for_url(params.url, timeout=timeout)
            waited.append(f"URL {params.url}")
        if params.network_idle:
            waiting_for = "network idle"
            await page.wait_for_load_state("networkidle", timeout=timeout)
            waited.append("network idle")
    except PlaywrightTimeout as exc:
        done = f" (after waiting for {', '.join(waited)})" if waited else ""
        raise ExecutionError(
            f"{waiting_for} did not happen within {timeout} ms{done}",
            hint="Call browser_snapshot to see the page now; retry with a larger timeout if it is still loading.",
            waited=waited,
            waitingFor=waiting_for,
        ) from exc
    if not waited:
        raise InvalidParameter(
            "give something to wait for: text, textGone, selector, url, networkIdle or timeMs", field="text"
        )
    response.text(f"Waited for {', '.join(waited)}")


@tab_tool(
    "browser_get",
    "pages",
    "Read text, html, value, an attribute, the title, the URL, a count or a box.",
    GetParams,
    read_only=True,
)
async def browser_get(ctx: ToolContext, call: TabCall, params: GetParams, response: Response) -> None:
    tab = call.tab
    page = tab.page
    if params.what in ("title", "url"):
        value: Any = await page.title() if params.what == "title" else page.url
        response.data({"value": value})
        response.text(str(value))
        return
    if params.target is None:
        raise InvalidParameter(f"what={params.what} needs a target", field="target")
    if params.what == "count":
        # A selector that matches nothing counts 0, it is not an error.
        count = await (await call.locate(params.target)).locator.count()
        response.data({"value": count})
        response.text(f"{count} element(s) match {params.target}")
        return
    target = await call.locate(params.target)
    locator = target.locator
    with action_errors(f"get {params.what}", target.described):
        if params.what == "text":
            value = await locator.inner_text()
        elif params.what == "html":
            value = await locator.inner_html()
        elif params.what == "value":
            value = await field_value(locator, target.described)
        elif params.what == "box":
            value = await locator.bounding_box()
        else:
            if not params.name:
                raise InvalidParameter("what=attribute needs the attribute's name", field="name")
            value = await locator.get_attribute(params.name)
    response.data({"value": value})
    response.text(value if isinstance(value, str) else msgspec.json.encode(value).decode())


@tab_tool(
    "browser_is", "pages", "Whether an element is visible, enabled, checked or editable.", IsParams, read_only=True
)
async def browser_is(ctx: ToolContext, call: TabCall, params: IsParams, response: Response) -> None:
    target = await call.locate(params.target)
    locator = target.locator
    with action_errors(f"is {params.state}", target.described):
        if params.state == "visible":
            result = await locator.is_visible()
        elif params.state == "enabled":
            result = await locator.is_enabled()
        elif params.state == "checked":
            result = await locator.is_checked()
        else:
            result = await locator.is_editable()
    response.data({"value": result})
    response.text(f"{target.described} is {'' if result else 'not '}{params.state}")


@tab_tool(
    "browser_screenshot",
    "pages",
    "Screenshot of the viewport, the full page or one element, as an image.",
    ScreenshotParams,
    read_only=True,
)
async def browser_screenshot(ctx: ToolContext, call: TabCall, params: ScreenshotParams, response: Response) -> None:
    tab = call.tab
    what = "full page" if params.full_page else "viewport"
    target_code: str | None = None
    if params.target is not None:
        target = await call.locate(params.target)
        with action_errors("screenshot", target.described):
            clip = await element_clip(tab.page, target.locator, params.timeout)
        if clip is None:
            raise ExecutionError(f"{target.described} has no box on screen", hint="Pick a visible element.")
        what = target.described
        target_code = target.code
    else:
        clip = await page_clip(tab.page, params.full_page)
    limit = ctx.services.config.browser.screenshot_max_px
    shot = await capture(tab.page, clip, params.format, params.quality, limit)
    response.image(shot.data, f"image/{params.format}")
    scaled, cropped = shot.scale < 1, shot.cut_at_px is not None
    size = {"width": shot.width, "height": shot.height}
    response.data({**size, "scaled": scaled, "cropped": cropped, "bytes": len(shot.data), "tabId": tab.id})
    notes = [f"scaled to {shot.scale:.2f} to fit {limit} px"] if scaled else []
    if shot.cut_at_px is not None:
        notes.append(f"cut after the first {round(shot.cut_at_px)} px of the page")
    response.text(
        f"Screenshot of {what}: {shot.width}x{shot.height} {params.format}" + "".join(f", {n}" for n in notes)
    )
    kind = f"type={params.format!r}"
    if target_code is not None:
        response.code(f"await {target_code}.screenshot({kind})")
    else:
        response.code(f"await page.screenshot(full_page={params.full_page}, {kind})")


TOOLS: list[Tool[Any]] = [browser_wait, browser_get, browser_is, browser_screenshot]
