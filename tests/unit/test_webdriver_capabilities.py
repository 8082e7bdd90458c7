"""Where a WebDriver session's Chromium is reached over CDP: Selenium Grid 4's `se:cdp`, chromedriver's
debuggerAddress (issue 24). The Grid's jars cannot be fetched here, so its answer is pinned as data."""

from __future__ import annotations

from browserd.daemon.runtime.webdriver import cdp_address, session_capabilities

GRID = "http://grid.internal:4444"


def test_grid_se_cdp_wins_over_the_node_local_debugger_address() -> None:
    """A Grid 4 answer names both; the node's own localhost:port is not reachable from here, the router's URL is."""
    capabilities = {
        "browserName": "chrome",
        "goog:chromeOptions": {"debuggerAddress": "localhost:40919"},
        "se:cdp": "ws://grid.internal:4444/session/4f1c/se/cdp",
        "se:cdpVersion": "156.0.8078.108",
    }
    assert cdp_address(capabilities, GRID) == "ws://grid.internal:4444/session/4f1c/se/cdp"


def test_chromedriver_debugger_address_is_taken_on_the_endpoints_host() -> None:
    capabilities = {"goog:chromeOptions": {"debuggerAddress": "localhost:40919"}}
    assert cdp_address(capabilities, "http://10.0.0.7:9515") == "http://10.0.0.7:40919"
    remote_named = {"goog:chromeOptions": {"debuggerAddress": "node-3:40919"}}
    assert cdp_address(remote_named, "http://10.0.0.7:9515") == "http://node-3:40919"


def test_a_session_without_a_devtools_endpoint_has_no_address() -> None:
    assert cdp_address({"browserName": "firefox", "se:cdp": ""}, GRID) is None
    assert cdp_address({"goog:chromeOptions": {}}, GRID) is None


def test_the_new_session_body_asks_for_chrome_with_the_members_own_capabilities() -> None:
    body = session_capabilities({"goog:chromeOptions": {"args": ["--headless"]}, "se:name": "browserd"})
    always = body["capabilities"]["alwaysMatch"]
    assert always["browserName"] == "chrome" and always["goog:chromeOptions"] == {"args": ["--headless"]}
    assert always["se:name"] == "browserd"
