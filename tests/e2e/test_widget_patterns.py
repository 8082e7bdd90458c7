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
        # The display:none inputs are not in the snapshot: their paragraph (or a selector) stands for them. A
        # paragraph's line shows no ref (prose costs no ref's characters); browser_find names it.
        found = await client.call_tool("browser_find", {"text": "I agree to the terms"})
        paragraph = [m["ref"] for m in found.structured_content["matches"] if m["role"] == "paragraph"]
        assert paragraph, text_of(found)
        await act(client, "browser_check", paragraph[0])
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
        # A click on a Bootstrap checkbox's ref (covered by its label) ticks it as browser_check does.
        clicked = await act(client, "browser_click", ref(opened, "checkbox", "Send me the newsletter"))
        assert "label was clicked" in clicked, clicked
        assert (await status(client)).startswith("newsletter=on;")
        # The same by a CSS selector, which names no role: found out once the label is seen covering it.
        by_selector = await act(client, "browser_click", "#ship-exp")
        assert "label was clicked" in by_selector, by_selector
        assert "ship=express" in await status(client)


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

        # An autocomplete lists options only for what is typed: the label is typed, then its option picked.
        fruit = text_of(await ok(client, "browser_open", {"url": f"{site}/autocomplete.html"}))
        await act(client, "browser_select", ref(fruit, "combobox", "Search fruit"), labels=["Blueberry"])
        assert await status(client) == "Selected: Blueberry"


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
    """flatpickr's read-only input takes the date (set as its calendar would); with altInput, the date goes
    through the picker's own setter, so the hidden field the form sends holds it too; a role=slider div is
    moved by arrow keys to the value, out-of-range values name the range, and the spinner takes a number."""
    async with mcp_client(home) as client:
        opened = text_of(await ok(client, "browser_open", {"url": f"{site}/w-pickers.html"}))
        picked = await act(client, "browser_fill", ref(opened, "textbox", "Check-in date"), value="2017-10-20")
        assert "picker" in picked, picked
        checkout = await act(client, "browser_fill", ref(opened, "textbox", "Check-out date"), value="10/22/2017")
        assert "flatpickr date picker" in checkout and "'October 22, 2017'" in checkout, checkout
        price = ref(opened, "slider", "Max price")
        moved = await act(client, "browser_fill", price, value="250")
        assert "'$250'" in moved, moved
        await act(client, "browser_fill", ref(opened, "spinbutton", "Guests"), value="4", submit=True)
        assert await status(client) == "checkin=2017-10-20; checkout=2017-10-22; guests=4; price=250"
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


# --- lists that frameworks render anew, feeds, virtual lists -----------------------------------------------


async def test_refs_survive_a_list_rendered_anew_after_every_change(home: BrowserdHome, site: str) -> None:
    """A React-like list replaces every node on each change: refs from the first snapshot still reach
    the element now bearing the same role and name, a check reports the list re-rendered, and a ref
    whose element has no twin any more is a clear error."""
    async with mcp_client(home) as client:
        opened = text_of(await ok(client, "browser_open", {"url": f"{site}/w-lists.html"}))
        checked = await act(client, "browser_check", ref(opened, "checkbox", "Walk dog"))
        assert "rendered it anew" in checked, checked
        await act(client, "browser_check", ref(opened, "checkbox", "Buy milk"))
        assert await status(client) == "done: Buy milk, Walk dog"
        moved = await act(client, "browser_click", ref(opened, "button", "Move Write report up"))
        assert "rendered anew" in moved, moved
        await act(client, "browser_click", ref(opened, "button", "Delete Walk dog"))
        assert await status(client) == "left: Buy milk, Write report"
        delete_walk = {"target": ref(opened, "button", "Delete Walk dog")}
        gone = await fails(client, "browser_click", delete_walk, "ELEMENT_NOT_FOUND", "REF_NOT_FOUND")
        assert "browser_snapshot" in gone["recoverHint"], gone


async def test_wheel_over_a_feed_or_virtual_list_brings_its_items(home: BrowserdHome, site: str) -> None:
    """browser_scroll with a target and a delta wheels over that box: an infinite feed fetches its next
    page (in the answer's delta), a virtual list renders rows it did not have, and their refs act."""
    async with mcp_client(home) as client:
        opened = text_of(await ok(client, "browser_open", {"url": f"{site}/w-lists.html"}))
        assert "Like post 6" not in opened and "Contact 30" not in opened
        feed = text_of(await ok(client, "browser_scroll", {"target": ref(opened, "feed", "Feed"), "deltaY": 400}))
        await act(client, "browser_click", ref(feed, "button", "Like post 6"))
        assert await status(client) == "liked post 6"
        rows = text_of(await ok(client, "browser_scroll", {"target": ref(opened, "list", "Contacts"), "deltaY": 600}))
        assert "is now at 0,600" in rows, rows
        await act(client, "browser_click", ref(rows, "button", "Contact 22"))
        assert await status(client) == "opened contact 22"


# --- web components, plain elements with handlers, a cross-origin frame ------------------------------------


async def test_shadow_roots_handler_elements_and_a_cross_origin_frame(
    home: BrowserdHome, site: str, other_origin: str
) -> None:
    """Shoelace-like components (input and button in open shadow roots), a div card with onclick, a span
    role=button worked by Enter, a javascript:void(0) link, and a payment form in a frame from another
    origin: each ref from the one snapshot acts, and the page (or the frame) says so."""
    async with mcp_client(home) as client:
        url = f"{site}/w-components.html?frame={other_origin}"
        opened = text_of(await ok(client, "browser_open", {"url": url}))
        await act(client, "browser_fill", ref(opened, "textbox", "Coupon code"), value="SAVE10")
        await act(client, "browser_click", ref(opened, "button", "Apply coupon"))
        assert await status(client) == "coupon: SAVE10"
        card = re.search(r"- generic \[ref=(\w+)\] \[cursor=pointer\]:\n\s+- strong: Premium plan", opened)
        assert card, opened
        await act(client, "browser_click", card.group(1))
        assert await status(client) == "card: Premium plan"
        await ok(client, "browser_press", {"target": ref(opened, "button", "Load more results"), "key": "Enter"})
        assert await status(client) == "span button pressed"
        await act(client, "browser_click", ref(opened, "link", "Show details"))
        assert await status(client) == "details shown"

        # Inside a closed shadow root nothing reaches: the error names the host and what does work.
        missing = {"target": "x-rating button", "timeout": 1000}
        hidden = await fails(client, "browser_click", missing, "ELEMENT_NOT_FOUND")
        assert '<x-rating id="stars">' in hidden["error"] and "browser_press" in hidden["recoverHint"], hidden
        await act(client, "browser_click", "#stars", position={"x": 100, "y": 8})
        assert await status(client) == "rated 3"

        assert re.search(r"ref=f\d+e\d+", opened), "the cross-origin frame's content is in the snapshot"
        await act(client, "browser_fill", ref(opened, "textbox", "Card holder"), value="Ada Lovelace")
        await act(client, "browser_check", ref(opened, "checkbox", "Save card"))
        await act(client, "browser_select", ref(opened, "combobox", "Card brand"), labels=["Visa"])
        # The frame tells the page by postMessage, from another process: the click's answer already shows it.
        paid = "paid by Ada Lovelace visa save=on from other origin"
        assert paid in text_of(await ok(client, "browser_click", {"target": ref(opened, "button", "Pay now")}))
        assert await status(client) == paid


async def test_a_click_in_a_cross_origin_frame_answers_with_what_the_frame_told_the_page(
    home: BrowserdHome, site: str, other_origin: str
) -> None:
    """A widget from another origin tells its page by postMessage once its own request or timer is done,
    and the page may fetch again before it shows anything: the click's answer (its delta) and the very
    next read already show the page's change, every time."""
    async with mcp_client(home) as client:
        opened = text_of(await ok(client, "browser_open", {"url": f"{site}/w-frameorder.html?frame={other_origin}"}))
        assert re.search(r"ref=f\d+e\d+", opened), opened
        buttons = [ref(opened, "button", name) for name in ("Place order", "Place order later", "Place verified order")]
        count = 0
        for _round in range(3):
            for button, said in zip(buttons, ("placed", "placed", "verified"), strict=True):
                count += 1
                answer = text_of(await ok(client, "browser_click", {"target": button}))
                expected = f"order #{count} x1 {said}"
                assert expected in answer, f"click {count}:\n{answer}"
                assert await status(client) == expected
        assert "verified #9 x1" in await status(client, "#receipt")
        # The frame loads a new document and that one tells the page: the frame's load is waited for first.
        answer = text_of(await ok(client, "browser_click", {"target": ref(opened, "button", "Confirm with the bank")}))
        assert "order by the bank placed" in answer, answer

        # One frame deeper: the widget tells the checkout frame, which fetches and then tells the page.
        opened = text_of(await ok(client, "browser_open", {"url": f"{site}/w-framenest.html?frame={other_origin}"}))
        answer = text_of(await ok(client, "browser_click", {"target": ref(opened, "button", "Place verified order")}))
        assert "checkout says: order #1 x1 verified" in answer, answer


# --- sortable lists ----------------------------------------------------------------------------------------


async def test_drag_reorders_html5_and_pointer_event_sortables_both_ways(home: BrowserdHome, site: str) -> None:
    """An item dragged onto another takes its place, down or up, in an HTML5 drag-and-drop list and in a
    pointer-event list that starts a drag only after the pointer has moved 5 px; a target below the
    window is scrolled to during the drag."""
    async with mcp_client(home) as client:
        opened = text_of(await ok(client, "browser_open", {"url": f"{site}/w-sortable.html"}))

        async def drag(source: str, target: str) -> None:
            await ok(client, "browser_drag", {"source": source, "target": target, "snapshot": "none"})

        alpha, charlie = ref(opened, "listitem", "Alpha task"), ref(opened, "listitem", "Charlie task")
        await drag(alpha, charlie)
        assert await status(client) == "html5: Bravo task, Charlie task, Alpha task, Delta task"
        await drag(ref(opened, "listitem", "Delta task"), ref(opened, "listitem", "Bravo task"))
        assert await status(client) == "html5: Delta task, Bravo task, Charlie task, Alpha task"

        one, three = ref(opened, "button", "Song one"), ref(opened, "button", "Song three")
        await drag(one, three)
        assert await status(client) == "pointer: Song two, Song three, Song one, Song four"
        await drag(ref(opened, "button", "Song four"), ref(opened, "button", "Song two"))
        assert await status(client) == "pointer: Song four, Song two, Song three, Song one"

        # A drop target beyond the window is scrolled to with the card held, as a person wheels mid-drag.
        card, far = ref(opened, "listitem", "Write docs"), ref(opened, "list", "Done")
        await drag(card, far)
        assert await status(client) == "done: Ship it, Write docs"
