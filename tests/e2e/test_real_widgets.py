"""The agent loop on real widget markup (issue 10 items 1-6, issue 11 item 11), end to end: the official
MCP SDK client, a real `browserd mcp` shim, the daemon and Chromium, on tests/site pages shaped like
third-party widgets.

Refs are read from snapshots the way an agent with a YAML library would read them (PyYAML, not the
daemon's own parser), so a line the daemon writes but cannot read back shows up here.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import yaml

from tests.conftest import BrowserdHome, mcp_client
from tests.e2e.results import text_of
from tests.e2e.test_actions import fails, ok, status

pytestmark = [pytest.mark.anyio, pytest.mark.shared_daemon]

QUICK_MS = 2_000
# browser_evaluate, the runaway tests' way in, is in the devtools group.
DEVTOOLS = ("--tools", "pages,devtools")
_REF = re.compile(r"\[ref=(\w+)\]")


def snapshot_yaml(result: Any) -> str:
    match = re.search(r"```yaml\n(.*?)\n```", text_of(result), re.S)
    assert match, f"no snapshot in the answer:\n{text_of(result)}"
    return match.group(1)


def keys(value: Any) -> list[str]:
    """Every line's key of a snapshot loaded by a YAML library, in order."""
    if isinstance(value, list):
        return [key for item in value for key in keys(item)]
    if isinstance(value, dict):
        return [key for k, v in value.items() for key in [str(k), *keys(v)]]
    return [value] if isinstance(value, str) else []


def yaml_ref(result: Any, role: str, name: str) -> str:
    """The ref of `role "name"` as a YAML reader finds it (the snapshot must be valid YAML)."""
    head = f"{role} {json.dumps(name, ensure_ascii=False)}"
    found = [_REF.search(key) for key in keys(yaml.safe_load(snapshot_yaml(result))) if key.startswith(head + " ")]
    refs = [match.group(1) for match in found if match]
    assert refs, f"no ref for {head} in:\n{snapshot_yaml(result)}"
    return refs[0]


def line_ref(text: str, role: str, name: str) -> str:
    """The ref on the line of `role "name"` (for snapshots with the daemon's own additions)."""
    for line in text.splitlines():
        if f'{role} "{name}"' in line and (match := _REF.search(line)):
            return match.group(1)
    raise AssertionError(f'no ref for {role} "{name}" in:\n{text}')


# --- item 1: refs on lines Playwright quotes --------------------------------------------------------


QUOTED = [
    ("link", "Tab #1", "tab: Tab #1"),
    ("link", 'Tab #2: "Details"', 'tab: Tab #2: "Details"'),
    ("link", "Tab #3 it's a 'quote' \\ back", "tab: Tab #3 it's a 'quote' \\ back"),
    ("tab", "Section #40", "section: Section #40"),
    ("tab", "Note: read me", "section: Note: read me"),
    ("button", 'Say "hi": now', "quoted clicked"),
    ("link", "#hash: link", "hash clicked"),
]


async def test_a_ref_on_a_quoted_snapshot_line_clicks_its_element(home: BrowserdHome, site: str) -> None:
    """Names holding `#`, `: `, quotes or a backslash make Playwright quote the line; its ref still acts."""
    async with mcp_client(home) as client:
        opened = await ok(client, "browser_open", {"url": f"{site}/widgets.html"})
        for role, name, says in QUOTED:
            target = yaml_ref(opened, role, name)
            clicked = await ok(client, "browser_click", {"target": target, "snapshot": "none"})
            named = f"{role} {json.dumps(name, ensure_ascii=False)}"
            assert text_of(clicked).startswith(f"Clicked {named}"), text_of(clicked)
            assert await status(client) == says, f"{role} {name!r}"


async def test_find_and_deltas_read_quoted_lines(home: BrowserdHome, site: str) -> None:
    """browser_find matches names as a person writes them; a click's delta on the tabs widget is valid YAML
    whose quoted lines carry their refs."""
    async with mcp_client(home) as client:
        await ok(client, "browser_open", {"url": f"{site}/widgets.html", "snapshot": "none"})
        found = await ok(client, "browser_find", {"name": "Section #40"})
        matches = found.structured_content["matches"]
        assert [(m["role"], m["name"]) for m in matches] == [("tab", "Section #40")], matches
        quoted = await ok(client, "browser_find", {"text": "it's a 'quote'"})
        assert [m["name"] for m in quoted.structured_content["matches"]] == ["Tab #3 it's a 'quote' \\ back"]

        clicked = await ok(client, "browser_click", {"target": matches[0]["ref"]})
        delta = re.search(r"```diff\n(.*?)\n```", text_of(clicked), re.S)
        assert delta, text_of(clicked)
        added = [line[2:] for line in delta.group(1).splitlines() if line.startswith("+ ")]
        assert any("Section forty text" in line for line in added), delta.group(1)


# --- item 3: interactive snapshots keep what is clicked inside interactive containers ----------------


async def test_interactive_snapshot_keeps_the_links_inside_tabs(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home) as client:
        await ok(client, "browser_open", {"url": f"{site}/widgets.html", "snapshot": "none"})
        listing = await ok(client, "browser_snapshot", {"interactive": True})
        text = snapshot_yaml(listing)
        assert "/url" not in text, text
        tabs = [line for line in text.splitlines() if line.lstrip().startswith("- tab [")]
        assert len(tabs) == 3, f"the three unnamed tabs stay:\n{text}"
        second = yaml_ref(listing, "link", 'Tab #2: "Details"')
        await ok(client, "browser_click", {"target": second, "snapshot": "none"})
        assert await status(client) == 'tab: Tab #2: "Details"'


# --- item 2: typed inputs take the formats people write ----------------------------------------------

FILLS = [
    ("#date", "10/20/2017", "2017-10-20"),
    ("#date", "Oct 21 2017", "2017-10-21"),
    ("#date", "2017-10-22", "2017-10-22"),
    ("#time", "3:30 PM", "15:30"),
    ("#when", "10/20/2017 3:30 PM", "2017-10-20T15:30"),
    ("#month", "Oct 2017", "2017-10"),
    ("#week", "2017-W42", "2017-W42"),
    ("#week", "10/20/2017", "2017-W42"),
    ("#color", "#369", "#336699"),
    ("#color", "rebeccapurple", "#663399"),
    ("#range", "7", "7"),
    ("#number", "12", "12"),
]


async def test_typed_inputs_store_their_own_format(home: BrowserdHome, site: str) -> None:
    """A date written `10/20/2017` is stored as the input's `2017-10-20`, and so on for every kind; the
    answer says what the field holds when it differs from what was written."""
    async with mcp_client(home) as client:
        await ok(client, "browser_open", {"url": f"{site}/inputs.html", "snapshot": "none"})
        for selector, written, stored in FILLS:
            filled = await ok(client, "browser_fill", {"target": selector, "value": written, "snapshot": "none"})
            value = await ok(client, "browser_get", {"what": "value", "target": selector})
            assert value.structured_content["value"] == stored, f"{selector} <- {written!r}"
            if stored != written:
                assert repr(stored) in text_of(filled), text_of(filled)


REFUSED = [
    ("#date", "the day after", "INVALID_PARAMETER", "2017-10-20"),
    ("#time", "teatime", "INVALID_PARAMETER", "15:30"),
    ("#number", "twelve", "INVALID_PARAMETER", "a number"),
    ("#range", "50", "INVALID_PARAMETER", "from 0 to 10"),
    ("#color", "not a color", "INVALID_PARAMETER", "#336699"),
    ("#short", "ABCDEF", "EXECUTION_ERROR", "browser_type"),
    ("#refuser", "hello", "EXECUTION_ERROR", "browser_type"),
    ("#agree", "yes", "ELEMENT_NOT_INTERACTABLE", "browser_check"),
    ("#size", "M", "ELEMENT_NOT_INTERACTABLE", "browser_select"),
    ("#notafield", "x", "ELEMENT_NOT_INTERACTABLE", "<div>"),
]


async def test_a_fill_that_cannot_take_fails_naming_the_format_or_the_right_call(home: BrowserdHome, site: str) -> None:
    """Never "Filled" for a field left empty or changed: the error names the field's kind and what to pass
    or call instead (a number field's error says nothing of checkboxes)."""
    async with mcp_client(home) as client:
        await ok(client, "browser_open", {"url": f"{site}/inputs.html", "snapshot": "none"})
        for selector, value, code, says in REFUSED:
            read = {"what": "value", "target": selector}
            before = await ok(client, "browser_get", read) if code == "INVALID_PARAMETER" else None
            error = await fails(client, "browser_fill", {"target": selector, "value": value, "timeout": QUICK_MS}, code)
            assert says in error["error"] + error["recoverHint"], error
            assert "checkbox" not in error["recoverHint"] or selector == "#agree", error
            if before is not None:
                after = await ok(client, "browser_get", read)
                assert after.structured_content == before.structured_content, f"{selector}: left as it was"


# --- item 4: a runaway script does not take the tab with it ------------------------------------------


async def test_a_runaway_script_is_stopped_and_every_later_call_answers(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=DEVTOOLS) as client:
        opened = await ok(client, "browser_open", {"url": f"{site}/runaway.html"})
        ping = yaml_ref(opened, "button", "Ping")
        error = await fails(
            client, "browser_evaluate", {"expression": "window.loopForever()", "timeout": QUICK_MS}, "EXECUTION_ERROR"
        )
        assert "script was stopped" in error["error"], error
        title = await ok(client, "browser_get", {"what": "title"})
        assert title.structured_content["value"] == "Runaway script"
        await ok(client, "browser_click", {"target": ping, "snapshot": "none"})
        assert await status(client) == "pong"


async def test_an_action_whose_handler_loops_fails_and_the_tab_answers_again(home: BrowserdHome, site: str) -> None:
    """A click handler that never returns: the click fails saying the page was stuck and its script stopped,
    and the next calls on the tab answer."""
    async with mcp_client(home) as client:
        opened = await ok(client, "browser_open", {"url": f"{site}/runaway.html"})
        freeze = yaml_ref(opened, "button", "Freeze")
        error = await fails(
            client, "browser_click", {"target": freeze, "timeout": QUICK_MS, "snapshot": "none"}, "EXECUTION_ERROR"
        )
        assert "script was stopped" in error["error"] and "browser_snapshot" in error["recoverHint"], error
        title = await ok(client, "browser_get", {"what": "title"})
        assert title.structured_content["value"] == "Runaway script"
        await ok(client, "browser_click", {"target": yaml_ref(opened, "button", "Ping"), "snapshot": "none"})
        assert await status(client) == "pong"


async def test_a_tab_stuck_for_good_is_replaced_by_a_fresh_page_at_its_url(home: BrowserdHome, site: str) -> None:
    """A script that loops again as soon as it is stopped: the tab gets a fresh page at the same URL, keeps
    its id, says so, and the session goes on."""
    async with mcp_client(home, args=DEVTOOLS) as client:
        opened = await ok(client, "browser_open", {"url": f"{site}/runaway.html"})
        old_ping = yaml_ref(opened, "button", "Ping")
        error = await fails(
            client,
            "browser_evaluate",
            {"expression": "window.loopAgainAndAgain()", "timeout": QUICK_MS},
            "EXECUTION_ERROR",
        )
        assert f"replaced by a fresh one at {site}/runaway.html" in error["error"], error
        title = await ok(client, "browser_get", {"what": "title"})
        assert title.structured_content["value"] == "Runaway script"
        stale = await fails(client, "browser_click", {"target": old_ping}, "REF_NOT_FOUND")
        assert "stale" in stale["error"], stale
        fresh = await ok(client, "browser_snapshot", {})
        assert fresh.structured_content["tabId"] == opened.structured_content["tabId"]
        await ok(client, "browser_click", {"target": yaml_ref(fresh, "button", "Ping"), "snapshot": "none"})
        assert await status(client) == "pong"
        tabs = await ok(client, "browser_tabs", {"action": "list"})
        assert text_of(tabs).count("runaway.html") == 1, text_of(tabs)


# --- item 5: refs of click-handler elements never reach another element -----------------------------


async def test_a_clickable_ref_fails_when_its_place_holds_another_element(home: BrowserdHome, site: str) -> None:
    """c refs go by position; after the app re-orders or removes items, a ref whose position holds another
    element is REF_NOT_FOUND naming what is there now, and one whose element stayed put still works."""
    async with mcp_client(home) as client:
        opened = await ok(client, "browser_open", {"url": f"{site}/clicklist.html"})
        text = snapshot_yaml(opened)
        archive = line_ref(text, "clickable", "Archive report")
        delete = line_ref(text, "clickable", "Delete everything")
        rename = line_ref(text, "clickable", "Rename file")
        await ok(client, "browser_click", {"target": line_ref(text, "button", "Reverse items"), "snapshot": "none"})
        # Now: Rename file, Delete everything, Archive report.
        moved = await fails(client, "browser_click", {"target": archive}, "REF_NOT_FOUND")
        assert "stale" in moved["error"] and "Rename file" in moved["error"], moved
        assert "browser_snapshot" in moved["recoverHint"], moved
        assert await status(client) == "", "no other element was clicked"
        await ok(client, "browser_click", {"target": delete, "snapshot": "none"})
        assert await status(client) == "clicked: Delete everything", "an element that stayed put is still its ref's"

        await ok(client, "browser_click", {"target": line_ref(text, "button", "Remove first item"), "snapshot": "none"})
        # Now: Delete everything, Archive report.
        shifted = await fails(client, "browser_click", {"target": delete}, "REF_NOT_FOUND")
        assert "Archive report" in shifted["error"], shifted
        await fails(client, "browser_click", {"target": rename}, "REF_NOT_FOUND", "ELEMENT_NOT_FOUND")
        assert await status(client) == "clicked: Delete everything"

        fresh = snapshot_yaml(await ok(client, "browser_snapshot", {}))
        await ok(
            client, "browser_click", {"target": line_ref(fresh, "clickable", "Archive report"), "snapshot": "none"}
        )
        assert await status(client) == "clicked: Archive report"


# --- item 6: a long snapshot is read in parts --------------------------------------------------------


async def test_a_300_link_page_is_read_to_its_last_link_in_parts(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home) as client:
        await ok(client, "browser_open", {"url": f"{site}/links300.html", "snapshot": "none"})
        parts: list[str] = []
        args: dict[str, Any] = {}
        for _part in range(10):
            result = await ok(client, "browser_snapshot", args)
            body = snapshot_yaml(result)
            parts.append(body)
            if not result.structured_content["truncated"]:
                break
            note = re.search(r"Next part: browser_snapshot (\{.*?\})\.", body)
            assert note, f"the cut note names the next call:\n{body[-400:]}"
            args = json.loads(note.group(1))
            assert args["offset"] == result.structured_content["nextOffset"]
        assert len(parts) >= 2, "the default snapshot of this page is cut"
        whole = "\n".join(parts)
        names = re.findall(r'link "Link number (\d+) ', whole)
        assert [int(n) for n in names] == list(range(1, 301)), "every link once, in order, across the parts"
        last = line_ref(parts[-1], "link", "Link number 300 of the long list of links that goes on and on for a while")
        clicked = await ok(client, "browser_click", {"target": last, "snapshot": "none"})
        assert clicked.structured_content["url"].endswith("#item-300")

        past = await fails(client, "browser_snapshot", {"offset": 10_000_000}, "INVALID_PARAMETER")
        assert past["details"]["field"] == "offset"


# --- issue 11 item 11: a ref that never existed is not called stale ----------------------------------


async def test_a_ref_never_issued_says_so_and_an_old_one_is_stale(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home) as client:
        opened = await ok(client, "browser_open", {"url": f"{site}/widgets.html"})
        never = await fails(client, "browser_click", {"target": "e99999"}, "REF_NOT_FOUND")
        assert "never in a snapshot of tab_" in never["error"] and "stale" not in never["error"], never
        assert "browser_snapshot" in never["recoverHint"], never
        old = yaml_ref(opened, "button", 'Say "hi": now')
        await ok(client, "browser_open", {"url": f"{site}/index.html", "snapshot": "none"})
        stale = await fails(client, "browser_click", {"target": old}, "REF_NOT_FOUND")
        assert "stale" in stale["error"], stale
        never_after = await fails(client, "browser_click", {"target": "e99999"}, "REF_NOT_FOUND")
        assert "never in a snapshot" in never_after["error"], never_after
