"""Issue 10, items 7 and 8: answers that cost what they say and settle as soon as the page has.

Lean answers: the default tools/list stays under 15k characters with every tool still one group away;
the page header comes only when it changed for that client; Playwright code only for a client that asks
(`--codegen` or `[mcp] codegen`), never on snapshots; deltas leave out texts that tick on their own.
Settling waits for what the action started: a debounced suggestion list after a fill, a fetch after a
click, a tab the click opened.
"""

from __future__ import annotations

import json
import re
from typing import Any

import anyio
import pytest

from browserd.daemon.tools.catalog import build_catalog
from tests.conftest import BrowserdHome, mcp_client
from tests.e2e.results import ok, text_of

pytestmark = [pytest.mark.anyio, pytest.mark.shared_daemon]

TOOLS_LIST_LIMIT = 15_000
TICKS_WAIT_S = 30
CODE_BLOCK = "```python"
HEADER = "- Page: "


def ref(text: str, role: str, name: str) -> str:
    found = re.search(rf'- {role} "{re.escape(name)}"[^\n]*\[ref=([^\]]+)\]', text)
    assert found, f"no {role} {name!r} in:\n{text}"
    return found.group(1)


async def clock_ticks(client: Any) -> int:
    clock = ok(await client.call_tool("browser_get", {"what": "text", "target": "#clock"})).structured_content
    return int(re.sub(r"\D", "", clock["value"]))


def listed_chars(tools: list[Any]) -> int:
    return len(json.dumps([tool.model_dump(by_alias=True, exclude_none=True, mode="json") for tool in tools]))


async def test_default_tools_list_is_at_most_15k_characters_and_every_tool_is_one_group_away(
    home: BrowserdHome,
) -> None:
    async with mcp_client(home) as client:
        default = (await client.list_tools()).tools
    chars = listed_chars(default)
    assert chars <= TOOLS_LIST_LIMIT, f"the default tools/list is {chars} characters"
    assert {"browser_open", "browser_snapshot", "browser_click", "browser_fill"} <= {t.name for t in default}
    async with mcp_client(home, args=("--tools", "all")) as client:
        every = {tool.name for tool in (await client.list_tools()).tools}
    assert every >= {t.name for t in build_catalog()}, "--tools all reaches every tool"


async def test_page_header_comes_only_when_it_changed_for_this_client(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home) as client:
        opened = text_of(ok(await client.call_tool("browser_open", {"url": f"{site}/states.html"})))
        assert f"{HEADER}{site}/states.html" in opened and "- Title: Element states" in opened
        clicked = text_of(ok(await client.call_tool("browser_click", {"target": ref(opened, "button", "Bold")})))
        assert HEADER not in clicked, f"same page, same title: no header again\n{clicked}"
        assert "[pressed]" in clicked, "the change itself is still there"
        again = text_of(ok(await client.call_tool("browser_snapshot", {})))
        assert HEADER not in again and 'heading "Element states"' in again
        moved = text_of(ok(await client.call_tool("browser_open", {"url": f"{site}/tree.html"})))
        assert f"{HEADER}{site}/tree.html" in moved, "a new page brings its header"
    async with mcp_client(home) as other:
        # Another client was never told where its own tab is: its first snapshot says so.
        first = text_of(ok(await other.call_tool("browser_open", {"url": f"{site}/states.html"})))
        assert f"{HEADER}{site}/states.html" in first


async def test_playwright_code_only_for_a_client_that_asks_and_never_on_snapshots(
    home: BrowserdHome, site: str
) -> None:
    async with mcp_client(home) as client:
        opened = text_of(ok(await client.call_tool("browser_open", {"url": f"{site}/states.html"})))
        clicked = text_of(ok(await client.call_tool("browser_click", {"target": ref(opened, "button", "Bold")})))
        assert CODE_BLOCK not in opened and CODE_BLOCK not in clicked
    async with mcp_client(home, args=("--codegen",)) as client:
        opened = text_of(ok(await client.call_tool("browser_open", {"url": f"{site}/states.html"})))
        assert "await page.goto(" in opened
        clicked = text_of(ok(await client.call_tool("browser_click", {"target": ref(opened, "button", "Bold")})))
        assert CODE_BLOCK in clicked and ".click()" in clicked
        snapshot = text_of(ok(await client.call_tool("browser_snapshot", {})))
        assert CODE_BLOCK not in snapshot, "a snapshot is reading, not code to replay"


async def test_mcp_codegen_in_the_configuration_turns_code_on(home: BrowserdHome, site: str) -> None:
    home.env["BROWSERD_MCP_CODEGEN"] = "true"
    async with mcp_client(home) as client:
        opened = text_of(ok(await client.call_tool("browser_open", {"url": f"{site}/index.html"})))
    assert "await page.goto(" in opened


async def test_a_delta_leaves_out_a_clock_the_action_did_not_move(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home) as client:
        opened = text_of(ok(await client.call_tool("browser_open", {"url": f"{site}/ticker.html"})))
        # The clock must have ticked a few times for the page to show that it ticks on its own.
        with anyio.fail_after(TICKS_WAIT_S):
            while await clock_ticks(client) < 3:
                pass
        filled = text_of(
            ok(await client.call_tool("browser_fill", {"target": ref(opened, "textbox", "Note"), "value": "hello"}))
        )
        assert "hello" in filled, f"the fill shows\n{filled}"
        assert "Uptime" not in filled, f"the clock ticked by itself, not because of the fill\n{filled}"
        counted = text_of(ok(await client.call_tool("browser_click", {"target": ref(opened, "button", "Count")})))
        assert "Clicks: 1" in counted and "Uptime" not in counted, counted
        whole = text_of(ok(await client.call_tool("browser_snapshot", {})))
        assert "Uptime:" in whole, "a full snapshot still shows the clock"


async def test_fill_answers_with_suggestions_that_arrive_after_a_debounce(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home) as client:
        opened = text_of(ok(await client.call_tool("browser_open", {"url": f"{site}/autocomplete.html"})))
        target = ref(opened, "combobox", "Search fruit")
        filled = text_of(ok(await client.call_tool("browser_fill", {"target": target, "value": "ap"})))
        assert 'option "Apple"' in filled and 'option "Apricot"' in filled, filled
        assert "Avocado" not in filled


async def test_fill_answers_with_a_render_a_scheduler_queued_and_without_one_where_nothing_listens(
    home: BrowserdHome, site: str
) -> None:
    """A field nothing listens to changes nothing but itself, so its answer need not wait for a frame; one whose
    handler posts a message that asks for a frame (a framework's scheduler) still answers with that frame's
    render."""
    async with mcp_client(home) as client:
        opened = text_of(ok(await client.call_tool("browser_open", {"url": f"{site}/scheduled.html"})))
        for value in ("first", "second"):
            plain = {"target": ref(opened, "textbox", "Plain note"), "value": value}
            filled = text_of(ok(await client.call_tool("browser_fill", plain)))
            assert f'textbox "Plain note" [ref={plain["target"]}]: {value}' in filled, filled
            echoed = {"target": ref(opened, "textbox", "Echoed note"), "value": value}
            filled = text_of(ok(await client.call_tool("browser_fill", echoed)))
            assert f'status: "Echo: {value}"' in filled, filled


async def test_open_answers_with_what_the_page_rendered_around_its_load(home: BrowserdHome, site: str) -> None:
    """A load holds no quiet window for the parser's insertions, but still catches what its scripts queue;
    also when the page changed nothing while parsed and asked for no frame (the quick answer after a load)."""
    pages = {
        "load_render.html": ("when parsed", "by a timer at load", "in a frame at load", "by a message at load"),
        "load_quiet_render.html": ("by a timer at load", "by a message at load", "by a promise at load"),
    }
    async with mcp_client(home) as client:
        for _ in range(3):  # a race would show on one load of a few
            for page, texts in pages.items():
                opened = text_of(ok(await client.call_tool("browser_open", {"url": f"{site}/{page}"})))
                for text in texts:
                    assert f"Rendered {text}" in opened, opened


async def test_open_answers_with_the_page_a_script_sent_it_to_at_load(home: BrowserdHome, site: str) -> None:
    """Also when the load's snapshot is read while it settles (TabCall.reads_ahead): a read of the document the
    redirect replaced is never the answer."""
    async with mcp_client(home) as client:
        for _ in range(3):  # after a short page in the same tab, the next load's snapshot is read ahead
            ok(await client.call_tool("browser_open", {"url": f"{site}/load_quiet_render.html"}))
            opened = text_of(ok(await client.call_tool("browser_open", {"url": f"{site}/load_redirect.html"})))
            assert "An article" in opened and "This page has moved" not in opened, opened


async def test_a_page_under_a_strict_content_security_policy_answers_as_any_other(
    home: BrowserdHome, site: str
) -> None:
    """A strict policy (scripts from the site's files only, no eval, Trusted Types) binds the page's scripts,
    not the daemon's: the settle and the page facts, which run over CDP where they can, read what the page's
    own script rendered after its fetch at load, after a fill and after a click."""
    async with mcp_client(home, args=("--tools", "all")) as client:
        opened = text_of(ok(await client.call_tool("browser_open", {"url": f"{site}/strict/index.html"})))
        assert "status: 2 of 2 products" in opened and "listitem: Teapot" in opened, opened
        filter_ref = ref(opened, "searchbox", "Filter products")
        filtered = text_of(ok(await client.call_tool("browser_fill", {"target": filter_ref, "value": "pot"})))
        assert "status: 1 of 2 products" in filtered and "listitem: Mug" in filtered, filtered
        more = text_of(ok(await client.call_tool("browser_click", {"target": ref(opened, "button", "Show more")})))
        assert "status: 1 of 4 products" in more, more
        errors = ok(await client.call_tool("browser_console", {"level": "error"})).structured_content
        assert errors["messages"] == [], errors  # nothing of the daemon's broke the policy


async def test_click_answers_with_what_its_fetch_brought(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home) as client:
        opened = text_of(ok(await client.call_tool("browser_open", {"url": f"{site}/network.html"})))
        posted = text_of(ok(await client.call_tool("browser_click", {"target": ref(opened, "button", "Post item")})))
        assert "posted: 201 Kettle" in posted, posted


# -- the lean snapshot format: what is left out costs tokens and tells nothing ---------------------

NOTHING_CHANGED_CHARS = 60


async def test_a_click_that_changes_nothing_answers_in_a_few_dozen_characters(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home) as client:
        opened = text_of(ok(await client.call_tool("browser_open", {"url": f"{site}/states.html"})))
        bold = ref(opened, "button", "Bold")
        # The right button fires no click handler: the page stays as it was.
        right = text_of(ok(await client.call_tool("browser_click", {"target": bold, "button": "right"})))
        assert right == 'Clicked button "Bold"\n\nThe page did not change.', right
        assert len(right) <= NOTHING_CHANGED_CHARS
        pressed = text_of(ok(await client.call_tool("browser_click", {"target": bold})))
        lines = pressed.splitlines()
        assert lines[0] == 'Clicked button "Bold"' and "```diff" in lines, pressed
        changed = [line for line in lines if line.startswith(("+ ", "- "))]
        assert changed == [f'+   - button "Bold" [pressed] [ref={bold}]', "+ - status: bold on"], pressed


async def test_no_line_repeats_what_its_role_or_its_neighbour_says(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home) as client:
        article = text_of(ok(await client.call_tool("browser_open", {"url": f"{site}/article.html"})))
        links = [line for line in article.splitlines() if re.match(r"^ *- link ", line)]
        assert links and not [line for line in links if "[cursor=pointer]" in line], article
        # Prose lines carry no ref; headings, landmarks and what can be acted on keep theirs.
        assert re.search(r"^ *- paragraph: The answer is to watch", article, re.M), article
        assert re.search(r'^ *- heading "Why browsers settle" \[level=2\] \[ref=\w+\]$', article, re.M), article
        assert "- /url: /help.html" not in article and "- /url: help.html" in article, "hrefs as the page wrote them"
        form = text_of(ok(await client.call_tool("browser_open", {"url": f"{site}/form.html"})))
        # The label beside a field is its name already: `- textbox "Full name"`, no `- text: Full name` too.
        assert re.search(r'^ *- textbox "Full name" \[ref=\w+\] \[required\]$', form, re.M), form
        assert "- text: Full name" not in form and "- text: Subscribe" not in form, form


async def test_every_ref_a_lean_snapshot_shows_resolves_and_find_still_reads_prose(
    home: BrowserdHome, site: str
) -> None:
    async with mcp_client(home) as client:
        opened = text_of(ok(await client.call_tool("browser_open", {"url": f"{site}/widgets.html"})))
        refs = re.findall(r"\[ref=(\w+)\]", opened)
        assert len(refs) > 5, opened
        for shown in refs:
            counted = ok(await client.call_tool("browser_get", {"what": "count", "target": shown}))
            assert counted.structured_content["value"] == 1, f"{shown}: {text_of(counted)}"
        await client.call_tool("browser_open", {"url": f"{site}/article.html"})
        found = ok(await client.call_tool("browser_find", {"text": "watch what an action started"}))
        matches = found.structured_content["matches"]
        assert [m["role"] for m in matches] == ["paragraph"], text_of(found)
        # A prose line shows no ref in the snapshot, but it has one, and find names it.
        assert "The answer is to watch" in text_of(found) and f"[ref={matches[0]['ref']}]" in text_of(found)
        read = ok(await client.call_tool("browser_get", {"what": "text", "target": matches[0]["ref"]}))
        assert read.structured_content["value"].startswith("The answer is to watch"), text_of(read)


async def test_a_list_rendered_anew_answers_only_what_changed_and_old_refs_still_act(
    home: BrowserdHome, site: str
) -> None:
    """shop.html re-renders every card on any change, as a virtual-DOM framework does: the cards that read the
    same are no change, and the refs an earlier answer showed of them still act."""
    async with mcp_client(home) as client:
        opened = text_of(ok(await client.call_tool("browser_open", {"url": f"{site}/shop.html"})))
        assert "utm_" not in opened and "- /url: /shop.html?category=kettles&ref=nav_kettles" in opened, opened
        await client.call_tool("browser_click", {"target": ref(opened, "button", "Accept all")})
        search = {"target": ref(opened, "searchbox", "Search products"), "value": "pro", "submit": True}
        searched = text_of(ok(await client.call_tool("browser_fill", search)))
        assert "6 products" in searched, searched
        # The three Pro cards of the first page were there before the search: only the three others come.
        assert 'link "Acme Toaster Pro"' in searched and 'link "Acme Kettle Pro"' not in searched, searched
        kettle = ref(opened, "link", "Acme Kettle Pro")
        filtered = text_of(ok(await client.call_tool("browser_click", {"target": ref(opened, "checkbox", "In stock")})))
        assert "4 products" in filtered and 'link "' not in filtered, f"two cards went, none came\n{filtered}"
        followed = text_of(ok(await client.call_tool("browser_click", {"target": kettle})))
        assert 'heading "Acme Kettle Pro" [level=1]' in followed, followed
