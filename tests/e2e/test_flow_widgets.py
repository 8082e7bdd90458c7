"""A flow recorded through the browser tools on widget libraries replays through the same element helpers
(issue 21 item 6): a date picker's own setter, a slider's arrow keys, the <select> Select2 mirrors, the label
a theme draws over its checkbox. Pages: tests/site/w-pickers.html, w-select.html, w-checks.html; every
assertion reads what the page itself reports (its status line, made from its form's data), read by the
flow's own extract step on the replayed page.

Stored flows of earlier shapes (schema 1, steps without a setter) still replay: tests/e2e/old_flows/.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import BrowserdHome, mcp_client
from tests.e2e.results import ok, text_of
from tests.e2e.test_actions import ref

pytestmark = [pytest.mark.anyio, pytest.mark.shared_daemon]

QUICK_MS = 5_000  # a step's limit; never an asserted duration
OLD_FLOWS = Path(__file__).parent / "old_flows"


async def call(client: Any, tool: str, args: dict[str, Any]) -> Any:
    return ok(await client.call_tool(tool, args))


async def opened(client: Any, url: str) -> str:
    return text_of(await call(client, "browser_open", {"url": url}))


async def act(client: Any, tool: str, target: str, **args: Any) -> None:
    await call(client, tool, {"target": target, "snapshot": "none", **args})


# (page, tool, the target's role and name, the recorded arguments, the replayed value (None: the choice
# itself is replayed), what the page's form shows after the replay, the setter recorded and replayed).
WIDGETS = {
    "flatpickr with altInput": (
        "w-pickers.html", "browser_fill", ("textbox", "Check-out date"), {"value": "10/22/2017"}, "March 9 2018",
        "checkout=2018-03-09", "flatpickr",
    ),
    "read-only picker input": (
        "w-pickers.html", "browser_fill", ("textbox", "Check-in date"), {"value": "2017-10-20"}, "2018-03-04",
        "checkin=2018-03-04", "picker",
    ),
    "ARIA slider": (
        "w-pickers.html", "browser_fill", ("slider", "Max price"), {"value": "250"}, "400", "price=400", "keys",
    ),
    "Select2": (
        "w-select.html", "browser_select", ("combobox", "Pick one"), {"labels": ["Germany"]}, None, "country=de",
        "mirror",
    ),
    "checkbox under its label": (
        "w-checks.html", "browser_check", ("checkbox", "Send me the newsletter"), {}, None, "newsletter=on", "label",
    ),
}  # fmt: skip


@pytest.mark.parametrize("widget", list(WIDGETS))
async def test_a_flow_recorded_on_a_widget_library_replays_through_its_setter(
    home: BrowserdHome, site: str, widget: str
) -> None:
    """Record [open the page, act through the tool, read the page's status line]; replay in a fresh tab (with
    another value, for a fill): the page's own form shows what the replay did."""
    page, tool, (role, name), recorded_args, replayed_value, shows, setter = WIDGETS[widget]
    async with mcp_client(home, args=("--tools", "all")) as client:
        await call(client, "flow_record_start", {"name": widget})
        snapshot = await opened(client, f"{site}/{page}")
        await act(client, tool, ref(snapshot, role, name), **recorded_args)
        await call(client, "browser_get", {"what": "text", "target": "#status"})
        recorded = (await call(client, "flow_record_stop", {"save": True})).structured_content
        flow = recorded["flow"]
        assert flow["steps"][1].get("setter") == setter, flow["steps"][1]

        args = {variable["key"]: replayed_value for variable in flow["variables"]}
        run = {"flowId": recorded["flowId"], "args": args, "tabTarget": "new", "stepTimeoutMs": QUICK_MS}
        result = await call(client, "flow_run", run)
        answer = result.structured_content
        assert answer["status"] == "succeeded", text_of(result)
        assert shows in answer["outputs"]["s3"]["text"], answer["outputs"]
        assert answer["steps"][1].get("setter") == setter, answer["steps"][1]


async def test_a_picker_fill_recorded_through_its_setter_stops_where_the_page_offers_none(
    home: BrowserdHome, site: str
) -> None:
    """The page the flow replays on has lost its flatpickr instance: the step fails naming the setter it was
    recorded through, rather than leaving the hidden field the form sends empty without a word."""
    async with mcp_client(home, args=("--tools", "all")) as client:
        await call(client, "browser_open", {"url": f"{site}/w-pickers.html", "snapshot": "none"})
        await call(client, "flow_record_start", {"name": "check-out"})
        await act(client, "browser_fill", "#checkout-alt", value="10/22/2017")
        recorded = (await call(client, "flow_record_stop", {"save": True})).structured_content
        key = recorded["flow"]["variables"][0]["key"]
        run = {
            "flowId": recorded["flowId"],
            "args": {key: "March 9 2018"},
            "startUrl": f"{site}/w-pickers.html?v=nopicker",
            "stepTimeoutMs": QUICK_MS,
        }
        answer = (await call(client, "flow_run", run)).structured_content
        assert answer["status"] == "failed", answer
        step = answer["steps"][0]
        assert "flatpickr date picker's own setter" in step["message"], step
        assert step["details"]["recorded"] == "flatpickr" and step["details"]["replayed"] == "picker", step


async def test_a_flow_stored_in_an_earlier_shape_still_replays(home: BrowserdHome, site: str) -> None:
    """A schema-1 file (no nodes or edges; steps without a setter), as a browserd before typed recorded
    actions stored it: it loads, replays through the element helpers, and stays on disk as it was."""
    stored = (OLD_FLOWS / "schema1_sign_in.json").read_text()
    flows = Path(home.env["XDG_DATA_HOME"]) / "browserd" / "flows"
    flows.mkdir(parents=True, exist_ok=True)
    path = flows / f"{json.loads(stored)['id']}.json"
    path.write_text(stored)
    async with mcp_client(home, args=("--tools", "all")) as client:
        got = (await call(client, "flow_get", {"flowId": "flow_schema1form"})).structured_content
        assert [step["type"] for step in got["steps"]] == ["fill", "fill", "click"], got
        args = {"email": "ann@example.test", "password": "pw-not-secret"}
        url = f"{site}/flow-form.html"
        run = {"flowId": "flow_schema1form", "args": args, "startUrl": url, "stepTimeoutMs": QUICK_MS}
        result = await call(client, "flow_run", run)
        assert result.structured_content["status"] == "succeeded", text_of(result)
        log = text_of(await call(client, "browser_get", {"what": "text", "target": "#log"}))
        assert [line for line in log.splitlines() if ":" in line] == ["input:email", "input:password", "click:signin"]
    assert path.read_text() == stored, "replaying an old flow does not rewrite the file the user saved"


async def test_a_recorded_click_on_a_checkbox_under_its_label_replays_through_the_label(
    home: BrowserdHome, site: str
) -> None:
    """browser_click on a checkbox a theme hides under its label clicks the label; the recorded click step
    replays the same way (elements/clicking.py), where a click on the element itself fails as covered."""
    async with mcp_client(home, args=("--tools", "all")) as client:
        await call(client, "flow_record_start", {"name": "newsletter click"})
        snapshot = await opened(client, f"{site}/w-checks.html")
        await act(client, "browser_click", ref(snapshot, "checkbox", "Send me the newsletter"))
        await call(client, "browser_get", {"what": "text", "target": "#status"})
        recorded = (await call(client, "flow_record_stop", {"save": True})).structured_content
        assert recorded["flow"]["steps"][1]["type"] == "click", recorded["flow"]["steps"]

        run = {"flowId": recorded["flowId"], "tabTarget": "new", "stepTimeoutMs": QUICK_MS}
        result = await call(client, "flow_run", run)
        answer = result.structured_content
        assert answer["status"] == "succeeded", text_of(result)
        assert "newsletter=on" in answer["outputs"]["s3"]["text"], answer["outputs"]


async def test_a_replay_leaves_no_mark_on_the_page(home: BrowserdHome, site: str) -> None:
    """Replay marks the element a step acts on, for the element helpers to find it alone; the page keeps no
    mark after the run (a later recording or the page's own scripts would see it)."""
    async with mcp_client(home, args=("--tools", "all")) as client:
        await call(client, "browser_open", {"url": f"{site}/flow-form.html", "snapshot": "none"})
        await call(client, "flow_record_start", {"name": "fill only"})
        await act(client, "browser_fill", "#email-field", value="a@b.c")
        await act(client, "browser_fill", "#pw-field", value="pw")
        recorded = (await call(client, "flow_record_stop", {"save": True})).structured_content
        args = {variable["key"]: "x@y.z" for variable in recorded["flow"]["variables"]}
        run = {"flowId": recorded["flowId"], "args": args, "stepTimeoutMs": QUICK_MS}
        result = await call(client, "flow_run", {**run, "startUrl": f"{site}/flow-form.html"})
        assert result.structured_content["status"] == "succeeded", text_of(result)
        marks = "document.querySelectorAll('[data-browserd-step]').length"
        left = await call(client, "browser_evaluate", {"expression": marks})
        assert left.structured_content["result"] == 0, text_of(left)
        value = await call(client, "browser_get", {"what": "value", "target": "#pw-field"})
        assert "x@y.z" in text_of(value)
