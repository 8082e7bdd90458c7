"""What an agent may do, as the model sees it (function tools) and as the daemon does it: each action is a
browser tool of the session code (browser_open, browser_click ...), called in-process on the run's own
session through the ToolCaller, so it passes the same trust policy, URL guard, settling and refs as a
client's call. There is no script evaluation, no upload, no file: URL, no window on another profile.

Sensitive values (`args`) are typed by reference: the model names an argument (`fill {ref, arg}`), the
daemon types its value, and every text the model reads has those values masked.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import anyio

from browserd.daemon.agent.domains import AllowedDomains
from browserd.daemon.errors import BrowserdError, InvalidParameter
from browserd.daemon.scrape.extract import extract
from browserd.daemon.scrape.links import check_http_url

if TYPE_CHECKING:
    from browserd.daemon.services import Services
    from browserd.daemon.sessions.session import Session

# How the page is shown to the model after an action: the browser tools' snapshot modes. interactive (only
# what can be acted on, under its headings) plus `read` (the main content as markdown) when the task needs
# the page's text: tests/bench/agent.py measured 0.23-0.54 of a full snapshot's characters on fuller
# tests/site pages and 0.32-0.78 per step on the agent test tasks, where delta (the whole snapshot on a new
# page, then changed lines) saved nothing, as nearly every step there loads a new page (docs/llm.md).
SnapshotForm = Literal["delta", "full", "interactive"]
READ_MAX_CHARS = 12_000  # of a page's main content per `read`
# Of any one action's answer: a page whose interactive snapshot is huge must not spend a run's budget at once.
ANSWER_MAX_CHARS = 16_000
REASON = {"type": "string", "description": "Why, in a few words (shown to the user as progress)."}
MASK = "[arg:{name}]"


def _tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {**properties, "reason": REASON},
                "required": required,
            },
        },
    }


REF = {"type": "string", "description": "A ref from the latest snapshot, e.g. e12."}
BROWSER_TOOLS = [
    _tool("navigate", "Open a URL in the current tab.", {"url": {"type": "string"}}, ["url"]),
    _tool("click", "Click an element.", {"ref": REF}, ["ref"]),
    _tool(
        "fill",
        "Replace a field's text: give `value`, or `arg` to type the caller's named argument (its value stays hidden).",
        {"ref": REF, "value": {"type": "string"}, "arg": {"type": "string"}, "submit": {"type": "boolean"}},
        ["ref"],
    ),
    _tool(
        "select",
        "Choose an option of a select box by its label.",
        {"ref": REF, "option": {"type": "string"}},
        ["ref", "option"],
    ),
    _tool(
        "press",
        "Press a key (Enter, Tab, ArrowDown ...), on an element if given.",
        {"key": {"type": "string"}, "ref": REF},
        ["key"],
    ),
    _tool("scroll", "Scroll the page down (or up: negative pixels).", {"pixels": {"type": "integer"}}, []),
    _tool(
        "wait",
        "Wait until a text shows (at most 10 s), or for some ms.",
        {"text": {"type": "string"}, "ms": {"type": "integer"}},
        [],
    ),
    _tool("back", "Go back in the tab's history.", {}, []),
    _tool("read", "The current page's main text as markdown (for reading values the snapshot cuts).", {}, []),
    _tool(
        "tabs",
        "Tabs: list them, open a new one on a URL, select one or close one.",
        {
            "action": {"type": "string", "enum": ["list", "new", "select", "close"]},
            "url": {"type": "string"},
            "tabId": {"type": "string"},
        },
        ["action"],
    ),
    _tool(
        "note",
        "Keep data found so far (e.g. the rows collected); returned as the partial result if the budget runs out.",
        {"data": {}},
        ["data"],
    ),
    _tool(
        "done", "Finish with the answer (JSON matching the task's schema, if it has one).", {"answer": {}}, ["answer"]
    ),
]
SEARCH_TOOL = _tool(
    "web_search",
    "Search the web; answers result URLs and titles.",
    {"query": {"type": "string"}, "limit": {"type": "integer"}},
    ["query"],
)

Searcher = Callable[[str, int], Awaitable[list[dict[str, str]]]]


@dataclass
class ActionResult:
    """What one action did: the text the model reads next, and a one-line summary for the trace."""

    text: str
    summary: str
    url: str = ""
    error_code: str | None = None


@dataclass
class AgentBrowser:
    services: Services
    session: Session
    domains: AllowedDomains
    args: dict[str, str] = field(default_factory=dict)
    form: SnapshotForm = "interactive"
    search: Searcher | None = None

    def tools(self) -> list[dict[str, Any]]:
        return [*BROWSER_TOOLS, SEARCH_TOOL] if self.search is not None else list(BROWSER_TOOLS)

    def mask(self, text: str) -> str:
        for name, value in self.args.items():
            if value:
                text = text.replace(value, MASK.format(name=name))
        return text

    async def _tool(self, name: str, arguments: dict[str, Any]) -> str:
        return (await self.services.tools.answer(name, arguments, self.services, self.session)).text

    def current_url(self) -> str:
        tab = self.session.active_tab()
        return tab.page.url if tab is not None else ""

    async def act(self, name: str, args: dict[str, Any]) -> ActionResult:
        """Run one action; a BrowserdError becomes the text the model reads (it may recover), never an escape."""
        action = self._actions().get(name)
        try:
            if action is None:
                raise InvalidParameter(
                    f"there is no action `{name}`", hint="Use one of the tools offered.", field="name"
                )
            try:
                text, summary = await action(args)
            except (TypeError, ValueError) as exc:  # an argument of the wrong type, as models sometimes write
                raise InvalidParameter(f"bad arguments for {name}: {exc}", field="arguments") from exc
        except BrowserdError as exc:
            text = f"Error [{exc.code}]: {exc.message}\nNext: {exc.recover_hint}"
            return ActionResult(self.mask(text), f"{name} failed: {exc.code}", self.current_url(), exc.code)
        if len(text) > ANSWER_MAX_CHARS:
            text = (
                text[:ANSWER_MAX_CHARS]
                + f"\n… cut at {ANSWER_MAX_CHARS} of {len(text)} characters: `read` gives the main text, `scroll` more."
            )
        refused = self.domains.take_refused()
        if refused:
            text += "\nRefused (outside allowedDomains): " + ", ".join(refused)
        return ActionResult(self.mask(text), self.mask(summary), self.current_url())

    def _actions(self) -> dict[str, Callable[[dict[str, Any]], Awaitable[tuple[str, str]]]]:
        """Each action's code: its answer's text and its one-line summary."""
        actions = {
            "navigate": self._navigate,
            "click": self._element("click"),
            "fill": self._element("fill"),
            "select": self._element("select"),
            "press": self._element("press"),
            "scroll": self._scroll,
            "wait": self._wait,
            "back": self._back,
            "read": self._read,
            "tabs": self.tabs,
        }
        if self.search is not None:
            actions["web_search"] = self._search
        return actions

    async def _navigate(self, args: dict[str, Any]) -> tuple[str, str]:
        url = str(args.get("url") or "")
        return await self.open(url), f"navigate {url}"

    def _element(self, name: str) -> Callable[[dict[str, Any]], Awaitable[tuple[str, str]]]:
        async def act(args: dict[str, Any]) -> tuple[str, str]:
            ref = str(args.get("ref") or "")
            call: dict[str, Any] = {"snapshot": self.form}
            if ref:
                call["target"] = ref
            elif name != "press":
                raise InvalidParameter(f"{name} needs a ref from the latest snapshot", field="ref")
            if name == "fill":
                call |= {"value": self._value(args), "submit": bool(args.get("submit"))}
            elif name == "select":
                call["labels"] = [str(args.get("option") or "")]
            elif name == "press":
                call["key"] = str(args.get("key") or "")
            text = await self._tool(f"browser_{name}", call)
            typed = f" {args['arg']!s}" if name == "fill" and args.get("arg") else ""
            return text, f"{name} {ref}{typed}".strip()

        return act

    async def _scroll(self, args: dict[str, Any]) -> tuple[str, str]:
        pixels = int(args.get("pixels") or 600)
        return await self._tool("browser_scroll", {"deltaY": pixels, "snapshot": self.form}), f"scroll {pixels}"

    async def _wait(self, args: dict[str, Any]) -> tuple[str, str]:
        call: dict[str, Any] = {"snapshot": self.form}
        if args.get("text"):
            call |= {"text": str(args["text"]), "timeout": 10_000}
        else:
            call["timeMs"] = max(1, min(int(args.get("ms") or 1000), 10_000))
        return await self._tool("browser_wait", call), f"wait {args.get('text') or call.get('timeMs')}"

    async def _back(self, args: dict[str, Any]) -> tuple[str, str]:
        return await self._tool("browser_navigate", {"action": "back", "snapshot": self.form}), "back"

    async def _read(self, args: dict[str, Any]) -> tuple[str, str]:
        return await self.read(), "read"

    async def _search(self, args: dict[str, Any]) -> tuple[str, str]:
        assert self.search is not None
        query = str(args.get("query") or "")
        results = await self.search(query, max(1, min(int(args.get("limit") or 5), 10)))
        lines = [f"- {r['title']} {r['url']}" + (f" — {r['snippet']}" if r.get("snippet") else "") for r in results]
        return "Results:\n" + ("\n".join(lines) or "(none)"), f"search {query!r}"

    def _value(self, args: dict[str, Any]) -> str:
        if args.get("arg"):
            name = str(args["arg"])
            if name not in self.args:
                raise InvalidParameter(
                    f"no argument `{name}`; the caller gave: {', '.join(self.args) or 'none'}", field="arg"
                )
            return self.args[name]
        return str(args.get("value") or "")

    async def open(self, url: str) -> str:
        """Open `url` in the current tab of the run's window (the template made it, on a profile if one is named)."""
        check_http_url(url)
        self.domains.check(url)
        return await self._tool("browser_open", {"url": url, "snapshot": self.form})

    async def read(self) -> str:
        tab = await self.session.tab()
        async with tab.lock:
            html, url = await tab.page.content(), tab.page.url
        extraction = await anyio.to_thread.run_sync(lambda: extract(html, url, only_main_content=True))
        body = extraction.markdown[:READ_MAX_CHARS]
        cut = "\n… (cut)" if len(extraction.markdown) > READ_MAX_CHARS else ""
        return f"Main content of {url}:\n{body}{cut}"

    async def tabs(self, args: dict[str, Any]) -> tuple[str, str]:
        action = str(args.get("action") or "list")
        call: dict[str, Any] = {"action": action}
        if action == "new" and args.get("url"):
            url = str(args["url"])
            check_http_url(url)
            self.domains.check(url)
            call["url"] = url
        if action in ("select", "close"):
            call["tabId"] = str(args.get("tabId") or "")
        text = await self._tool("browser_tabs", call)
        if action in ("new", "select") and self.session.active_tab() is not None:
            # The model acts on refs: a tab it turns to comes with its snapshot.
            shown = await self._tool("browser_snapshot", {"interactive": self.form == "interactive"})
            text = f"{text}\n{shown}"
        target = call.get("url") or call.get("tabId") or ""
        return text, f"tabs {action} {target}".strip()


def parse_arguments(raw: str) -> dict[str, Any]:
    try:
        value = json.loads(raw or "{}")
    except ValueError as exc:
        raise InvalidParameter(f"the tool call's arguments are not JSON: {exc}", field="arguments") from exc
    if not isinstance(value, dict):
        raise InvalidParameter("the tool call's arguments must be a JSON object", field="arguments")
    return value
