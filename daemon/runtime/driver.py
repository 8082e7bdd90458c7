"""Playwright's driver (its Node.js process), started with browserd's preload (runtime/node/driver_preload.js).

The preload keeps the script Playwright injects into each document the same text on every navigation, so
that V8 reuses its compiled code instead of parsing and compiling ~330 kB again per navigation (the file
says how). Node loads it from NODE_OPTIONS, the one way in that Playwright's Python client leaves: the
client starts its driver with this process's environment.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from playwright.async_api import Playwright, async_playwright

PRELOAD = Path(__file__).with_name("node") / "driver_preload.js"


def node_options_with_preload(options: str) -> str:
    """NODE_OPTIONS `options` with the preload required too (once; quoted, since a path may hold spaces)."""
    require = f"--require {json.dumps(str(PRELOAD))}"
    return options if require in options else f"{options} {require}".strip()


async def start_driver(preload: bool) -> Playwright:
    """Playwright with a driver of its own, which loads the preload when `preload` ([browser] driver_preload).

    NODE_OPTIONS stays set in this process afterwards: the preload changes nothing in a Node.js program other
    than Playwright's, and a driver started again after a crash must load it too.
    """
    if preload:
        os.environ["NODE_OPTIONS"] = node_options_with_preload(os.environ.get("NODE_OPTIONS", ""))
    return await async_playwright().start()
