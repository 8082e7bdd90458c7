"""Playwright's driver (its Node.js process), started with browserd's preload (runtime/node/driver_preload.js).

The preload keeps the script Playwright injects into each document the same text on every navigation, so
that V8 reuses its compiled code instead of parsing and compiling ~330 kB again per navigation, sends that
script's module once per page instead of once per navigation, and writes each of the driver's messages in
one write (the file says how). Node loads it from NODE_OPTIONS, the one way in that Playwright's Python
client leaves: the client starts its driver with this process's environment.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from playwright.async_api import Playwright, async_playwright

PRELOAD = Path(__file__).with_name("node") / "driver_preload.js"
# For `browserd doctor`'s node, which only reads the bundle.
CHECK_TIMEOUT_S = 30
# Reads the bundle as the driver would, and prints why the preload would leave a patch out ("" if all apply).
_CHECK_JS = (
    "const result = require(process.argv[1]).rewrite(require('node:fs').readFileSync(process.argv[2], 'utf8'));"
    "process.stdout.write(result.reason);"
)


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


def driver_files() -> tuple[str, Path]:
    """The Node.js that runs Playwright's driver, and the driver's bundle the preload rewrites: Playwright's own
    answer to where its driver is, as its client starts it (a private function, so asked only here)."""
    from playwright._impl._driver import compute_driver_executable

    node, cli = compute_driver_executable()
    return node, Path(cli).parent / "lib" / "coreBundle.js"


def preload_misses() -> str:
    """Why the preload would leave a patch of the installed Playwright's bundle out; "" when all apply."""
    try:
        node, bundle = driver_files()
        done = subprocess.run(
            [node, "-e", _CHECK_JS, str(PRELOAD), str(bundle)],
            capture_output=True,
            text=True,
            timeout=CHECK_TIMEOUT_S,
            env={**os.environ, "NODE_OPTIONS": ""},
        )
    except Exception as exc:  # a Playwright without that function, no node, a node that hangs: all say why
        return f"Playwright's driver could not be read: {type(exc).__name__}: {exc}"
    if done.returncode != 0:
        return f"{node} could not read {bundle}: {done.stderr.strip()[-300:]}"
    return done.stdout.strip()
