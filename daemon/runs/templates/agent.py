"""`agent` 1.0.0: a prompt-driven agent (reference/002's L3, issue 26) as a task run.

The model ([llm], or the caller's own through sampling) browses in a window of the run's own session,
isolated from the caller's, through the browser tools' code (daemon/agent/agent_actions.py), inside the
caller's trust level and the run's allowedDomains, and answers JSON shaped by `schema`. Each action is
a step (its name: the action and the model's reason); the step trace (and, when asked, a screenshot
per step) are artifacts; `result` holds the answer, the model, its token usage and the steps taken.
Budgets (maxSteps, maxTokens, timeoutMs) stop the run with LIMIT_EXCEEDED and the partial result.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

import anyio
import msgspec

from browserd.daemon.agent.agent_actions import AgentBrowser, SnapshotForm
from browserd.daemon.agent.domains import AllowedDomains
from browserd.daemon.agent.loop import Agent, AgentState, AgentTask
from browserd.daemon.agent.search import configured as search_configured
from browserd.daemon.agent.search import web_search
from browserd.daemon.config import Config
from browserd.daemon.errors import InvalidParameter
from browserd.daemon.llm.schema import check_schema
from browserd.daemon.policy.trust import TrustPolicy
from browserd.daemon.runs.run_context import RunContext
from browserd.daemon.runs.templates.template_interface import Inputs, Template
from browserd.daemon.scrape.links import check_http_url

MAX_URLS = 20
# The run's own deadline is the budget's plus this: the agent stops itself first, with its partial result.
TIMEOUT_MARGIN_MS = 30_000
HIDDEN = "***"


class AgentInputs(Inputs, kw_only=True):
    prompt: Annotated[str, msgspec.Meta(min_length=1, max_length=20_000, description="The task, in words.")]
    urls: Annotated[list[str], msgspec.Meta(max_length=MAX_URLS, description="Where to start; none: search.")] = (
        msgspec.field(default_factory=list)
    )
    schema: Annotated[dict[str, Any], msgspec.Meta(description="JSON Schema the answer must match.")] | None = None
    max_steps: Annotated[int, msgspec.Meta(ge=1, le=200, description="Most actions the agent may take.")] = 20
    max_tokens: Annotated[int, msgspec.Meta(ge=1_000, description="Most model tokens (prompt + completion).")] = 200_000
    timeout_ms: Annotated[int, msgspec.Meta(ge=1_000, le=840_000, description="Most time the agent may take.")] = (
        300_000
    )
    allowed_domains: (
        Annotated[list[str], msgspec.Meta(description="Only these hosts (example.com, *.example.com) may load.")] | None
    ) = None
    profile_id: (
        Annotated[str, msgspec.Meta(pattern=r"^[a-zA-Z0-9._-]{1,64}$", description="Browse logged in as this profile.")]
        | None
    ) = None
    args: (
        Annotated[
            dict[str, str],
            msgspec.Meta(description="Sensitive values (passwords): the agent types them by name, never sees them."),
        ]
        | None
    ) = None
    screenshots: Annotated[bool, msgspec.Meta(description="Keep a screenshot of each step as an artifact.")] = False


class AgentResult(msgspec.Struct, kw_only=True, rename="camel", omit_defaults=True):
    answer: Any = None
    model: str
    usage: dict[str, int]
    steps: int
    trace_artifact_id: str | None = None
    # What the agent had noted when a budget stopped it.
    partial: Any = None


class AgentRun(Template[AgentInputs]):
    template_id = "agent"
    version = "1.0.0"
    name = "Prompt-driven agent"
    description = (
        "A model browses by itself (search, navigate, click, fill, read) to do a task in words, in a window of "
        "its own, and answers JSON shaped by a schema."
    )
    inputs = AgentInputs
    outputs = AgentResult
    limits = {"maxUrls": MAX_URLS, "maxSteps": 200}  # noqa: RUF012
    max_timeout_ms = 840_000 + TIMEOUT_MARGIN_MS
    # How pages are shown to the model (daemon/agent/agent_actions.py says why; tests/bench/agent.py measures it).
    form: SnapshotForm = "interactive"

    def check(self, inputs: AgentInputs, config: Config) -> None:
        for index, url in enumerate(inputs.urls):
            check_http_url(url, f"inputs.urls[{index}]")
        check_schema(inputs.schema, "inputs.schema")
        domains = AllowedDomains(inputs.allowed_domains)
        for index, url in enumerate(inputs.urls):
            if not domains.allows(url):
                raise InvalidParameter(
                    f"inputs.urls[{index}] {url} is outside allowedDomains", field=f"inputs.urls[{index}]"
                )
        if not inputs.urls and not search_configured(config.search):
            raise InvalidParameter(
                "the prompt gives no URL and no search backend is configured",
                hint="Pass urls to start from, or configure [search] searxng_url or results_url_template "
                "(docs/llm.md).",
                field="inputs.urls",
            )

    def check_trust(self, inputs: AgentInputs, trust: TrustPolicy) -> None:
        if inputs.profile_id is not None:
            trust.check_profile(inputs.profile_id, "let an agent browse with")

    def stored_inputs(self, inputs: AgentInputs) -> dict[str, Any]:
        stored = dict(msgspec.to_builtins(inputs))
        if inputs.args:
            stored["args"] = dict.fromkeys(inputs.args, HIDDEN)
        return stored

    async def run(self, ctx: RunContext, inputs: AgentInputs) -> None:
        # The caller's client's model (sampling) or the endpoint: the run's own session has no client.
        model = ctx.services.llm.model(ctx.record.owner_session_id)
        domains = AllowedDomains(inputs.allowed_domains)
        session = ctx.session
        if inputs.profile_id is not None:
            ctx.trust.check_profile(inputs.profile_id, "let an agent browse with")
            window = await session.window_for_profile(inputs.profile_id, publish=True)
        else:
            window = await session.open_window()
        await domains.hold(window.context)
        trust_level = ctx.trust.level

        async def search(query: str, limit: int) -> list[dict[str, str]]:
            return [result.info() for result in await web_search(ctx.services, query, limit, trust_level)]

        browser = AgentBrowser(
            ctx.services,
            session,
            domains,
            args=dict(inputs.args or {}),
            form=self.form,
            search=search if search_configured(ctx.services.config.search) else None,
        )
        task = AgentTask(
            inputs.prompt,
            inputs.urls,
            inputs.schema,
            inputs.max_steps,
            inputs.max_tokens,
            [pattern.text for pattern in domains.patterns],
        )

        @asynccontextmanager
        async def step(name: str) -> AsyncIterator[None]:
            index = await ctx.add_step(name)
            async with ctx.step(index):
                yield
            if inputs.screenshots:
                await self._screenshot(ctx, browser, index)

        agent = Agent(task, model, browser, step, ctx.check_cancelled)
        try:
            with anyio.move_on_after(inputs.timeout_ms / 1000) as budget:
                await agent.run()
        finally:
            # Whatever ended the run (a budget, a cancel, an error), its trace and what it found are kept.
            with anyio.CancelScope(shield=True):
                trace = browser.mask(json.dumps([step.info() for step in agent.state.trace], ensure_ascii=False))
                artifact = await ctx.add_artifact(trace.encode(), "application/json", "agent step trace")
                self._output(ctx, agent.state, artifact.artifact_id)
        if budget.cancelled_caught:
            raise agent.over_budget("timeoutMs", inputs.timeout_ms)

    @staticmethod
    def _output(ctx: RunContext, state: AgentState, trace_artifact_id: str) -> None:
        ctx.set_output(
            traceArtifactId=trace_artifact_id,
            answer=state.answer,
            model=state.model,
            usage=state.usage.info(),
            steps=state.steps,
            **({"partial": state.partial} if state.partial is not None else {}),
        )

    @staticmethod
    async def _screenshot(ctx: RunContext, browser: AgentBrowser, index: int) -> None:
        tab = browser.session.active_tab()
        if tab is None:
            return
        async with tab.lock:
            png = await tab.page.screenshot()
        await ctx.add_artifact(png, "image/png", f"step {index} screenshot")
