"""Issue 23: a fill that changed one text field and nothing else answers from the last snapshot with the
field's line rewritten (snapshots/field_edit.py), and every other change a fill can cause still shows.

The rewritten line must read as Playwright writes it: checked against Playwright's own snapshot of the
filled page for values YAML quotes, spaces Playwright folds, a placeholder and the focus mark. Then, through
the tools, on fixture pages built on what real forms do: a plain address form (the answer is the field's
line, and a fresh read of the page finds nothing else changed), a slug and a total set by script on other
fields, hints and errors that style rules show on focus and validity, a checkbox whose label holds the
field, a toast an animation hides, a counter the field's handler rewrites.
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


async def test_fields_a_handler_sets_show_in_the_answer(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home) as client:
        page = text_of(ok(await client.call_tool("browser_open", {"url": f"{site}/fields/slug.html"})))
        answer = await fill(client, page, "Title", "Hello World")
        assert 'textbox "Slug"' in answer and "hello-world" in answer, answer
        answer = await fill(client, page, "Quantity", "3")
        assert 'textbox "Total"' in answer and '"30"' in answer, answer
        assert UNCHANGED in await unchanged_since(client)


async def test_what_style_rules_show_on_focus_and_validity_is_in_the_answer(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home) as client:
        page = text_of(ok(await client.call_tool("browser_open", {"url": f"{site}/fields/focus-hint.html"})))
        assert "At least 12 characters" not in page
        answer = await fill(client, page, "Password", "hunter2")
        assert "At least 12 characters" in answer, answer
        answer = await fill(client, page, "Username", "Ada99")
        assert "Use lowercase letters only" in answer, answer
        assert UNCHANGED in await unchanged_since(client)


async def test_what_an_imported_style_sheet_shows_on_focus_is_in_the_answer(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home) as client:
        page = text_of(ok(await client.call_tool("browser_open", {"url": f"{site}/fields/imported-hint.html"})))
        assert "At least 12 characters" not in page
        answer = await fill(client, page, "Password", "hunter2")
        assert "At least 12 characters" in answer, answer


async def test_a_popover_a_handler_shows_is_in_the_answer(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home) as client:
        page = text_of(ok(await client.call_tool("browser_open", {"url": f"{site}/fields/popover.html"})))
        assert "Lisbon" not in page
        answer = await fill(client, page, "City", "Li")
        assert "Lisbon" in answer, answer


async def test_a_label_that_holds_the_field_is_renamed_in_the_answer(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home) as client:
        page = text_of(ok(await client.call_tool("browser_open", {"url": f"{site}/fields/embedded-label.html"})))
        assert 'checkbox "Remind me every 7 days"' in page
        answer = await fill(client, page, "Days", "14")
        assert 'checkbox "Remind me every 14 days"' in answer, answer
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


async def test_a_counter_the_field_rewrites_is_in_the_answer(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home) as client:
        page = text_of(ok(await client.call_tool("browser_open", {"url": f"{site}/fields/counter.html"})))
        answer = await fill(client, page, "Update", "Shipping today")
        assert "14/280" in answer, answer
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
