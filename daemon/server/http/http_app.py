"""The daemon's one HTTP app: every route set mounted side by side (DESIGN.md §7).

Each part of the HTTP server is a `RouteSet` made by a factory in `ROUTE_SETS`: MCP at /mcp (with
its own token check and Origin check), the console at /console (with its own cookie). A part never
sees another's credentials: authentication is per route set, not a middleware around the whole app.
To add a part, write `def my_routes(daemon) -> RouteSet | None` next to its code (importing RouteSet from
routeset.py) and list it in ROUTE_SETS.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from browserd.daemon.console.console_routes import console_mount
from browserd.daemon.server.http.mcp_endpoint import mcp_routes
from browserd.daemon.server.http.routeset import RouteSet as RouteSet

if TYPE_CHECKING:
    from browserd.daemon.server.daemon_process import Daemon


RouteSetFactory = Callable[["Daemon"], "RouteSet | None"]


def console_routes(daemon: Daemon) -> RouteSet:
    """/console: the console's page and routes, behind its own cookie (daemon/console/, docs/console.md)."""
    return RouteSet([console_mount(daemon.services, daemon.console_auth)])


def health_routes(daemon: Daemon) -> RouteSet:
    """GET /health: that this is browserd and which version, for probes and reverse proxies; no data."""

    async def health(_request: Request) -> JSONResponse:
        return JSONResponse({"ok": True, "service": "browserd", "version": daemon.version})

    return RouteSet([Route("/health", health, methods=["GET"])])


# Every part of the HTTP server, in the order their routes are matched. A factory returns None when
# its part is switched off.
ROUTE_SETS: list[RouteSetFactory] = [health_routes, mcp_routes, console_routes]


@dataclass
class HttpApp:
    app: Starlette
    route_sets: Sequence[RouteSet]

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            for route_set in self.route_sets:
                if route_set.running is not None:
                    await stack.enter_async_context(route_set.running())
            yield

    def status(self) -> dict[str, Any]:
        merged: dict[str, Any] = {}
        for route_set in self.route_sets:
            if route_set.status is not None:
                merged.update(route_set.status())
        return merged


def build_app(daemon: Daemon, factories: Sequence[RouteSetFactory] = ROUTE_SETS) -> HttpApp:
    route_sets = [made for factory in factories if (made := factory(daemon)) is not None]
    routes = [route for route_set in route_sets for route in route_set.routes]
    return HttpApp(Starlette(routes=routes), route_sets)
