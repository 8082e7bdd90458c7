"""Questions to one connection's MCP client's model: SAMPLE out to the shim (which asks the client with
sampling/createMessage), SAMPLE_RESULT back, matched by id, each with a deadline."""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from browserd.daemon.llm.sampling import sampling_failed
from browserd.protocol.messages import Message, Sample, SampleResult


class SamplingRelay:
    def __init__(self, send: Callable[[Message], Awaitable[None]], timeout_s: float) -> None:
        self._send = send
        self._timeout_s = timeout_s
        self._ids = itertools.count(1)
        self._waiting: dict[str, tuple[anyio.Event, list[SampleResult]]] = {}

    async def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        sample_id = f"sample_{next(self._ids)}"
        done, answer = anyio.Event(), list[SampleResult]()
        self._waiting[sample_id] = (done, answer)
        try:
            await self._send(Sample(id=sample_id, request=request))
            with anyio.move_on_after(self._timeout_s) as waited:
                await done.wait()
        finally:
            self._waiting.pop(sample_id, None)
        if waited.cancelled_caught:
            raise sampling_failed(f"no answer within {self._timeout_s:.0f} s ([llm] request_timeout_s)")
        if not answer:
            raise sampling_failed("the client disconnected")
        if answer[0].error is not None:
            raise sampling_failed(answer[0].error.error)
        return answer[0].result or {}

    def answered(self, reply: SampleResult) -> None:
        waiting = self._waiting.get(reply.id)
        if waiting is not None:
            waiting[1].append(reply)
            waiting[0].set()

    def close(self) -> None:
        """The connection ended: every question still waiting fails now."""
        for done, _answer in self._waiting.values():
            done.set()
