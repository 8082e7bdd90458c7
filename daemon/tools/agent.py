"""The agent group: `agent_run` (a prompt-driven agent as a task run, template `agent`) and `web_search`."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

from browserd.daemon.agent.search import web_search as search
from browserd.daemon.runs.run_records import RunMode
from browserd.daemon.runs.templates.agent import TIMEOUT_MARGIN_MS, AgentInputs
from browserd.daemon.tools.context import ToolContext
from browserd.daemon.tools.response import Response
from browserd.daemon.tools.task_runs import RunOptions, RunTemplateParams, TaskRun, run_template
from browserd.daemon.tools.tool_registry import Params, Tool, tool


class AgentRunParams(AgentInputs, kw_only=True):
    """The agent template's inputs, plus how to run it."""

    mode: Annotated[RunMode, msgspec.Meta(description="async (default): answer with a runId at once; sync: wait.")] = (
        "async"
    )


class SearchParams(Params, kw_only=True):
    query: Annotated[str, msgspec.Meta(min_length=1, max_length=500)]
    limit: Annotated[int, msgspec.Meta(ge=1, le=20)] = 5


@tool(
    "agent_run",
    "agent",
    "Let a model ([llm] config, or this client's own through sampling) do a task in words by browsing on its "
    "own in a window of its own: from `urls`, or searching first (web_search). Answers JSON matching `schema`. "
    "A task run: async by default (a runId for get_task_run, whose result has the answer, model and token "
    "usage; cancel_task_run stops it). `args` are sensitive values the agent types without seeing them; "
    "`allowedDomains` limits where it goes; budgets (maxSteps, maxTokens, timeoutMs) stop it with "
    "LIMIT_EXCEEDED and its partial result.",
    AgentRunParams,
    output=TaskRun,
)
async def agent_run(ctx: ToolContext, params: AgentRunParams, response: Response) -> None:
    ctx.services.llm.model(ctx.session.id)  # LLM_NOT_CONFIGURED before any run exists
    for url in params.urls:
        await ctx.session.trust.check_url(url)  # a remote caller's agent is refused loopback before it starts
    inputs = {key: value for key, value in msgspec.to_builtins(params).items() if key != "mode" and value is not None}
    options = RunOptions(mode=params.mode, timeout_ms=params.timeout_ms + TIMEOUT_MARGIN_MS)
    run = RunTemplateParams(template_id="agent", inputs=inputs, options=options)
    await run_template(ctx, run, response)


@tool(
    "web_search",
    "agent",
    "Search the web through the configured backend ([search]: a SearXNG instance, or a results page read by "
    "the browser); answers result URLs, titles and snippets.",
    SearchParams,
    read_only=True,
)
async def web_search(ctx: ToolContext, params: SearchParams, response: Response) -> None:
    results = await search(ctx.services, params.query, params.limit, ctx.session.trust_level)
    response.data({"query": params.query, "results": [result.info() for result in results]})
    lines = [f"- [{r.title or r.url}]({r.url})" + (f" — {r.snippet}" if r.snippet else "") for r in results]
    response.text("\n".join(lines) or "(no results)")


TOOLS: list[Tool[Any]] = [agent_run, web_search]
