"""Actions on one element (a ref or a CSS selector): click, fill, type, press, hover, select, check, drag, scroll."""

from __future__ import annotations

import contextlib
from typing import Annotated, Any, Literal

import msgspec
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Locator

from browserd.daemon.elements.at_rest import mark_warm
from browserd.daemon.elements.checkables import set_checked
from browserd.daemon.elements.choosing import MIRRORED_SELECT, OPTION_CLICKS, choose
from browserd.daemon.elements.clicking import click, hover
from browserd.daemon.elements.dragging import drag
from browserd.daemon.elements.fields import FieldInfo
from browserd.daemon.elements.filling import NATIVE_FILL, fill_field
from browserd.daemon.elements.overlays import covers_named
from browserd.daemon.elements.usable import usable
from browserd.daemon.elements.wheel import position_at_rest, wheel_over
from browserd.daemon.errors import ElementNotInteractable, InvalidParameter
from browserd.daemon.flows.recording.recorded_action import (
    Choose,
    Click,
    Drag,
    Fill,
    Hover,
    Press,
    Scroll,
    SetChecked,
)
from browserd.daemon.sessions.page_errors import action_errors
from browserd.daemon.snapshots.tab_call import TabCall
from browserd.daemon.snapshots.targets import IDENTITY_TIMEOUT_MS, Target
from browserd.daemon.tools.context import ToolContext
from browserd.daemon.tools.response import Response
from browserd.daemon.tools.tabtool import ActionParams, TargetText, TimeoutMs, tab_tool
from browserd.daemon.tools.tool_registry import Tool

Modifier = Literal["Alt", "Control", "ControlOrMeta", "Meta", "Shift"]
SUBMIT_KEY = "Enter"
SLOW_TYPING_DELAY_MS = 60  # between keys when typing slowly: lets key handlers and suggestions keep up


class Point(msgspec.Struct, forbid_unknown_fields=True):
    x: float
    y: float


class TargetParams(ActionParams, kw_only=True):
    target: TargetText
    timeout: TimeoutMs | None = None


class ClickParams(TargetParams, kw_only=True):
    button: Literal["left", "right", "middle"] = "left"
    double: bool = False
    modifiers: list[Modifier] = msgspec.field(default_factory=list)
    position: Annotated[Point, msgspec.Meta(description="Where to click, relative to the element's corner.")] | None = (
        None
    )


class FillParams(TargetParams, kw_only=True):
    value: str
    submit: Annotated[bool, msgspec.Meta(description="Press Enter afterwards.")] = False


class TypeParams(TargetParams, kw_only=True):
    text: str
    slowly: Annotated[bool, msgspec.Meta(description="One key at a time, for pages that react to each key.")] = False
    submit: Annotated[bool, msgspec.Meta(description="Press Enter afterwards.")] = False


class PressParams(ActionParams, kw_only=True):
    key: Annotated[str, msgspec.Meta(description="A key or chord: Enter, ArrowDown, Control+A, Shift+Tab.")]
    target: Annotated[TargetText, msgspec.Meta(description="Focus this element first; default: the page.")] | None = (
        None
    )


class SelectParams(TargetParams, kw_only=True):
    values: list[str] | None = None
    labels: list[str] | None = None


class DragParams(ActionParams, kw_only=True):
    source: TargetText
    target: TargetText
    timeout: TimeoutMs | None = None


class ScrollParams(ActionParams, kw_only=True):
    target: (
        Annotated[TargetText, msgspec.Meta(description="Scroll it into view; with a delta, wheel over it.")] | None
    ) = None
    delta_x: Annotated[int, msgspec.Meta(description="Wheel pixels to the right (negative: left).")] = 0
    delta_y: Annotated[int, msgspec.Meta(description="Wheel pixels down (negative: up).")] = 0


def _done(response: Response, what: str, target: Target, code: str) -> None:
    response.text(f"{what} {target.named}")
    response.code(f"await {target.code}.{code}")


@tab_tool(
    "browser_click",
    "pages",
    "Click an element (a ref or CSS selector).",
    ClickParams,
    records=lambda p: Click(target=p.target, double=p.double),
)
async def browser_click(ctx: ToolContext, call: TabCall, params: ClickParams, response: Response) -> None:
    tab = call.tab
    target = await call.locate(params.target)
    # Playwright's options beyond a plain left click (elements/clicking.py treats a plain one as a person's).
    options: dict[str, Any] = {"button": params.button} if params.button != "left" else {}
    if params.modifiers:
        options["modifiers"] = params.modifiers
    if params.position is not None:
        options["position"] = {"x": params.position.x, "y": params.position.y}
    verb = "dblclick" if params.double else "click"
    await usable(target, verb)
    async with covers_named(target.locator, target.described, verb):
        with action_errors(verb, target.described):
            note = await click(
                tab.page,
                target.locator,
                target.described,
                _timeout(ctx, params.timeout),
                target.role,
                params.double,
                options,
                documents=tab,
            )
    _done(
        response,
        "Double-clicked" if params.double else "Clicked",
        target,
        f"{verb}({', '.join(f'{k}={v!r}' for k, v in options.items())})",
    )
    if note:
        response.text(note)


def _written(response: Response, what: str, target: Target, code: str, submit: bool, note: str = "") -> None:
    """The report of fill and type: what was written, and the Enter after it."""
    _done(response, what, target, code)
    if note:
        response.text(note)
    if submit:
        response.code(f"await {target.code}.press({SUBMIT_KEY!r})")


@tab_tool(
    "browser_fill",
    "pages",
    "Replace the value of an input or textarea.",
    FillParams,
    records=lambda p: Fill(target=p.target, value=p.value),
)
async def browser_fill(ctx: ToolContext, call: TabCall, params: FillParams, response: Response) -> None:
    tab = call.tab

    async def fill_plain(locator: Locator) -> None:
        await locator.fill(params.value, timeout=params.timeout)

    target = await call.locate(params.target, early=fill_plain)
    # The snapshot already said it is a plain textbox one can edit: no closer look (one that has been disabled
    # since fails when Playwright's fill gives up waiting for it to be editable).
    known = FieldInfo(target.text_line) if target.text_line else None
    with action_errors("fill", target.described):
        filled = await fill_field(
            tab.page, target.locator, target.described, params.value, params.timeout, known, target.under_way
        )
    verify = filled.verify
    if verify is not None:

        async def taken() -> None:
            with action_errors("fill", target.described):
                await verify()

        # "Filled" is said only of a value that took: before an Enter, checked at once; else while the page
        # settles, which saves a round trip.
        await (taken() if params.submit else call.check_meanwhile(taken))
    if params.submit:
        with action_errors("fill", target.described):
            await target.locator.press(SUBMIT_KEY, timeout=params.timeout)
    # The setter a recorded step keeps: its replay fills through fill_field too.
    call.setter = filled.setter
    if target.text_line and target.ref is not None and filled.setter == NATIVE_FILL and not params.submit:
        call.filled = (target.ref, filled.stored)
    _written(response, "Filled", target, f"fill({filled.stored!r})", params.submit, filled.note)


@tab_tool(
    "browser_type",
    "pages",
    "Type text into an element key by key (after what it holds).",
    TypeParams,
    records=lambda p: Fill(target=p.target, value=p.text),
)
async def browser_type(ctx: ToolContext, call: TabCall, params: TypeParams, response: Response) -> None:
    delay = SLOW_TYPING_DELAY_MS if params.slowly else 0
    target = await call.locate(params.target)
    await usable(target, "type", editable=True)
    with action_errors("type", target.described):
        await target.locator.press_sequentially(params.text, delay=delay, timeout=params.timeout)
        if params.submit:
            await target.locator.press(SUBMIT_KEY, timeout=params.timeout)
    ref = target.ref
    if target.text_line and ref is not None and call.settles and not params.submit:

        async def typed() -> None:
            # What the field holds now (a mask or a maxlength may have changed what was typed), read while
            # the page settles: when nothing else changed, the answer is the last snapshot with it.
            with contextlib.suppress(PlaywrightError):
                call.filled = (ref, await target.locator.input_value(timeout=IDENTITY_TIMEOUT_MS))

        await call.check_meanwhile(typed)
    slow = f", delay={delay}" if delay else ""
    _written(response, "Typed into", target, f"press_sequentially({params.text!r}{slow})", params.submit)


@tab_tool(
    "browser_press",
    "pages",
    "Press a key or chord (Enter, Control+A), on an element or the page.",
    PressParams,
    records=lambda p: Press(keys=p.key, target=p.target),
)
async def browser_press(ctx: ToolContext, call: TabCall, params: PressParams, response: Response) -> None:
    tab = call.tab
    if params.target is None:
        with action_errors("press", "the page"):
            await tab.page.keyboard.press(params.key)
        response.text(f"Pressed {params.key}")
        response.code(f"await page.keyboard.press({params.key!r})")
        return
    target = await call.locate(params.target)
    with action_errors("press", target.described):
        await target.locator.press(params.key)
    _done(response, f"Pressed {params.key} on", target, f"press({params.key!r})")


@tab_tool(
    "browser_hover", "pages", "Move the mouse over an element.", TargetParams, records=lambda p: Hover(target=p.target)
)
async def browser_hover(ctx: ToolContext, call: TabCall, params: TargetParams, response: Response) -> None:
    tab = call.tab
    target = await call.locate(params.target)
    timeout = _timeout(ctx, params.timeout)
    async with covers_named(target.locator, target.described, "hover"):
        with action_errors("hover", target.described):
            await hover(tab.page, target.locator, timeout, target.role, documents=tab)
    _done(response, "Hovered over", target, "hover()")


@tab_tool(
    "browser_select",
    "pages",
    "Choose options of a select by value or label: a native <select> or a custom one "
    "(Select2, react-select, an ARIA combobox), opened and picked from as a person would.",
    SelectParams,
    records=lambda p: Choose(target=p.target, labels=p.labels, values=p.values),
)
async def browser_select(ctx: ToolContext, call: TabCall, params: SelectParams, response: Response) -> None:
    if not params.values and not params.labels:
        raise InvalidParameter("give values or labels to select", field="values")
    target = await call.locate(params.target)
    timeout = _timeout(ctx, params.timeout)
    with action_errors("select", target.described):
        chosen = await choose(call.tab.page, target.locator, target.described, params.labels, params.values, timeout)
    call.setter = chosen.setter
    response.data({"selected": chosen.selected})
    if chosen.setter == OPTION_CLICKS:
        _done(response, f"Selected {', '.join(chosen.selected)} in", target, "click()")
        response.text("It is a custom select: it was opened and the option clicked.")
        return
    choice = {"value": params.values} if params.values else {"label": params.labels}
    code = f"select_option({', '.join(f'{k}={v!r}' for k, v in choice.items())})"
    _done(response, f"Selected {', '.join(chosen.selected)} in", target, code)
    if chosen.setter == MIRRORED_SELECT:
        response.text("It is a custom select: the hidden <select> it mirrors was set.")


def _timeout(ctx: ToolContext, timeout_ms: float | None) -> float:
    return timeout_ms if timeout_ms is not None else ctx.services.config.browser.action_timeout_ms


async def _set_checked(
    ctx: ToolContext, call: TabCall, params: TargetParams, response: Response, checked: bool
) -> None:
    target = await call.locate(params.target)
    verb = "check" if checked else "uncheck"
    await usable(target, verb)
    loads = call.tab.navigations
    async with covers_named(target.locator, target.described, verb):
        with action_errors(verb, target.described):
            toggled = await set_checked(target.locator, target.described, checked, _timeout(ctx, params.timeout))
    mark_warm(call.tab, loads)  # its probe ran in the main world: a click after it may go at rest
    call.setter = toggled.setter
    _done(response, "Checked" if checked else "Unchecked", target, f"{verb}()")
    if toggled.note:
        response.text(toggled.note)


@tab_tool(
    "browser_check",
    "pages",
    "Tick a checkbox or choose a radio button.",
    TargetParams,
    records=lambda p: SetChecked(target=p.target, checked=True),
)
async def browser_check(ctx: ToolContext, call: TabCall, params: TargetParams, response: Response) -> None:
    await _set_checked(ctx, call, params, response, True)


@tab_tool(
    "browser_uncheck",
    "pages",
    "Untick a checkbox.",
    TargetParams,
    records=lambda p: SetChecked(target=p.target, checked=False),
)
async def browser_uncheck(ctx: ToolContext, call: TabCall, params: TargetParams, response: Response) -> None:
    await _set_checked(ctx, call, params, response, False)


@tab_tool(
    "browser_drag",
    "pages",
    "Drag one element onto another.",
    DragParams,
    records=lambda p: Drag(source=p.source, target=p.target),
)
async def browser_drag(ctx: ToolContext, call: TabCall, params: DragParams, response: Response) -> None:
    tab = call.tab
    source = await call.locate(params.source)
    target = await call.locate(params.target)
    with action_errors("drag", f"{source.described} onto {target.described}"):
        await drag(tab.page, source.locator, target.locator, _timeout(ctx, params.timeout))
    response.text(f"Dragged {source.named} onto {target.named}")
    response.code(f"await {source.code}.drag_to({target.code})")


@tab_tool(
    "browser_scroll",
    "pages",
    "Scroll an element into view, or the page by a wheel delta.",
    ScrollParams,
    records=lambda p: Scroll(target=p.target, delta=(p.delta_x, p.delta_y)),
)
async def browser_scroll(ctx: ToolContext, call: TabCall, params: ScrollParams, response: Response) -> None:
    tab = call.tab
    wheel = bool(params.delta_x or params.delta_y)
    target = await call.locate(params.target) if params.target is not None else None
    if target is not None and not wheel:
        with action_errors("scroll", target.described):
            await target.locator.scroll_into_view_if_needed()
        _done(response, "Scrolled into view:", target, "scroll_into_view_if_needed()")
        return
    if not wheel:
        raise InvalidParameter("give a target to scroll into view, or a deltaX/deltaY to scroll by", field="target")
    where, over = "the page", None
    if target is not None:
        # The wheel turns over the target, so the box it sits in scrolls (a feed, a virtual list).
        with action_errors("scroll", target.described):
            # Held before the wheel: a virtual list may take the element out of the page as it scrolls.
            over = await target.locator.element_handle()
            turned = await wheel_over(tab.page, target.locator, params.delta_x, params.delta_y, None)
        if not turned:
            raise ElementNotInteractable(f"{target.described} is not on screen to scroll over", action="scroll")
        where = f"the box of {target.described}"
    else:
        await tab.page.mouse.wheel(params.delta_x, params.delta_y)
    # The wheel returns before the page has scrolled: report where it comes to rest.
    position = await position_at_rest(tab.page, over)
    response.data({"scrollX": position[0], "scrollY": position[1]})
    response.text(f"Scrolled by ({params.delta_x}, {params.delta_y}); {where} is now at {position[0]},{position[1]}")
    response.code(f"await page.mouse.wheel({params.delta_x}, {params.delta_y})")


TOOLS: list[Tool[Any]] = [
    browser_click, browser_fill, browser_type, browser_press, browser_hover, browser_select,
    browser_check, browser_uncheck, browser_drag, browser_scroll,
]  # fmt: skip
