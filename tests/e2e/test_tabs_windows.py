"""Tabs, windows, isolation and concurrency, end to end: the official MCP SDK client, a real `browserd mcp`
shim, a real daemon and Chromium against tests/site.

Requirements: S2-26..S2-29 (tabs share a context, windows are new contexts, the tab list), S2-48/S2-49
(browser_tabs, browser_windows), S2-77..S2-81 (windows are isolated BrowserContexts with their own options),
S3-04/S3-05 (each client its own session and tabs), D-09 (session > window > tab), D-13 (stable ids
tab_N/win_N never reused; list rows carry tabId, index, url, title, active; tools take tabId).

No test asserts a wall-clock time. Concurrency is checked by results and by completion order, and the
elapsed times are only printed. The options that only a script can observe (timezone, colorScheme, viewport,
geolocation) are read by a probe page served from loopback (a secure context, so geolocation works) that
writes what it sees into the page.
"""

from __future__ import annotations

import http.server
import json
import re
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from tests.conftest import BrowserdHome, mcp_client
from tests.e2e.backends import Driver
from tests.e2e.results import text_of

pytestmark = [pytest.mark.anyio, pytest.mark.shared_daemon]
# Besides the agent loop, this module drives the devtools group (off by default since issue 10).
DEVTOOLS = ("--tools", "pages,devtools")

PROBE_HTML = b"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>Probe</title></head>
<body><pre id="probe"></pre>
<script>
const seen = {
  timezone: Intl.DateTimeFormat().resolvedOptions().timeZone,
  dark: matchMedia('(prefers-color-scheme: dark)').matches,
  width: innerWidth,
  height: innerHeight,
  language: navigator.language,
  touch: navigator.maxTouchPoints > 0,
  userAgent: navigator.userAgent,
  geolocation: null,
};
function show() { document.getElementById('probe').textContent = JSON.stringify(seen); }
if (location.search.includes('geo')) {
  navigator.geolocation.getCurrentPosition(
    (p) => { seen.geolocation = [p.coords.latitude, p.coords.longitude]; show(); },
    (e) => { seen.geolocation = 'error: ' + e.message; show(); },
    {timeout: 5000});
} else {
  show();
}
</script></body></html>
"""


class _ProbeHandler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(PROBE_HTML)))
        self.end_headers()
        self.wfile.write(PROBE_HTML)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def probe() -> Iterator[str]:
    """URL of a page that shows, as JSON in <pre id=probe>, what its scripts see of the window's options."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _ProbeHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/probe"
    server.shutdown()


# --- helpers ---------------------------------------------------------------------------------------------


async def call(client: Any, tool: str, args: dict[str, Any], **kwargs: Any) -> Any:
    """Call a tool that must succeed; the failure message is the tool's own answer."""
    result = await client.call_tool(tool, args, **kwargs)
    assert not result.is_error, f"{tool} {args} failed: {text_of(result)}"
    return result


async def fails(client: Any, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """Call a tool that must fail; answers its error {error, errorCode, recoverHint, details}."""
    result = await client.call_tool(tool, args)
    assert result.is_error, f"{tool} {args} should have failed, got: {text_of(result)}"
    error: dict[str, Any] = result.structured_content
    assert error["error"] and error["errorCode"], error
    return error


async def tabs(client: Any) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = (await call(client, "browser_tabs", {})).structured_content["tabs"]
    return rows


async def windows(client: Any) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = (await call(client, "browser_windows", {})).structured_content["windows"]
    return rows


def active(rows: list[dict[str, Any]]) -> str:
    """The id of the one active row (tab or window); fails if there is not exactly one."""
    key = "tabId" if rows and "tabId" in rows[0] else "windowId"
    ids: list[str] = [row[key] for row in rows if row["active"]]
    assert len(ids) == 1, f"expected exactly one active row, got {ids} in {rows}"
    return ids[0]


async def heading(client: Any, **args: Any) -> str:
    """The first heading of a tab's snapshot (the active tab unless tabId is given)."""
    snapshot = text_of(await call(client, "browser_snapshot", args))
    found = re.search(r'heading "([^"]+)"', snapshot)
    assert found, f"no heading in snapshot:\n{snapshot}"
    return found.group(1)


async def read_text(client: Any, target: str, **args: Any) -> str:
    value: str = (await call(client, "browser_get", {"what": "text", "target": target, **args})).structured_content[
        "value"
    ]
    return value


async def echoed_headers(client: Any, site: str) -> dict[str, str]:
    """The request headers the active tab sends, as /headers echoes them."""
    await call(client, "browser_open", {"url": f"{site}/headers", "snapshot": "none"})
    return {key.lower(): value for key, value in json.loads(await read_text(client, "body")).items()}


async def cookie_header(client: Any, site: str, **args: Any) -> str:
    await call(client, "browser_open", {"url": f"{site}/cookies", "snapshot": "none", **args})
    return await read_text(client, "#cookies", **args)


async def probed(client: Any, url: str) -> dict[str, Any]:
    await call(client, "browser_open", {"url": url, "snapshot": "none"})
    await call(client, "browser_wait", {"selector": "#probe:not(:empty)", "timeout": 10_000, "snapshot": "none"})
    seen: dict[str, Any] = json.loads(await read_text(client, "#probe"))
    return seen


def ref_of(snapshot: str, line: str) -> str:
    found = re.search(re.escape(line) + r".*?\[ref=([a-z0-9]+)\]", snapshot)
    assert found, f"no ref for {line!r} in:\n{snapshot}"
    return found.group(1)


# --- tabs ------------------------------------------------------------------------------------------------


async def test_tabs_list_new_select_and_close_keep_one_active_tab(home: BrowserdHome, site: str) -> None:
    """S2-26, S2-27, S2-29, S2-48, D-13: list rows, new with and without url, select, close."""
    async with mcp_client(home, args=DEVTOOLS) as client:
        empty = await call(client, "browser_tabs", {})
        assert empty.structured_content["tabs"] == []
        assert "browser_open" in text_of(empty), "an empty list says how to open a tab"

        await call(client, "browser_open", {"url": f"{site}/index.html"})
        blank = await call(client, "browser_tabs", {"action": "new"})
        assert "tab_2" in text_of(blank)
        assert active(blank.structured_content["tabs"]) == "tab_2", "a new tab becomes the active tab"
        await call(client, "browser_tabs", {"action": "new", "url": f"{site}/help.html"})

        rows = await tabs(client)
        assert [row["tabId"] for row in rows] == ["tab_1", "tab_2", "tab_3"]
        assert [row["index"] for row in rows] == [0, 1, 2]
        assert [row["url"] for row in rows] == [f"{site}/index.html", "about:blank", f"{site}/help.html"]
        assert [row["title"] for row in rows] == ["browserd test site", "", "Help page"]
        assert active(rows) == "tab_3"

        selected = await call(client, "browser_tabs", {"action": "select", "tabId": "tab_1"})
        assert active(selected.structured_content["tabs"]) == "tab_1"
        assert "browser_snapshot" in text_of(selected), "select says which call reads the tab now"
        snapshot = await call(client, "browser_snapshot", {})
        assert snapshot.structured_content["tabId"] == "tab_1", "a snapshot without tabId reads the selected tab"
        assert await heading(client) == "Welcome to the browserd test site"

        closed = await call(client, "browser_tabs", {"action": "close", "tabId": "tab_2"})
        rows = closed.structured_content["tabs"]
        assert [row["tabId"] for row in rows] == ["tab_1", "tab_3"], "the list shrinks"
        assert [row["index"] for row in rows] == [0, 1], "indexes follow the list"
        assert active(rows) == "tab_1", "closing another tab leaves the active one active"

        rows = (await call(client, "browser_tabs", {"action": "close", "tabId": "tab_1"})).structured_content["tabs"]
        assert [row["tabId"] for row in rows] == ["tab_3"]
        assert active(rows) == "tab_3", "closing the active tab makes another one active"
        assert await heading(client) == "Help page"


async def test_tab_caps_refuse_one_tab_too_many_and_runs_load_within_them(home: BrowserdHome, site: str) -> None:
    """S1-74, S1-76, S1-77, S1-71, D-13, D-20: LIMIT_EXCEEDED past [browser] max_tabs_per_session; multi_tab_compare
    loads no more pages at once than there is room for and never switches the caller's active tab."""
    home.env["BROWSERD_BROWSER_MAX_TABS_PER_SESSION"] = "3"
    home.env["BROWSERD_BROWSER_MAX_TOTAL_TABS"] = "5"
    async with mcp_client(home, args=("--tools", "pages,devtools,runs")) as client:
        session_id = (await call(client, "get_runtime_profile", {})).structured_content["session"]["sessionId"]
        await call(client, "browser_open", {"url": f"{site}/index.html", "snapshot": "none"})
        await call(client, "browser_tabs", {"action": "new"})
        await call(client, "browser_tabs", {"action": "new"})
        error = await fails(client, "browser_tabs", {"action": "new"})
        assert error["errorCode"] == "LIMIT_EXCEEDED" and error["details"]["limit"] == 3, error
        assert "browser_tabs" in error["recoverHint"]
        assert (await fails(client, "browser_windows", {"action": "new"}))["errorCode"] == "LIMIT_EXCEEDED"
        assert len(await windows(client)) == 1, "a refused tab leaves no empty window behind"

        # The run's own session: 3 pages through the 2 tabs left in the browser, each closed once read.
        urls = [f"{site}/crawl/a.html", f"{site}/crawl/b.html", f"{site}/crawl/c.html"]
        request = {"templateId": "multi_tab_compare", "inputs": {"urls": urls}, "options": {"mode": "sync"}}
        run = (await call(client, "run_task_template", request)).structured_content
        assert run["status"] == "succeeded", run
        assert [item["success"] for item in run["result"]["items"]] == [True] * 3

        # The caller's session with room for one tab: it stays open, in the background; the next is refused.
        await call(client, "browser_tabs", {"action": "close", "tabId": "tab_3"})
        await call(client, "browser_tabs", {"action": "select", "tabId": "tab_1"})
        request["inputs"] = {"urls": urls[:2]}
        run = (await call(client, "run_task_template", {**request, "sessionId": session_id})).structured_content
        assert run["status"] == "partial_success", run
        first, second = run["result"]["items"]
        assert first["success"] and first["tabId"] == "tab_4", first
        assert second["errorCode"] == "LIMIT_EXCEEDED" and "tabId" not in second, second
        rows = await tabs(client)
        assert [row["tabId"] for row in rows] == ["tab_1", "tab_2", "tab_4"]
        assert active(rows) == "tab_1", "a run never changes the active tab"


async def test_unknown_or_closed_tab_is_a_clear_error_naming_browser_tabs(home: BrowserdHome, site: str) -> None:
    """D-13, S2-48: an id that names no open tab says so and how to list the open ones."""
    async with mcp_client(home, args=DEVTOOLS) as client:
        await call(client, "browser_open", {"url": f"{site}/index.html"})
        await call(client, "browser_tabs", {"action": "new"})
        await call(client, "browser_tabs", {"action": "close", "tabId": "tab_2"})

        for tool, args in [
            ("browser_tabs", {"action": "close", "tabId": "tab_9"}),
            ("browser_tabs", {"action": "close", "tabId": "tab_2"}),  # closed already
            ("browser_tabs", {"action": "select", "tabId": "tab_9"}),
            ("browser_snapshot", {"tabId": "tab_9"}),
            ("browser_click", {"tabId": "tab_2", "target": "button"}),
        ]:
            error = await fails(client, tool, args)
            assert error["errorCode"] == "SESSION_NOT_FOUND", (tool, args, error)
            assert args["tabId"] in error["error"], error
            assert "browser_tabs" in error["recoverHint"], error
            assert error["details"]["tabId"] == args["tabId"]

        missing = await fails(client, "browser_tabs", {"action": "close"})
        assert missing["errorCode"] == "INVALID_PARAMETER"
        assert missing["details"]["field"] == "tabId"

        assert [row["tabId"] for row in await tabs(client)] == ["tab_1"], "failed calls changed nothing"


async def test_tab_and_window_ids_are_never_reused(home: BrowserdHome, site: str) -> None:
    """D-13: ids are tab_N and win_N, numbered per session, never given out twice."""
    async with mcp_client(home, args=DEVTOOLS) as client:
        await call(client, "browser_open", {"url": f"{site}/index.html"})
        await call(client, "browser_tabs", {"action": "new"})
        await call(client, "browser_tabs", {"action": "close", "tabId": "tab_2"})
        reopened = await call(client, "browser_tabs", {"action": "new"})
        assert [row["tabId"] for row in reopened.structured_content["tabs"]] == ["tab_1", "tab_3"]

        made = await call(client, "browser_windows", {"action": "new"})
        assert [row["windowId"] for row in made.structured_content["windows"]] == ["win_1", "win_2"]
        assert made.structured_content["windows"][1]["tabs"] == ["tab_4"], "tab numbers run across windows"
        await call(client, "browser_windows", {"action": "close", "windowId": "win_2"})
        again = await call(client, "browser_windows", {"action": "new"})
        assert [row["windowId"] for row in again.structured_content["windows"]] == ["win_1", "win_3"]
        assert again.structured_content["windows"][1]["tabs"] == ["tab_5"]


async def test_tab_id_reads_and_acts_on_a_background_tab_without_switching(home: BrowserdHome, site: str) -> None:
    """D-09, D-13: browser_snapshot and browser_click take tabId; the active tab stays as it was."""
    async with mcp_client(home, args=DEVTOOLS) as client:
        await call(client, "browser_open", {"url": f"{site}/states.html"})
        await call(client, "browser_tabs", {"action": "new", "url": f"{site}/index.html"})
        assert active(await tabs(client)) == "tab_2"

        background = await call(client, "browser_snapshot", {"tabId": "tab_1"})
        assert background.structured_content["tabId"] == "tab_1"
        assert 'heading "Element states"' in text_of(background)
        bold = ref_of(text_of(background), 'button "Bold"')

        clicked = await call(client, "browser_click", {"tabId": "tab_1", "target": bold})
        assert clicked.structured_content["tabId"] == "tab_1"
        assert await read_text(client, "#status", tabId="tab_1") == "bold on"

        assert active(await tabs(client)) == "tab_2", "acting on a tab by id does not switch to it"
        assert await heading(client) == "Welcome to the browserd test site"


async def test_link_opening_a_new_tab_is_reported_then_listed(driver: Driver, site: str) -> None:
    """Issue 3 item 1 (a link that opens a new tab is tracked and reported), S2-27: same context. Through the
    extension the new tab joins the session's tab group, and the answer is the same (issue 13)."""
    async with driver.client(args=DEVTOOLS) as client:
        page = await call(client, "browser_open", {"url": f"{site}/newtab.html"})
        link = ref_of(text_of(page), 'link "Open help in new tab"')

        clicked = await call(client, "browser_click", {"target": link})
        assert clicked.structured_content["newTabs"] == ["tab_2"]
        assert "tab_2" in text_of(clicked) and "browser_tabs" in text_of(clicked)

        rows = await tabs(client)
        assert [(row["tabId"], row["url"], row["title"]) for row in rows] == [
            ("tab_1", f"{site}/newtab.html", "New tabs and popups"),
            ("tab_2", f"{site}/help.html", "Help page"),
        ]
        assert active(rows) == "tab_1", "the page that opened the tab stays active"
        await call(client, "browser_tabs", {"action": "select", "tabId": "tab_2"})
        assert await heading(client) == "Help page"

        await call(client, "browser_tabs", {"action": "select", "tabId": "tab_1"})
        popup = await call(client, "browser_click", {"target": "#popup"})
        assert popup.structured_content["newTabs"] == ["tab_3"], "window.open is tracked the same way"
        assert await read_text(client, "#status") == "popup opened"
        assert [row["tabId"] for row in await tabs(client)] == ["tab_1", "tab_2", "tab_3"]

        later = await call(client, "browser_snapshot", {})
        assert "newTabs" not in later.structured_content, "a new tab is reported once"

        middle = await call(client, "browser_click", {"target": link, "button": "middle"})
        assert middle.structured_content["newTabs"] == ["tab_4"], "a middle click opens a tab the same way"
        assert [row["tabId"] for row in await tabs(client)] == ["tab_1", "tab_2", "tab_3", "tab_4"]


async def test_new_tab_with_a_refused_url_leaves_the_tabs_as_they_were(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=DEVTOOLS) as client:
        await call(client, "browser_open", {"url": f"{site}/index.html"})
        error = await fails(client, "browser_tabs", {"action": "new", "url": "ftp://example.com/"})
        assert error["errorCode"] == "INVALID_PARAMETER"
        rows = await tabs(client)
        assert [row["tabId"] for row in rows] == ["tab_1"]
        assert active(rows) == "tab_1"


async def test_new_tab_with_an_unreachable_url_reports_like_browser_open(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=DEVTOOLS) as client:
        await call(client, "browser_open", {"url": f"{site}/index.html"})
        unreachable = "http://127.0.0.1:1/"  # a port Chromium refuses outright
        opened = await fails(client, "browser_open", {"url": unreachable, "newTab": True})
        new = await fails(client, "browser_tabs", {"action": "new", "url": unreachable})
        assert new["errorCode"] == opened["errorCode"]
        assert new["recoverHint"] == opened["recoverHint"], (new, opened)


async def test_tab_can_be_selected_by_index(driver: Driver, site: str) -> None:
    async with driver.client(args=DEVTOOLS) as client:
        await call(client, "browser_open", {"url": f"{site}/index.html"})
        await call(client, "browser_tabs", {"action": "new"})
        selected = await call(client, "browser_tabs", {"action": "select", "index": 0})
        assert active(selected.structured_content["tabs"]) == "tab_1"


# --- windows ---------------------------------------------------------------------------------------------


async def test_window_options_reach_the_pages_it_opens(home: BrowserdHome, site: str, probe: str) -> None:
    """S2-28, S2-78, S2-81, issue 3 item 1: viewport, userAgent, locale, timezone, colorScheme, geolocation,
    permissions and extra headers of a new window; the first window keeps the defaults."""
    options = {
        "viewport": {"width": 640, "height": 480},
        "userAgent": "BrowserdTest/1.0",
        "locale": "fr-FR",
        "timezone": "Asia/Tokyo",
        "colorScheme": "dark",
        "geolocation": {"latitude": 48.85, "longitude": 2.35},
        "permissions": ["geolocation"],
        "extraHeaders": {"X-Browserd-Test": "window-two"},
    }
    async with mcp_client(home, args=DEVTOOLS) as client:
        await call(client, "browser_open", {"url": f"{site}/index.html"})
        made = await call(client, "browser_windows", {"action": "new", "options": options})
        rows = made.structured_content["windows"]
        assert active(rows) == "win_2"
        assert rows[1]["options"] == options, "the window list shows the options it was made with"

        headers = await echoed_headers(client, site)
        assert headers["user-agent"] == "BrowserdTest/1.0"
        assert headers["x-browserd-test"] == "window-two"
        assert headers["accept-language"].startswith("fr-FR")

        seen = await probed(client, probe + "?geo")
        assert (seen["width"], seen["height"]) == (640, 480)
        assert seen["timezone"] == "Asia/Tokyo"
        assert seen["dark"] is True
        assert seen["language"] == "fr-FR"
        assert seen["geolocation"] == [48.85, 2.35]
        box = (await call(client, "browser_get", {"what": "box", "target": "html"})).structured_content["value"]
        assert box["width"] == 640

        await call(client, "browser_windows", {"action": "select", "windowId": "win_1"})
        plain = await echoed_headers(client, site)
        assert plain["user-agent"] != "BrowserdTest/1.0"
        assert "x-browserd-test" not in plain
        assert not plain["accept-language"].startswith("fr")
        seen = await probed(client, probe)
        assert (seen["timezone"], seen["dark"]) != ("Asia/Tokyo", True)
        assert seen["width"] != 640


async def test_mobile_window_has_a_phone_viewport_and_touch(home: BrowserdHome, probe: str) -> None:
    """Issue 3 item 1 (option mobile): a phone-wide viewport with touch."""
    async with mcp_client(home, args=DEVTOOLS) as client:
        await call(client, "browser_windows", {"action": "new", "options": {"mobile": True}})
        seen = await probed(client, probe)
        assert 300 <= seen["width"] <= 500, seen
        assert seen["touch"] is True


async def test_mobile_window_announces_a_mobile_browser(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=DEVTOOLS) as client:
        await call(client, "browser_windows", {"action": "new", "options": {"mobile": True}})
        headers = await echoed_headers(client, site)
        assert "Mobile" in headers["user-agent"] or headers.get("sec-ch-ua-mobile") == "?1", headers


async def test_item9_scrape_and_a_window_emulate_the_same_phone(home: BrowserdHome, site: str) -> None:
    """Issue 11 item 9: `mobile` is one device descriptor: scrape sends the same mobile user agent as a window."""
    async with mcp_client(home, args=("--tools", "pages,devtools,scrape")) as client:
        await call(client, "browser_windows", {"action": "new", "options": {"mobile": True}})
        window_agent = (await echoed_headers(client, site))["user-agent"]
        scraped = text_of(
            await client.call_tool(
                "scrape", {"url": f"{site}/headers", "mobile": True, "format": "html", "onlyMainContent": False}
            )
        )
    assert "Mobile" in window_agent, window_agent
    assert json.dumps(window_agent) in scraped, f"scrape sent another user agent than {window_agent!r}: {scraped}"


async def test_windows_list_select_and_close(home: BrowserdHome, site: str) -> None:
    """S2-49, S2-79, S2-80: the active window decides which tab a call without tabId reads."""
    async with mcp_client(home, args=DEVTOOLS) as client:
        await call(client, "browser_open", {"url": f"{site}/index.html"})
        await call(client, "browser_windows", {"action": "new"})
        await call(client, "browser_open", {"url": f"{site}/help.html"})

        rows = await windows(client)
        assert [(row["windowId"], row["tabs"]) for row in rows] == [("win_1", ["tab_1"]), ("win_2", ["tab_2"])]
        assert active(rows) == "win_2"
        tab_rows = await tabs(client)
        assert [(row["tabId"], row["windowId"]) for row in tab_rows] == [("tab_1", "win_1"), ("tab_2", "win_2")]
        assert active(tab_rows) == "tab_2"

        selected = await call(client, "browser_windows", {"action": "select", "windowId": "win_1"})
        assert active(selected.structured_content["windows"]) == "win_1"
        assert active(await tabs(client)) == "tab_1"
        assert await heading(client) == "Welcome to the browserd test site"

        await call(client, "browser_tabs", {"action": "select", "tabId": "tab_2"})
        assert active(await windows(client)) == "win_2", "selecting a tab selects its window"

        for action in ("select", "close"):
            error = await fails(client, "browser_windows", {"action": action, "windowId": "win_9"})
            assert error["errorCode"] == "SESSION_NOT_FOUND"
            assert "win_9" in error["error"]
            assert "browser_windows" in error["recoverHint"]
        missing = await fails(client, "browser_windows", {"action": "select"})
        assert missing["details"]["field"] == "windowId"

        closed = await call(client, "browser_windows", {"action": "close", "windowId": "win_2"})
        rows = closed.structured_content["windows"]
        assert [row["windowId"] for row in rows] == ["win_1"]
        assert active(rows) == "win_1", "closing the active window makes another one active"
        assert [row["tabId"] for row in await tabs(client)] == ["tab_1"], "its tabs close with it"
        assert await heading(client) == "Welcome to the browserd test site"
        assert (await fails(client, "browser_snapshot", {"tabId": "tab_2"}))["errorCode"] == "SESSION_NOT_FOUND"

        await call(client, "browser_windows", {"action": "close", "windowId": "win_1"})
        assert await windows(client) == []
        assert await tabs(client) == []
        reopened = await call(client, "browser_open", {"url": f"{site}/help.html"})
        assert reopened.structured_content["tabId"] == "tab_3"
        assert [row["windowId"] for row in await windows(client)] == ["win_3"]


async def test_closing_the_last_tab_of_the_active_window_activates_another_tab(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=DEVTOOLS) as client:
        await call(client, "browser_open", {"url": f"{site}/index.html"})
        await call(client, "browser_windows", {"action": "new"})
        closed = await call(client, "browser_tabs", {"action": "close", "tabId": "tab_2"})
        assert active(closed.structured_content["tabs"]) == "tab_1"
        assert await heading(client) == "Welcome to the browserd test site"


# --- isolation -------------------------------------------------------------------------------------------


async def test_cookies_are_shared_by_tabs_and_isolated_between_windows(home: BrowserdHome, site: str) -> None:
    """S2-27, S2-77, S2-78, S2-81: tabs of a window share one context; each window is its own context."""
    async with mcp_client(home, args=DEVTOOLS) as client:
        await call(client, "browser_open", {"url": f"{site}/set-cookie?session=one"})
        await call(client, "browser_tabs", {"action": "new"})
        assert await cookie_header(client, site) == "session=one", "a second tab of win_1 sends win_1's cookie"

        await call(client, "browser_windows", {"action": "new"})
        assert await cookie_header(client, site) == "", "win_2 does not send win_1's cookie"
        await call(client, "browser_open", {"url": f"{site}/set-cookie?session=two"})
        assert await cookie_header(client, site) == "session=two"

        assert await cookie_header(client, site, tabId="tab_1") == "session=one", "win_2's cookie stays in win_2"


async def test_two_sessions_see_neither_each_others_cookies_nor_tabs(home: BrowserdHome, site: str) -> None:
    """S3-04, S3-05, D-09: two MCP clients on the same site at once, each with its own session."""
    async with mcp_client(home, args=DEVTOOLS) as first, mcp_client(home, args=DEVTOOLS) as second:
        await call(first, "browser_open", {"url": f"{site}/set-cookie?session=first"})
        await call(first, "browser_tabs", {"action": "new", "url": f"{site}/help.html"})
        assert await cookie_header(first, site) == "session=first"

        assert await cookie_header(second, site) == "", "the second session does not send the first's cookie"
        second_tabs = await tabs(second)
        assert [(row["tabId"], row["url"]) for row in second_tabs] == [("tab_1", f"{site}/cookies")]
        assert [(row["windowId"], row["tabs"]) for row in await windows(second)] == [("win_1", ["tab_1"])]
        other = await fails(second, "browser_snapshot", {"tabId": "tab_2"})
        assert other["errorCode"] == "SESSION_NOT_FOUND", "the first session's tab_2 is not the second's"

        first_tabs = await tabs(first)
        assert [row["url"] for row in first_tabs] == [f"{site}/set-cookie?session=first", f"{site}/cookies"]
        assert await heading(first, tabId="tab_1") == "Cookie set"


# --- concurrency -----------------------------------------------------------------------------------------


async def test_two_sessions_act_at_the_same_time(home: BrowserdHome, site: str) -> None:
    """S3-04, issue 3 item 7, issue 11 item 13: two sessions' page loads are in flight together. Each loads
    a gate that answers only once both loads have reached the server, so sessions served one after the
    other would both time out at the gate (504) instead of passing it."""
    results: dict[str, Any] = {}
    gate = f"{site}/gate?key=two-sessions-{uuid.uuid4().hex}&parties=2&wait_s=20"
    async with mcp_client(home, args=DEVTOOLS) as first, mcp_client(home, args=DEVTOOLS) as second:
        for client in (first, second):  # warm: Chromium launched, each session's window made
            await call(client, "browser_open", {"url": f"{site}/index.html", "snapshot": "none"})

        async def open_gate(name: str, client: Any) -> None:
            results[name] = await client.call_tool(
                "browser_open", {"url": f"{gate}&session={name}", "snapshot": "none"}
            )

        async with anyio.create_task_group() as group:
            group.start_soon(open_gate, "first", first)
            group.start_soon(open_gate, "second", second)

        for name, client in (("first", first), ("second", second)):
            assert not results[name].is_error, text_of(results[name])
            assert results[name].structured_content["status"] == 200, f"{name} waited alone at the gate"
            assert [row["url"] for row in await tabs(client)] == [f"{gate}&session={name}"]


async def test_calls_on_different_tabs_run_in_parallel(home: BrowserdHome, site: str) -> None:
    """Issue 3 item 7, D-13: a slow load in one tab does not hold back a call on another tab.

    Chromium itself serialises two loads of the very same URL in one context (its HTTP cache lock),
    so each tab loads a URL of its own.
    """
    async with mcp_client(home, args=DEVTOOLS) as client:
        await call(client, "browser_open", {"url": f"{site}/index.html"})
        await call(client, "browser_tabs", {"action": "new"})

        started = time.monotonic()
        async with anyio.create_task_group() as group:
            for tab_id in ("tab_1", "tab_2"):
                url = f"{site}/slow?ms=1500&tab={tab_id}"
                group.start_soon(call, client, "browser_open", {"url": url, "tabId": tab_id, "snapshot": "none"})
        print(f"two tabs, two 1.5 s pages at once: {time.monotonic() - started:.2f} s in all (3 s if serialised)")
        assert [row["url"] for row in await tabs(client)] == [
            f"{site}/slow?ms=1500&tab=tab_1",
            f"{site}/slow?ms=1500&tab=tab_2",
        ]

        # Order, not time: while tab_1 loads a 3 s page, a short load in tab_2 finishes first.
        finished: list[str] = []
        slow_started = anyio.Event()

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            slow_started.set()  # the daemon is running the call, inside tab_1's lock

        async def load(tab_id: str, ms: int, **kwargs: Any) -> None:
            url = f"{site}/slow?ms={ms}&again={tab_id}"
            await call(client, "browser_open", {"url": url, "tabId": tab_id, "snapshot": "none"}, **kwargs)
            finished.append(tab_id)

        async with anyio.create_task_group() as group:
            group.start_soon(lambda: load("tab_1", 3000, progress_callback=on_progress))
            with anyio.fail_after(10):
                await slow_started.wait()
            group.start_soon(load, "tab_2", 100)
        assert finished == ["tab_2", "tab_1"], "a call on tab_2 waited for tab_1's load"


async def test_calls_on_one_tab_are_serialised(home: BrowserdHome, site: str) -> None:
    """Issue 3 item 7, DESIGN §2 (work on one page is serialised by that page's lock)."""
    async with mcp_client(home, args=DEVTOOLS) as client:
        await call(client, "browser_open", {"url": f"{site}/form.html", "snapshot": "none"})
        await call(client, "browser_tabs", {"action": "new", "url": f"{site}/index.html"})

        async with anyio.create_task_group() as group:
            for target, value in (("#fullname", "Ada Lovelace"), ("#email", "ada@example.com"), ("#phone", "555")):
                args = {"tabId": "tab_1", "target": target, "value": value, "snapshot": "delta"}
                group.start_soon(call, client, "browser_fill", args)
        for target, value in (("#fullname", "Ada Lovelace"), ("#email", "ada@example.com"), ("#phone", "555")):
            got = await call(client, "browser_get", {"tabId": "tab_1", "what": "value", "target": target})
            assert got.structured_content["value"] == value, f"{target} lost its value to a concurrent fill"

        # A read on a tab that is loading waits for the load and sees the new page, never the old one.
        finished: list[str] = []
        load_started = anyio.Event()
        slow = f"{site}/slow?ms=1500&serial=1"

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            load_started.set()

        async def load() -> None:
            args = {"url": slow, "tabId": "tab_1", "snapshot": "none"}
            await call(client, "browser_open", args, progress_callback=on_progress)
            finished.append("open")

        url_seen: list[str] = []

        async def read_url() -> None:
            got = await call(client, "browser_get", {"tabId": "tab_1", "what": "url"})
            url_seen.append(got.structured_content["value"])
            finished.append("get")

        async with anyio.create_task_group() as group:
            group.start_soon(load)
            with anyio.fail_after(10):
                await load_started.wait()
            group.start_soon(read_url)
        assert finished == ["open", "get"]
        assert url_seen == [slow]
        assert active(await tabs(client)) == "tab_2", "tabId calls never switch the active tab"
