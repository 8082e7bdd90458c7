"""A graph flow exported as a Playwright script (daemon/flows/catalogue/python_export.py): its control flow
means what the replay's walk means. The script's `run` is executed here on a graph of nodes that need no page."""

from __future__ import annotations

import socket
from typing import Any

import msgspec
import pytest

from browserd.daemon.errors import NotSupported
from browserd.daemon.flows.catalogue.python_export import playwright_script
from browserd.daemon.flows.flow_model import Flow


def node(node_id: str, kind: str, **fields: Any) -> dict[str, Any]:
    return {"id": node_id, "type": kind, **fields}


def edges(*links: str) -> list[dict[str, str]]:
    """`a>b` (next) or `a>b:label`."""
    found = []
    for link in links:
        ends, _, label = link.partition(":")
        start, end = ends.split(">")
        found.append({"from": start, "to": end, "on": label or "next"})
    return found


def closed_port() -> int:
    """A loopback port nothing listens on: a request to it fails at once."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def graph(*nodes: dict[str, Any], links: list[dict[str, str]]) -> Flow:
    flow = {"id": "flow_x", "name": "x", "variables": [{"key": "q", "default": "go"}], "nodes": nodes, "edges": links}
    return msgspec.convert(flow, Flow)


def run(flow: Flow) -> list[dict[str, Any]]:
    """Execute the script's run(page) (no node here touches the page); the rows it wrote."""
    scope: dict[str, Any] = {"__name__": "exported"}
    exec(compile(playwright_script(flow), "flow.py", "exec"), scope)
    scope["run"](None)
    return list(scope["rows"])


LOOPS = graph(
    node("w", "while", condition="${outputs.w.iteration} < 3"),
    node("t", "if", condition="${outputs.w.iteration} == 2"),
    node("mark", "datasetWrite", fields={"it": "${outputs.w.iteration}"}),
    node("each", "foreach", items='["a", "b"]', concurrency=2),
    node("row", "datasetWrite", fields={"item": "{item}", "i": "{itemIndex}"}),
    node("bad", "http", url=f"http://127.0.0.1:{closed_port()}/"),
    node("never", "datasetWrite", fields={"never": "1"}),
    node("note", "datasetWrite", fields={"err": "yes"}),
    node("fin", "datasetWrite", fields={"end": "1"}),
    node("gate", "if", condition='{q} == "stop"'),
    node("last", "datasetWrite", fields={"last": "{q}"}),
    links=edges(
        "w>t:body", "t>mark:true", "mark>w", "w>each", "each>row:body", "each>bad", "bad>never", "never>fin",
        "bad>note:onError", "note>fin", "fin>gate", "gate>last:false",
    ),
)  # fmt: skip


def test_loops_branches_and_an_on_error_way_run_as_the_replay_walks_them(monkeypatch: pytest.MonkeyPatch) -> None:
    start = [{"it": "2"}, {"item": "a", "i": "0"}, {"item": "b", "i": "1"}, {"err": "yes"}, {"end": "1"}]
    assert run(LOOPS) == [*start, {"last": "go"}]
    # An if without the way its condition takes ends the run there, as the walk does.
    monkeypatch.setenv("FLOW_Q", "stop")
    assert run(LOOPS) == start


def test_a_while_past_max_iterations_raises_and_a_subflow_is_named() -> None:
    spin = graph(
        node("spin", "while", condition="true", maxIterations=2),
        node("nap", "datasetWrite", fields={"n": "${outputs.spin.iteration}"}),
        links=edges("spin>nap:body", "nap>spin"),
    )
    with pytest.raises(RuntimeError, match="still held after 2 iterations"):
        run(spin)
    calling = graph(node("call", "subflow", flowId="flow_other"), node("x", "delay", ms=0), links=edges("call>x"))
    with pytest.raises(NotSupported, match="subflow `call`"):
        playwright_script(calling)
