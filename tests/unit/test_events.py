"""The daemon's push channel (daemon/events.py): publishing never waits, a listener that falls behind is told it
lost events, and a listener that left hears nothing more."""

from __future__ import annotations

import anyio
import pytest

from browserd.daemon.events import LISTENER_BUFFER, Events

pytestmark = pytest.mark.anyio


async def test_a_listener_gets_what_was_published_in_order() -> None:
    events = Events()
    with events.listen() as listener:
        events.publish("run", runId="run_1", status="running")
        events.publish("session", sessionId="sess_1")
        batch, lost = await listener.next_batch()
    assert batch == [
        {"kind": "run", "runId": "run_1", "status": "running"},
        {"kind": "session", "sessionId": "sess_1"},
    ]
    assert not lost


async def test_a_listener_that_falls_behind_is_told_and_keeps_the_newest() -> None:
    events = Events()
    with events.listen() as listener:
        for n in range(LISTENER_BUFFER + 10):
            events.publish("run", n=n)  # never blocks, however far behind the listener is
        batch, lost = await listener.next_batch()
    assert lost and len(batch) == LISTENER_BUFFER and batch[-1]["n"] == LISTENER_BUFFER + 9


async def test_a_waiting_listener_wakes_for_the_next_event_and_a_gone_one_hears_nothing() -> None:
    events = Events()
    with events.listen() as listener:
        async with anyio.create_task_group() as group:
            group.start_soon(_publish_soon, events)
            with anyio.fail_after(5):
                batch, _ = await listener.next_batch()
    assert batch == [{"kind": "session", "sessionId": "sess_2"}]
    events.publish("session", sessionId="sess_3")
    assert not listener.pending


async def _publish_soon(events: Events) -> None:
    await anyio.sleep(0.05)
    events.publish("session", sessionId="sess_2")
