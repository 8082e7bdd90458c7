"""The agent loop: the model chooses an action, the daemon does it, the model reads what changed, until the
model calls `done` or a budget (steps, tokens; the template adds time) runs out.

Budgets stop the run with LIMIT_EXCEEDED and what was found so far (the last `note`). A final answer is
checked against the task's schema and may be repaired once with the validation errors; a second invalid
answer is refused with it. Every action is a step of the run: its reason and action are the progress.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any

from browserd.daemon.agent.agent_actions import ActionResult, AgentBrowser, parse_arguments
from browserd.daemon.agent.prompt import Fence, system_message, task_message
from browserd.daemon.errors import BrowserdError, LimitExceeded
from browserd.daemon.llm.chat_model import Message, Model, ToolCall, Usage
from browserd.daemon.llm.schema import NotJson, parse_answer, validation_errors
from browserd.daemon.llm.structured import refused

NUDGE = "Call one of the tools. When the task is done, call `done` with the answer."
REASON_SHOWN = 120


@dataclass(frozen=True)
class AgentTask:
    prompt: str
    urls: list[str]
    schema: dict[str, Any] | None
    max_steps: int
    max_tokens: int
    domains: list[str] = field(default_factory=list)


@dataclass
class TraceStep:
    index: int
    action: str
    reason: str
    summary: str
    url: str
    error_code: str | None = None
    # Characters of page text the model was handed for this step, and the daemon's own time for the action.
    chars: int = 0
    daemon_ms: float = 0.0

    def info(self) -> dict[str, Any]:
        info = {
            "step": self.index,
            "action": self.summary,
            "reason": self.reason,
            "url": self.url,
            "chars": self.chars,
            "daemonMs": round(self.daemon_ms, 1),
        }
        return info | ({"errorCode": self.error_code} if self.error_code else {})


@dataclass
class AgentState:
    usage: Usage = field(default_factory=Usage)
    trace: list[TraceStep] = field(default_factory=list)
    model: str = ""
    # The last `note`: the partial result when a budget runs out.
    partial: Any = None
    answer: Any = None
    done: bool = False
    repaired: bool = False
    steps: int = 0


class BudgetExceeded(LimitExceeded):
    hint = (
        "result.partial holds what the agent had noted; raise maxSteps, maxTokens or timeoutMs, or narrow the prompt."
    )
    ends_run = True


StepScope = Callable[[str], AbstractAsyncContextManager[Any]]


class Agent:
    def __init__(
        self,
        task: AgentTask,
        model: Model,
        browser: AgentBrowser,
        step: StepScope,
        check_cancelled: Callable[[], None] = lambda: None,
    ) -> None:
        """`step(name)`: the scope of one browser action (a run's step); `check_cancelled` raises once the run
        was asked to stop, checked before every model turn (turns that only `note` are no steps)."""
        self.task = task
        self.model = model
        self.browser = browser
        self.step = step
        self.check_cancelled = check_cancelled
        self.state = AgentState(model=model.name)
        self.fence = Fence()
        self.messages: list[Message] = [
            system_message(self.fence.opening, self.fence.closing, task.domains, list(browser.args), task.schema),
            task_message(task.prompt, task.urls, browser.search is not None),
        ]

    def over_budget(self, what: str, limit: int) -> BudgetExceeded:
        return BudgetExceeded(
            f"the agent ran out of {what} ({limit}) before it was done; the partial result is kept",
            limit=what,
            partial=self.state.partial,
            steps=self.state.steps,
            usage=self.state.usage.info(),
        )

    async def run(self) -> AgentState:
        if self.task.urls:
            # The first page costs no model turn: the model starts by reading it.
            result = await self._do("navigate", {"url": self.task.urls[0]}, "open the start page")
            self.messages[-1]["content"] += "\n\n" + self.fence.wrap(result.text)
        while not self.state.done:
            self.check_cancelled()
            if self.state.steps >= self.task.max_steps:
                raise self.over_budget("maxSteps", self.task.max_steps)
            left = self.task.max_tokens - self.state.usage.total
            if left <= 0:
                raise self.over_budget("maxTokens", self.task.max_tokens)
            completion = await self.model.complete(self.messages, self.browser.tools(), max_tokens=left)
            self.state.usage.add(completion.usage)
            self.state.model = completion.model or self.state.model
            self.messages.append(completion.message())
            if self.state.usage.total > self.task.max_tokens:
                raise self.over_budget("maxTokens", self.task.max_tokens)
            if not completion.tool_calls:
                self.state.steps += 1
                if not self._answered_in_text(completion.text):
                    self.messages.append({"role": "user", "content": NUDGE})
                continue
            for call in completion.tool_calls:
                self.messages.append(await self._call(call))
                if self.state.done:
                    break
        return self.state

    async def _call(self, call: ToolCall) -> Message:
        self.state.steps += 1
        try:
            args = parse_arguments(call.arguments)
        except BrowserdError as exc:
            return _tool_message(call, f"Error [{exc.code}]: {exc.message}")
        reason = str(args.pop("reason", "") or "")[:REASON_SHOWN]
        if call.name == "done":
            return _tool_message(call, self._finish(args.get("answer")))
        if call.name == "note":
            self.state.partial = args.get("data")
            return _tool_message(call, "Noted.")
        result = await self._do(call.name, args, reason)
        return _tool_message(call, self.fence.wrap(result.text))

    async def _do(self, name: str, args: dict[str, Any], reason: str) -> ActionResult:
        index = len(self.state.trace)
        label = f"{name}: {reason}" if reason else name
        async with self.step(label):
            started = time.perf_counter()
            result = await self.browser.act(name, args)
            elapsed = (time.perf_counter() - started) * 1000
        chars = len(result.text)
        self.state.trace.append(
            TraceStep(index, name, reason, result.summary, result.url, result.error_code, chars, elapsed)
        )
        return result

    def _answered_in_text(self, text: str) -> bool:
        """A model that writes its final JSON as text instead of calling done: accepted when it is valid."""
        try:
            value = parse_answer(text)
        except NotJson:
            return False
        if validation_errors(self.task.schema, value):
            return False
        self.state.answer, self.state.done = value, True
        return True

    def _finish(self, answer: Any) -> str:
        if isinstance(answer, str) and self.task.schema is not None:
            with contextlib.suppress(ValueError):  # some models pass the JSON as a string
                answer = json.loads(answer)
        errors = validation_errors(self.task.schema, answer)
        if not errors:
            self.state.answer, self.state.done = answer, True
            return "Done."
        if self.state.repaired:
            raise refused(json.dumps(answer, ensure_ascii=False), errors, self.state.usage, self.state.model)
        self.state.repaired = True
        return (
            "The answer does not match the schema:\n"
            + "\n".join(f"- {error}" for error in errors)
            + "\nCall done again with the corrected answer."
        )


def _tool_message(call: ToolCall, content: str) -> Message:
    return {"role": "tool", "tool_call_id": call.id, "content": content}
