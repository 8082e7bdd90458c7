"""Issue 11 item 4: the shim's REGISTER and calls have deadlines, against a daemon socket that never answers."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import anyio.abc
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream

from browserd.protocol.framing import encode_frame, read_frame
from browserd.protocol.messages import Cancel, ClientInfo, DaemonInfo, Message, Register, RegisterOk
from browserd.shim.daemon_client import DaemonClient, DaemonGone, NoAnswer

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def silent_daemon(socket: Path, answer: Callable[[Message], Message | None]) -> AsyncIterator[list[Message]]:
    """A Unix socket server that reads frames, records them and answers only what `answer` returns."""
    received: list[Message] = []

    async def serve(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            buffered = BufferedByteReceiveStream(stream)
            try:
                while True:
                    message = await read_frame(buffered.receive_exactly)
                    received.append(message)
                    reply = answer(message)
                    if reply is not None:
                        await stream.send(encode_frame(reply))
            except (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError):
                return

    listener = await anyio.create_unix_listener(socket)
    async with anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, serve)
        yield received
        tg.cancel_scope.cancel()


def client() -> DaemonClient:
    return DaemonClient(ClientInfo(name="test", pid=1), call_timeout_s=0.3)


async def test_item4_register_with_a_daemon_that_never_answers_gives_up(
    scratch: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    socket = scratch / "daemon.sock"
    monkeypatch.setenv("BROWSERD_SOCKET", str(socket))
    async with silent_daemon(socket, lambda message: None) as received:
        with anyio.fail_after(20), pytest.raises(DaemonGone, match="did not answer REGISTER"):
            await client().connect(spawn=False, timeout_s=0.5)
    assert received and all(isinstance(m, Register) for m in received)


async def test_item4_a_call_the_daemon_never_answers_ends_and_is_cancelled(
    scratch: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    socket = scratch / "daemon.sock"
    monkeypatch.setenv("BROWSERD_SOCKET", str(socket))

    def registers_only(message: Message) -> Message | None:
        if isinstance(message, Register):
            return RegisterOk(id=message.id, session_id="s1", daemon=DaemonInfo(version="test", pid=1))
        return None

    async with silent_daemon(socket, registers_only) as received:
        daemon = client()
        with anyio.fail_after(20):
            await daemon.connect(spawn=False, timeout_s=5)
            with pytest.raises(NoAnswer, match="did not answer browser_open"):
                await daemon.request("browser_open", {}, request_id="r1")
            while not any(isinstance(m, Cancel) for m in received):
                await anyio.sleep(0.01)
            await daemon.close()
    assert [m.id for m in received if isinstance(m, Cancel)] == ["r1"], "the unanswered call was cancelled"
