"""Issue 23: a fill that changed one text field and nothing else answers from the last snapshot with the
field's line rewritten (snapshots/field_edit.py), and every other change a fill can cause still shows.

The rewritten line must read as Playwright writes it: checked against Playwright's own snapshot of the
filled page for values YAML quotes, spaces Playwright folds, a placeholder and the focus mark. Then, through
the tools, on fixture pages built on what real forms do: a plain address form (the answer is the field's
line, and a fresh read of the page finds nothing else changed), a slug and a total set by script on other
fields, hints and errors that style rules show on focus and validity (an imported sheet's and a shadow
root's too), a popover a handler shows, a checkbox whose label holds the field, a counter the field's
handler rewrites, a toast and a banner animations hide, a tip a hover showed in an action answered without
a snapshot. Typing (browser_type) takes the same way: the field as it reads after the keys, and every box of
a one-time-code form that moves the focus on.
"""

from __future__ import annotations

import re
from typing import Any

import anyio
import pytest

from browserd.daemon.snapshots.field_edit import with_value
from tests.conftest import BrowserdHome, mcp_client
from tests.e2e.console_browser import chromium
from tests.e2e.results import ok, text_of

pytestmark = [pytest.mark.anyio, pytest.mark.shared_daemon]

UNCHANGED = "The page did not change."
# The toast hides itself after 0.5 s, the notice after 2 s; the banner's animation hides it at 3 s of 10.
ANIMATED = [("toast", "Profile loaded", 2.5), ("notice", "Welcome back", 2.5), ("banner", "Offer ends soon", 3.5)]
VALUES = ("Ada Lovelace", "Ada: #1", "5", "true", "-1", 'He said "hi"', "it's", "[draft]", "Zoë 😀", "x [active]", "")
PAGE = """<label>Name <input id=name></label><label>City <input id=city placeholder="Your city"></label>
<label>Mail <input id=mail type=email></label><label>Secret <input id=secret type=password></label>
<button>Go</button>"""


def ref(text: str, role: str, name: str) -> str:
    found = re.search(rf'- {role} "{re.escape(name)}"[^\n]*\[ref=([^\]]+)\]', text)
    assert found, f"no {role} {name!r} in:\n{text}"
    return found.group(1)


async def test_a_rewritten_line_reads_as_playwright_writes_it() -> None:
    async with chromium() as browser:
        page = await browser.new_page()
        await page.set_content(PAGE)
        for field in ("name", "city", "mail", "secret"):
            for value in VALUES:
                before = await page.aria_snapshot(mode="ai")
                field_ref = ref(before, "textbox", field.title())
                await page.fill(f"#{field}", value)
                assert with_value(before, field_ref, value) == await page.aria_snapshot(mode="ai"), (field, value)
        # Spaces Playwright folds are left to a fresh read.
        assert with_value(await page.aria_snapshot(mode="ai"), "e3", "two  spaces") is None


async def fill(client: Any, snapshot: str, name: str, value: str) -> str:
    answer = ok(await client.call_tool("browser_fill", {"target": ref(snapshot, "textbox", name), "value": value}))
    return text_of(answer)


async def unchanged_since(client: Any) -> str:
    """A fresh read of the page against the tab's last snapshot: what the answers so far did not show."""
    return text_of(ok(await client.call_tool("browser_snapshot", {"delta": True})))


async def test_a_fill_answers_with_its_field_and_a_fresh_read_finds_nothing_else(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home) as client:
        page = text_of(ok(await client.call_tool("browser_open", {"url": f"{site}/fields/plain.html"})))
        for name, value in (("Full name", "Ada Lovelace"), ("Street", "1 Main St: Apt #2"), ("City", "London"),
                            ("Email", "ada@example.com"), ("Delivery notes", "5"), ("Street", "")):  # fmt: skip
            answer = await fill(client, page, name, value)
            # The field's line, or the text line under its placeholder, and nothing else.
            changed = [line for line in answer.splitlines() if line.startswith(("+ ", "- "))]
            assert len(changed) == 1 and (value in changed[0] if value else True), answer
            assert UNCHANGED in await unchanged_since(client)
        answer = text_of(ok(await client.call_tool("browser_click", {"target": ref(page, "button", "Save address")})))
        assert "Saved" in answer
        assert 'textbox "Full name"' not in answer, "a field filled before is no news to the next answer"


async def typed(client: Any, snapshot: str, name: str, text: str) -> str:
    answer = ok(await client.call_tool("browser_type", {"target": ref(snapshot, "textbox", name), "text": text}))
    return text_of(answer)


async def test_typing_answers_with_what_the_field_holds_and_what_else_the_keys_did(
    home: BrowserdHome, site: str
) -> None:
    """Typing appends to what the field holds, and the answer shows the field as it reads after the keys; on a
    one-time-code form each digit moves the focus on to the next box, and the answer shows every box."""
    async with mcp_client(home) as client:
        page = text_of(ok(await client.call_tool("browser_open", {"url": f"{site}/fields/plain.html"})))
        for text, held in (("Ada", "Ada"), (" Lovelace", "Ada Lovelace")):
            answer = await typed(client, page, "Full name", text)
            changed = [line for line in answer.splitlines() if line.startswith(("+ ", "- "))]
            assert len(changed) == 1 and changed[0].endswith(f": {held}"), answer
            assert UNCHANGED in await unchanged_since(client)
        page = text_of(ok(await client.call_tool("browser_open", {"url": f"{site}/fields/code.html"})))
        answer = await typed(client, page, "Digit 1", "4821")
        for number, digit in enumerate("4821", start=1):
            assert re.search(rf'textbox "Digit {number}"[^\n]*: "?{digit}"?\n', answer + "\n"), answer
        assert UNCHANGED in await unchanged_since(client)


# What a fill changes besides its field, each on a page of tests/site/fields/: (page, field, value, what the
# answer must show that the page did not show before).
BESIDES_THE_FIELD = [
    pytest.param("slug", "Title", "Hello World", "hello-world", id="a slug a handler sets"),
    pytest.param("slug", "Quantity", "3", '"30"', id="a total a handler sets"),
    pytest.param("focus-hint", "Password", "hunter2", "At least 12 characters", id="a hint a focus rule shows"),
    pytest.param("focus-hint", "Username", "Ada99", "Use lowercase letters only", id="an error an invalid rule shows"),
    pytest.param("imported-hint", "Password", "hunter2", "At least 12 characters", id="a rule of an imported sheet"),
    pytest.param("popover", "City", "Li", "Lisbon", id="a popover a handler shows"),
    pytest.param("shadow-hint", "Card code", "1234", "16 digits, no spaces", id="a hint a shadow style shows"),
    pytest.param("embedded-label", "Days", "14", 'checkbox "Remind me every 14 days"', id="a label holding the field"),
    pytest.param("counter", "Update", "Shipping today", "14/280", id="a counter a handler rewrites"),
]


@pytest.mark.parametrize(("page_name", "field", "value", "shown"), BESIDES_THE_FIELD)
async def test_what_a_fill_changes_besides_its_field_is_in_the_answer(
    home: BrowserdHome, site: str, page_name: str, field: str, value: str, shown: str
) -> None:
    async with mcp_client(home) as client:
        page = text_of(ok(await client.call_tool("browser_open", {"url": f"{site}/fields/{page_name}.html"})))
        assert shown not in page, page
        answer = await fill(client, page, field, value)
        assert shown in answer, answer
        assert UNCHANGED in await unchanged_since(client)


@pytest.mark.parametrize(("page_name", "shown", "wait_s"), ANIMATED)
async def test_what_an_animation_hid_since_the_last_answer_is_in_the_answer(
    home: BrowserdHome, site: str, page_name: str, shown: str, wait_s: float
) -> None:
    async with mcp_client(home) as client:
        page = text_of(ok(await client.call_tool("browser_open", {"url": f"{site}/fields/{page_name}.html"})))
        assert shown in page
        await anyio.sleep(wait_s)
        answer = await fill(client, page, "Nickname", "ada")
        assert any(shown in line for line in answer.splitlines() if line.startswith("- ")), answer
        assert UNCHANGED in await unchanged_since(client)


async def test_a_fill_after_actions_answered_without_a_snapshot_shows_what_they_did(
    home: BrowserdHome, site: str
) -> None:
    async with mcp_client(home) as client:
        page = text_of(ok(await client.call_tool("browser_open", {"url": f"{site}/fields/plain.html"})))
        # A tip the page shows on hover, by a style rule alone.
        ok(await client.call_tool("browser_hover", {"target": ".help", "snapshot": "none"}))
        answer = await fill(client, page, "Delivery notes", "Leave at the door")
        assert "Call 555-0100" in answer and "Leave at the door" in answer, answer
