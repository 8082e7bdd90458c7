"""A part of the daemon's HTTP server (http_app.py mounts every one): its routes, life cycle and status.

Kept apart from http_app.py, which imports every part's factory, so a part's module can import this one
without an import cycle.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any

from starlette.routing import BaseRoute


@dataclass
class RouteSet:
    """One part of the HTTP server: its routes (usually one `Mount`), and what runs while they are served."""

    routes: list[BaseRoute]
    # Entered before the server accepts its first request and left after its last one ends, in the
    # daemon's task group (e.g. the MCP session manager's task group).
    running: Callable[[], AbstractAsyncContextManager[None]] | None = None
    # What `browserd status` shows of this part, under "http".
    status: Callable[[], dict[str, Any]] | None = None
