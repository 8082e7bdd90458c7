"""Recording the session's own tool actions into a draft flow (issue 14 item 2, S4-35..S4-45, D-47, D-48).

The tab-tool wrapper hands every action to `FlowService.recording`; while a recording is on, the
recorder describes the action's element(s) BEFORE the action runs (one evaluate per target: the
candidates and the identity fingerprint), and keeps the step only if the action succeeded. What was
typed never enters the flow: a fill becomes `{key}` and a variable; password, one-time-code and card
fields are sensitive variables with no default.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import msgspec
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Frame, Locator

from browserd.daemon.errors import ElementNotFound
from browserd.daemon.flows.fingerprint_js import CAPTURE_JS, FRAME_CSS_JS
from browserd.daemon.flows.flow_model import (
    Candidate,
    Fingerprint,
    Flow,
    Meta,
    Step,
    StepType,
    TargetLocator,
    VariableDef,
    new_flow_id,
)
from browserd.daemon.runs.run_records import now_ms
from browserd.daemon.sessions.tab import Tab
from browserd.daemon.snapshots.targets import locate

# Earlier strategies first (S4-46, D-29); the weight is the order a replay reports and a person may edit.
_RANK = {"testid": 0, "css": 1, "role": 2, "label": 3, "placeholder": 4, "text": 5, "anchor": 6, "xpath": 7}
# (`aria`, a name without a role, comes only from Chrome Recorder imports.)
# A person's events that are a step on their target alone.
_ON_ELEMENT: dict[str, StepType] = {"click": "click", "dblclick": "dblclick", "check": "check", "uncheck": "uncheck"}
RECORDED_TOOLS = frozenset(
    {
        "browser_open", "browser_navigate", "browser_click", "browser_fill", "browser_type", "browser_press",
        "browser_select", "browser_check", "browser_uncheck", "browser_drag", "browser_scroll", "browser_wait",
        "browser_hover", "browser_get",
    }
)  # fmt: skip


@dataclass
class Captured:
    locator: TargetLocator
    sensitive: bool
    key_hint: str


@dataclass
class Pending:
    """An action described before it runs; it becomes a step once it has succeeded."""

    step: Step
    variable: VariableDef | None = None
    # A value that must not appear in the tool's answer either (a sensitive field's).
    secret: str | None = None


async def _frame_path(locator: Locator) -> list[str]:
    handle = await locator.element_handle()
    frame: Frame | None = await handle.owner_frame() if handle is not None else None
    path: list[str] = []
    while frame is not None and frame.parent_frame is not None:
        element = await frame.frame_element()
        path.insert(0, await element.evaluate(FRAME_CSS_JS))
        frame = frame.parent_frame
    return path


async def capture(tab: Tab, target: str) -> Captured:
    located = await locate(tab, target)
    try:
        raw: dict[str, Any] = await located.locator.first.evaluate(CAPTURE_JS, timeout=5_000)
    except PlaywrightError as exc:
        raise ElementNotFound(
            f"{located.described} could not be described for the recording",
            hint="Call browser_snapshot and act on a ref from it while recording.",
        ) from exc
    return described(raw, await _frame_path(located.locator.first) if raw.get("inFrame") else [])


def described(raw: dict[str, Any], frame: list[str]) -> Captured:
    """A target as CAPTURE_JS described it (for a tool's action, or a person's event in person_input_js)."""
    candidates = [Candidate(type=c["type"], value=c["value"]) for c in raw["candidates"]]
    candidates.sort(key=lambda c: _RANK[c.type])
    for position, candidate in enumerate(candidates):
        candidate.weight = float(len(candidates) - position)
    locator = TargetLocator(
        candidates=candidates,
        fingerprint=msgspec.convert(raw["fingerprint"], Fingerprint),
        frame=frame,
        shadow=raw.get("shadow") or [],
    )
    return Captured(locator, bool(raw.get("sensitive")), str(raw.get("keyHint") or ""))


def _key(hint: str, taken: set[str]) -> str:
    base = re.sub(r"[^a-zA-Z0-9]+", "_", hint).strip("_").lower()[:30] or "value"
    if not base[0].isalpha():
        base = "v_" + base
    key, n = base, 2
    while key in taken:
        key, n = f"{base}_{n}", n + 1
    return key


@dataclass
class Recorder:
    name: str
    tab_id: str | None
    keep_values: bool
    steps: list[Step] = field(default_factory=list)
    variables: list[VariableDef] = field(default_factory=list)
    start_url: str | None = None
    # What the recording could not capture, for the person who stops it (never stored with the flow).
    warnings: list[str] = field(default_factory=list)

    def flow(self) -> Flow:
        """What was recorded, as a new flow."""
        now = now_ms()
        return Flow(
            id=new_flow_id(),
            name=self.name,
            meta=Meta(created_at=now, updated_at=now, start_url=self.start_url),
            variables=self.variables,
            steps=self.steps,
        )

    def watches(self, tab: Tab) -> bool:
        return self.tab_id is None or tab.id == self.tab_id

    def wants(self, tool: str, tab: Tab) -> bool:
        return tool in RECORDED_TOOLS and self.watches(tab)

    def _id(self) -> str:
        return f"s{len(self.steps) + 1}"

    async def before(self, tab: Tab, tool: str, params: Any) -> Pending | None:
        """The step an action will be, described from the page as it is before the action."""
        step_id = self._id()
        if tool == "browser_open":
            return Pending(Step(id=step_id, type="navigate", url=params.url))
        if tool == "browser_navigate":
            return Pending(Step(id=step_id, type="navigate", url=f"history:{params.action}"))
        if tool == "browser_get":
            return await self._extract(tab, step_id, params)
        if tool == "browser_wait":
            return Pending(Step(id=step_id, type="wait", wait_text=params.text)) if params.text else None
        if tool == "browser_scroll" and params.target is None:
            return Pending(Step(id=step_id, type="scroll", delta=[params.delta_x, params.delta_y]))
        if tool == "browser_press":
            target = (await capture(tab, params.target)).locator if params.target else None
            return Pending(Step(id=step_id, type="key", keys=params.key, target=target))
        if tool == "browser_drag":
            source, end = await capture(tab, params.source), await capture(tab, params.target)
            return Pending(Step(id=step_id, type="drag", target=source.locator, end=end.locator))
        captured = await capture(tab, params.target)
        simple: dict[str, StepType] = {
            "browser_check": "check",
            "browser_uncheck": "uncheck",
            "browser_hover": "hover",
            "browser_scroll": "scroll",
        }
        if tool in simple:
            return Pending(Step(id=step_id, type=simple[tool], target=captured.locator))
        if tool == "browser_click":
            kind: StepType = "dblclick" if params.double else "click"
            return Pending(Step(id=step_id, type=kind, target=captured.locator))
        if tool == "browser_select":
            choice = {"labels": params.labels} if params.labels else {"values": params.values}
            return Pending(
                Step(id=step_id, type="select", target=captured.locator, value=msgspec.json.encode(choice).decode())
            )
        # browser_fill and browser_type: the value becomes a variable.
        return self._fill(step_id, captured, params.value if tool == "browser_fill" else params.text)

    def _fill(self, step_id: str, captured: Captured, typed: str | None) -> Pending:
        """A fill step whose value is a new variable; what was typed is at most a non-sensitive default."""
        key = _key(captured.key_hint, {v.key for v in self.variables})
        variable = VariableDef(
            key=key,
            label=captured.locator.fingerprint.label or captured.locator.fingerprint.name or None,
            sensitive=captured.sensitive,
            default=typed if self.keep_values and not captured.sensitive else None,
        )
        step = Step(id=step_id, type="fill", target=captured.locator, value="{" + key + "}")
        return Pending(step, variable, typed if captured.sensitive else None)

    def person(self, event: dict[str, Any], url_before: str) -> None:
        """A person's input event in the tab (person_input_js), as the step the same tool action would have been."""
        kind, frame = str(event.get("k")), [str(part) for part in event.get("f") or []]
        target = described(event["t"], frame).locator if event.get("t") else None
        delta = [int(n) for n in event.get("d") or [0, 0]][:2]
        step: Step | None = None
        if kind == "navigate":
            step = Step(id=self._id(), type="navigate", url=str(event["url"]))
        elif kind == "key":
            step = Step(id=self._id(), type="key", keys=str(event.get("keys") or ""), target=target)
        elif kind == "scroll":
            step = Step(id=self._id(), type="scroll", target=target, delta=delta)
        elif target is None:
            return  # every other event is about an element, which its frame could not describe
        elif kind == "fill":
            value = event.get("v")
            captured = described(event["t"], frame)
            self.commit(self._fill(self._id(), captured, value if isinstance(value, str) else None), url_before)
        elif kind == "drag":
            if not event.get("e"):
                return
            end = described(event["e"], frame).locator
            path = [[int(n) for n in point[:3]] for point in event.get("p") or [] if len(point) >= 3]
            step = Step(id=self._id(), type="drag", target=target, end=end, path=path or None)
        elif kind == "select":
            choice = msgspec.json.encode({"labels": [str(label) for label in event.get("labels") or []]}).decode()
            step = Step(id=self._id(), type="select", target=target, value=choice)
        elif kind in _ON_ELEMENT:
            if kind == "dblclick":
                # A person's double click arrived as two clicks first; a replayed dblclick clicks twice itself.
                for _ in range(2):
                    if self.steps and self.steps[-1].type == "click" and self.steps[-1].target == target:
                        self.steps.pop()
            step = Step(id=self._id(), type=_ON_ELEMENT[kind], target=target)
        if step is not None:
            self.commit(Pending(step), url_before)

    async def _extract(self, tab: Tab, step_id: str, params: Any) -> Pending | None:
        """browser_get of an element's text, value or attribute: replay reads it into the run's outputs."""
        if params.target is None or params.what not in ("text", "value", "attribute"):
            return None
        captured = await capture(tab, params.target)
        if captured.sensitive:
            return None  # a sensitive field's value must not become a run output
        what = f"attribute:{params.name}" if params.what == "attribute" else params.what
        return Pending(Step(id=step_id, type="extract", target=captured.locator, value=what))

    def tab_step(self, kind: StepType, url: str | None) -> None:
        """A tab opened (with its URL), switched to or closed through browser_tabs: replay finds it by its page."""
        if self.tab_id is None:  # recording one tab alone: switching away from it is not part of the flow
            self.commit(Pending(Step(id=self._id(), type=kind, url=url or None)), "")

    def commit(self, pending: Pending, url_before: str) -> None:
        step = pending.step
        if not self.steps and step.type != "navigate" and url_before.startswith("http"):
            # A flow that starts on a page it does not open itself is bound to that page (S4-118).
            self.start_url = url_before
        if step.type == "navigate" and self.start_url is None and not self.steps and step.url:
            self.start_url = step.url
        self.steps.append(step)
        if pending.variable is not None:
            self.variables.append(pending.variable)
