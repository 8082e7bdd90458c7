"""Replaying a flow's steps on one tab, acting only on an element that is verifiably the recorded one.

Each step resolves every candidate of its target in one page evaluate (flows/js/resolve.js; a second
fetches its report), scores every element found against the recorded fingerprint, and acts only when
one visible element scores at least the threshold and leads the next by the margin (issue 14 item 3).
Until then it polls with backoff up to the step's timeout, then STOPs with the candidates, what each
found and the scores; with [flows] llm_fallback, a model may first choose among them (model_choice.py).
An action that fails (detached, covered) is retried with backoff (S4-58, D-53).
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from typing import Any, cast
from urllib.parse import urlsplit

import anyio
import msgspec
from playwright.async_api import ElementHandle, Frame
from playwright.async_api import Error as PlaywrightError

from browserd.daemon.config import Config
from browserd.daemon.elements.dragging import drag
from browserd.daemon.errors import (
    BrowserdError,
    ElementAmbiguous,
    ElementNotFound,
    ElementNotInteractable,
    ExecutionError,
    NavigationTimeout,
    TargetNotVerified,
)
from browserd.daemon.flows.fingerprint_js import RESOLVE_ELEMENT_JS, RESOLVED_JS, SENSITIVE_CSS
from browserd.daemon.flows.flow_model import ModelPick, Retry, Step, StepReport, TargetLocator
from browserd.daemon.flows.placeholders import render
from browserd.daemon.flows.replay.model_choice import ASKABLE, ModelChooser, refusal
from browserd.daemon.policy.trust import TrustPolicy
from browserd.daemon.sessions.navigation import HistoryMove, move_in_history, navigate
from browserd.daemon.sessions.tab import Tab
from browserd.daemon.snapshots.settle import settle_tab

# Steps that only read the page: every other step settles as a browser tool's action does, waiting for what it
# started (timers its input set, fetches, a navigation, a tab it opened) and not for the page's own churn.
_READING = frozenset({"extract", "wait"})
_POLL_START_S, _POLL_MAX_S = 0.03, 0.4
_STOPS: dict[str, type[BrowserdError]] = {
    "none": ElementNotFound,
    "ambiguous": ElementAmbiguous,
    "weak": TargetNotVerified,
    "disabled": ElementNotInteractable,
}
_SAYS = {
    "none": "no candidate found a visible element",
    "ambiguous": "several elements match the recorded one about equally well",
    "weak": "the elements found do not match the recorded one well enough",
    "disabled": "the recorded element is there but disabled",
}


@dataclass
class Resolved:
    element: ElementHandle | None
    report: dict[str, Any]
    # Set when the element is the model's choice, the scorer having found no clear winner.
    pick: ModelPick | None = None

    @property
    def status(self) -> str:
        return str(self.report["status"])


@dataclass
class StepOutcome:
    report: StepReport
    # Candidate order that would have found the element first (set when a fallback was needed).
    suggested_order: list[int] | None = None


def scrub(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text


def same_page(a: str, b: str) -> bool:
    """Origin and path, not the query (issue 14 item 6)."""
    x, y = urlsplit(a), urlsplit(b)
    return (x.scheme, x.netloc, x.path.rstrip("/") or "/") == (y.scheme, y.netloc, y.path.rstrip("/") or "/")


async def frame_of(tab: Tab, path: list[str]) -> Frame:
    frame = tab.page.main_frame
    for selector in path:
        element = await frame.query_selector(selector)
        inner = await element.content_frame() if element is not None else None
        if inner is None:
            raise ElementNotFound(f"the frame {selector} of the recorded element is not on the page", frame=path)
        frame = inner
    return frame


async def resolve(
    tab: Tab, target: TargetLocator, threshold: float, margin: float, pick: int | None = None
) -> Resolved:
    """Every candidate, found and scored in one evaluate; the element only when it wins clearly. With `pick`,
    the pick-th element of the report whatever its score, rated in full as the report's `picked`."""
    frame = await frame_of(tab, target.frame)
    candidates = [{"type": c.type, "value": c.value} for c in target.candidates]
    args = [candidates, msgspec.to_builtins(target.fingerprint), target.shadow, threshold, margin]
    if pick is not None:
        args.append({"index": pick, "sensitiveCss": SENSITIVE_CSS})
    handle = await frame.evaluate_handle(RESOLVE_ELEMENT_JS, args)
    # A null answer is a plain value with nothing to release in the page; an element is released after the step.
    report = await frame.evaluate(RESOLVED_JS)
    return Resolved(handle.as_element(), report)


@dataclass
class Runner:
    tab: Tab
    config: Config
    values: dict[str, Any]
    secrets: list[str]
    # What the run may load: the lower of the flow owner's and the caller's trust (RunContext.trust).
    trust: TrustPolicy
    step_timeout_ms: int | None = None
    # Asks a model when a step's elements stay weak or ambiguous ([flows] llm_fallback); None: never.
    chooser: ModelChooser | None = None
    outputs: dict[str, Any] = field(default_factory=dict)
    _resolve_s: float = 0.0

    def timeout_s(self, step: Step | None) -> float:
        own = step.timeout_ms if step is not None else None
        return (own or self.step_timeout_ms or self.config.flows.step_timeout_ms) / 1000

    async def run_step(self, step: Step) -> StepOutcome:
        started = time.monotonic()
        deadline = started + self.timeout_s(step)
        retry = step.retry or Retry()
        attempts, failures = 0, 0
        self._resolve_s = 0.0
        while True:
            attempts += 1
            resolved = await self._resolve_all(step, deadline)
            if any(found.pick is not None for found in resolved.values()):
                # The step's time went on waiting for a clear winner and on the model: acting gets its own.
                deadline = time.monotonic() + self.timeout_s(step)
            try:
                await self._act(step, resolved, deadline)
                break
            except PlaywrightError as exc:
                failures += 1
                if failures > retry.count or time.monotonic() >= deadline:
                    raise ElementNotInteractable(
                        scrub(f"step {step.id} ({step.type}) failed: {str(exc).splitlines()[0]}", self.secrets),
                        stepId=step.id,
                        category="interaction",
                        attempts=attempts,
                    ) from None
                pause = retry.interval_ms / 1000 * (2 ** (failures - 1) if retry.backoff == "exp" else 1)
                await anyio.sleep(min(pause, max(0.0, deadline - time.monotonic())))
        for found in resolved.values():
            if found.element is not None:
                with contextlib.suppress(PlaywrightError):  # gone with a navigation the step caused
                    await found.element.dispose()
        if step.type not in _READING:
            await settle_tab(self.tab, self.config.flows.settle_quiet_ms, self.config.browser.settle_max_ms)
        first = resolved.get("target")
        report = StepReport(
            step_id=step.id, type=step.type, status="success", took_ms=int((time.monotonic() - started) * 1000)
        )
        report.attempts = attempts
        if step.target is not None:
            report.resolve_ms = round(self._resolve_s * 1000, 2)
        suggestion: list[int] | None = None
        if first is not None and step.target is not None:
            hits: list[int] = first.report["hits"]
            found = first.report["candidates"]
            unique = [i for i in hits if found[i]["count"] == 1]
            report.score = first.report["score"]
            if hits:
                by = unique[0] if unique else hits[0]
                report.matched_by = f"{step.target.candidates[by].type}: {step.target.candidates[by].value}"
                report.fallback = by != 0
            else:
                # No candidate found it any more: the fingerprint did, among the elements of its role.
                report.matched_by = f"fingerprint: {step.target.fingerprint.role or step.target.fingerprint.tag}"
                report.fallback = True
            if first.report["match"] != "same":
                report.matched_by += f" (name {first.report['match']})"
            if first.pick is not None:
                # The model's choice: no candidate order to learn from it.
                report.fallback, report.llm, unique = "llm", first.pick, []
                report.matched_by = f"llm: element {first.pick.index}, {report.matched_by}"
            if report.fallback and unique:
                suggestion = unique + [i for i in range(len(found)) if i not in unique]
        return StepOutcome(report, suggestion)

    async def _resolve_all(self, step: Step, deadline: float) -> dict[str, Resolved]:
        """The step's target (and drop target), each polled until it wins clearly or the deadline passes."""
        found: dict[str, Resolved] = {}
        for role, locator in (("target", step.target), ("end", step.end)):
            if locator is None:
                continue
            delay = _POLL_START_S
            while True:
                began = time.monotonic()
                try:
                    resolved = await resolve(
                        self.tab, locator, self.config.flows.match_threshold, self.config.flows.match_margin
                    )
                except PlaywrightError:
                    # The document changed under the evaluate (a navigation): look again in the new one.
                    resolved = Resolved(None, {"status": "none", "candidates": [], "elements": []})
                self._resolve_s += time.monotonic() - began
                if resolved.element is not None:
                    found[role] = resolved
                    break
                if time.monotonic() + delay >= deadline:
                    resolved = await self._ask_model(step, locator, resolved)
                    found[role] = resolved
                    break
                await anyio.sleep(delay)
                delay = min(delay * 2, _POLL_MAX_S)
        return found

    async def _ask_model(self, step: Step, locator: TargetLocator, resolved: Resolved) -> Resolved:
        """The model's choice among the elements the scorer could not decide between, acted on only if nothing
        on the page is against it; else the step's usual STOP, whose details say what the model did."""
        chooser = self.chooser
        if chooser is None or resolved.status not in ASKABLE or not resolved.report["elements"]:
            raise self._stop(step, resolved)
        skipped = chooser.skipped(step)
        if skipped is not None:
            raise self._stop(step, resolved, fallbackSkipped=skipped)
        shown: list[dict[str, Any]] = resolved.report["elements"]
        try:
            choice = await chooser.choose(step, locator.fingerprint, shown)
        except BrowserdError as exc:
            failed = {"errorCode": exc.code, "error": exc.message, "recoverHint": exc.recover_hint}
            hint = f"The model asked to choose failed ({exc.code}: {exc.recover_hint}) {TargetNotVerified.hint}"
            raise self._stop(step, resolved, f"; the model could not choose: {exc.message}", hint, llm=failed) from None
        if choice.index is None:
            raise self._stop(step, resolved, "; the model chose none", llm=msgspec.to_builtins(choice))
        try:
            picked = await resolve(
                self.tab, locator, self.config.flows.match_threshold, self.config.flows.match_margin, choice.index
            )
        except PlaywrightError:
            picked = Resolved(None, {})
        why = refusal(picked.report.get("picked"), shown[choice.index])
        if why is not None:
            if picked.element is not None:
                await picked.element.dispose()
            said = f"; the model chose element {choice.index}, refused: {why}"
            raise self._stop(step, resolved, said, llm={**msgspec.to_builtins(choice), "refused": why})
        entry = picked.report["picked"]
        # The report of the step is the chosen element's: its score, name grade and the candidates that found it.
        picked.report |= {"score": entry["score"], "match": entry["match"], "hits": entry["hits"]}
        picked.pick = choice
        return picked

    def _stop(
        self, step: Step, resolved: Resolved, said: str = "", hint: str | None = None, **more: Any
    ) -> BrowserdError:
        """The step's STOP: what was found and how each scored; `said` and `more` tell what a model did."""
        report = resolved.report
        error = _STOPS.get(resolved.status, TargetNotVerified)
        return error(
            f"step {step.id} ({step.type}) stopped: {_SAYS.get(resolved.status, resolved.status)}{said}; "
            "nothing was done",
            hint=hint or TargetNotVerified.hint,
            stepId=step.id,
            category="visibility" if resolved.status == "disabled" else "selector",
            status=resolved.status,
            candidates=report["candidates"],
            elements=report["elements"],
            threshold=self.config.flows.match_threshold,
            margin=self.config.flows.match_margin,
            **more,
        )

    async def _act(self, step: Step, resolved: dict[str, Resolved], deadline: float) -> None:
        page = self.tab.page
        timeout = max(1.0, (deadline - time.monotonic()) * 1000)
        target = resolved["target"].element if "target" in resolved else None
        if step.type == "navigate":
            await self.navigate_in(self.tab, step.url or "", timeout)
        elif step.type == "wait":
            await page.get_by_text(step.wait_text or "").first.wait_for(state="visible", timeout=timeout)
        elif step.type == "scroll" and target is None:
            dx, dy = (step.delta or [0, 0])[:2]
            await page.mouse.wheel(dx, dy)
        elif step.type == "key" and target is None:
            for key in (step.keys or "").split():
                await page.keyboard.press(key)
        elif step.type == "extract" and target is None:
            # The whole page: its text, or its accessibility snapshot (YAML, as Playwright writes it).
            body = page.locator("body")
            what = step.value or "text"
            read = await (body.aria_snapshot if what == "snapshot" else body.inner_text)(timeout=timeout)
            self.outputs[step.id] = {"snapshot" if what == "snapshot" else "text": read}
        elif target is None:
            raise ExecutionError(f"step {step.id} ({step.type}) has no target", stepId=step.id)
        else:
            await self._on_element(step, target, resolved, timeout)

    async def _on_element(
        self, step: Step, target: ElementHandle, resolved: dict[str, Resolved], timeout: float
    ) -> None:
        kind = step.type
        if kind in ("click", "dblclick"):
            await (target.click if kind == "click" else target.dblclick)(timeout=timeout)
        elif kind == "fill":
            # Playwright's fill types into the field and fires input and change, as a person's typing does.
            await target.fill(render(step.value or "", self.values, self.outputs), timeout=timeout)
        elif kind == "select":
            choice = msgspec.json.decode(step.value or "{}")
            if "labels" in choice:
                await target.select_option(label=choice["labels"], timeout=timeout)
            else:
                await target.select_option(value=choice.get("values") or [], timeout=timeout)
        elif kind in ("check", "uncheck"):
            await target.set_checked(kind == "check", timeout=timeout)
        elif kind == "hover":
            await target.hover(timeout=timeout)
        elif kind == "scroll":
            await target.scroll_into_view_if_needed(timeout=timeout)
            box = await target.bounding_box() if step.delta else None
            if step.delta and box is not None:
                # A person's scrolling inside this element (a feed, a list): the wheel over it, by as much.
                await self.tab.page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
                dx, dy = step.delta[:2]
                await self.tab.page.mouse.wheel(dx, dy)
        elif kind == "key":
            for key in (step.keys or "").split():
                await target.press(key, timeout=timeout)
        elif kind == "drag":
            end = resolved["end"].element
            if end is None:
                raise ElementNotFound("the drag's drop target is not on the page")
            await drag(self.tab.page, target, end, timeout, step.path or ())
        elif kind == "extract":
            what = step.value or "text"
            if what == "value":
                read: str | None = await target.input_value(timeout=timeout)
            elif what.startswith("attribute:"):
                read = await target.get_attribute(what.removeprefix("attribute:"))
            else:
                read = await target.inner_text()
            self.outputs[step.id] = {what.split(":", 1)[0]: read}

    async def navigate_in(self, tab: Tab, url: str, timeout: float) -> None:
        page = tab.page
        try:
            if url.startswith("history:"):
                await move_in_history(page, cast(HistoryMove, url.removeprefix("history:")), timeout=timeout)
            else:
                # Through the run's trust policy (the lower of the flow owner's and the caller's) and the guard.
                await navigate(
                    page, render(url, self.values, self.outputs), tab.window.guard, self.trust, timeout=timeout
                )
        except PlaywrightError as exc:
            if "Timeout" in str(exc):
                raise NavigationTimeout(f"{url} did not load in time", category="navigation") from None
            raise
