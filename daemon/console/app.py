"""The console (issue 25) as one Starlette app the daemon's HTTP server mounts at /console: its routes
(each over the daemon's services or tools), its event stream and its static page, all behind the guard."""

from __future__ import annotations

from pathlib import Path

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

from browserd.daemon.console.auth import OPEN_PATH, ConsoleAuth, ConsoleGuard
from browserd.daemon.console.client import ConsoleClient
from browserd.daemon.console.daemon_api import daemon_routes
from browserd.daemon.console.flows_api import flows_routes
from browserd.daemon.console.runs_api import runs_routes
from browserd.daemon.console.sessions_api import sessions_routes
from browserd.daemon.console.stream import stream_routes
from browserd.daemon.services import Services

PREFIX = "/console"
# The page: plain ES modules and one stylesheet, shipped as package data (no build step, nothing from a CDN).
STATIC = Path(__file__).resolve().parent / "static"


class Console:
    """One per daemon: the link tokens and cookies (in memory), the console's session, its routes."""

    def __init__(self, services: Services) -> None:
        self.auth = ConsoleAuth()
        self.client = ConsoleClient(services)
        self.services = services

    def link(self, base_url: str) -> str:
        """A one-time link for `browserd console`: `base_url` is the HTTP server's (http://127.0.0.1:PORT)."""
        return f"{base_url}{PREFIX}{OPEN_PATH}?token={self.auth.new_link_token()}"

    def mount(self) -> Mount:
        client = self.client
        routes = [
            *daemon_routes(client),
            *sessions_routes(client),
            *runs_routes(client),
            *flows_routes(client),
            *stream_routes(self.services.events),
            Mount("/", StaticFiles(directory=STATIC, html=True)),
        ]
        app = Starlette(routes=routes, middleware=[Middleware(ConsoleGuard, auth=self.auth)])
        return Mount(PREFIX, app=app)
