"""Scripts of a model doing the agent tasks of tests/site (tests/e2e/test_agent.py, tests/bench/agent.py): each
reads what the daemon sent (snapshots, results) and answers the next tool call, as a model would."""

from __future__ import annotations

import re
from typing import Any

from tests.llm_server import Turn, call


def sign_in(turn: Turn) -> dict[str, Any]:
    done = len(turn.tool_results())
    if done == 0:
        return call("fill", ref=turn.ref(r'textbox "User name"'), value="ada", reason="type the user name")
    if done == 1:
        return call("fill", ref=turn.ref(r'textbox "Password"'), arg="password", reason="type the password")
    if done == 2:
        return call("click", ref=turn.ref(r'button "Log in"'), reason="log in")
    welcome = re.search(r"Welcome back, (\w+)\.", turn.last)
    assert welcome, f"the members page shows the name:\n{turn.last}"
    return call("done", answer={"member": welcome.group(1)}, reason="read the member's name")


# A table row in the snapshot: its name cell's line, then its price cell's.
ROW = re.compile(r'cell "([A-Za-z ]+)".*\n\s*- cell "([0-9.]+)"')


def rows_seen(turn: Turn) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for text in turn.tool_results():
        for name, price in ROW.findall(text):
            if {"name": name, "price": float(price)} not in rows:
                rows.append({"name": name, "price": float(price)})
    return rows


def search_and_page(turn: Turn) -> dict[str, Any]:
    if not turn.tool_results():
        return call("fill", ref=turn.ref(r'textbox "Search products"'), value="teapot", submit=True, reason="search")
    last = turn.tool_results()[-1]
    if last == "Noted.":
        if '- link "Next page"' in turn.tool_results()[-2]:
            return call("click", ref=turn.ref(r'link "Next page"'), reason="next page of results")
        return call("done", answer=rows_seen(turn), reason="all pages read")
    return call("note", data=rows_seen(turn), reason="keep the rows")


def compare_in_tabs(turn: Turn) -> dict[str, Any]:
    results = turn.tool_results()
    if not results:
        other = re.search(r"Also: (\S+)", turn.messages[1]["content"])
        assert other, turn.messages[1]["content"]
        return call("tabs", action="new", url=other.group(1), reason="open B")
    prices = re.findall(
        r"heading \"(Teapot \w+)\".*?Price: \$([0-9.]+)", "\n".join(m.get("content") or "" for m in turn.messages), re.S
    )
    cheaper = min(prices, key=lambda pair: float(pair[1]))
    return call(
        "done", answer={"cheaper": cheaper[0], "prices": {name: float(p) for name, p in prices}}, reason="compare"
    )
