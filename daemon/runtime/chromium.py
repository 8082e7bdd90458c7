"""Finding a Chromium executable: this machine cannot download one, so look where browsers live."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import anyio

# Debian, Ubuntu's snap, Google's packages, in the order a Linux user most likely has them.
_SYSTEM_CANDIDATES = (
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/snap/bin/chromium",
    "/usr/bin/google-chrome",
    "/usr/bin/google-chrome-stable",
)


@dataclass(frozen=True)
class ChromiumFound:
    path: str
    source: str  # which rule found it: config, env, playwright, system


def _playwright_browsers() -> list[str]:
    root = Path(os.environ.get("PLAYWRIGHT_BROWSERS_PATH") or Path.home() / ".cache" / "ms-playwright")
    if not root.is_dir():
        return []
    found = sorted(root.glob("chromium-*/chrome-linux*/chrome"), reverse=True)
    return [str(path) for path in found if os.access(path, os.X_OK)]


def find_chromium(configured: str = "") -> ChromiumFound | None:
    """The first executable of: config, $BROWSERD_CHROMIUM, Playwright's own browsers, system paths."""
    for path, source in ((configured, "config"), (os.environ.get("BROWSERD_CHROMIUM", ""), "env")):
        if path:
            resolved = shutil.which(path) or path
            if os.access(resolved, os.X_OK):
                return ChromiumFound(resolved, source)
    for path in _playwright_browsers():
        return ChromiumFound(path, "playwright")
    for path in _SYSTEM_CANDIDATES:
        if os.access(path, os.X_OK):
            return ChromiumFound(path, "system")
    return None


VERSION_TIMEOUT_S = 10.0


async def chromium_version(path: str) -> str:
    """`Chromium 156.0...` as the executable prints it, or '' when it cannot say within VERSION_TIMEOUT_S.

    A child process awaited, never run on the event loop: a slow or hung executable (a first start that
    unpacks itself, a wrapper script waiting on something) must not stop every session of the daemon."""
    try:
        with anyio.fail_after(VERSION_TIMEOUT_S):
            result = await anyio.run_process([path, "--version"], check=False, stderr=subprocess.DEVNULL)
    except (OSError, TimeoutError):  # anyio kills the child when the deadline cancels the wait
        return ""
    return result.stdout.decode(errors="replace").strip()
