"""Every action tool of issue 3, end to end: the official MCP SDK client, a real `browserd mcp` shim,
the daemon and Chromium, on the tests/site pages.

The tests act as an agent does: they read refs from the snapshot text next to a known label (or use a
CSS selector), act, and read the answer: what changed, the delta snapshot, the Playwright code, and
for errors a code plus a recoverHint that names the next call. Requirements: S2-12..S2-17, S2-32,
S2-33, S2-62..S2-73, D-28, D-32 (../shared/REQUIREMENTS.md).
"""

from __future__ import annotations

import base64
import re
from typing import Any

import pytest

from tests.conftest import BrowserdHome, mcp_client
from tests.e2e.backends import Driver
from tests.e2e.results import text_of

pytestmark = [pytest.mark.anyio, pytest.mark.shared_daemon]

# Short action timeouts keep the error cases fast; they are limits, never asserted durations.
QUICK_MS = 800
# Answers carry their Playwright code only for a client that asks for it (off by default since issue 10).
CODEGEN = ("--codegen",)
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
JPEG_MAGIC = b"\xff\xd8\xff"


# --- reading answers as an agent does -------------------------------------------------------------


def code_of(result: Any) -> str:
    """The ```python block of Playwright code an action answers with."""
    match = re.search(r"```python\n(.*?)\n```", text_of(result), re.S)
    assert match, f"no Playwright code in the answer:\n{text_of(result)}"
    return match.group(1)


def ref(text: str, role: str, name: str, nth: int = 0) -> str:
    """The ref printed next to `role "name"` (or `role [ref=..]: name` for unnamed text holders)."""
    named = re.compile(rf'\b{re.escape(role)} "{re.escape(name)}"[^\n]*?\[ref=(\w+)\]')
    texted = re.compile(rf"\b{re.escape(role)}\b[^\n\"]*?\[ref=(\w+)\][^\n]*?: {re.escape(name)}$", re.M)
    found = list(dict.fromkeys(named.findall(text) or texted.findall(text)))
    assert len(found) > nth, f'no ref for {role} "{name}" (#{nth}) in:\n{text}'
    return found[nth]


def delta_of(result: Any) -> str:
    """The changed lines of a delta snapshot answer, "" when it says nothing changed (fails if it carries no delta)."""
    text = text_of(result)
    if re.search(r"^The page did not change", text, re.M):
        return ""
    match = re.search(r"```diff\n(.*?)\n```", text, re.S)
    assert match, f"the answer carries no delta snapshot:\n{text}"
    return match.group(1)


def added(result: Any) -> str:
    return "\n".join(line for line in delta_of(result).splitlines() if line.startswith("+ "))


def image_of(result: Any) -> tuple[str, bytes]:
    images = [block for block in result.content if block.type == "image"]
    assert len(images) == 1, f"expected one image block, got {[block.type for block in result.content]}"
    return images[0].mime_type, base64.b64decode(images[0].data)


def png_size(data: bytes) -> tuple[int, int]:
    assert data.startswith(PNG_MAGIC), data[:8]
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


async def ok(client: Any, tool: str, args: dict[str, Any]) -> Any:
    result = await client.call_tool(tool, args)
    assert not result.is_error, f"{tool}({args}) failed:\n{text_of(result)}"
    return result


async def fails(client: Any, tool: str, args: dict[str, Any], *codes: str) -> dict[str, Any]:
    """Call a tool that must fail; answer its error (D-32 shape), checking the code is one of `codes`."""
    result = await client.call_tool(tool, args)
    assert result.is_error, f"{tool}({args}) should have failed:\n{text_of(result)}"
    error = result.structured_content
    assert set(error) >= {"error", "errorCode", "recoverHint", "details"}, error
    assert error["errorCode"] in codes, f"{tool}({args}): expected {codes}, got {error}"
    assert error["recoverHint"], error
    return dict(error)


async def status(client: Any, selector: str = "#status") -> str:
    return str((await ok(client, "browser_get", {"what": "text", "target": selector})).structured_content["value"])


# --- browser_click ---------------------------------------------------------------------------------


async def test_clicking_a_tree_folder_answers_with_a_delta_showing_its_children(driver: Driver, site: str) -> None:
    """S2-12, S2-64: a click answers what it clicked, the delta snapshot (default) in which the folder
    turns [expanded] and its children appear, and the Playwright code; snapshot none/full as asked."""
    async with driver.client(args=CODEGEN) as client:
        opened = await ok(client, "browser_open", {"url": f"{site}/tree.html"})
        documents = ref(text_of(opened), "treeitem", "Documents")
        assert "[collapsed]" in next(line for line in text_of(opened).splitlines() if f"[ref={documents}]" in line)

        clicked = await ok(client, "browser_click", {"target": documents})
        assert text_of(clicked).startswith('Clicked treeitem "Documents"\n')
        delta = delta_of(clicked)
        # A changed line shows once, as it is now.
        assert re.search(r'^\+ .*treeitem "Documents".*\[expanded\]', delta, re.M), delta
        assert not re.search(r'treeitem "Documents".*\[collapsed\]', delta), delta
        assert 'treeitem "Work"' in added(clicked) and 'treeitem "notes.txt"' in added(clicked)
        assert "expanded: Documents" in added(clicked)
        assert "Photos" not in delta, "an unchanged folder is not repeated in a delta"
        assert "page.get_by_role('treeitem', name='Documents', exact=True).click()" in code_of(clicked)
        assert clicked.structured_content["tabId"] == "tab_1"

        # A child that just appeared is clickable through the ref the delta gave it.
        notes = ref(added(clicked), "treeitem", "notes.txt")
        quiet = await ok(client, "browser_click", {"target": notes, "snapshot": "none"})
        assert "```yaml" not in text_of(quiet) and "Snapshot" not in text_of(quiet)
        assert "Clicked" in text_of(quiet) and ".click()" in code_of(quiet)

        # snapshot=full: the whole page, with what the quiet click did.
        full = await ok(client, "browser_click", {"target": documents, "snapshot": "full"})
        text = text_of(full)
        assert "```yaml\n" in text and "```diff" not in text
        assert 'heading "Folder tree"' in text and 'treeitem "Photos"' in text
        assert "collapsed: Documents" in text and 'treeitem "notes.txt"' not in text

        # A double click toggles a folder twice: open, then closed again.
        photos = ref(text, "treeitem", "Photos")
        double = await ok(client, "browser_click", {"target": photos, "double": True})
        assert text_of(double).startswith("Double-clicked")
        assert "collapsed: Photos" in added(double)
        assert ".dblclick()" in code_of(double)


async def test_single_page_app_route_and_add_to_cart(home: BrowserdHome, site: str) -> None:
    """S2-12, S2-64, S2-70: a pushState route change is reported as a navigation with the new view in
    the delta; "Add to cart" turns "Cart: 0" into "Cart: 1"; a ref whose element the app removed is a
    clear error (ELEMENT_NOT_FOUND or REF_NOT_FOUND) naming browser_snapshot."""
    async with mcp_client(home) as client:
        opened = await ok(client, "browser_open", {"url": f"{site}/spa.html"})
        routed = await ok(client, "browser_click", {"target": ref(text_of(opened), "link", "Products")})
        assert any(
            "navigated to" in change and "page=products" in change for change in routed.structured_content["changes"]
        )
        assert routed.structured_content["url"].endswith("spa.html?page=products")
        assert 'heading "Products view"' in added(routed)

        mug_cart = ref(added(routed), "button", "Add to cart", nth=1)
        bought = await ok(client, "browser_click", {"target": mug_cart})
        delta = delta_of(bought)
        # The status line changed: it shows once, as it is now.
        assert re.search(r'^\+ .*status.*"Cart: 1"', delta, re.M) and "Cart: 0" not in delta, delta

        # The app replaces the view without loading a page; the old button's ref must not act.
        await ok(client, "browser_click", {"target": ref(text_of(opened), "link", "About"), "snapshot": "none"})
        gone = await fails(
            client, "browser_click", {"target": mug_cart, "timeout": QUICK_MS}, "ELEMENT_NOT_FOUND", "REF_NOT_FOUND"
        )
        assert mug_cart in gone["error"] and "browser_snapshot" in gone["recoverHint"]
        assert "Cart: 1" in await status(client, "#cart")

        snapshot = await ok(client, "browser_snapshot", {})
        assert 'heading "About view"' in text_of(snapshot)
        await ok(client, "browser_click", {"target": ref(text_of(snapshot), "link", "Products"), "snapshot": "none"})
        assert "Cart: 1" in await status(client, "#cart"), "the cart survives route changes"


async def test_click_buttons_modifiers_and_position(home: BrowserdHome, site: str) -> None:
    """S2-12, S2-62, S2-64: the right button does not fire a click; modifiers are held during the
    click (keydown Shift; Control+click opens the link in a new tab); a position clicks at that point
    of the element; a clickable without a role is clicked through its own ref (c1)."""
    async with mcp_client(home, args=CODEGEN) as client:
        opened = await ok(client, "browser_open", {"url": f"{site}/states.html"})
        bold = ref(text_of(opened), "button", "Bold")
        right = await ok(client, "browser_click", {"target": bold, "button": "right"})
        assert delta_of(right) == ""
        assert "button='right'" in code_of(right)
        left = await ok(client, "browser_click", {"target": bold})
        assert re.search(r'\+ .*button "Bold".*\[pressed\]', delta_of(left)) and "bold on" in added(left)

        keys = await ok(client, "browser_open", {"url": f"{site}/keys.html"})
        shifted = await ok(
            client, "browser_click", {"target": ref(text_of(keys), "textbox", "Key input"), "modifiers": ["Shift"]}
        )
        assert re.search(r"^\+ .*status.*: Shift$", delta_of(shifted), re.M), delta_of(shifted)
        assert "modifiers=['Shift']" in code_of(shifted)

        cards = await ok(client, "browser_open", {"url": f"{site}/clickables.html"})
        card = ref(text_of(cards), "generic", "Clickable card")
        at_corner = await ok(client, "browser_click", {"target": card, "position": {"x": 4, "y": 4}})
        assert "card clicked" in added(at_corner)
        assert "position=" in code_of(at_corner)
        span = ref(text_of(cards), "clickable", "Span action")
        spanned = await ok(client, "browser_click", {"target": span})
        assert "span clicked" in added(spanned)

        index = await ok(client, "browser_open", {"url": f"{site}/index.html"})
        tabbed = await ok(
            client, "browser_click", {"target": ref(text_of(index), "link", "A form"), "modifiers": ["Control"]}
        )
        assert tabbed.structured_content["url"].endswith("/index.html"), "Control+click leaves this tab where it was"
        assert len(tabbed.structured_content["newTabs"]) == 1


async def test_click_reports_a_dialog_and_a_new_tab(home: BrowserdHome, site: str) -> None:
    """S2-12, D-32 (issue 3 §5): an action answers what it caused: a confirm dialog (accepted by
    default, so the page reads "confirm: true") and tabs the page opened (structured newTabs)."""
    async with mcp_client(home) as client:
        opened = await ok(client, "browser_open", {"url": f"{site}/dialogs.html"})
        confirmed = await ok(client, "browser_click", {"target": ref(text_of(opened), "button", "Confirm")})
        text = text_of(confirmed)
        assert "Changes:\n- confirm dialog said 'Are you sure?'" in text, text
        assert any("confirm" in change for change in confirmed.structured_content["changes"])
        assert "confirm: true" in added(confirmed)

        page = await ok(client, "browser_open", {"url": f"{site}/newtab.html"})
        linked = await ok(client, "browser_click", {"target": ref(text_of(page), "link", "Open help in new tab")})
        new_tabs = linked.structured_content["newTabs"]
        assert len(new_tabs) == 1 and new_tabs[0] != "tab_1"
        assert f"new tab {new_tabs[0]}" in text_of(linked) and "help.html" in text_of(linked)
        assert "browser_tabs" in text_of(linked), "the answer says how to switch to the new tab"
        assert linked.structured_content["tabId"] == "tab_1", "the agent stays on its tab"

        popup = await ok(client, "browser_click", {"target": ref(text_of(page), "button", "Open popup")})
        assert len(popup.structured_content["newTabs"]) == 1
        assert popup.structured_content["newTabs"][0] not in new_tabs
        assert "popup opened" in added(popup)


async def test_a_click_whose_handler_holds_the_page_for_seconds_clicks_once(home: BrowserdHome, site: str) -> None:
    """A button whose handler works in the page's thread (a client-side export) answers its click only when
    the work is done, after the first attempt's share of the patience with covers: the click went out and
    is never made again (twice would be two exports, two orders, two popups)."""
    async with mcp_client(home) as client:
        opened = await ok(client, "browser_open", {"url": f"{site}/export-report.html"})
        exported = await ok(client, "browser_click", {"target": ref(text_of(opened), "button", "Export CSV")})
        assert "Exports made: 1" in text_of(exported), text_of(exported)
        assert await status(client) == "Exports made: 1"
        # The button enables after the first attempt's share: the second attempt's click outlives the timeout.
        await ok(client, "browser_open", {"url": f"{site}/export-report.html?ready-after=1200"})
        late = await ok(client, "browser_click", {"target": "#export", "timeout": 2000})
        assert "Exports made: 1" in text_of(late), text_of(late)


async def test_a_button_on_a_panel_still_sliding_in_is_clicked_where_it_comes_to_rest(
    home: BrowserdHome, site: str
) -> None:
    """A check and a click right after the panel began to slide in: its controls are at rest only once the
    panel is, and each waits for that instead of aiming at where the control was passing."""
    async with mcp_client(home) as client:
        await ok(client, "browser_open", {"url": f"{site}/slide-panel.html"})
        await ok(client, "browser_click", {"target": "#open", "snapshot": "none"})
        await ok(client, "browser_check", {"target": "#gift", "snapshot": "none"})
        assert await status(client) == "gift wrap on"
        await ok(client, "browser_open", {"url": f"{site}/slide-panel.html"})
        await ok(client, "browser_click", {"target": "#open", "snapshot": "none"})
        await ok(client, "browser_click", {"target": "#confirm", "snapshot": "none"})
        assert await status(client) == "checkout started"


async def test_a_row_that_moves_as_the_pointer_arrives_is_still_the_one_clicked(home: BrowserdHome, site: str) -> None:
    """The list shows a bar above its rows while the pointer is over it: the pointer's arrival moves every row
    down by one, so the press at the point where the target was lands on the row above it. The click and the
    check reach the row asked for, never the one above."""
    async with mcp_client(home) as client:
        opened = text_of(await ok(client, "browser_open", {"url": f"{site}/hover-toolbar.html"}))
        await ok(client, "browser_click", {"target": "#refresh", "snapshot": "none"})  # the pointer off the list
        box = ref(opened, "checkbox", "Select invoice 1043")
        await ok(client, "browser_check", {"target": box, "snapshot": "none"})
        assert await status(client) == "invoice 1043 selected"
        await ok(client, "browser_click", {"target": "#refresh", "snapshot": "none"})
        delete = ref(opened, "button", "Delete invoice 1043")
        await ok(client, "browser_click", {"target": delete, "snapshot": "none"})
        assert await status(client) == "deleted invoice 1043"
        after = text_of(await ok(client, "browser_snapshot", {}))
        assert "Delete invoice 1042" in after and "Delete invoice 1043" not in after
        above = await ok(client, "browser_is", {"state": "checked", "target": "[aria-label='Select invoice 1042']"})
        assert above.structured_content["value"] is False


# --- browser_fill, browser_select, browser_check, browser_uncheck, browser_get value, browser_is --


FILLED = {
    ("textbox", "Full name"): "Ada Lovelace",
    ("textbox", "Email"): "ada@example.com",
    ("textbox", "Password"): "s3cret!",
    ("spinbutton", "Quantity"): "3",
    ("textbox", "Phone"): "+44 20 7946 0000",
    ("textbox", "Website"): "https://example.com/",
    ("searchbox", "Search"): "engines",
    ("textbox", "Birthday"): "2024-02-29",
    ("textbox", "Alarm"): "07:30",
    ("textbox", "Meeting"): "2024-03-01T09:15",
    ("textbox", "Month"): "2024-05",
    ("textbox", "Week"): "2024-W10",
    ("textbox", "Favorite color"): "#ff0000",
    ("slider", "Volume"): "7",
    ("textbox", "Message"): "line one\nline two",
    ("textbox", "Nickname"): "Countess",
}

SUBMITTED = """fullname=Ada Lovelace
email=ada@example.com
password=s3cret!
quantity=3
phone=+44 20 7946 0000
website=https://example.com/
q=engines
birthday=2024-02-29
alarm=07:30
meeting=2024-03-01T09:15
month=2024-05
week=2024-W10
color=#ff0000
volume=7
attachment=
token=fixed-token-123
subscribe=yes
terms=accepted
plan=pro
country=de
languages=fr
languages=ja
message=line one
line two
referral=REF-42
nickname=Countess"""


async def test_form_filled_with_every_input_kind_submits_what_was_entered(driver: Driver, site: str) -> None:
    """S2-12, S2-14, S2-15, S2-64, S2-67, S2-68, S2-72: fill every text-like kind through its ref,
    select by label and by value (and several in a multi-select), check and uncheck, choose a radio,
    then "Send": the form's result lists exactly what was entered. Reading tools agree with it."""
    async with driver.client(args=CODEGEN) as client:
        snapshot = text_of(await ok(client, "browser_open", {"url": f"{site}/form.html"}))

        first = True
        for (role, label), value in FILLED.items():
            filled = await ok(
                client,
                "browser_fill",
                {"target": ref(snapshot, role, label), "value": value, "snapshot": "delta" if first else "none"},
            )
            if first:  # the delta shows the value in the field
                assert re.search(r'\+ .*textbox "Full name".*: Ada Lovelace$', delta_of(filled), re.M)
                assert "page.get_by_role('textbox', name='Full name', exact=True).fill('Ada Lovelace')" in code_of(
                    filled
                )
                first = False
        # fill replaces what a field holds (S2-72)
        await ok(client, "browser_fill", {"target": "#email", "value": "ada@example.org", "snapshot": "none"})
        await ok(client, "browser_fill", {"target": ref(snapshot, "textbox", "Email"), "value": "ada@example.com"})
        value = await ok(client, "browser_get", {"what": "value", "target": ref(snapshot, "textbox", "Email")})
        assert value.structured_content["value"] == "ada@example.com"

        country = ref(snapshot, "combobox", "Country")
        by_label = await ok(client, "browser_select", {"target": country, "labels": ["Japan"]})
        assert by_label.structured_content["selected"] == ["jp"]
        assert re.search(r'\+ .*option "Japan" \[selected\]', delta_of(by_label)), delta_of(by_label)
        assert "select_option(label=['Japan'])" in code_of(by_label)
        by_value = await ok(client, "browser_select", {"target": "#country", "values": ["de"], "snapshot": "none"})
        assert by_value.structured_content["selected"] == ["de"]
        several = await ok(
            client, "browser_select", {"target": ref(snapshot, "listbox", "Languages"), "values": ["fr", "ja"]}
        )
        assert several.structured_content["selected"] == ["fr", "ja"]
        assert 'option "French" [selected]' in added(several) and 'option "Japanese" [selected]' in added(several)
        nothing = await fails(client, "browser_select", {"target": country}, "INVALID_PARAMETER")
        assert nothing["details"]["field"] in ("values", "labels")

        subscribe = ref(snapshot, "checkbox", "Subscribe")
        checked = await ok(client, "browser_check", {"target": subscribe})
        assert re.search(r'\+ .*checkbox "Subscribe".*\[checked\]', delta_of(checked)) and ".check()" in code_of(
            checked
        )
        assert (await ok(client, "browser_is", {"state": "checked", "target": subscribe})).structured_content["value"]
        unchecked = await ok(client, "browser_uncheck", {"target": subscribe})
        assert re.search(r'\+ .*checkbox "Subscribe"', delta_of(unchecked)) and "[checked]" not in added(unchecked)
        assert ".uncheck()" in code_of(unchecked)
        is_checked = await ok(client, "browser_is", {"state": "checked", "target": subscribe})
        assert is_checked.structured_content["value"] is False
        await ok(client, "browser_check", {"target": subscribe, "snapshot": "none"})
        await ok(client, "browser_check", {"target": ref(snapshot, "checkbox", "Accept terms"), "snapshot": "none"})
        pro = await ok(client, "browser_check", {"target": ref(snapshot, "radio", "Pro")})
        assert re.search(r'\+ .*radio "Pro".*\[checked\]', delta_of(pro)) and re.search(
            r'\+ .*radio "Free"', delta_of(pro)
        )

        # Reading states on the same form: readonly is not editable, disabled is not enabled.
        async def state(what: str, target: str) -> bool:
            return bool((await ok(client, "browser_is", {"state": what, "target": target})).structured_content["value"])

        assert await state("editable", ref(snapshot, "textbox", "Full name"))
        assert not await state("editable", ref(snapshot, "textbox", "Referral code"))
        assert not await state("enabled", ref(snapshot, "textbox", "Account id"))
        assert await state("enabled", ref(snapshot, "button", "Send"))

        sent = await ok(client, "browser_click", {"target": ref(snapshot, "button", "Send")})
        assert "status" in added(sent) and "fullname=Ada Lovelace" in added(sent)
        assert await status(client, "#result") == SUBMITTED
        assert await status(client, "#errors") == ""


async def test_fill_with_submit_presses_enter_and_fill_on_a_checkbox_is_a_clear_error(
    home: BrowserdHome, site: str
) -> None:
    """S2-12, S2-72, D-32: submit=true presses Enter after filling (the form validates and shows its
    alert in the delta); filling a checkbox is an error that says why, and the next fill works."""
    async with mcp_client(home, args=CODEGEN) as client:
        snapshot = text_of(await ok(client, "browser_open", {"url": f"{site}/form.html"}))
        full_name = ref(snapshot, "textbox", "Full name")
        submitted = await ok(client, "browser_fill", {"target": full_name, "value": "Ada", "submit": True})
        assert "alert" in added(submitted) and "Please accept the terms" in added(submitted)
        assert code_of(submitted).splitlines()[-1].endswith(".press('Enter')")

        error = await fails(
            client,
            "browser_fill",
            {"target": ref(snapshot, "checkbox", "Subscribe"), "value": "yes", "timeout": QUICK_MS},
            "ELEMENT_NOT_INTERACTABLE",
            "EXECUTION_ERROR",
        )
        assert "checkbox" in error["error"] and error["details"]["action"] == "fill"

        readonly = await fails(
            client,
            "browser_fill",
            {"target": ref(snapshot, "textbox", "Referral code"), "value": "x", "timeout": QUICK_MS},
            "ELEMENT_NOT_INTERACTABLE",
        )
        assert "Referral code" in readonly["error"]

        await ok(client, "browser_fill", {"target": full_name, "value": "Ada Lovelace", "snapshot": "none"})
        assert (await ok(client, "browser_get", {"what": "value", "target": full_name})).structured_content[
            "value"
        ] == ("Ada Lovelace")


async def test_a_field_disabled_since_the_snapshot_showed_it_still_fails_as_disabled(
    home: BrowserdHome, site: str
) -> None:
    """A plain textbox the snapshot showed editable is filled without a closer look; if the page disabled it
    since, the fill still ends in ELEMENT_NOT_INTERACTABLE saying so (once Playwright stops waiting)."""
    async with mcp_client(home, args=("--tools", "pages,devtools")) as client:
        snapshot = text_of(await ok(client, "browser_open", {"url": f"{site}/form.html"}))
        full_name = ref(snapshot, "textbox", "Full name")
        await ok(client, "browser_evaluate", {"expression": "document.querySelector('#fullname').disabled = true"})
        disabled = await fails(
            client, "browser_fill", {"target": full_name, "value": "x", "timeout": QUICK_MS}, "ELEMENT_NOT_INTERACTABLE"
        )
        assert "disabled" in disabled["error"], disabled


async def test_a_fill_by_ref_that_did_not_take_or_whose_field_left_fails_and_fills_nothing_else(
    home: BrowserdHome, site: str
) -> None:
    """A plain text field's ref is filled while the ref is checked and its value read while the page settles:
    a value the page cut or emptied still fails the call, and a ref whose field left the page still says so
    and fills nothing."""
    async with mcp_client(home, args=("--tools", "pages,devtools")) as client:
        snapshot = text_of(await ok(client, "browser_open", {"url": f"{site}/inputs.html"}))
        for name, value in (("Code (3 letters)", "ABCDEF"), ("Locked by script", "hello")):
            error = await fails(
                client, "browser_fill", {"target": ref(snapshot, "textbox", name), "value": value}, "EXECUTION_ERROR"
            )
            assert "did not take the value" in error["error"] and "browser_type" in error["recoverHint"], error
        code = ref(snapshot, "textbox", "Code (3 letters)")
        await ok(client, "browser_evaluate", {"expression": "document.querySelector('#short').remove()"})
        gone = await fails(client, "browser_fill", {"target": code, "value": "XYZ"}, "ELEMENT_NOT_FOUND")
        assert "no longer on the page" in gone["error"], gone
        values = await ok(
            client, "browser_evaluate", {"expression": "[...document.querySelectorAll('input')].map(i => i.value)"}
        )
        assert "XYZ" not in text_of(values), text_of(values)


async def test_fill_on_a_checkbox_is_not_interactable_and_names_browser_check(home: BrowserdHome, site: str) -> None:
    """S2-33, D-32: an interaction failure maps to ELEMENT_NOT_INTERACTABLE with a hint naming the next call."""
    async with mcp_client(home) as client:
        snapshot = text_of(await ok(client, "browser_open", {"url": f"{site}/form.html"}))
        error = await fails(
            client,
            "browser_fill",
            {"target": ref(snapshot, "checkbox", "Subscribe"), "value": "yes", "timeout": QUICK_MS},
            "ELEMENT_NOT_INTERACTABLE",
        )
        assert "browser_check" in error["recoverHint"]


# --- browser_type, browser_press --------------------------------------------------------------------


async def test_typing_slowly_shows_debounced_suggestions_then_an_option_is_chosen(
    home: BrowserdHome, site: str
) -> None:
    """S2-12, S2-64, S2-72 (issue 3 §5): the delta after typing "ap" slowly already lists the
    suggestions that appear 150 ms after the last key, so settling waited for the debounce; clicking
    the "Apricot" option from that delta selects it."""
    async with mcp_client(home, args=CODEGEN) as client:
        opened = await ok(client, "browser_open", {"url": f"{site}/autocomplete.html"})
        combobox = ref(text_of(opened), "combobox", "Search fruit")
        typed = await ok(client, "browser_type", {"target": combobox, "text": "ap", "slowly": True})
        suggestions = added(typed)
        assert 'listbox "Fruit suggestions"' in suggestions, delta_of(typed)
        assert 'option "Apple"' in suggestions and 'option "Apricot"' in suggestions
        assert "Avocado" not in suggestions and "Banana" not in suggestions
        assert re.search(r'\+ .*combobox "Search fruit".*\[expanded\].*: ap$', suggestions, re.M), suggestions
        assert "press_sequentially('ap', delay=" in code_of(typed)

        chosen = await ok(client, "browser_click", {"target": ref(suggestions, "option", "Apricot")})
        assert "Selected: Apricot" in added(chosen)
        assert "listbox" not in added(chosen), "the list closed"
        value = await ok(client, "browser_get", {"what": "value", "target": combobox})
        assert value.structured_content["value"] == "Apricot"


async def test_press_keys_and_chords_on_the_page_and_on_an_element(home: BrowserdHome, site: str) -> None:
    """S2-12, S2-62, S2-64: Enter on the page, Control+A on the input, Shift+Tab on the page; type
    with submit presses Enter after the text; each key shows in keys.html's "Last key"."""
    async with mcp_client(home, args=CODEGEN) as client:
        opened = await ok(client, "browser_open", {"url": f"{site}/keys.html"})
        key_input = ref(text_of(opened), "textbox", "Key input")

        enter = await ok(client, "browser_press", {"key": "Enter"})
        assert re.search(r"^\+ .*status.*: Enter$", delta_of(enter), re.M), delta_of(enter)
        assert "page.keyboard.press('Enter')" in code_of(enter)

        chord = await ok(client, "browser_press", {"key": "Control+A", "target": key_input})
        assert re.search(r"^\+ .*status.*: Control\+A$", delta_of(chord), re.M), delta_of(chord)
        assert "get_by_role('textbox', name='Key input', exact=True).press('Control+A')" in code_of(chord)

        back = await ok(client, "browser_press", {"key": "Shift+Tab"})
        assert re.search(r"^\+ .*status.*: Shift\+Tab$", delta_of(back), re.M), delta_of(back)

        typed = await ok(client, "browser_type", {"target": key_input, "text": "hi", "submit": True})
        assert re.search(r"^\+ .*status.*: Enter$", delta_of(typed), re.M), delta_of(typed)
        assert (await ok(client, "browser_get", {"what": "value", "target": key_input})).structured_content[
            "value"
        ] == "hi"
        more = await ok(client, "browser_type", {"target": key_input, "text": "!", "snapshot": "none"})
        assert "press_sequentially('!')" in code_of(more)
        value = await ok(client, "browser_get", {"what": "value", "target": key_input})
        assert value.structured_content["value"] == "hi!", "type adds to what the field holds"


# --- browser_hover, hidden and covered elements -----------------------------------------------------


async def test_hover_reveals_the_menu_hidden_and_covered_elements_are_errors(home: BrowserdHome, site: str) -> None:
    """S2-12, S2-15, S2-33, D-32: the menu item is hidden before a hover (clicking it is
    ELEMENT_NOT_VISIBLE or a timeout naming the element); hover shows it in the delta; then clicking
    where the open menu covers another element is ELEMENT_NOT_INTERACTABLE saying it is covered."""
    async with mcp_client(home, args=CODEGEN) as client:
        opened = await ok(client, "browser_open", {"url": f"{site}/hover.html"})
        assert "Hover menu item" not in text_of(opened)
        hidden = await fails(
            client,
            "browser_click",
            {"target": "#item", "timeout": QUICK_MS},
            "ELEMENT_NOT_VISIBLE",
            "EXECUTION_ERROR",
        )
        assert "#item" in hidden["error"]
        visible = await ok(client, "browser_is", {"state": "visible", "target": "#item"})
        assert visible.structured_content["value"] is False

        hovered = await ok(client, "browser_hover", {"target": ref(text_of(opened), "button", "Hover me")})
        assert 'menu "Hover menu"' in added(hovered) and 'menuitem "Hover menu item"' in added(hovered)
        assert re.search(r'\+ .*button "Hover me".*\[expanded\]', delta_of(hovered))
        assert ".hover()" in code_of(hovered)

        item = ref(added(hovered), "menuitem", "Hover menu item")
        clicked = await ok(client, "browser_click", {"target": item})
        assert "hover item clicked" in added(clicked)

        # The open menu lies over the top-left corner of the status line.
        covered = await fails(
            client,
            "browser_click",
            {"target": "#status", "position": {"x": 5, "y": 5}, "timeout": QUICK_MS},
            "ELEMENT_NOT_INTERACTABLE",
        )
        assert "covered" in covered["error"] and "browser_snapshot" in covered["recoverHint"]
        await ok(client, "browser_click", {"target": "#status", "snapshot": "none"})  # its uncovered middle


async def test_a_hover_after_a_click_on_the_same_page_opens_the_menu(home: BrowserdHome, site: str) -> None:
    """A hover on a document an earlier click has prepared goes straight to the element (no frame waits),
    and the page sees it as a person's: the menu opens, and a hover elsewhere closes it again."""
    async with mcp_client(home) as client:
        opened = text_of(await ok(client, "browser_open", {"url": f"{site}/hover.html"}))
        await ok(client, "browser_click", {"target": "h1", "snapshot": "none"})
        hovered = await ok(client, "browser_hover", {"target": ref(opened, "button", "Hover me")})
        assert 'menuitem "Hover menu item"' in added(hovered)
        left = await ok(client, "browser_hover", {"target": "h1"})
        assert re.search(r'\+ .*button "Hover me".*\[collapsed\]', delta_of(left))
        again = await ok(client, "browser_hover", {"target": ref(opened, "button", "Hover me")})
        assert 'menuitem "Hover menu item"' in added(again)


# --- browser_drag, browser_scroll ------------------------------------------------------------------


async def test_drag_the_item_onto_the_drop_zone(home: BrowserdHome, site: str) -> None:
    """S2-12, S2-62: drag a role-less draggable (by its ref) onto a region; the drop shows in the delta."""
    async with mcp_client(home, args=CODEGEN) as client:
        opened = await ok(client, "browser_open", {"url": f"{site}/drag.html"})
        source = ref(text_of(opened), "generic", "Drag me")
        zone = ref(text_of(opened), "region", "Drop zone")
        dropped = await ok(client, "browser_drag", {"source": source, "target": zone})
        assert re.search(r'\+ .*region "Drop zone".*: Dropped!$', delta_of(dropped), re.M), delta_of(dropped)
        assert "dropped: item" in added(dropped)
        assert ".drag_to(page.get_by_role('region', name='Drop zone', exact=True))" in code_of(dropped)


async def test_scroll_into_view_then_click_and_by_a_wheel_delta(home: BrowserdHome, site: str) -> None:
    """S2-66: with neither target nor delta scroll is INVALID_PARAMETER; a wheel delta moves the page;
    a target is scrolled into view (the page's footer, or a button inside an inner scroller) and clicked."""
    async with mcp_client(home, args=CODEGEN) as client:
        opened = await ok(client, "browser_open", {"url": f"{site}/scroll.html"})
        nothing = await fails(client, "browser_scroll", {}, "INVALID_PARAMETER")
        assert nothing["details"]["field"] in ("target", "deltaY")

        bottom = ref(text_of(opened), "button", "Bottom button")
        start = (await ok(client, "browser_get", {"what": "box", "target": bottom})).structured_content["value"]["y"]
        wheel = await ok(client, "browser_scroll", {"deltaY": 600, "snapshot": "none"})
        assert "page.mouse.wheel(0, 600)" in code_of(wheel)
        # The wheel scrolls asynchronously: read the button's box until it has moved up by 600.
        moved = start
        for _attempt in range(40):
            moved = (await ok(client, "browser_get", {"what": "box", "target": bottom})).structured_content["value"][
                "y"
            ]
            if moved != start:
                break
        assert moved == start - 600, (start, moved)

        into_view = await ok(client, "browser_scroll", {"target": bottom})
        assert "scroll_into_view_if_needed()" in code_of(into_view)
        box = (await ok(client, "browser_get", {"what": "box", "target": bottom})).structured_content["value"]
        assert box["y"] >= 0 and box["y"] + box["height"] <= 800, f"the button is in the 1280x800 viewport: {box}"
        clicked = await ok(client, "browser_click", {"target": bottom})
        assert "bottom clicked" in added(clicked)

        inner = ref(text_of(opened), "button", "Inner button")
        await ok(client, "browser_scroll", {"target": inner, "snapshot": "none"})
        clicked = await ok(client, "browser_click", {"target": inner})
        assert "inner clicked" in added(clicked)


async def test_scroll_by_a_delta_reports_where_the_page_is_now(home: BrowserdHome, site: str) -> None:
    """S2-66: each wheel scroll answers the page's new position (ten scrolls of 300 px)."""
    async with mcp_client(home) as client:
        await ok(client, "browser_open", {"url": f"{site}/scroll.html", "snapshot": "none"})
        reported = []
        for _step in range(10):
            result = await ok(client, "browser_scroll", {"deltaY": 300, "snapshot": "none"})
            reported.append(result.structured_content["scrollY"])
        assert reported == [300 * step for step in range(1, 11)]


# --- browser_wait -----------------------------------------------------------------------------------


async def test_wait_for_text_selector_url_network_idle_and_time(home: BrowserdHome, site: str) -> None:
    """S2-13, S2-65: text that appears late, a selector's state, a URL after a client-side route and
    after a real navigation, text that disappears, network idle and a plain time; each answers what it
    waited for (and the late content is in its snapshot)."""
    async with mcp_client(home) as client:
        await ok(client, "browser_open", {"url": f"{site}/late.html", "snapshot": "none"})
        late = await ok(client, "browser_wait", {"text": "Late button"})
        assert text_of(late).startswith("Waited for text 'Late button' to appear")
        button = ref(text_of(late), "button", "Late button")
        assert "Loaded late" in text_of(late)
        await ok(client, "browser_click", {"target": button, "snapshot": "none"})
        shown = await ok(client, "browser_wait", {"selector": "#status", "state": "visible", "snapshot": "none"})
        assert 'selector "#status" to be visible' in text_of(shown)
        assert await status(client) == "late clicked"
        hidden = await ok(
            client, "browser_wait", {"selector": "#does-not-exist", "state": "hidden", "snapshot": "none"}
        )
        assert "to be hidden" in text_of(hidden)
        idle = await ok(client, "browser_wait", {"networkIdle": True, "snapshot": "none"})
        assert "network idle" in text_of(idle)
        slept = await ok(client, "browser_wait", {"timeMs": 100, "snapshot": "none"})
        assert "100 ms" in text_of(slept)

        spa = await ok(client, "browser_open", {"url": f"{site}/spa.html"})
        await ok(client, "browser_click", {"target": ref(text_of(spa), "link", "About"), "snapshot": "none"})
        routed = await ok(client, "browser_wait", {"url": "**/spa.html?page=about", "textGone": "Welcome home."})
        assert "to disappear" in text_of(routed) and "URL" in text_of(routed)
        assert 'heading "About view"' in added(routed)

        index = await ok(client, "browser_open", {"url": f"{site}/index.html"})
        await ok(client, "browser_click", {"target": ref(text_of(index), "link", "A form"), "snapshot": "none"})
        navigated = await ok(client, "browser_wait", {"url": "**/form.html"})
        assert navigated.structured_content["url"].endswith("/form.html")
        assert 'heading "Form with every input kind"' in text_of(navigated)


async def test_wait_errors_say_what_to_do(home: BrowserdHome, site: str) -> None:
    """S2-13, D-32: a wait that times out is a clear error naming browser_snapshot; nothing to wait
    for, or a time over 60 s, is INVALID_PARAMETER; the session works afterwards."""
    async with mcp_client(home) as client:
        await ok(client, "browser_open", {"url": f"{site}/late.html", "snapshot": "none"})
        timed_out = await fails(
            client, "browser_wait", {"text": "Never shown", "timeout": 500}, "EXECUTION_ERROR", "ELEMENT_NOT_FOUND"
        )
        assert "500 ms" in timed_out["error"] and "browser_snapshot" in timed_out["recoverHint"]

        empty = await fails(client, "browser_wait", {}, "INVALID_PARAMETER")
        assert "timeMs" in empty["error"] and "text" in empty["error"]
        too_long = await fails(client, "browser_wait", {"timeMs": 60_001}, "INVALID_PARAMETER")
        assert too_long["details"]["field"] == "timeMs"

        await ok(client, "browser_wait", {"text": "Late button", "snapshot": "none"})


async def test_wait_timeout_names_what_it_was_waiting_for(home: BrowserdHome, site: str) -> None:
    """S2-13, D-32: the timeout error names the text (or selector, URL) that never came."""
    async with mcp_client(home) as client:
        await ok(client, "browser_open", {"url": f"{site}/late.html", "snapshot": "none"})
        error = await fails(client, "browser_wait", {"text": "Never shown", "timeout": 500}, "EXECUTION_ERROR")
        assert "Never shown" in error["error"]


# --- browser_get, browser_is ------------------------------------------------------------------------


async def test_get_reads_text_html_attribute_title_url_count_and_box(home: BrowserdHome, site: str) -> None:
    """S2-14, S2-67, D-32: every getter on refs and selectors; a selector matching nothing counts 0
    (not an error); a getter that needs a target and has none is INVALID_PARAMETER naming `target`."""
    async with mcp_client(home) as client:
        opened = await ok(client, "browser_open", {"url": f"{site}/clickables.html"})
        snapshot = text_of(opened)
        details = ref(snapshot, "link", "the details")

        async def get(what: str, **args: Any) -> Any:
            return (await ok(client, "browser_get", {"what": what, **args})).structured_content["value"]

        assert (
            await get("text", target=ref(snapshot, "heading", "Clickables without roles")) == "Clickables without roles"
        )
        assert await get("html", target="p:has(a)") == 'Read <a href="#more">the details</a> in the appendix.'
        assert await get("attribute", target=details, name="href") == "#more"
        assert await get("attribute", target=details, name="data-missing") is None
        assert await get("title") == "Clickables without roles"
        assert await get("url") == f"{site}/clickables.html"
        assert await get("count", target="p") == 4  # three of text and the status line
        assert await get("count", target="#no-such-element") == 0
        box = await get("box", target=details)
        assert set(box) == {"x", "y", "width", "height"} and box["width"] > 0 and box["height"] > 0

        await ok(client, "browser_click", {"target": details, "snapshot": "none"})
        assert await get("url") == f"{site}/clickables.html#more"
        assert await status(client) == "link clicked"

        missing = await fails(client, "browser_get", {"what": "text"}, "INVALID_PARAMETER")
        assert missing["details"]["field"] == "target" and "target" in missing["error"]
        no_name = await fails(client, "browser_get", {"what": "attribute", "target": details}, "INVALID_PARAMETER")
        assert no_name["details"]["field"] == "name"


async def test_is_reports_visible_enabled_checked_and_editable(home: BrowserdHome, site: str) -> None:
    """S2-15, S2-68: states of states.html's elements through refs, and after an action changes one."""
    async with mcp_client(home) as client:
        snapshot = text_of(await ok(client, "browser_open", {"url": f"{site}/states.html"}))

        async def state(what: str, target: str) -> bool:
            result = await ok(client, "browser_is", {"state": what, "target": target})
            value = result.structured_content["value"]
            assert isinstance(value, bool)
            assert ("is not " in text_of(result)) is not value, text_of(result)
            return value

        assert await state("checked", ref(snapshot, "checkbox", "Remember me"))
        assert not await state("enabled", ref(snapshot, "button", "Disabled action"))
        assert await state("enabled", ref(snapshot, "button", "Bold"))
        assert await state("visible", ref(snapshot, "tab", "Details"))

        await ok(client, "browser_uncheck", {"target": ref(snapshot, "checkbox", "Remember me"), "snapshot": "none"})
        assert not await state("checked", ref(snapshot, "checkbox", "Remember me"))
        assert not await state("visible", "#no-such-element"), "a missing element is simply not visible"


# --- browser_screenshot -----------------------------------------------------------------------------


async def test_screenshots_of_the_viewport_as_png_or_jpeg_and_of_one_element(driver: Driver, site: str) -> None:
    """S2-16, S2-73: MCP image content with its mime type; the structured answer gives the size."""
    async with driver.client() as client:
        snapshot = text_of(await ok(client, "browser_open", {"url": f"{site}/states.html"}))

        expected = await driver.viewport(client)
        viewport = await ok(client, "browser_screenshot", {})
        mime, data = image_of(viewport)
        assert mime == "image/png"
        size = viewport.structured_content
        assert (size["width"], size["height"]) == expected and size["scaled"] is False
        assert png_size(data) == expected
        assert "Screenshot of viewport" in text_of(viewport)

        jpeg = await ok(client, "browser_screenshot", {"format": "jpeg", "quality": 50})
        mime, data = image_of(jpeg)
        assert mime == "image/jpeg" and data.startswith(JPEG_MAGIC)

        heading = ref(snapshot, "heading", "Element states")
        element = await ok(client, "browser_screenshot", {"target": heading})
        mime, data = image_of(element)
        width, height = png_size(data)
        assert mime == "image/png" and width < expected[0] and height < expected[1]
        assert (element.structured_content["width"], element.structured_content["height"]) == (width, height)
        assert "Element states" in text_of(element)


async def test_a_full_page_screenshot_is_downscaled_to_the_configured_limit(home: BrowserdHome, site: str) -> None:
    """S2-16, S2-73 (issue 3 §5): browser.screenshot_max_px caps the longer side of the image."""
    home.env["BROWSERD_BROWSER_SCREENSHOT_MAX_PX"] = "500"
    async with mcp_client(home) as client:
        for page in ("scroll.html", "large.html"):
            await ok(client, "browser_open", {"url": f"{site}/{page}", "snapshot": "none"})
            shot = await ok(client, "browser_screenshot", {"fullPage": True})
            mime, data = image_of(shot)
            size = shot.structured_content
            assert mime == "image/png" and size["scaled"] is True, size
            assert size["width"] <= 500 and size["height"] <= 500, size
            assert max(png_size(data)) <= 500, png_size(data)
            assert "scaled" in text_of(shot) and "500 px" in text_of(shot)
        # scroll.html is exactly 1280x4000: fitting it whole would leave a 160 px sliver, so it is scaled
        # to the width and cut at the limit, and the answer says so.
        await ok(client, "browser_open", {"url": f"{site}/scroll.html", "snapshot": "none"})
        shot = await ok(client, "browser_screenshot", {"fullPage": True})
        assert png_size(image_of(shot)[1]) == (500, 500)
        assert shot.structured_content["cropped"] is True
        assert "cut after the first 1280 px" in text_of(shot)


async def test_a_downscaled_screenshot_reports_the_size_of_its_image(home: BrowserdHome, site: str) -> None:
    """S2-73: structured width/height are those of the image returned."""
    home.env["BROWSERD_BROWSER_SCREENSHOT_MAX_PX"] = "500"
    async with mcp_client(home) as client:
        await ok(client, "browser_open", {"url": f"{site}/states.html", "snapshot": "none"})
        shot = await ok(client, "browser_screenshot", {})
        assert (shot.structured_content["width"], shot.structured_content["height"]) == png_size(image_of(shot)[1])


async def test_an_element_screenshot_answers_the_element_code(home: BrowserdHome, site: str) -> None:
    """S2-73 (issue 3 §5): the Playwright code reproduces the screenshot that was taken."""
    async with mcp_client(home, args=CODEGEN) as client:
        await ok(client, "browser_open", {"url": f"{site}/states.html", "snapshot": "none"})
        shot = await ok(client, "browser_screenshot", {"target": "h1", "format": "jpeg"})
        assert "page.locator('h1').screenshot(" in code_of(shot) and "jpeg" in code_of(shot)


# --- errors a model can act on ----------------------------------------------------------------------


async def test_action_errors_name_the_problem_and_the_next_call(home: BrowserdHome, site: str) -> None:
    """S2-32, S2-33, S2-70, D-28, D-32: an ambiguous selector is ELEMENT_AMBIGUOUS naming the count; a
    disabled button ELEMENT_NOT_INTERACTABLE; no match ELEMENT_NOT_FOUND naming browser_snapshot; a
    ref from before a navigation REF_NOT_FOUND; after each, a call that works."""
    async with mcp_client(home) as client:
        snapshot = text_of(await ok(client, "browser_open", {"url": f"{site}/states.html"}))
        buttons = (await ok(client, "browser_get", {"what": "count", "target": "button"})).structured_content["value"]
        assert buttons == 6
        ambiguous = await fails(client, "browser_click", {"target": "button", "timeout": QUICK_MS}, "ELEMENT_AMBIGUOUS")
        assert "6 elements" in ambiguous["error"] and "browser_snapshot" in ambiguous["recoverHint"]
        await ok(client, "browser_click", {"target": "button#bold", "snapshot": "none"})
        assert await status(client) == "bold on"

        disabled = await fails(
            client,
            "browser_click",
            {"target": ref(snapshot, "button", "Disabled action"), "timeout": QUICK_MS},
            "ELEMENT_NOT_INTERACTABLE",
        )
        assert "Disabled action" in disabled["error"] and "disabled" in disabled["error"]
        await ok(client, "browser_click", {"target": ref(snapshot, "tab", "Details"), "snapshot": "none"})
        assert (await ok(client, "browser_get", {"what": "text", "target": "[role=tabpanel]"})).structured_content[
            "value"
        ] == "Details panel"

        missing = await fails(
            client, "browser_click", {"target": "#no-such-button", "timeout": 500}, "ELEMENT_NOT_FOUND"
        )
        assert "#no-such-button" in missing["error"] and "browser_snapshot" in missing["recoverHint"]

        unknown = await fails(client, "browser_click", {"target": "e999"}, "REF_NOT_FOUND")
        assert "e999" in unknown["error"] and "browser_snapshot" in unknown["recoverHint"]

        index = text_of(await ok(client, "browser_open", {"url": f"{site}/index.html"}))
        press_me = ref(index, "button", "Press me")
        await ok(client, "browser_click", {"target": ref(index, "link", "A form"), "snapshot": "none"})
        stale = await fails(client, "browser_click", {"target": press_me}, "REF_NOT_FOUND")
        assert press_me in stale["error"] and "stale" in stale["error"]
        assert "browser_snapshot" in stale["recoverHint"]
        fresh = text_of(await ok(client, "browser_snapshot", {}))
        reset = await ok(client, "browser_click", {"target": ref(fresh, "button", "Reset")})
        assert "Clicked" in text_of(reset)


async def test_code_for_one_of_several_same_named_buttons_singles_it_out(home: BrowserdHome, site: str) -> None:
    """S2-70 (issue 3 §5): the Playwright code of an action can be replayed as a script."""
    async with mcp_client(home, args=CODEGEN) as client:
        opened = await ok(client, "browser_open", {"url": f"{site}/spa.html?page=products"})
        clicked = await ok(client, "browser_click", {"target": ref(text_of(opened), "button", "Add to cart", nth=1)})
        assert "Cart: 1" in added(clicked)
        assert "page.get_by_role('button', name='Add to cart', exact=True).click()" not in code_of(clicked)
        assert ".nth(1)" in code_of(clicked)


# --- iframes and shadow DOM -------------------------------------------------------------------------


async def test_actions_inside_an_iframe_and_a_shadow_root(home: BrowserdHome, site: str) -> None:
    """S2-12, S2-70, D-28: refs with a frame prefix act inside the same-origin iframe; refs inside an
    open shadow root act there too."""
    async with mcp_client(home) as client:
        framed = text_of(await ok(client, "browser_open", {"url": f"{site}/iframe.html"}))
        frame_input = ref(framed, "textbox", "Frame input")
        frame_button = ref(framed, "button", "Frame button")
        assert (
            re.fullmatch(r"f\d+e\d+", frame_input)
            and frame_input.split("e")[0] != ref(framed, "heading", "Page with an iframe").split("e")[0]
        ), "refs inside the frame carry the frame's prefix"

        filled = await ok(client, "browser_fill", {"target": frame_input, "value": "inside"})
        assert re.search(r'\+ .*textbox "Frame input".*: inside$', delta_of(filled), re.M), delta_of(filled)
        value = await ok(client, "browser_get", {"what": "value", "target": frame_input})
        assert value.structured_content["value"] == "inside"
        clicked = await ok(client, "browser_click", {"target": frame_button})
        assert "frame clicked" in added(clicked)

        shadow = text_of(await ok(client, "browser_open", {"url": f"{site}/shadow.html"}))
        typed = await ok(client, "browser_fill", {"target": ref(shadow, "textbox", "Shadow input"), "value": "deep"})
        assert re.search(r'\+ .*textbox "Shadow input".*: deep$', delta_of(typed), re.M)
        clicked = await ok(client, "browser_click", {"target": ref(shadow, "button", "Shadow button")})
        assert "shadow clicked" in added(clicked)
        # A CSS selector pierces open shadow roots as Playwright's locators do.
        assert (await ok(client, "browser_get", {"what": "value", "target": "input"})).structured_content[
            "value"
        ] == "deep"
