"""The console's view of the daemon itself: the overview (`browserd status`'s summary), login profiles and
the extension bridge (pairing code, paired extensions)."""

from __future__ import annotations

import os
import time
from typing import Any

import anyio
import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from browserd.daemon import summary
from browserd.daemon.bridge.bridge_control import bridge_control
from browserd.daemon.console.client import ConsoleClient, answers_errors, json_answer
from browserd.daemon.profiles.meta import decode_meta
from browserd.protocol import __version__


def _profiles(root: str) -> list[dict[str, Any]]:
    """Each profile's meta.json (version, last publish, writer); never its state.json."""
    found = []
    for entry in sorted(os.scandir(root), key=lambda e: e.name) if os.path.isdir(root) else []:
        path = os.path.join(entry.path, "meta.json")
        try:
            with open(path, "rb") as file:
                meta = decode_meta(file.read())
        except (OSError, ValueError):
            continue  # a folder being created, or not a profile
        found.append(msgspec.to_builtins(meta))
    return found


def daemon_routes(client: ConsoleClient) -> list[Route]:
    services = client.services

    @answers_errors
    async def overview(request: Request) -> Response:
        return json_answer(
            {
                "pid": services.pid,
                "version": __version__,
                "uptimeS": round(time.time() - services.started_at, 1),
                **summary.activity(services),
                "bridge": services.bridge.status(),
            }
        )

    @answers_errors
    async def profiles(request: Request) -> Response:
        root = str(services.profiles.root)
        return json_answer({"profiles": await anyio.to_thread.run_sync(_profiles, root)})

    @answers_errors
    async def bridge(request: Request) -> Response:
        return json_answer(services.bridge.status())

    @answers_errors
    async def pair(request: Request) -> Response:
        return json_answer(await bridge_control(services.bridge, "bridge.pair", {}))

    return [
        Route("/api/overview", overview),
        Route("/api/profiles", profiles),
        Route("/api/bridge", bridge),
        Route("/api/bridge/pair", pair, methods=["POST"]),
    ]
