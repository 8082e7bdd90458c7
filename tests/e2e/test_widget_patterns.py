"""The agent loop on the markup of popular widget libraries (issue 10): the official MCP SDK client, a real
`browserd mcp` shim, the daemon and Chromium, on tests/site/w-*.html pages rebuilt by hand from how those
libraries render (Select2, react-select, Bootstrap custom controls, Material checkboxes, cookie banners,
modals, rich-text editors, flatpickr, menus, keyed lists, shadow roots, cross-origin frames, sortables).

Each test acts as an agent would: it reads refs from the snapshot text, acts, and checks what the page
itself reports (its status line), never the daemon's own word for it.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.conftest import BrowserdHome, mcp_client
from tests.e2e.results import text_of
from tests.e2e.test_actions import fails, ok, ref, status

pytestmark = [pytest.mark.anyio, pytest.mark.shared_daemon]

QUICK_MS = 2_000
# browser_evaluate (to put the page in a given scroll position) is in the devtools group.
DEVTOOLS = ("--tools", "pages,devtools")


async def snapshot(client: Any) -> str:
    return text_of(await ok(client, "browser_snapshot", {}))


async def act(client: Any, tool: str, target: str, **args: Any) -> str:
    """One action without a snapshot in its answer; the answer's text."""
    return text_of(await ok(client, tool, {"target": target, "snapshot": "none", **args}))


# --- custom checkboxes, radios and switches ----------------------------------------------------------


async def test_check_toggles_inputs_that_themes_hide_behind_their_labels(home: BrowserdHome, site: str) -> None:
    """Bootstrap's opacity-0 input under its label, a display:none input, sr-only radios and a Material
    input laid over its drawing: browser_check ticks each through what a person clicks, and says so."""
    async with mcp_client(home) as client:
        opened = text_of(await ok(client, "browser_open", {"url": f"{site}/w-checks.html"}))
        for target in (ref(opened, "checkbox", "Send me the newsletter"), ref(opened, "radio", "Express shipping")):
            checked = await act(client, "browser_check", target)
            assert "label was clicked" in checked, checked
        await act(client, "browser_check", ref(opened, "checkbox", "Gift wrap"))
        await act(client, "browser_check", ref(opened, "radio", "Yearly"))
        # The display:none inputs are not in the snapshot: their paragraph (or a selector) stands for them.
        await act(client, "browser_check", ref(opened, "paragraph", "☐ I agree to the terms"))
        await act(client, "browser_check", "#remember")
        assert await status(client) == (
            "newsletter=on; ship=express; gift=on; terms=on; remember=on; billing=yearly; dark=false; "
            "notify=false; autosave=true"
        )
        again = await act(client, "browser_check", "#terms")
        assert "already checked" in again, "a second check leaves it ticked"
        await act(client, "browser_uncheck", ref(opened, "checkbox", "Send me the newsletter"))
        assert (await status(client)).startswith("ship=express;")


async def test_check_flips_switches_and_points_stateless_toggles_to_click(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home) as client:
        opened = text_of(await ok(client, "browser_open", {"url": f"{site}/w-checks.html"}))
        await act(client, "browser_check", ref(opened, "switch", "Dark mode"))
        await act(client, "browser_uncheck", ref(opened, "checkbox", "✔ Autosave drafts"))
        assert await status(client) == "ship=standard; billing=monthly; dark=true; notify=false; autosave=false"
        error = await fails(client, "browser_check", {"target": "#notify"}, "ELEMENT_NOT_INTERACTABLE")
        assert "browser_click" in error["recoverHint"], error
        radio = await fails(client, "browser_uncheck", {"target": "#ship-std"}, "ELEMENT_NOT_INTERACTABLE")
        assert "browser_check" in radio["recoverHint"], radio
        await act(client, "browser_click", "#notify")
        assert "notify=true" in await status(client), "the daemon keeps serving after the errors"


# --- custom selects ------------------------------------------------------------------------------------


async def test_select_picks_in_select2_react_select_aria_and_plain_dropdowns(home: BrowserdHome, site: str) -> None:
    """browser_select on the combobox an agent sees: Select2's hidden <select> is set (the widget mirrors
    it), react-select and an ARIA combobox are opened and their option clicked, and a dropdown without any
    ARIA is picked from by its visible text."""
    async with mcp_client(home) as client:
        opened = text_of(await ok(client, "browser_open", {"url": f"{site}/w-select.html"}))
        country = ref(opened, "combobox", "Pick one")
        mirrored = await act(client, "browser_select", country, labels=["Germany"])
        assert "hidden <select>" in mirrored, mirrored
        await act(client, "browser_select", ref(opened, "combobox", "Flavour"), labels=["Vanilla"])
        await act(client, "browser_select", ref(opened, "combobox", "Size"), values=["Large"])
        await act(client, "browser_select", ref(opened, "generic", "Newest"), labels=["Oldest"])
        assert await status(client) == "country=de; flavour=van; size=Large; sort=Oldest"
        shown = await snapshot(client)
        assert 'combobox "Germany"' in shown, "Select2 mirrors what was set in its <select>"


async def test_select_names_the_options_there_are_when_one_is_missing(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home) as client:
        opened = text_of(await ok(client, "browser_open", {"url": f"{site}/w-select.html"}))
        size = ref(opened, "combobox", "Size")
        error = await fails(client, "browser_select", {"target": size, "labels": ["Huge"]}, "ELEMENT_NOT_FOUND")
        assert "'Small', 'Medium', 'Large', 'Extra large'" in error["error"], error
        native = await fails(
            client,
            "browser_select",
            {"target": "#country", "labels": ["Spain"], "timeout": QUICK_MS},
            "ELEMENT_NOT_FOUND",
        )
        assert "'France', 'Germany', 'Japan'" in native["error"], native
        # The list the failed call opened shows its options, each with a ref that picks it.
        listing = await snapshot(client)
        await act(client, "browser_click", ref(listing, "option", "Small"))
        assert "size=Small" in await status(client)


# --- overlays ----------------------------------------------------------------------------------------


async def test_a_click_under_a_cookie_banner_or_modal_names_it_and_its_buttons(home: BrowserdHome, site: str) -> None:
    """A button the cookie banner covers (at the very bottom, no scroll uncovers it) and one behind a
    Bootstrap modal: the click fails soon, naming the overlay and the buttons that close it; after those
    are clicked the same refs work. A link under the sticky header is clicked (it is scrolled clear)."""
    async with mcp_client(home, args=DEVTOOLS) as client:
        opened = text_of(await ok(client, "browser_open", {"url": f"{site}/w-overlays.html"}))
        subscribe = ref(opened, "button", "Subscribe")
        banner = await fails(client, "browser_click", {"target": subscribe}, "ELEMENT_NOT_INTERACTABLE")
        assert 'region "Cookie banner"' in banner["error"], banner
        assert "'Accept All Cookies'" in banner["recoverHint"], banner
        await act(client, "browser_click", ref(opened, "button", "Accept All Cookies"))
        await act(client, "browser_click", subscribe)
        assert await status(client) == "clicked: subscribe"

        await act(client, "browser_click", ref(opened, "button", "Read the terms"))
        save = ref(opened, "button", "Save draft")
        modal = await fails(client, "browser_click", {"target": save}, "ELEMENT_NOT_INTERACTABLE")
        assert 'dialog "Terms of use"' in modal["error"] and "'Close'" in modal["recoverHint"], modal
        assert await status(client) == "clicked: subscribe", "nothing behind the modal was clicked"
        await act(client, "browser_click", ref(await snapshot(client), "button", "Close"))
        await act(client, "browser_click", save)
        assert await status(client) == "clicked: save"

        # Scrolled so that the link sits right under the sticky header: the click still reaches it.
        deals = ref(opened, "link", "Today's deals")
        under_header = "window.scrollTo(0, document.getElementById('deals').offsetTop - 20)"
        await ok(client, "browser_evaluate", {"expression": under_header})
        await act(client, "browser_click", deals)
        assert await status(client) == "clicked: deals"


# --- rich-text editors ------------------------------------------------------------------------------------


async def test_fill_and_type_reach_quill_and_prosemirror_models(home: BrowserdHome, site: str) -> None:
    """A Quill-like editor (contenteditable, no role) and a ProseMirror-like one (cancels every beforeinput
    and applies it to its own document): fill replaces, type appends, the editors' own models say so, and
    browser_get value reads an editor's text."""
    async with mcp_client(home) as client:
        opened = text_of(await ok(client, "browser_open", {"url": f"{site}/w-editors.html"}))
        quill = re.search(r"- generic \[ref=(\w+)\] \[type=rich-text\]", opened)
        assert quill, opened
        await act(client, "browser_fill", quill.group(1), value="Hello Quill")
        await act(client, "browser_type", quill.group(1), text=" and more")
        assert await status(client, "#quill-out") == 'quill: "Hello Quill and more"'

        comment = ref(opened, "textbox", "Comment")
        await act(client, "browser_fill", comment, value="First line\nSecond line")
        await act(client, "browser_type", comment, text=" typed")
        assert await status(client) == 'doc: ["First line","Second line typed"]'
        value = await ok(client, "browser_get", {"what": "value", "target": comment})
        assert value.structured_content["value"] == "First line\nSecond line typed"


# --- pickers, sliders, spinners ---------------------------------------------------------------------------


async def test_fill_sets_a_readonly_date_picker_an_aria_slider_and_a_spinner(home: BrowserdHome, site: str) -> None:
    """flatpickr's read-only input takes the date (set as its calendar would), a role=slider div is moved
    by arrow keys to the value, out-of-range values name the range, and the spinner takes a number."""
    async with mcp_client(home) as client:
        opened = text_of(await ok(client, "browser_open", {"url": f"{site}/w-pickers.html"}))
        picked = await act(client, "browser_fill", ref(opened, "textbox", "Check-in date"), value="2017-10-20")
        assert "picker" in picked, picked
        price = ref(opened, "slider", "Max price")
        moved = await act(client, "browser_fill", price, value="250")
        assert "'$250'" in moved, moved
        await act(client, "browser_fill", ref(opened, "spinbutton", "Guests"), value="4", submit=True)
        assert await status(client) == "checkin=2017-10-20; guests=4; price=250"
        outside = await fails(client, "browser_fill", {"target": price, "value": "600"}, "INVALID_PARAMETER")
        assert "from 0 to 500" in outside["error"], outside
        value = await ok(client, "browser_get", {"what": "value", "target": price})
        assert value.structured_content["value"] == "$250", "the slider is left where it was"

        # The calendar way still works: click the input, then the day.
        calendar = text_of(await ok(client, "browser_click", {"target": ref(opened, "textbox", "Check-in date")}))
        await act(client, "browser_click", ref(calendar, "generic", "October 21, 2017"))
        assert (await status(client)).startswith("checkin=2017-10-21;")


# --- menus, hover, tooltips -------------------------------------------------------------------------------


async def test_dropdowns_hover_menus_and_tooltips(home: BrowserdHome, site: str) -> None:
    """A Bootstrap dropdown whose items are javascript:void(0) links; a CSS :hover menu nested two levels
    (each level appears in the hover's delta); an open dropdown covering the menu is named as a popup;
    a tooltip on an inline trigger inside a paragraph appears when that paragraph is hovered."""
    async with mcp_client(home) as client:
        opened = text_of(await ok(client, "browser_open", {"url": f"{site}/w-menus.html"}))
        menu = text_of(await ok(client, "browser_click", {"target": ref(opened, "button", "Account")}))
        shop_link = {"target": ref(opened, "link", "Shop")}
        covered = await fails(client, "browser_hover", shop_link, "ELEMENT_NOT_INTERACTABLE")
        assert 'generic "Account"' in covered["error"] and "Escape" in covered["recoverHint"], covered
        await act(client, "browser_click", ref(menu, "link", "Sign out"))
        assert await status(client) == "menu: sign-out"

        shop = text_of(await ok(client, "browser_hover", shop_link))
        women = text_of(await ok(client, "browser_hover", {"target": ref(shop, "link", "Women")}))
        await act(client, "browser_click", ref(women, "link", "Bags"))
        assert await status(client) == "nav: women bags"

        tip = text_of(await ok(client, "browser_hover", {"target": ref(opened, "paragraph", "ⓘ Pricing")}))
        assert 'tooltip "Prices include tax"' in tip, tip
