"""The flags the daemon's Chromium runs with, read back off its command line (runtime/chromium.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from browserd.daemon.config import BrowserConfig
from tests.conftest import BrowserdHome, mcp_client
from tests.e2e.results import ok

pytestmark = pytest.mark.anyio


def _feature_switches(pid: int, switch: str) -> list[list[str]]:
    """The names of each `switch` on the process's command line, in order."""
    args = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    return [arg.partition("=")[2].split(",") for arg in args if arg.startswith(switch + "=")]


async def test_configured_feature_flags_join_playwrights_own_instead_of_replacing_them(
    home: BrowserdHome, site: str
) -> None:
    """Chromium keeps only the last --disable-features (and --enable-features): the one it keeps holds
    Playwright's names, browserd's default (no spare renderer) and the user's."""
    config = home.root / "config.toml"
    home.env["BROWSERD_CONFIG"] = str(config)
    args = [*BrowserConfig().args, "--disable-features=BrowserdTestOff", "--enable-features=BrowserdTestOn"]
    config.write_text(f"[browser]\nargs = {json.dumps(args)}\n")
    async with mcp_client(home) as client:
        ok(await client.call_tool("browser_open", {"url": f"{site}/index.html"}))
        pid = home.status_json()["browser"]["pid"]
        assert pid
        disabled = _feature_switches(pid, "--disable-features")
        enabled = _feature_switches(pid, "--enable-features")
    assert len(disabled) >= 2, "Playwright's own switch comes first, browserd's merged one last"
    kept = set(disabled[-1])
    for earlier in disabled[:-1]:
        assert set(earlier) <= kept, f"Playwright's disabled features dropped: {set(earlier) - kept}"
    # browserd's defaults (daemon/config.py): no spare renderer, no omnibox popup pages per session, no
    # translate, a frame kept across a site's documents.
    defaults = {"SpareRendererForSitePerProcess", "WebUIOmniboxPopup", "Translate", "RenderDocument"}
    assert defaults | {"BrowserdTestOff"} <= kept
    turned_on = set(enabled[-1])
    for earlier in enabled[:-1]:
        assert set(earlier) <= turned_on, f"Playwright's enabled features dropped: {set(earlier) - turned_on}"
    assert "BrowserdTestOn" in turned_on
