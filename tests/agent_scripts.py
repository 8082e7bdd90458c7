"""Scripts of a model doing the agent tasks of tests/site (tests/e2e/test_agent.py, tests/bench/agent.py): each
reads what the daemon sent (snapshots, `read` results) and answers the next tool call, as a model would.

They work on interactive snapshots (the agent's, which show what can be acted on: the script calls `read`
for the page's text) and on full ones (a plain loop's, where the text is already there)."""

from __future__ import annotations

import re
from typing import Any

from tests.llm_server import Turn, call

READ = "Main content of "
NOTED = "Noted."


def page_results(turn: Turn) -> list[str]:
    """The answers of actions on pages: neither `read` results nor notes."""
    return [text for text in turn.tool_results() if READ not in text and text != NOTED]


def sign_in(turn: Turn) -> dict[str, Any]:
    done = len(turn.tool_results())
    if done == 0:
        return call("fill", ref=turn.ref(r'textbox "User name"'), value="ada", reason="type the user name")
    if done == 1:
        return call("fill", ref=turn.ref(r'textbox "Password"'), arg="password", reason="type the password")
    if done == 2:
        return call("click", ref=turn.ref(r'button "Log in"'), reason="log in")
    welcome = re.search(r"Welcome back, (\w+)\.", turn.last)
    if not welcome:
        return call("read", reason="read the greeting")
    return call("done", answer={"member": welcome.group(1)}, reason="read the member's name")


# A table row: in a full snapshot its name cell's line then its price cell's; in markdown `name | price`.
ROWS = (
    re.compile(r'cell "([A-Za-z ]+)".*\n\s*- cell "([0-9.]+)"'),
    re.compile(r"^\|? ?([A-Za-z][A-Za-z ]+?) *\| *([0-9.]+) *\|?$", re.M),
)


def rows_seen(turn: Turn) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for text in turn.tool_results():
        for pattern in ROWS:
            for name, price in pattern.findall(text):
                row = {"name": name.strip(), "price": float(price)}
                if row not in rows:
                    rows.append(row)
    return rows


def search_and_page(turn: Turn) -> dict[str, Any]:
    results = turn.tool_results()
    if not results:
        return call("fill", ref=turn.ref(r'textbox "Search products"'), value="teapot", submit=True, reason="search")
    last = results[-1]
    if last == NOTED:
        if '- link "Next page"' in page_results(turn)[-1]:
            return call("click", ref=turn.ref(r'link "Next page"'), reason="next page of results")
        return call("done", answer=rows_seen(turn), reason="all pages read")
    if READ not in last and not any(pattern.search(last) for pattern in ROWS):
        return call("read", reason="read the rows")
    return call("note", data=rows_seen(turn), reason="keep the rows")


PRICE = re.compile(r"(?:heading \"|# )(Teapot \w+).*?Price: \$([0-9.]+)", re.S)


def compare_in_tabs(turn: Turn) -> dict[str, Any]:
    seen = "\n".join(m.get("content") or "" for m in turn.messages)
    prices = {name: float(price) for name, price in PRICE.findall(seen)}
    last = turn.tool_results()[-1] if turn.tool_results() else turn.messages[1]["content"]
    if not PRICE.search(last) and READ not in last:
        return call("read", reason="read the price")
    if len(prices) < 2:
        other = re.search(r"Also: (\S+)", turn.messages[1]["content"])
        assert other, turn.messages[1]["content"]
        return call("tabs", action="new", url=other.group(1), reason="open B")
    cheaper = min(prices, key=lambda name: prices[name])
    return call("done", answer={"cheaper": cheaper, "prices": prices}, reason="compare")
