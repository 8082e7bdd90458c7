"""The network log and request routes (issue 4 items 3 and 4; S2-35 and S2-109 network interception, D-32).

browser_network keeps each tab's requests in a ring buffer, filters them and reads one response body (or
the post data) only when asked; browser_route blocks requests, changes their headers or mocks responses
for every tab of one window, counts its hits, and can be removed again.
"""

from __future__ import annotations

import socket
from typing import Any

import anyio
import pytest

from tests.conftest import BrowserdHome, mcp_client
from tests.e2e.results import failed, ok, text_of

pytestmark = [pytest.mark.anyio, pytest.mark.shared_daemon]
# Besides the agent loop, this module drives the devtools group (off by default since issue 10).
DEVTOOLS = ("--tools", "pages,devtools")

SERVER_ITEMS = "Items: Teapot, Mug (server)"
MOCKED_ITEMS = "Items: Mocked (mock)"
MOCK = {"json": {"items": [{"name": "Mocked"}], "source": "mock"}}


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


async def call(client: Any, name: str, args: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = ok(await client.call_tool(name, args)).structured_content
    return result


async def open_network_page(client: Any, site: str, expect: str = SERVER_ITEMS) -> None:
    ok(
        await client.call_tool(
            "browser_open", {"url": f"{site}/network.html?refused={closed_port()}", "snapshot": "none"}
        )
    )
    ok(await client.call_tool("browser_wait", {"text": expect, "snapshot": "none"}))


async def click(client: Any, target: str, expect: str) -> None:
    ok(await client.call_tool("browser_click", {"target": target, "snapshot": "none"}))
    ok(await client.call_tool("browser_wait", {"text": expect, "snapshot": "none"}))


def only(rows: list[dict[str, Any]], suffix: str) -> dict[str, Any]:
    found = [row for row in rows if row["url"].endswith(suffix)]
    assert len(found) == 1, f"expected one request ending in {suffix}, got {found}"
    return found[0]


async def test_network_log_lists_the_json_api_call_and_reads_its_body_on_request(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=DEVTOOLS) as client:
        await open_network_page(client, site)
        log = await call(client, "browser_network", {})
        rows = log["requests"]
        document = only(rows, "network.html?refused=" + rows[0]["url"].rsplit("=", 1)[1])
        assert (document["method"], document["status"], document["resourceType"]) == ("GET", 200, "document")
        api = only(rows, "/api/items")
        assert (api["status"], api["statusText"], api["resourceType"], api["state"]) == (200, "OK", "fetch", "finished")
        assert api["durationMs"] is not None and api["durationMs"] >= 0
        assert api["size"] == len(
            '{"items": [{"id": 1, "name": "Teapot"}, {"id": 2, "name": "Mug"}], "source": "server"}'
        )
        assert [r["id"] for r in rows] == [f"n{i}" for i in range(1, len(rows) + 1)], "ids n1, n2 ... in order"

        body = await call(client, "browser_network", {"requestId": api["id"], "body": True})
        shown = body["request"]["body"]
        assert shown["contentType"] == "application/json"
        assert '"name": "Teapot"' in shown["text"] and '\n  "items": [' in shown["text"], "JSON is pretty-printed"
        assert body["request"]["responseHeaders"]["content-type"] == "application/json"

        icon = only(rows, "/network-pixel.png")
        binary = await call(client, "browser_network", {"requestId": icon["id"], "body": True})
        assert binary["request"]["body"]["text"] is None
        assert "binary body" in binary["request"]["body"]["note"] and binary["request"]["body"]["size"] > 0

        await click(client, "#post", "posted: 201 Kettle")
        posts = (await call(client, "browser_network", {"method": "post"}))["requests"]
        assert len(posts) == 1 and posts[0]["status"] == 201
        sent = await call(client, "browser_network", {"requestId": posts[0]["id"], "postData": True, "body": True})
        assert '"name": "Kettle"' in sent["request"]["postData"]["text"]
        assert '"received"' in sent["request"]["body"]["text"]

        cut = await call(client, "browser_network", {"requestId": api["id"], "body": True, "maxChars": 100})
        assert len(cut["request"]["body"]["text"]) == 100 and cut["request"]["body"]["truncated"]
        assert "raise maxChars" in cut["request"]["body"]["note"]


async def test_network_filters_and_failed_requests(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=DEVTOOLS) as client:
        await open_network_page(client, site)
        await click(client, "#missing", "missing: 404")
        await click(client, "#refused", "refused: failed")

        def urls(result: dict[str, Any]) -> list[str]:
            return [row["url"].removeprefix(site) for row in result["requests"]]

        assert urls(await call(client, "browser_network", {"url": "/api/"})) == ["/api/items", "/api/missing"]
        assert urls(await call(client, "browser_network", {"url": "**/api/*"})) == ["/api/items", "/api/missing"]
        assert urls(await call(client, "browser_network", {"status": "4xx"})) == ["/api/missing"]
        assert urls(await call(client, "browser_network", {"status": ">=400"})) == ["/api/missing"]
        assert "/api/items" in urls(await call(client, "browser_network", {"status": "200"}))
        images = await call(client, "browser_network", {"resourceType": "image"})
        assert urls(images) == ["/network-dot.svg", "/network-pixel.png"]

        failures = (await call(client, "browser_network", {"failed": True}))["requests"]
        assert [row["url"].rsplit("/", 1)[1] for row in failures] == ["missing", "nothing"]
        refused = failures[1]
        assert refused["state"] == "failed" and refused["status"] is None
        assert "ERR_CONNECTION_REFUSED" in refused["failure"]
        assert "ERR_CONNECTION_REFUSED" in text_of(await client.call_tool("browser_network", {"failed": True}))

        no_body = failed(
            await client.call_tool("browser_network", {"requestId": refused["id"], "body": True}), "INVALID_PARAMETER"
        )
        assert no_body["details"]["field"] == "requestId" and "failed" in no_body["error"]

        newest = await call(client, "browser_network", {"limit": 1})
        assert len(newest["requests"]) == 1 and newest["total"] > 1
        assert newest["requests"][0]["url"].endswith("/nothing"), "the newest request is shown"
        assert "older request(s) not shown; raise limit" in text_of(
            await client.call_tool("browser_network", {"limit": 1})
        )

        cleared = await call(client, "browser_network", {"clear": True})
        assert cleared["total"] > 0
        assert (await call(client, "browser_network", {}))["total"] == 0


async def test_a_route_mocks_the_json_api_counts_hits_and_shows_in_the_log(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=DEVTOOLS) as client:
        await open_network_page(client, site)
        added = await call(client, "browser_route", {"action": "add", "url": "**/api/items", "mock": MOCK})
        assert [(r["routeId"], r["windowId"], r["action"], r["hits"]) for r in added["routes"]] == [
            ("route_1", "win_1", "mock", 0)
        ]

        await click(client, "#load", MOCKED_ITEMS)
        listed = await call(client, "browser_route", {})
        assert listed["routes"][0]["hits"] == 1
        assert "route_1 [win_1] **/api/items -> mock 200; 1 hit(s)" in text_of(
            await client.call_tool("browser_route", {})
        )

        mocked = (await call(client, "browser_network", {"url": "/api/items"}))["requests"][-1]
        assert mocked["status"] == 200 and mocked["route"] == "route_1 (mock)" and not mocked["fromCache"]
        body = await call(client, "browser_network", {"requestId": mocked["id"], "body": True})
        assert '"name": "Mocked"' in body["request"]["body"]["text"]

        ok(await client.call_tool("browser_route", {"action": "remove", "routeId": "route_1"}))
        assert (await call(client, "browser_route", {}))["routes"] == []
        await click(client, "#load", SERVER_ITEMS)


async def test_a_route_blocks_images_and_a_url_and_the_page_still_loads(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=DEVTOOLS) as client:
        images = {"action": "add", "url": "**/*", "resourceType": "image", "block": True}
        ok(await client.call_tool("browser_route", images))
        await open_network_page(client, site)
        blocked = (await call(client, "browser_network", {"resourceType": "image"}))["requests"]
        assert len(blocked) == 2
        assert all(row["state"] == "failed" and "ERR_BLOCKED_BY_CLIENT" in row["failure"] for row in blocked)
        assert (await call(client, "browser_route", {}))["routes"][0]["hits"] == 2
        assert "Network calls" in text_of(await client.call_tool("browser_snapshot", {}))

        api = {"action": "add", "url": "**/api/items", "block": True, "errorReason": "connectionrefused"}
        ok(await client.call_tool("browser_route", api))
        await click(client, "#load", "Items failed")
        refused = (await call(client, "browser_network", {"url": "/api/items", "failed": True}))["requests"]
        assert len(refused) == 1 and "ERR_CONNECTION_REFUSED" in refused[0]["failure"]
        assert refused[0]["route"] == "route_2 (block)"


async def test_a_route_sets_and_removes_request_headers(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=DEVTOOLS) as client:
        await open_network_page(client, site)
        await click(client, "#headers", "X-Test=none; X-Page=from-page")
        headers = {"action": "add", "url": "**/headers", "setHeaders": {"X-Test": "added"}, "removeHeaders": ["x-page"]}
        added = await call(client, "browser_route", headers)
        assert added["routes"][0]["description"] == "headers: set X-Test, remove x-page"
        await click(client, "#headers", "X-Test=added; X-Page=none")
        only_posts = {"action": "add", "url": "**/headers", "method": "POST", "setHeaders": {"X-Test": "posted"}}
        ok(await client.call_tool("browser_route", only_posts))
        await click(client, "#headers", "X-Test=added; X-Page=none")  # a GET: the POST-only route passes it on
        routes = {r["routeId"]: r["hits"] for r in (await call(client, "browser_route", {}))["routes"]}
        assert routes == {"route_1": 2, "route_2": 0}


async def test_routes_apply_to_new_tabs_of_their_window_and_not_to_another_window(
    home: BrowserdHome, site: str
) -> None:
    async with mcp_client(home, args=DEVTOOLS) as client:
        await open_network_page(client, site)
        ok(await client.call_tool("browser_route", {"action": "add", "url": "**/api/items", "mock": MOCK}))
        ok(await client.call_tool("browser_tabs", {"action": "new", "url": f"{site}/network.html"}))
        ok(await client.call_tool("browser_wait", {"text": MOCKED_ITEMS, "snapshot": "none"}))

        ok(await client.call_tool("browser_windows", {"action": "new"}))
        await open_network_page(client, site)  # in win_2's tab
        assert (await call(client, "browser_route", {"windowId": "win_2"}))["routes"] == []
        everywhere = (await call(client, "browser_route", {}))["routes"]
        assert [(r["routeId"], r["windowId"], r["hits"]) for r in everywhere] == [("route_1", "win_1", 1)]

        cleared = ok(await client.call_tool("browser_route", {"action": "clear"}))
        assert "Removed 1 route(s)" in text_of(cleared) and cleared.structured_content["routes"] == []


async def test_bad_inputs_get_an_error_code_and_a_next_step(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=DEVTOOLS) as client:
        await open_network_page(client, site)
        cases: list[tuple[str, dict[str, Any], str, str | None]] = [
            ("browser_route", {"action": "add", "url": "([", "regex": True, "block": True}, "INVALID_PARAMETER", "url"),
            ("browser_route", {"action": "add", "url": "api/items", "block": True}, "INVALID_PARAMETER", "url"),
            ("browser_route", {"action": "add", "url": "**/x"}, "INVALID_PARAMETER", "action"),
            ("browser_route", {"action": "add", "url": "**/x", "block": True, "mock": MOCK}, "INVALID_PARAMETER", None),
            ("browser_route", {"action": "add", "block": True}, "INVALID_PARAMETER", "url"),
            ("browser_route", {"action": "add", "url": "**/x", "mock": {"status": 42}}, "INVALID_PARAMETER", None),
            ("browser_route", {"action": "remove", "routeId": "route_9"}, "INVALID_PARAMETER", None),
            (
                "browser_route",
                {"action": "add", "url": "**/x", "block": True, "windowId": "win_9"},
                "SESSION_NOT_FOUND",
                None,
            ),
            ("browser_network", {"requestId": "n999"}, "INVALID_PARAMETER", None),
            ("browser_network", {"status": "teapot"}, "INVALID_PARAMETER", "status"),
            ("browser_network", {"body": True}, "INVALID_PARAMETER", None),
            ("browser_network", {"resourceType": "pictures"}, "INVALID_PARAMETER", "resourceType"),
        ]
        for tool, args, code, field in cases:
            error = failed(await client.call_tool(tool, args), code)
            if field is not None:
                assert error["details"].get("field") == field, f"{tool} {args}: {error}"
        unknown = failed(
            await client.call_tool("browser_route", {"action": "remove", "routeId": "route_9"}), "INVALID_PARAMETER"
        )
        assert "browser_route" in unknown["recoverHint"]
        missing = failed(await client.call_tool("browser_network", {"requestId": "n999"}), "INVALID_PARAMETER")
        assert "browser_network" in missing["recoverHint"]

        get = (await call(client, "browser_network", {"url": "/api/items"}))["requests"][0]
        no_post = failed(
            await client.call_tool("browser_network", {"requestId": get["id"], "postData": True}), "INVALID_PARAMETER"
        )
        assert no_post["details"]["field"] == "postData" and "sent no post data" in no_post["error"]
        assert (await call(client, "browser_route", {}))["routes"] == [], "refused routes left nothing behind"
        first = await call(client, "browser_route", {"action": "add", "url": "**/nothing", "block": True})
        assert first["routes"][0]["routeId"] == "route_1", "a refused route uses no id"
        await click(client, "#load", SERVER_ITEMS)


async def test_the_log_is_bounded_on_a_page_with_many_requests(home: BrowserdHome, site: str) -> None:
    home.env["BROWSERD_BROWSER_NETWORK_LOG_SIZE"] = "100"
    async with mcp_client(home, args=DEVTOOLS) as client:
        ok(await client.call_tool("browser_open", {"url": f"{site}/network-many.html?n=300", "snapshot": "none"}))
        ok(await client.call_tool("browser_wait", {"text": "loaded 300", "snapshot": "none"}))
        answer = await client.call_tool("browser_network", {})
        log = ok(answer).structured_content
        assert log["total"] == 100, "the ring keeps the newest 100 of 301 requests"
        assert len(log["requests"]) == 50 and log["requests"][-1]["id"] == "n301"
        assert len(text_of(answer)) < 50 * 200, "one short line per request"
        everything = await call(client, "browser_network", {"limit": 500})
        assert len(everything["requests"]) == 100 and everything["requests"][0]["id"] == "n202"


async def test_a_body_the_browser_dropped_is_reported_as_no_longer_available(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=DEVTOOLS) as client:
        await open_network_page(client, site)
        api = (await call(client, "browser_network", {"url": "/api/items"}))["requests"][0]
        ok(await client.call_tool("browser_open", {"url": f"{site}/help.html", "snapshot": "none"}))
        gone = await call(client, "browser_network", {"requestId": api["id"], "body": True})
        assert gone["request"]["body"]["text"] is None
        assert "no longer available" in gone["request"]["body"]["note"]


async def test_a_redirect_is_logged_hop_by_hop_and_has_no_body(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=DEVTOOLS) as client:
        ok(await client.call_tool("browser_open", {"url": f"{site}/api/redirect", "snapshot": "none"}))
        hops = (await call(client, "browser_network", {}))["requests"]
        assert [(r["id"], r["url"].removeprefix(site), r["status"]) for r in hops] == [
            ("n1", "/api/redirect", 302),
            ("n2", "/api/items", 200),
        ]
        assert hops[1]["redirectedFrom"] == "n1"
        redirect = failed(
            await client.call_tool("browser_network", {"requestId": "n1", "body": True}), "INVALID_PARAMETER"
        )
        assert "redirect" in redirect["error"] and "redirectedFrom" in redirect["recoverHint"]
        final = await call(client, "browser_network", {"requestId": "n2", "body": True})
        assert '"source": "server"' in final["request"]["body"]["text"]


async def test_a_response_chromium_served_from_its_cache_is_marked(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=DEVTOOLS) as client:
        await open_network_page(client, site)
        first = (await call(client, "browser_network", {"url": "network-dot.svg"}))["requests"]
        assert [row["fromCache"] for row in first] == [False]
        await open_network_page(client, site)
        again = (await call(client, "browser_network", {"url": "network-dot.svg"}))["requests"]
        assert again[-1]["fromCache"], again


async def test_item10_network_filter_and_route_read_a_glob_the_same_way(home: BrowserdHome, site: str) -> None:
    """Issue 11 item 10: one glob (Playwright's): `*` stops at `/`, `**` does not, `{a,b}` alternates."""
    async with mcp_client(home, args=DEVTOOLS) as client:
        for glob in ("*/api/*", "**/api/{items,missing}"):
            ok(await client.call_tool("browser_route", {"action": "add", "url": glob, "block": True}))
        await open_network_page(client, site, expect="Items failed")
        ok(await client.call_tool("browser_click", {"target": "#missing", "snapshot": "none"}))

        def urls(result: dict[str, Any]) -> list[str]:
            return [row["url"].removeprefix(site) for row in result["requests"]]

        with anyio.fail_after(10):  # the blocked fetch of #missing shows nothing on the page: poll the log
            while len(urls(routed := await call(client, "browser_network", {"url": "**/api/{items,missing}"}))) < 2:
                await anyio.sleep(0.05)
        assert urls(routed) == ["/api/items", "/api/missing"]
        assert urls(await call(client, "browser_network", {"url": "*/api/*"})) == [], "`*` never crosses a /"
        assert all(row["route"] == "route_2 (block)" for row in routed["requests"]), routed
        hits = [route["hits"] for route in (await call(client, "browser_route", {}))["routes"]]
        assert hits == [0, 2], "the route saw exactly the requests the network filter lists"
        bad = failed(await client.call_tool("browser_network", {"url": "**/{api"}), "INVALID_PARAMETER")
        assert bad["details"]["field"] == "url"
