"""One MCP client's tool calls, whatever carries them: a stdio shim's socket or the HTTP endpoint.

A `ToolClient` is what a client keeps between calls (its tools, its browser session, the page header
it last saw); `guarded` runs one call under the daemon's request deadline and turns every failure into
an error answer with errorCode and recoverHint, so no front end has its own copy of either.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from playwright.async_api import Error as PlaywrightError

from browserd.daemon.errors import BrowserdError, ExecutionError, PageCrashed, request_timeout
from browserd.daemon.events import Progress
from browserd.daemon.runtime.browser import is_crash
from browserd.daemon.services import Services
from browserd.daemon.sessions.session import Session
from browserd.daemon.tools.context import ToolContext
from browserd.daemon.tools.response import PageSeen, error_payload
from browserd.daemon.tools.response import Response as ToolResponse
from browserd.daemon.tools.tool_registry import Catalog, Tool
from browserd.protocol.messages import Payload, ToolSpec

log = logging.getLogger(__name__)


class ToolClient:
    """One MCP client's view of the catalog and its browser session."""

    def __init__(
        self,
        services: Services,
        catalog: Catalog,
        session: Session,
        groups: list[str] | None,
        codegen: bool | None,
    ) -> None:
        self.services = services
        self.session = session
        self.groups = groups
        self.codegen = services.config.mcp.codegen if codegen is None else codegen
        self._catalog = catalog
        # Lean answers (issue 10): the page header this client last saw.
        self.page_seen = PageSeen()
        self.tools: dict[str, Tool[Any]] = {}
        self.reselect()

    def reselect(self) -> list[ToolSpec]:
        """Select the client's tools again (published flows come and go); their specs."""
        selected = self._catalog.select(self.groups, self.services.config.mcp.tools)
        self.tools = {t.name: t for t in selected}
        return self.specs()

    def specs(self) -> list[ToolSpec]:
        return [t.spec() for t in self.tools.values()]

    async def call(
        self, action: str, params: dict[str, Any], progress: Progress, deadline: anyio.CancelScope
    ) -> Payload:
        tool = self._catalog.get(action, set(self.tools))
        parsed = tool.parse(params)
        response = ToolResponse(self.codegen, self.page_seen)
        await tool.run(ToolContext(self.services, self.session, progress, deadline), parsed, response)
        return response.payload()


async def guarded(
    action: str, timeout_s: float | None, body: Callable[[anyio.CancelScope], Awaitable[Payload]]
) -> Payload:
    """`body(deadline)` under the request deadline; any failure becomes an error answer, never an exception."""
    started = anyio.current_time()
    deadline = anyio.CancelScope()
    try:
        with anyio.fail_after(timeout_s or None) as deadline:
            return await body(deadline)
    except TimeoutError:
        # A tool may have moved the deadline (ToolContext.allow): report the one that struck.
        return error_payload(request_timeout(action, deadline.deadline - started))
    except BrowserdError as exc:
        return error_payload(exc)
    except PlaywrightError as exc:
        if is_crash(exc):
            return error_payload(PageCrashed("the browser crashed during the call", action=action))
        log.exception("unexpected Playwright error in %s", action)
        return error_payload(ExecutionError(str(exc).splitlines()[0] if str(exc) else repr(exc)))
    except Exception as exc:  # a bug in one tool must not take the daemon down
        log.exception("internal error in %s", action)
        return error_payload(
            ExecutionError(
                f"internal error in {action}: {exc!r}",
                hint="This is a browserd bug; the daemon log has the traceback.",
            )
        )
