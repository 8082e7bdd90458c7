"""Replaying a flow's steps on one tab, acting only on an element that is verifiably the recorded one.

Each step resolves every candidate of its target in one page evaluate (flows/js/resolve.js; a second
fetches its report), scores every element found against the recorded fingerprint, and acts only when
one visible element scores at least the threshold and leads the next by the margin (issue 14 item 3).
Until then it polls with backoff up to the step's timeout, then STOPs with the candidates, what each
found and the scores; with [flows] llm_fallback, a model may first choose among them (model_choice.py).
An action that fails (detached, covered) is retried with backoff (S4-58, D-53).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, cast
from urllib.parse import urlsplit

import anyio
import msgspec
from playwright.async_api import Error as PlaywrightError

from browserd.daemon.config import Config
from browserd.daemon.errors import (
    BrowserdError,
    ElementAmbiguous,
    ElementNotFound,
    ElementNotInteractable,
    ExecutionError,
    NavigationTimeout,
    TargetNotVerified,
)
from browserd.daemon.flows.flow_model import Retry, Step, StepReport, TargetLocator
from browserd.daemon.flows.placeholders import render
from browserd.daemon.flows.replay.acting import act_on_element
from browserd.daemon.flows.replay.model_choice import ASKABLE, ModelChooser, refusal
from browserd.daemon.flows.replay.resolution import Resolved, resolve
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
                setter = await self._act(step, resolved, deadline)
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
            finally:
                # The marks go before the page settles (or the next attempt marks what it finds anew).
                await _unpin(resolved)
        if step.type not in _READING:
            await settle_tab(self.tab, self.config.flows.settle_quiet_ms, self.config.browser.settle_max_ms)
        first = resolved.get("target")
        report = StepReport(
            step_id=step.id, type=step.type, status="success", took_ms=int((time.monotonic() - started) * 1000)
        )
        report.attempts = attempts
        report.setter = setter
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
        try:
            for role, locator in (("target", step.target), ("end", step.end)):
                if locator is not None:
                    fill = role == "target" and step.type == "fill"
                    found[role] = await self._poll(step, locator, deadline, field=fill)
        except Exception:
            await _unpin(found)  # a drop target that stays unclear leaves no mark on the dragged element
            raise
        return found

    async def _poll(self, step: Step, locator: TargetLocator, deadline: float, field: bool) -> Resolved:
        """One target resolved, with backoff, until it wins clearly (marked) or the deadline asks the model."""
        delay = _POLL_START_S
        while True:
            began = time.monotonic()
            threshold, margin = self.config.flows.match_threshold, self.config.flows.match_margin
            try:
                resolved = await resolve(self.tab, locator, threshold, margin, field=field)
            except PlaywrightError:
                # The document changed under the evaluate (a navigation): look again in the new one.
                resolved = Resolved({"status": "none", "candidates": [], "elements": []})
            self._resolve_s += time.monotonic() - began
            if resolved.locator is not None:
                return resolved
            if time.monotonic() + delay >= deadline or self._still(resolved):
                return await self._ask_model(step, locator, resolved, field)
            await anyio.sleep(delay)
            delay = min(delay * 2, _POLL_MAX_S)

    def _still(self, resolved: Resolved) -> bool:
        """Whether the page was still long enough ([flows] still_page_ms) when the element did not win."""
        still_ms = self.config.flows.still_page_ms
        return bool(still_ms) and resolved.report.get("stillMs", 0) >= still_ms

    async def _ask_model(self, step: Step, locator: TargetLocator, resolved: Resolved, field: bool) -> Resolved:
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
            threshold, margin = self.config.flows.match_threshold, self.config.flows.match_margin
            picked = await resolve(self.tab, locator, threshold, margin, choice.index, field)
        except PlaywrightError:
            picked = Resolved({})
        why = refusal(picked.report.get("picked"), shown[choice.index])
        if why is not None:
            await picked.unpin()
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
        if self._still(resolved):
            said += f"; the page had been still for {report['stillMs'] / 1000:.1f} s"
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
            pageStillMs=report.get("stillMs", 0),
            **more,
        )

    async def _act(self, step: Step, resolved: dict[str, Resolved], deadline: float) -> str | None:
        """Do the step; the element helper that took a fill, select or check (acting.py)."""
        page = self.tab.page
        timeout = max(1.0, (deadline - time.monotonic()) * 1000)
        target = resolved.get("target")
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
            value = render(step.value or "", self.values, self.outputs) if step.type == "fill" else ""
            try:
                acted = await act_on_element(page, step, target, resolved.get("end"), value, timeout)
                if acted.verify is not None:
                    await acted.verify()  # the fill's value took (a mask may have rewritten it)
            except BrowserdError as exc:
                # A helper's error may quote the value (a field that did not take it): never a sensitive one.
                exc.message = scrub(exc.message, self.secrets)
                exc.details = {k: scrub(v, self.secrets) if isinstance(v, str) else v for k, v in exc.details.items()}
                raise
            if acted.read is not None:
                self.outputs[step.id] = acted.read
            return acted.setter
        return None

    async def navigate_in(self, tab: Tab, url: str, timeout: float) -> None:
        page = tab.page
        try:
            if url.startswith("history:"):
                move = cast(HistoryMove, url.removeprefix("history:"))
                await move_in_history(page, move, self.trust, timeout=timeout)
            else:
                # Through the run's trust policy (the lower of the flow owner's and the caller's) and the guard.
                await navigate(
                    page, render(url, self.values, self.outputs), tab.window.guard, self.trust, timeout=timeout
                )
        except PlaywrightError as exc:
            if "Timeout" in str(exc):
                raise NavigationTimeout(f"{url} did not load in time", category="navigation") from None
            raise


async def _unpin(resolved: dict[str, Resolved]) -> None:
    for found in resolved.values():
        await found.unpin()
