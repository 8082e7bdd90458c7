"""The session's log of tool calls (daemon/sessions/call_log.py) holds what a call aimed at, never a value."""

from __future__ import annotations

import time

from browserd.daemon.sessions.call_log import CALLS_KEPT, CallLog
from browserd.daemon.tools.actions import FillParams, TypeParams
from browserd.daemon.tools.pages import OpenParams


def test_a_call_is_logged_with_its_target_and_outcome_but_never_what_it_typed() -> None:
    calls = CallLog()
    calls.add("browser_fill", FillParams(target="#password", value="hunter2-secret"), time.time(), None)
    calls.add("browser_type", TypeParams(target="e7", text="typed-secret"), time.time(), "ELEMENT_NOT_FOUND")
    calls.add("browser_open", OpenParams(url="https://example.org/a/b?token=abc#frag"), time.time(), None)
    logged = list(calls.calls)
    assert [(c["tool"], c["target"], c["outcome"]) for c in logged] == [
        ("browser_fill", "#password", "ok"),
        ("browser_type", "e7", "ELEMENT_NOT_FOUND"),
        ("browser_open", "https://example.org/a/b", "ok"),
    ]
    assert "secret" not in repr(logged) and "token" not in repr(logged)
    assert calls.last is logged[-1]


def test_the_log_keeps_the_latest_calls_only() -> None:
    calls = CallLog()
    for _ in range(CALLS_KEPT + 5):
        calls.add("browser_snapshot", object(), time.time(), None)
    assert len(calls.calls) == CALLS_KEPT
