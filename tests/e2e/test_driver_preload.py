"""Playwright's driver with browserd's preload (runtime/node/driver_preload.js, `[browser] driver_preload`).

The preload moves each frame's number out of the text of the script Playwright injects into a document, and
sends the script's module once per page read, for the utility world of each later document, instead of the
whole script once per navigation. What must not change is what the number is for and what the script does.
After a tab has navigated, its main frame's refs carry the frame's new number and an iframe's refs their
own, and acting on either reaches the element it names, with the preload and without it; so does a blank
popup's document, which a script wrote and no navigation made. (A document older than the page's session,
which keeps no module and gets the whole script, is also the attached tab of tests/e2e/test_cdp_attach.py.)
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from browserd.daemon.runtime.driver import PRELOAD
from browserd.daemon.runtime.procinfo import find_descendant
from tests.conftest import BrowserdHome, mcp_client
from tests.e2e.results import ok, text_of

pytestmark = pytest.mark.anyio


def _ref(text: str, role: str, name: str) -> str:
    found = re.findall(rf'\b{role} "{re.escape(name)}"[^\n]*?\[ref=(\w+)\]', text)
    assert found, f'no ref for {role} "{name}" in:\n{text}'
    return str(found[0])


def _frame_of(ref: str) -> str:
    """A ref's frame part: `f3` of `f3e5`, "" for a ref of the first document of a tab's main frame."""
    return ref[: ref.index("e")]


def _driver_environment(home: BrowserdHome) -> str:
    """The environment the daemon's Playwright driver (`node ... run-driver`) started with."""
    daemon = home.daemon_pid()
    assert daemon, "no daemon"
    driver = find_descendant(daemon, "run-driver")
    assert driver, "the daemon has no Playwright driver"
    return Path(f"/proc/{driver}/environ").read_bytes().decode(errors="replace")


def _driver_said(home: BrowserdHome) -> str:
    """What the daemon and its driver wrote to their stderr (daemon.out, beside the daemon's log)."""
    return (home.log.parent / "daemon.out").read_text(errors="replace")


async def _act_in_both_frames_after_navigations(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home) as client:
        ok(await client.call_tool("browser_open", {"url": f"{site}/form.html"}))
        ok(await client.call_tool("browser_open", {"url": f"{site}/states.html"}))
        framed = text_of(ok(await client.call_tool("browser_open", {"url": f"{site}/iframe.html"})))
        heading = _ref(framed, "heading", "Page with an iframe")
        frame_input = _ref(framed, "textbox", "Frame input")
        frame_button = _ref(framed, "button", "Frame button")
        assert _frame_of(heading), f"the main frame has navigated, so its refs carry its number: {heading}"
        assert _frame_of(frame_input) not in ("", _frame_of(heading)), (heading, frame_input)
        assert _frame_of(frame_button) == _frame_of(frame_input)

        ok(await client.call_tool("browser_fill", {"target": frame_input, "value": "inside"}))
        value = ok(await client.call_tool("browser_get", {"what": "value", "target": frame_input}))
        assert value.structured_content["value"] == "inside"
        clicked = text_of(ok(await client.call_tool("browser_click", {"target": frame_button})))
        assert "frame clicked" in clicked, clicked

        # Back in the main frame of a later document: its refs name its elements, not the frame's.
        form = text_of(ok(await client.call_tool("browser_open", {"url": f"{site}/form.html"})))
        name = _ref(form, "textbox", "Full name")
        assert _frame_of(name) not in ("", _frame_of(heading)), (heading, name)
        ok(await client.call_tool("browser_fill", {"target": name, "value": "Ada"}))
        value = ok(await client.call_tool("browser_get", {"what": "value", "target": name}))
        assert value.structured_content["value"] == "Ada"


async def test_refs_name_the_right_element_in_each_frame_after_navigations(home: BrowserdHome, site: str) -> None:
    await _act_in_both_frames_after_navigations(home, site)
    assert str(PRELOAD) in _driver_environment(home), "the driver runs with the preload by default"
    said = _driver_said(home)
    assert "coreBundle.js rewritten" in said and "left as it is" not in said, said


async def test_the_injected_scripts_module_crosses_the_pipe_once_per_tab_not_per_navigation(
    home: BrowserdHome, site: str
) -> None:
    home.env["DEBUG"] = "pw:protocol"  # the driver prints each CDP message it sends to daemon.out
    await _act_in_both_frames_after_navigations(home, site)
    sent = [line for line in _driver_said(home).splitlines() if "pw:protocol SEND" in line]
    whole = [line for line in sent if "packages/injected/src/injectedScript.ts" in line]  # the module's source
    registered = [line for line in whole if "Page.addScriptToEvaluateOnNewDocument" in line]
    utility_builds = [line for line in whole if '\\"isUtilityWorld\\":true' in line]
    from_kept = [line for line in sent if "__browserdInjectedModule" in line and len(line) < 100_000]
    # The tab's first document read builds from the whole script and sends the module for the later ones;
    # the spare blank tab the daemon keeps ready was never read, so it never got it.
    assert len(utility_builds) == 1, f"the whole script went to a utility world {len(utility_builds)} times"
    assert len(registered) == 1, f"the module was sent {len(registered)} times"
    assert len(from_kept) >= 4, f"the later documents (and the iframe) built from the kept module: {len(from_kept)}"


async def _first_click_and_hover_main_world_builds(home: BrowserdHome, site: str) -> int:
    """A click and a hover, each the first action on a fresh document, then how often the driver sent the
    whole injected script to build it in a page's main world."""
    home.env["DEBUG"] = "pw:protocol"
    async with mcp_client(home) as client:
        states = text_of(ok(await client.call_tool("browser_open", {"url": f"{site}/states.html"})))
        clicked = ok(await client.call_tool("browser_click", {"target": _ref(states, "button", "Bold")}))
        assert "bold on" in text_of(clicked)
        menu = text_of(ok(await client.call_tool("browser_open", {"url": f"{site}/hover.html"})))
        hovered = ok(await client.call_tool("browser_hover", {"target": _ref(menu, "button", "Hover me")}))
        assert 'menuitem "Hover menu item"' in text_of(hovered)
    sent = [line for line in _driver_said(home).splitlines() if "pw:protocol SEND" in line]
    return sum(1 for line in sent if "injectedScript.ts" in line and '\\"isUtilityWorld\\":false' in line)


async def test_a_documents_first_click_and_hover_build_no_script_in_its_main_world(
    home: BrowserdHome, site: str
) -> None:
    """An element handle in a main world (the end of every locator.evaluate, and a click's check that its
    element is ready) made Playwright build its whole injected script there, only to describe the element."""
    assert await _first_click_and_hover_main_world_builds(home, site) == 0


async def test_without_the_preload_a_first_click_builds_the_script_in_the_main_world(
    home: BrowserdHome, site: str
) -> None:
    home.env["BROWSERD_BROWSER_DRIVER_PRELOAD"] = "false"
    assert await _first_click_and_hover_main_world_builds(home, site) >= 1, "what the test above rules out"


async def test_a_blank_popups_written_document_is_read_and_acted_on(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home) as client:
        page = text_of(ok(await client.call_tool("browser_open", {"url": f"{site}/written-popup.html"})))
        shown = ok(await client.call_tool("browser_click", {"target": _ref(page, "button", "Show receipt")}))
        assert "receipt shown" in text_of(shown)
        (popup,) = shown.structured_content["newTabs"]
        receipt = text_of(ok(await client.call_tool("browser_snapshot", {"tabId": popup})))
        assert 'heading "Receipt 1042"' in receipt, receipt
        printed = ok(
            await client.call_tool("browser_click", {"tabId": popup, "target": _ref(receipt, "button", "Print")})
        )
        assert "receipt printed" in text_of(printed), text_of(printed)


async def test_without_the_preload_the_driver_is_playwrights_own_and_refs_behave_the_same(
    home: BrowserdHome, site: str
) -> None:
    home.env["BROWSERD_BROWSER_DRIVER_PRELOAD"] = "false"
    await _act_in_both_frames_after_navigations(home, site)
    assert str(PRELOAD) not in _driver_environment(home)
    assert "browserd driver preload" not in _driver_said(home)
