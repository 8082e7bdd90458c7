"""A flow recorded through the browser tools on widget libraries replays through the same element helpers
(issue 21 item 6): a date picker's own setter, a slider's arrow keys, the <select> Select2 mirrors, the label
a theme draws over its checkbox. Pages: tests/site/w-pickers.html, w-select.html, w-checks.html; every
assertion reads what the page itself reports (its status line, made from its form's data), read by the
flow's own extract steps on the replayed pages.

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


async def read_status(client: Any) -> None:
    """Read the page's status line: recorded as an extract step, whose replay puts it in the run's outputs."""
    await call(client, "browser_get", {"what": "text", "target": "#status"})


async def test_a_flow_recorded_on_widget_libraries_replays_through_their_own_setters(
    home: BrowserdHome, site: str
) -> None:
    async with mcp_client(home, args=("--tools", "all")) as client:
        await call(client, "flow_record_start", {"name": "Book, pick a country, subscribe"})
        pickers = await opened(client, f"{site}/w-pickers.html")
        # flatpickr (a read-only input set with the events it listens to), flatpickr with altInput (only its own
        # setter writes the hidden field the form sends), an ARIA slider (moved by arrow keys).
        await act(client, "browser_fill", ref(pickers, "textbox", "Check-in date"), value="2017-10-20")
        await act(client, "browser_fill", ref(pickers, "textbox", "Check-out date"), value="10/22/2017")
        await act(client, "browser_fill", ref(pickers, "slider", "Max price"), value="250")
        await read_status(client)
        # Select2: a combobox drawn over the hidden <select> the form sends.
        select = await opened(client, f"{site}/w-select.html")
        await act(client, "browser_select", ref(select, "combobox", "Pick one"), labels=["Germany"])
        await read_status(client)
        # Bootstrap's custom checkbox: the input sits at opacity 0 under the label that draws the box.
        checks = await opened(client, f"{site}/w-checks.html")
        await act(client, "browser_check", ref(checks, "checkbox", "Send me the newsletter"))
        await read_status(client)
        recorded = (await call(client, "flow_record_stop", {"save": True})).structured_content

        flow = recorded["flow"]
        setters = {step["id"]: step.get("setter") for step in flow["steps"]}
        assert [setters[s] for s in ("s2", "s3", "s4", "s7")] == ["picker", "flatpickr", "keys", "mirror"], flow
        keys = [variable["key"] for variable in flow["variables"]]
        assert len(keys) == 3, keys

        # Replayed in a fresh tab with other values: each page's own form shows them.
        args = dict(zip(keys, ["2018-03-04", "March 9 2018", "400"], strict=True))
        run = {"flowId": recorded["flowId"], "args": args, "tabTarget": "new", "stepTimeoutMs": QUICK_MS}
        result = await call(client, "flow_run", run)
        answer = result.structured_content
        assert answer["status"] == "succeeded", text_of(result)
        outputs = answer["outputs"]
        assert outputs["s5"]["text"] == "checkin=2018-03-04; checkout=2018-03-09; guests=2; price=400", outputs
        assert outputs["s8"]["text"] == "country=de; flavour=; size=Medium; sort=Newest", outputs
        assert outputs["s11"]["text"].startswith("newsletter=on; ship=standard;"), outputs
        replayed = {step["stepId"]: step.get("setter") for step in answer["steps"]}
        assert [replayed[s] for s in ("s2", "s3", "s4", "s7")] == ["picker", "flatpickr", "keys", "mirror"], answer


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
