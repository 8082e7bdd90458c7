"""Dialogs and the console (issue 4 items 1 and 3, first part; S2-74..S2-76, D-31).

Dialogs are answered by the session's policy (accept by default, prompts with their default value or a
set text), the last 10 are kept, and the action that raised one says so; the console keeps each
tab's messages and uncaught errors, filtered by level and text.
"""

from __future__ import annotations

import pytest

from tests.conftest import BrowserdHome, mcp_client
from tests.e2e.results import failed, ok, text_of

pytestmark = [pytest.mark.anyio, pytest.mark.shared_daemon]
# Besides the agent loop, this module drives the devtools group (off by default since issue 10).
DEVTOOLS = ("--tools", "pages,devtools")


async def test_dialogs_follow_the_session_policy_and_are_remembered(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=DEVTOOLS) as client:
        ok(await client.call_tool("browser_open", {"url": f"{site}/dialogs.html", "snapshot": "none"}))

        confirmed = ok(await client.call_tool("browser_click", {"target": "#confirm"}))
        assert "confirm dialog said 'Are you sure?'; accepted" in text_of(confirmed)
        assert "confirm: true" in text_of(confirmed)

        prompted = ok(await client.call_tool("browser_click", {"target": "#prompt"}))
        assert "prompt: default name" in text_of(prompted), "an accepted prompt keeps its default value"

        set_text = ok(await client.call_tool("browser_dialogs", {"promptText": "Grace"}))
        assert set_text.structured_content["promptText"] == "Grace"
        answered = ok(await client.call_tool("browser_click", {"target": "#prompt"}))
        assert "prompt: Grace" in text_of(answered)

        ok(await client.call_tool("browser_dialogs", {"policy": "dismiss"}))
        dismissed = ok(await client.call_tool("browser_click", {"target": "#confirm"}))
        assert "dismissed" in text_of(dismissed) and "confirm: false" in text_of(dismissed)

        refused = failed(await client.call_tool("browser_dialogs", {"promptText": "x"}), "INVALID_PARAMETER")
        assert refused["details"]["field"] == "promptText"

        history = ok(await client.call_tool("browser_dialogs", {})).structured_content
        assert history["policy"] == "dismiss"
        assert [(d["type"], d["action"]) for d in history["history"]] == [
            ("confirm", "accepted"),
            ("prompt", "accepted"),
            ("prompt", "accepted with 'Grace'"),
            ("confirm", "dismissed"),
        ]
        assert all(d["tabId"] == "tab_1" and d["at"].endswith("Z") for d in history["history"])


async def test_only_the_last_ten_dialogs_are_kept_and_the_policy_starts_from_config(
    home: BrowserdHome, site: str
) -> None:
    """D-31: `[browser] dialog_policy` is where a new session's policy starts; the history keeps 10."""
    home.env["BROWSERD_BROWSER_DIALOG_POLICY"] = "dismiss"
    async with mcp_client(home, args=DEVTOOLS) as client:
        ok(await client.call_tool("browser_open", {"url": f"{site}/dialogs.html", "snapshot": "none"}))
        dismissed = ok(await client.call_tool("browser_click", {"target": "#confirm"}))
        assert "dismissed" in text_of(dismissed) and "confirm: false" in text_of(dismissed)
        for _ in range(12):
            ok(await client.call_tool("browser_click", {"target": "#alert", "snapshot": "none"}))
        answer = ok(await client.call_tool("browser_dialogs", {})).structured_content
        assert answer["policy"] == "dismiss" and len(answer["history"]) == 10


async def test_console_keeps_messages_and_uncaught_errors_filtered_by_level_and_text(
    home: BrowserdHome, site: str
) -> None:
    async with mcp_client(home, args=DEVTOOLS) as client:
        ok(await client.call_tool("browser_open", {"url": f"{site}/console.html", "snapshot": "none"}))
        ok(await client.call_tool("browser_click", {"target": "#throw", "snapshot": "none"}))

        every = ok(await client.call_tool("browser_console", {})).structured_content
        levels = [(m["level"], m["text"]) for m in every["messages"]]
        assert ("log", "console.html: log message") in levels
        assert ("warning", "console.html: warn message") in levels
        assert ("error", "console.html: error message") in levels
        assert any(level == "uncaught" and "thrown error" in text for level, text in levels)

        errors = ok(await client.call_tool("browser_console", {"level": "error"})).structured_content
        assert {m["level"] for m in errors["messages"]} == {"error", "uncaught"}

        warnings = ok(await client.call_tool("browser_console", {"level": "warning"})).structured_content
        assert {m["level"] for m in warnings["messages"]} == {"error", "uncaught", "warning"}

        only = ok(await client.call_tool("browser_console", {"text": "WARN"})).structured_content
        assert [m["text"] for m in only["messages"]] == ["console.html: warn message"]

        limited = ok(await client.call_tool("browser_console", {"limit": 1}))
        assert limited.structured_content["total"] == 4 and len(limited.structured_content["messages"]) == 1
        assert "older message(s) not shown" in text_of(limited)

        ok(await client.call_tool("browser_console", {"clear": True}))
        emptied = ok(await client.call_tool("browser_console", {}))
        assert emptied.structured_content["total"] == 0 and "No console message" in text_of(emptied)

        bad = failed(await client.call_tool("browser_console", {"level": "loud"}), "INVALID_PARAMETER")
        assert bad["details"]["field"] == "level"


async def test_console_before_any_page_says_to_open_one(home: BrowserdHome) -> None:
    async with mcp_client(home, args=DEVTOOLS) as client:
        failed(await client.call_tool("browser_console", {}), "SESSION_NOT_FOUND")


async def test_a_beforeunload_dialog_never_keeps_the_agent_on_the_page(home: BrowserdHome, site: str) -> None:
    """Issue 4 item 1: leaving a page that asks first works under either policy, and the dialog is recorded."""
    async with mcp_client(home, args=DEVTOOLS) as client:
        ok(await client.call_tool("browser_dialogs", {"policy": "dismiss"}))
        ok(await client.call_tool("browser_open", {"url": f"{site}/unsaved.html", "snapshot": "none"}))
        ok(await client.call_tool("browser_click", {"target": "#edit", "snapshot": "none"}))
        left = ok(await client.call_tool("browser_open", {"url": f"{site}/help.html", "snapshot": "none"}))
        assert left.structured_content["url"].endswith("/help.html"), text_of(left)
        history = ok(await client.call_tool("browser_dialogs", {})).structured_content["history"]
        assert [(d["type"], d["action"]) for d in history] == [("beforeunload", "accepted")]
