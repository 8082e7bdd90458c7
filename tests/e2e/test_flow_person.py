"""A person's own input recorded into a flow, in the user's own browser (issue 14, S4-34..S4-43, D-47).

The person is real input: the test's own Playwright drives the user's browser over its debugging port, so
its clicks, typing and keys reach the page as trusted events, as a person's do. The session records
through the extension backend (the user's Chrome with extension-bridge/) or CDP attach; the flow it stops
with is replayed by flow_run, and the page's own status line shows the effect. Page:
tests/site/person-form.html.
"""

from __future__ import annotations

import base64
import json
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from playwright.async_api import Page, async_playwright

from tests.conftest import BrowserdHome, mcp_client
from tests.e2e import bridge_chrome
from tests.e2e.results import ok, text_of
from tests.e2e.test_cdp_attach import ExternalChromium
from tests.e2e.test_flows import leaks_of, record_one

pytestmark = pytest.mark.anyio

TOOLS = ("--tools", "all")


async def _answer(client: Any, tool: str, args: dict[str, Any], answers: list[str]) -> Any:
    result = ok(await client.call_tool(tool, args))
    answers.append(text_of(result) + json.dumps(result.structured_content or {}))
    return result


async def _record_in_users_chrome(client: Any, url: str, name: str, answers: list[str]) -> None:
    """A window in the user's Chrome with `url` open, recording into a flow called `name`."""
    await _answer(client, "browser_windows", {"action": "new", "kind": "extension"}, answers)
    await _answer(client, "browser_open", {"url": url, "snapshot": "none"}, answers)
    await _answer(client, "flow_record_start", {"name": name}, answers)


@asynccontextmanager
async def _persons_tab(endpoint: str, url: str) -> AsyncIterator[Page]:
    """The session's tab as the person sees it: the same tab of the user's browser, driven by real input."""
    async with async_playwright() as playwright:
        browser = await playwright.chromium.connect_over_cdp(endpoint)
        [page] = [p for context in browser.contexts for p in context.pages if p.url == url]
        yield page
        await browser.close()


def _steps(flow: dict[str, Any]) -> list[tuple[str, str]]:
    """Each step as (type, what it acts on: the target's accessible name, the keys, or the url)."""
    return [
        (s["type"], s.get("keys") or (s.get("target") or {}).get("fingerprint", {}).get("name") or s.get("url", ""))
        for s in flow["steps"]
    ]


async def test_a_persons_clicks_typing_choices_and_keys_become_a_flow_that_replays(
    bridge_home: BrowserdHome, chrome: bridge_chrome.UserChrome, site: str
) -> None:
    password = base64.urlsafe_b64encode(secrets.token_bytes(48)).decode()  # the canary
    url = f"{site}/person-form.html"
    answers: list[str] = []
    async with mcp_client(bridge_home, args=TOOLS) as client:
        await _record_in_users_chrome(client, url, "Sign up", answers)
        async with _persons_tab(chrome.endpoint, url) as person:
            await person.click("#name-field")
            await person.keyboard.type("Ann")
            await person.click("#pw-field")
            await person.keyboard.type(password)
            await person.focus("#plan-field")
            await person.keyboard.press("ArrowDown")  # Free -> Pro, as a person picks with the keyboard
            await person.click("text=I agree to the terms")
            # The session's own click: recorded once, as its tool action, not again as the page saw it.
            await _answer(client, "browser_click", {"target": "#clear", "snapshot": "none"}, answers)
            await person.click("#pw-field")
            await person.keyboard.press("Enter")
            assert (await person.text_content("#status") or "").startswith("Signed up Ann on Pro, terms agreed")
            stopped = await _answer(client, "flow_record_stop", {}, answers)
        flow = stopped.structured_content["flow"]
        assert _steps(flow) == [
            ("click", "Name"),
            ("fill", "Name"),
            ("click", "Password"),
            ("fill", "Password"),
            ("select", "Plan"),
            ("check", "I agree to the terms"),
            ("click", "Clear status"),
            ("click", "Password"),
            ("key", "Enter"),
        ]
        fills = [s for s in flow["steps"] if s["type"] == "fill"]
        assert [s["value"] for s in fills] == ["{name}", "{password}"]
        assert json.loads(flow["steps"][4]["value"]) == {"labels": ["Pro"]}
        variables = {v["key"]: v for v in flow["variables"]}
        assert variables["password"].get("sensitive") is True and "default" not in variables["password"]
        assert "default" not in variables["name"], "a typed value was kept without keep-non-sensitive-values"

        # Replay with other values, on the page as it loads afresh: the page's status line shows them.
        await _answer(client, "browser_open", {"url": url, "snapshot": "none"}, answers)
        args = {"name": "Bea", "password": password[:20]}
        run = await _answer(client, "flow_run", {"flowId": stopped.structured_content["flowId"], "args": args}, answers)
        assert run.structured_content["status"] == "succeeded", json.dumps(run.structured_content)[:1500]
        status = await _answer(client, "browser_get", {"what": "text", "target": "#status"}, answers)
        assert status.structured_content["value"] == ("Signed up Bea on Pro, terms agreed, password of 20 characters")
    # The person typed the password: it is in no file of the daemon's (flows, sqlite and its WAL, logs) nor
    # in any answer, in any encoding.
    leaks = leaks_of(password, bridge_home.root, answers)
    assert not leaks, f"the person's password leaked: {leaks}"


async def test_a_persons_navigations_scrolling_and_shortcuts_are_steps_but_a_links_load_is_not(
    bridge_home: BrowserdHome, chrome: bridge_chrome.UserChrome, site: str
) -> None:
    answers: list[str] = []
    start, scrolling = f"{site}/help.html?person", f"{site}/scroll.html"
    async with mcp_client(bridge_home, args=TOOLS) as client:
        await _record_in_users_chrome(client, start, "Browse", answers)
        async with _persons_tab(chrome.endpoint, start) as person:
            await person.goto(scrolling)  # typed into the address bar
            await person.hover("text=Inner item 1")
            await person.mouse.wheel(0, 300)
            await person.wait_for_function("document.querySelector('[aria-label=\"Inner scroller\"]').scrollTop > 0")
            await person.keyboard.press("Control+k")
            await person.go_back(wait_until="commit")  # the user's Chrome may restore it from its back-forward cache
            await person.wait_for_url(start, wait_until="commit")
            await person.click("text=Back to the index")  # its load is the click's doing: no step of its own
            await person.wait_for_url(f"{site}/index.html")
            stopped = await _answer(client, "flow_record_stop", {}, answers)
        flow = stopped.structured_content["flow"]
        steps = _steps(flow)
        scrolls = [s for s in flow["steps"] if s["type"] == "scroll"]
        assert steps == [
            ("navigate", scrolling),
            *[("scroll", "Inner scroller")] * len(scrolls),
            ("key", "Control+k"),
            ("navigate", "history:back"),
            ("click", "Back to the index"),
        ], steps
        assert scrolls and sum(s["delta"][1] for s in scrolls) > 0
        assert flow["meta"]["startUrl"] == scrolling  # the flow opens it itself
        # Replayed from the start page, it ends where the person did.
        await _answer(client, "browser_open", {"url": start, "snapshot": "none"}, answers)
        run = await _answer(client, "flow_run", {"flowId": stopped.structured_content["flowId"]}, answers)
        assert run.structured_content["status"] == "succeeded", json.dumps(run.structured_content)[:1500]
        assert run.structured_content["url"] == f"{site}/index.html"


async def test_an_on_page_trigger_runs_in_the_bridged_tab_where_the_person_loaded_a_matching_page(
    bridge_home: BrowserdHome, chrome: bridge_chrome.UserChrome, site: str
) -> None:
    answers: list[str] = []
    async with mcp_client(bridge_home, args=TOOLS) as client:
        await _answer(client, "browser_windows", {"action": "new", "kind": "extension"}, answers)
        flow = await record_one(client, f"{site}/person-form.html", "browser_click", {"target": "#clear"})
        trigger = {"action": "add", "flowId": flow["flowId"], "onPage": "**/person-form.html?trigger=*"}
        schedule = (await _answer(client, "flow_schedule", trigger, answers)).structured_content
        async with _persons_tab(chrome.endpoint, f"{site}/person-form.html") as person:
            await person.goto(f"{site}/person-form.html?other=1")
            await person.goto(f"{site}/person-form.html?trigger=1")  # the person's own load, in the session's tab
            # The flow runs in this very tab once the page has loaded: the page's status line shows its click.
            await person.wait_for_function("document.getElementById('status').textContent === 'Cleared'")
        await _answer(client, "flow_schedule", {"action": "remove", "scheduleId": schedule["scheduleId"]}, answers)


async def test_a_persons_input_is_recorded_on_cdp_attach_too(
    home: BrowserdHome, site: str, chromium: ExternalChromium
) -> None:
    url = f"{site}/person-form.html?attached"
    answers: list[str] = []
    async with mcp_client(home, args=TOOLS) as client:
        await _answer(client, "browser_connect_cdp", {"endpoint": chromium.endpoint}, answers)
        await _answer(client, "browser_open", {"url": url, "snapshot": "none"}, answers)
        await _answer(client, "flow_record_start", {"name": "Attached"}, answers)
        async with _persons_tab(chromium.endpoint, url) as person:
            # The session fills Name; the page sees that typing too, and reports it once the person moves on.
            fill = {"target": "#name-field", "value": "Zed", "snapshot": "none"}
            await _answer(client, "browser_fill", fill, answers)
            await person.click("#pw-field")
            await person.keyboard.type("pw")
            await person.keyboard.press("Enter")
            assert (await person.text_content("#status") or "").startswith("Signed up Zed")
            stopped = await _answer(client, "flow_record_stop", {}, answers)
        steps = _steps(stopped.structured_content["flow"])
        assert steps == [("fill", "Name"), ("click", "Password"), ("fill", "Password"), ("key", "Enter")]

        # In an iframe, with the recording stopped while the person is still in the field: the edit is kept.
        framed = f"{site}/iframe.html?attached"
        await _answer(client, "browser_open", {"url": framed, "snapshot": "none"}, answers)
        await _answer(client, "flow_record_start", {"name": "Framed"}, answers)
        async with _persons_tab(chromium.endpoint, framed) as person:
            await person.frame_locator("iframe").get_by_label("Frame input").click()
            await person.keyboard.type("inside")
            stopped = await _answer(client, "flow_record_stop", {}, answers)
        flow = stopped.structured_content["flow"]
        assert _steps(flow) == [("click", "Frame input"), ("fill", "Frame input")]
        assert flow["steps"][1]["target"]["frame"] == ["iframe:nth-of-type(1)"]


async def _drag(person: Page, source: str, drop: str, below: bool) -> None:
    """A person's drag with the mouse: press on the source, move in small steps, release on the drop target's
    lower (or upper) part."""
    # The window may be short: the source in its middle, the nearby drop target in view too.
    await person.locator(source).evaluate("el => el.scrollIntoView({block: 'center'})")
    start, end = await person.locator(source).bounding_box(), await person.locator(drop).bounding_box()
    assert start is not None and end is not None
    await person.mouse.move(start["x"] + start["width"] / 2, start["y"] + start["height"] / 2)
    await person.mouse.down()
    await person.mouse.move(end["x"] + end["width"] / 2, end["y"] + end["height"] * (0.8 if below else 0.2), steps=12)
    await person.mouse.up()


async def test_a_persons_drags_html5_and_pointer_sortables_become_drag_steps_that_replay_the_same_order(
    bridge_home: BrowserdHome, chrome: bridge_chrome.UserChrome, site: str
) -> None:
    url = f"{site}/w-sortable.html"
    lists = {"target": "main", "what": "text"}
    answers: list[str] = []
    async with mcp_client(bridge_home, args=TOOLS) as client:
        await _record_in_users_chrome(client, url, "Reorder", answers)
        async with _persons_tab(chrome.endpoint, url) as person:
            await _drag(person, "#html5 li >> text=Alpha task", "#html5 li >> text=Charlie task", below=True)
            await person.wait_for_function("document.getElementById('status').textContent.startsWith('html5:')")
            await _drag(person, "#pointer li >> text=Song four", "#pointer li >> text=Song two", below=False)
            await person.wait_for_function("document.getElementById('status').textContent.startsWith('pointer:')")
            await person.click("#pointer li >> text=Song one")  # a plain click stays a click
            stopped = await _answer(client, "flow_record_stop", {}, answers)
            recorded = (await _answer(client, "browser_get", lists, answers)).structured_content["value"]
        assert "Bravo task Charlie task Alpha task Delta task" in " ".join(recorded.split())
        assert "Song one Song four Song two Song three" in " ".join(recorded.split())
        flow = stopped.structured_content["flow"]
        assert _steps(flow) == [("drag", "Alpha task"), ("drag", "Song four"), ("click", "Song one")]
        for step, drop in zip(flow["steps"][:2], ("Charlie task", "Song two"), strict=True):
            assert step["end"]["fingerprint"]["name"] == drop
            assert len(step["path"]) >= 2 and all(len(point) == 3 for point in step["path"])

        # Replayed on the page as it loads afresh, the lists end in the same order the person left them.
        await _answer(client, "browser_open", {"url": url, "snapshot": "none"}, answers)
        run = await _answer(client, "flow_run", {"flowId": stopped.structured_content["flowId"]}, answers)
        assert run.structured_content["status"] == "succeeded", json.dumps(run.structured_content)[:1500]
        replayed = (await _answer(client, "browser_get", lists, answers)).structured_content["value"]
        assert replayed == recorded


async def test_a_persons_drag_onto_a_drop_zone_replays_as_the_same_drop(
    bridge_home: BrowserdHome, chrome: bridge_chrome.UserChrome, site: str
) -> None:
    url = f"{site}/drag.html"
    status = {"target": "#status", "what": "text"}
    answers: list[str] = []
    async with mcp_client(bridge_home, args=TOOLS) as client:
        await _record_in_users_chrome(client, url, "Drop", answers)
        async with _persons_tab(chrome.endpoint, url) as person:
            await person.click("#item")  # pressed and released in place: a click, not a drag
            await _drag(person, "#item", "#zone", below=False)
            await person.wait_for_function("document.getElementById('status').textContent === 'dropped: item'")
            stopped = await _answer(client, "flow_record_stop", {}, answers)
        flow = stopped.structured_content["flow"]
        assert _steps(flow) == [("click", "Drag me"), ("drag", "Drag me")]
        assert flow["steps"][1]["end"]["fingerprint"]["name"] == "Drop zone"
        await _answer(client, "browser_open", {"url": url, "snapshot": "none"}, answers)
        assert (await _answer(client, "browser_get", status, answers)).structured_content["value"] == ""
        run = await _answer(client, "flow_run", {"flowId": stopped.structured_content["flowId"]}, answers)
        assert run.structured_content["status"] == "succeeded", json.dumps(run.structured_content)[:1500]
        assert (await _answer(client, "browser_get", status, answers)).structured_content["value"] == "dropped: item"
