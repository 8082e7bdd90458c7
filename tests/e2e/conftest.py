"""Fixtures the end-to-end modules share: the user's Chrome paired with a bridge-enabled daemon, and `driver`,
which runs a test once per session backend (the daemon's own Chromium, and the user's Chrome through the
extension) so that the same test shows that snapshot, click, fill, screenshot and tabs work on both."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.conftest import BrowserdHome, own_home, serve_site_on
from tests.e2e import bridge_chrome
from tests.e2e.backends import Driver

# The scripted model and its daemon home: for test_agent and test_scrape_json.
from tests.e2e.llm_fixtures import llm, llm_home, model  # noqa: F401

# A Chromium of the user's, started with a debugging port (CDP attach): for test_cdp_attach and the flow tests.
from tests.e2e.test_cdp_attach import chromium  # noqa: F401


@pytest.fixture(scope="session")
def other_origin() -> Iterator[str]:
    """tests/site served again on 127.0.0.2: another origin (and site) than `site`, still loopback only."""
    with serve_site_on("127.0.0.2") as url:
        yield url


@pytest.fixture(scope="session")
def bridge_home() -> Iterator[BrowserdHome]:
    with own_home() as home:
        # Idle exit off: between tests no session holds the daemon, and the extension stays paired to this one.
        port = str(bridge_chrome.free_port())
        home.env.update(BROWSERD_BRIDGE_ENABLED="1", BROWSERD_BRIDGE_PORT=port, BROWSERD_DAEMON_IDLE_EXIT_S="0")
        yield home


@pytest.fixture(scope="session")
def chrome(bridge_home: BrowserdHome) -> Iterator[bridge_chrome.UserChrome]:
    with bridge_chrome.user_chrome() as launched:
        bridge_chrome.pair(bridge_home, launched)
        yield launched


@pytest.fixture(params=["own", "extension"])
def driver(request: pytest.FixtureRequest) -> Driver:
    if request.param == "own":
        return Driver(request.getfixturevalue("home"), "own")
    request.getfixturevalue("chrome")
    return Driver(request.getfixturevalue("bridge_home"), "extension")
