"""browser_storage and browser_evaluate (issue 4 items 5 and 6; S0-12, S2-108, D-14, D-32, D-33).

A window's cookies and localStorage go out to the answer or to a login profile and come back in (merge or
replace); they are cleared all at once or per origin. JavaScript runs on the page or an element, its
result bounded, its exceptions reported as SCRIPT_ERROR, and never for a remote session.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import BrowserdHome, mcp_client
from tests.e2e.results import failed, ok, text_of

pytestmark = [pytest.mark.anyio, pytest.mark.shared_daemon]
# Besides the agent loop, this module drives the devtools group (off by default since issue 10).
DEVTOOLS = ("--tools", "pages,devtools")


async def _status(client: Any, site: str) -> str:
    """storage.html reads localStorage, sessionStorage and cookies when it loads."""
    ok(await client.call_tool("browser_open", {"url": f"{site}/storage.html", "snapshot": "none"}))
    got = ok(await client.call_tool("browser_get", {"what": "text", "target": "#status"}))
    return str(got.structured_content["value"])


async def _logged_in(client: Any, site: str) -> None:
    ok(await client.call_tool("browser_open", {"url": f"{site}/set-cookie?session=ada", "snapshot": "none"}))
    ok(await client.call_tool("browser_open", {"url": f"{site}/storage.html", "snapshot": "none"}))
    ok(await client.call_tool("browser_click", {"target": "#remember", "snapshot": "none"}))


async def test_storage_export_clear_import_round_trip(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=DEVTOOLS) as client:
        await _logged_in(client, site)
        assert await _status(client, site) == "theme=dark tab=one cookie=session=ada"

        exported = ok(await client.call_tool("browser_storage", {"action": "export"}))
        state = exported.structured_content["state"]
        assert exported.structured_content["truncated"] is False
        assert [(c["name"], c["value"], c["domain"]) for c in state["cookies"]] == [("session", "ada", "127.0.0.1")]
        assert state["origins"] == [{"origin": site, "localStorage": [{"name": "theme", "value": "dark"}]}]
        assert "1 cookie(s) for 127.0.0.1" in text_of(exported)

        cleared = ok(await client.call_tool("browser_storage", {"action": "clear"}))
        assert cleared.structured_content["removed"] == {"cookies": 1, "localStorage": 1, "sessionStorage": 1}
        assert await _status(client, site) == "theme=null tab=null cookie=none"

        imported = ok(await client.call_tool("browser_storage", {"action": "import", "state": state}))
        assert imported.structured_content["imported"] == {"cookies": 1, "localStorage": 1}
        assert await _status(client, site) == "theme=dark tab=null cookie=session=ada"


async def test_storage_import_merges_or_replaces(home: BrowserdHome, site: str) -> None:
    extra = {
        "cookies": [{"name": "lang", "value": "fr", "domain": "127.0.0.1"}],
        "origins": [{"origin": site, "localStorage": [{"name": "font", "value": "large"}]}],
    }
    async with mcp_client(home, args=DEVTOOLS) as client:
        await _logged_in(client, site)
        ok(await client.call_tool("browser_storage", {"action": "import", "state": extra}))
        merged = ok(await client.call_tool("browser_storage", {"action": "export"})).structured_content["state"]
        assert sorted(c["name"] for c in merged["cookies"]) == ["lang", "session"]
        assert sorted(i["name"] for i in merged["origins"][0]["localStorage"]) == ["font", "theme"]

        ok(await client.call_tool("browser_storage", {"action": "import", "state": extra, "mode": "replace"}))
        replaced = ok(await client.call_tool("browser_storage", {"action": "export"})).structured_content["state"]
        assert [c["name"] for c in replaced["cookies"]] == ["lang"]
        assert replaced["origins"][0]["localStorage"] == [{"name": "font", "value": "large"}]


async def test_storage_clear_per_origin_and_kind(home: BrowserdHome, site: str) -> None:
    other = site.replace("127.0.0.1", "localhost")
    async with mcp_client(home, args=DEVTOOLS) as client:
        await _logged_in(client, site)
        ok(
            await client.call_tool(
                "browser_storage",
                {
                    "action": "import",
                    "state": {"origins": [{"origin": other, "localStorage": [{"name": "k", "value": "v"}]}]},
                },
            )
        )
        only_cookies = ok(await client.call_tool("browser_storage", {"action": "clear", "what": ["cookies"]}))
        assert only_cookies.structured_content["removed"]["cookies"] == 1
        assert await _status(client, site) == "theme=dark tab=one cookie=none"

        ok(await client.call_tool("browser_storage", {"action": "clear", "what": ["localStorage"], "origin": other}))
        left = ok(await client.call_tool("browser_storage", {"action": "export"})).structured_content["state"]
        assert [o["origin"] for o in left["origins"] if o["localStorage"]] == [site]

        narrowed = ok(await client.call_tool("browser_storage", {"action": "export", "origin": other}))
        assert narrowed.structured_content["state"] == {"cookies": [], "origins": []}


async def test_storage_export_is_bounded(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=DEVTOOLS) as client:
        ok(await client.call_tool("browser_open", {"url": f"{site}/storage.html", "snapshot": "none"}))
        ok(await client.call_tool("browser_evaluate", {"expression": "localStorage.setItem('big', 'x'.repeat(5000))"}))
        answer = ok(await client.call_tool("browser_storage", {"action": "export", "maxChars": 1000}))
        data = answer.structured_content
        assert data["truncated"] is True and data["cut"] == [f"localStorage big ({site})"]
        assert len(data["state"]["origins"][0]["localStorage"][0]["value"]) == 201
        assert "Export to a profile" in text_of(answer)


async def test_storage_exported_to_a_profile_is_what_a_scrape_sees(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=("--tools", "pages,devtools,scrape")) as client:
        await _logged_in(client, site)
        exported = ok(await client.call_tool("browser_storage", {"action": "export", "profileId": "shop"}))
        assert exported.structured_content["profileId"] == "shop" and exported.structured_content["version"] >= 1

        scraped = ok(await client.call_tool("scrape", {"url": f"{site}/members", "profileId": "shop"}))
        assert "Welcome back, ada." in text_of(scraped)

        ok(await client.call_tool("browser_storage", {"action": "clear"}))
        ok(await client.call_tool("browser_storage", {"action": "import", "profileId": "shop"}))
        assert "cookie=session=ada" in await _status(client, site)


async def test_storage_bad_input_names_the_parameter(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=DEVTOOLS) as client:
        ok(await client.call_tool("browser_open", {"url": f"{site}/storage.html", "snapshot": "none"}))
        neither = failed(await client.call_tool("browser_storage", {"action": "import"}), "INVALID_PARAMETER")
        assert neither["details"]["field"] == "state"
        bad_origin = failed(
            await client.call_tool("browser_storage", {"action": "clear", "origin": "file:///etc"}), "INVALID_PARAMETER"
        )
        assert bad_origin["details"]["field"] == "origin"
        bad_cookie = failed(
            await client.call_tool("browser_storage", {"action": "import", "state": {"cookies": [{"name": "x"}]}}),
            "INVALID_PARAMETER",
        )
        assert "value" in bad_cookie["error"]
        failed(
            await client.call_tool("browser_storage", {"action": "export", "windowId": "win_9"}), "SESSION_NOT_FOUND"
        )
        failed(await client.call_tool("browser_storage", {"action": "empty"}), "INVALID_PARAMETER")
        ok(await client.call_tool("browser_storage", {"action": "export"}))


async def test_evaluate_expression_function_and_element(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=DEVTOOLS) as client:
        ok(await client.call_tool("browser_open", {"url": f"{site}/form.html", "snapshot": "none"}))
        title = ok(await client.call_tool("browser_evaluate", {"expression": "document.title"}))
        assert title.structured_content["result"] == "Form with every input kind"

        function = ok(
            await client.call_tool("browser_evaluate", {"expression": "async (n) => ({twice: n * 2})", "arg": 21})
        )
        assert function.structured_content["result"] == {"twice": 42}
        assert text_of(function).startswith('{"twice":42}')

        element = ok(await client.call_tool("browser_evaluate", {"expression": "(el) => el.value", "target": "#color"}))
        assert element.structured_content["result"] == "#336699"

        nothing = ok(await client.call_tool("browser_evaluate", {"expression": "undefined"}))
        assert nothing.structured_content["result"] is None


async def test_evaluate_output_is_bounded(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=DEVTOOLS) as client:
        ok(await client.call_tool("browser_open", {"url": f"{site}/form.html", "snapshot": "none"}))
        long = ok(await client.call_tool("browser_evaluate", {"expression": "'y'.repeat(5000)", "maxChars": 500}))
        data = long.structured_content
        assert data["truncated"] is True and data["chars"] == 5002 and len(data["resultJson"]) == 500
        assert "result" not in data and "raise maxChars" in text_of(long)


async def test_evaluate_errors_say_what_the_script_threw(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=DEVTOOLS) as client:
        ok(await client.call_tool("browser_open", {"url": f"{site}/form.html", "snapshot": "none"}))
        thrown = failed(
            await client.call_tool("browser_evaluate", {"expression": "() => { throw new Error('boom') }"}),
            "SCRIPT_ERROR",
        )
        assert thrown["details"]["jsError"] == "Error: boom"
        syntax = failed(await client.call_tool("browser_evaluate", {"expression": "(() => {"}), "SCRIPT_ERROR")
        assert "SyntaxError" in syntax["error"]
        hang = failed(
            await client.call_tool("browser_evaluate", {"expression": "() => new Promise(() => {})", "timeout": 500}),
            "EXECUTION_ERROR",
        )
        assert "did not finish" in hang["error"]
        missing = failed(
            await client.call_tool(
                "browser_evaluate", {"expression": "(el) => el.id", "target": "#no-such-element", "timeout": 500}
            ),
            "ELEMENT_NOT_FOUND",
        )
        assert missing["recoverHint"]
        failed(await client.call_tool("browser_evaluate", {"expression": ""}), "INVALID_PARAMETER")
        ok(await client.call_tool("browser_evaluate", {"expression": "1 + 1"}))


async def test_remote_session_cannot_evaluate(home: BrowserdHome) -> None:
    """D-33: no JS evaluation for remote sessions."""
    async with mcp_client(home, args=(*DEVTOOLS, "--trust", "remote")) as client:
        # about:blank: a remote session may not reach the loopback test site at all (DESIGN.md §5).
        ok(await client.call_tool("browser_open", {"url": "about:blank", "snapshot": "none"}))
        error = failed(
            await client.call_tool("browser_evaluate", {"expression": "document.cookie"}), "TRUST_LEVEL_NOT_ALLOWED"
        )
        assert "remote session cannot evaluate" in error["error"]
        ok(await client.call_tool("browser_get", {"what": "title"}))


async def test_remote_session_cannot_write_a_login_profile(home: BrowserdHome) -> None:
    """D-33/D-16: a login profile is the user's; an untrusted prompt may read its window's state, not publish it."""
    async with mcp_client(home, args=(*DEVTOOLS, "--trust", "remote")) as client:
        ok(await client.call_tool("browser_open", {"url": "about:blank", "snapshot": "none"}))
        error = failed(
            await client.call_tool("browser_storage", {"action": "export", "profileId": "master"}),
            "TRUST_LEVEL_NOT_ALLOWED",
        )
        assert "login profile" in error["error"]
        exported = ok(await client.call_tool("browser_storage", {"action": "export"}))
        assert exported.structured_content["state"]["cookies"] == []
