"""A test's MCP client on a chosen session backend (tests/e2e/conftest.py's `driver` fixture picks it)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from tests.conftest import BrowserdHome, mcp_client
from tests.e2e import bridge_chrome
from tests.e2e.results import ok

OWN_VIEWPORT = (1280, 800)  # [browser] viewport_width x viewport_height, the defaults


@dataclass
class Driver:
    """An MCP client whose pages live on one backend; `backend` is "own" or "extension"."""

    home: BrowserdHome
    backend: str

    @asynccontextmanager
    async def client(self, args: tuple[str, ...] = ()) -> AsyncIterator[Any]:
        if self.backend == "own":
            async with mcp_client(self.home, args=args) as client:
                yield client
            return
        tools = () if "--tools" in args else bridge_chrome.DEVTOOLS
        async with mcp_client(self.home, args=(*args, *tools)) as client:
            # The session's first window is a tab group in the user's Chrome; every tab it opens goes there.
            ok(await client.call_tool("browser_windows", {"action": "new", "kind": "extension"}))
            yield client

    async def viewport(self, client: Any) -> tuple[int, int]:
        """Its pages' viewport: the configured default on the own browser, the user's window in their Chrome."""
        if self.backend == "own":
            return OWN_VIEWPORT
        result = ok(await client.call_tool("browser_evaluate", {"expression": "[innerWidth, innerHeight]"}))
        width, height = result.structured_content["result"]
        return int(width), int(height)
