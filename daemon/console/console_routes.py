"""The console (issue 25) as one part of the daemon's HTTP server, mounted at /console: its routes
(each over the daemon's tools or services), its event stream and its static page, all behind the guard."""

from __future__ import annotations

from pathlib import Path

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

from browserd.daemon.console.auth import PREFIX, ConsoleAuth
from browserd.daemon.console.client import ConsoleClient
from browserd.daemon.console.console_guard import ConsoleGuard
from browserd.daemon.console.daemon_api import daemon_routes
from browserd.daemon.console.flows_api import flows_routes
from browserd.daemon.console.runs_api import runs_routes
from browserd.daemon.console.sessions_api import sessions_routes
from browserd.daemon.console.stream import stream_routes
from browserd.daemon.services import Services

# The page: plain ES modules and one stylesheet, shipped as package data (no build step, nothing from a CDN).
STATIC = Path(__file__).resolve().parent / "static"


def console_mount(services: Services, auth: ConsoleAuth) -> Mount:
    client = ConsoleClient(services)
    routes = [
        *daemon_routes(client),
        *sessions_routes(client),
        *runs_routes(client),
        *flows_routes(client),
        *stream_routes(services.events, services.sessions.idle),
        Mount("/", StaticFiles(directory=STATIC, html=True)),
    ]
    app = Starlette(routes=routes, middleware=[Middleware(ConsoleGuard, auth=auth)])
    return Mount(PREFIX, app=app)
