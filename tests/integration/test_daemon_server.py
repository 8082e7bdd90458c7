"""The daemon's socket server against a real daemon process, spoken to frame by frame.

Covers DESIGN.md §2 (socket path and permissions, framing limits, REGISTER, concurrent REQUESTs,
CANCEL, PING, single instance, stale sockets, clean shutdown), S3-45 and D-04 (0600 socket, peer-uid
check), D-05 (protocol errors), D-06 (idle holders) and D-07 (`browserd stop`, `browserd status`).
"""

from __future__ import annotations

import http.server
import json
import os
import shutil
import signal
import socket
import socketserver
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest

from browserd.daemon.config import Config
from browserd.protocol.framing import HEADER, decode_body, encode_frame
from browserd.protocol.messages import (
    PROTOCOL_VERSION,
    Cancel,
    ClientInfo,
    Error,
    Event,
    Message,
    Ping,
    Pong,
    Register,
    RegisterOk,
    Request,
    Response,
    Role,
    ToolsChanged,
)
from tests.conftest import BROWSERD, BrowserdHome, mcp_client, pid_alive, until, wait_for

WIRE_TIMEOUT_S = 20.0


class Closed(Exception):
    """The daemon closed the connection (EOF, or a reset after it dropped unread bytes)."""


class Wire:
    """One raw connection to the daemon socket: whole frames out, whole messages in."""

    def __init__(self, path: Path) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(WIRE_TIMEOUT_S)
        self.sock.connect(str(path))

    def send(self, *messages: Message) -> None:
        self.sock.sendall(b"".join(encode_frame(m) for m in messages))

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def _exactly(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            try:
                chunk = self.sock.recv(n - len(data))
            except ConnectionResetError:
                chunk = b""
            if not chunk:
                raise Closed(f"connection closed after {len(data)} of {n} bytes")
            data += chunk
        return data

    def recv(self) -> Message:
        (length,) = HEADER.unpack(self._exactly(HEADER.size))
        return decode_body(self._exactly(length))

    def answer(self) -> Message:
        """The next message that is not a progress EVENT of a running request."""
        while isinstance(message := self.recv(), Event):
            pass
        return message

    def recv_until_closed(self) -> list[Message]:
        """Every message up to the daemon closing the connection (fails on a timeout instead)."""
        messages: list[Message] = []
        while True:
            try:
                messages.append(self.recv())
            except Closed:
                return messages

    def register(self, role: Role = "shim") -> RegisterOk:
        self.send(Register(id="reg", protocol=PROTOCOL_VERSION, client=ClientInfo(name="test"), role=role))
        reply = self.recv()
        assert isinstance(reply, RegisterOk), f"REGISTER was refused: {reply}"
        return reply

    def ping(self, ping_id: str = "ping") -> None:
        self.send(Ping(id=ping_id))
        reply = self.recv()
        assert reply == Pong(id=ping_id), f"expected PONG {ping_id}, got {reply}"

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> Wire:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def start_daemon(home: BrowserdHome, *, prewarm: bool = False, **env: str) -> int:
    """Start the daemon detached, as a client would; its pid once the socket answers."""
    if not prewarm:
        home.env["BROWSERD_BROWSER_PREWARM"] = "false"
    home.env.update(env)
    started = home.browserd("daemon")
    assert started.returncode == 0, f"`browserd daemon` failed: {started.stdout}{started.stderr}"
    pid = home.daemon_pid()
    assert pid is not None, f"no live daemon pid in {home.lock}"
    return pid


def status_json(home: BrowserdHome) -> dict[str, Any]:
    result = home.browserd("status", "--json")
    assert result.returncode == 0, f"`browserd status` failed: {result.stdout}{result.stderr}"
    return json.loads(result.stdout)  # type: ignore[no-any-return]


# -- framing -----------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_garbage_frame_gets_an_error_and_the_daemon_keeps_serving(home: BrowserdHome) -> None:
    """§2: a frame that does not decode gets an ERROR; the same connection and other clients go on."""
    start_daemon(home)
    async with mcp_client(home) as other:
        before = await other.call_tool("get_runtime_profile", {})
        assert not before.is_error

        with Wire(home.socket) as wire:
            garbage = b"\xc1" + os.urandom(63)  # 0xc1 is never used by msgpack, so this never decodes
            wire.send_raw(HEADER.pack(len(garbage)) + garbage)
            reply = wire.recv()
            assert isinstance(reply, Error), f"expected ERROR for a garbage frame, got {reply}"
            assert reply.error.error_code == "INVALID_PARAMETER"
            assert reply.error.recover_hint

            wire.ping()  # the stream stayed in sync: the same connection still answers
            wire.register()
            wire.ping("after-register")

        after = await other.call_tool("get_runtime_profile", {})
        assert not after.is_error, "a bad frame on one connection must not disturb another client"
        assert after.structured_content["daemonPid"] == before.structured_content["daemonPid"]


def test_oversized_frame_gets_an_error_then_the_connection_closes(home: BrowserdHome) -> None:
    """§2: a frame over daemon.max_frame_bytes gets an ERROR and its connection is closed."""
    pid = start_daemon(home, BROWSERD_DAEMON_MAX_FRAME_BYTES="1024")
    with Wire(home.socket) as wire:
        wire.send_raw(HEADER.pack(1025))  # the header alone: the daemon must not wait for the body
        messages = wire.recv_until_closed()
    assert len(messages) == 1, f"expected exactly one ERROR before the close, got {messages}"
    (error,) = messages
    assert isinstance(error, Error)
    assert error.error.error_code == "INVALID_PARAMETER"
    assert "1025" in error.error.error and "1024" in error.error.error, error.error.error

    with Wire(home.socket) as wire:
        registered = wire.register()
        assert registered.daemon.pid == pid
        wire.ping()


def test_frame_of_exactly_the_limit_is_accepted(home: BrowserdHome) -> None:
    """§2: the limit is inclusive; only frames *over* it are refused."""
    start_daemon(home, BROWSERD_DAEMON_MAX_FRAME_BYTES="1024")
    with Wire(home.socket) as wire:
        registered = wire.register()
        request = Request(id="big", session_id=registered.session_id, action="get_runtime_profile", params={})
        # Pad the params (the tool will refuse the key, which is fine) until the body is 1024 bytes.
        pad = 1024 - len(encode_frame(request)) + HEADER.size
        while len(frame := encode_frame(msgspec.structs.replace(request, params={"p": "x" * pad}))) > 1024 + 4:
            pad -= 1
        assert len(frame) - HEADER.size == 1024, len(frame) - HEADER.size
        wire.send_raw(frame)
        reply = wire.recv()
        assert isinstance(reply, Response), f"a 1024-byte frame must be read, got {reply}"
        assert reply.id == "big"
        wire.ping()


def test_register_with_another_protocol_major_is_refused_and_closed(home: BrowserdHome) -> None:
    """§2, D-05: a protocol major mismatch is a clear ERROR, then the connection closes."""
    start_daemon(home)
    with Wire(home.socket) as wire:
        wire.send(Register(id="reg2", protocol="2.0", client=ClientInfo(name="from-the-future")))
        messages = wire.recv_until_closed()
    assert len(messages) == 1, f"expected one ERROR then the close, got {messages}"
    (error,) = messages
    assert isinstance(error, Error)
    assert error.id == "reg2"
    assert "protocol 2.0 is not supported" in error.error.error
    assert PROTOCOL_VERSION in error.error.error, "the ERROR names the protocol the daemon speaks"
    assert status_json(home)["sessions"] == [], "a refused REGISTER must not leave a session behind"


def test_register_with_a_newer_minor_protocol_is_accepted(home: BrowserdHome) -> None:
    """§2: only the major must match; a newer minor only adds optional fields."""
    start_daemon(home)
    major = PROTOCOL_VERSION.split(".")[0]
    with Wire(home.socket) as wire:
        wire.send(Register(id="minor", protocol=f"{major}.99", client=ClientInfo(name="newer")))
        reply = wire.recv()
        assert isinstance(reply, RegisterOk), reply
        assert reply.daemon.protocol == PROTOCOL_VERSION


def test_request_before_register_is_answered_with_an_error(home: BrowserdHome) -> None:
    """§2: REGISTER comes first; a REQUEST without it gets an error answer, not a hang or a crash."""
    start_daemon(home)
    with Wire(home.socket) as wire:
        wire.send(Request(id="early", session_id="", action="get_runtime_profile"))
        reply = wire.recv()
        assert isinstance(reply, Response) and reply.id == "early", reply
        assert reply.payload.error is not None
        assert reply.payload.error.error_code == "INVALID_PARAMETER"
        assert "REGISTER" in reply.payload.error.error
        wire.ping()


# -- requests ----------------------------------------------------------------------------------


def test_progress_events_go_only_to_a_request_whose_caller_reads_them(home: BrowserdHome, site: str) -> None:
    """An MCP call without a progressToken makes a REQUEST with progress false: its answer is the next frame."""
    start_daemon(home)
    with Wire(home.socket) as wire:
        session = wire.register().session_id
        opened = {"url": f"{site}/index.html"}
        wire.send(Request(id="quiet", session_id=session, action="browser_open", params=opened, progress=False))
        reply = wire.recv()
        assert isinstance(reply, Response) and reply.id == "quiet", reply
        assert reply.payload.success, reply.payload.error
        wire.send(Request(id="told", session_id=session, action="browser_open", params={"url": f"{site}/form.html"}))
        event = wire.recv()
        assert isinstance(event, Event) and event.id == "told" and "form.html" in (event.message or ""), event
        assert isinstance(wire.answer(), Response)


def test_concurrent_requests_on_one_connection_are_answered_by_id(home: BrowserdHome) -> None:
    """§2: requests on one connection run concurrently; each RESPONSE carries its REQUEST's id."""
    start_daemon(home)
    with Wire(home.socket) as wire:
        session = wire.register().session_id
        ids = ["r-1", "r-2", "r-3"]
        wire.send(*(Request(id=rid, session_id=session, action="get_runtime_profile") for rid in ids))
        replies = [wire.answer() for _ in ids]
    assert all(isinstance(r, Response) for r in replies), replies
    assert sorted(r.id for r in replies) == ids  # type: ignore[union-attr]
    for reply in replies:
        assert isinstance(reply, Response)
        assert reply.session_id == session
        assert reply.payload.success, reply.payload.error
        assert reply.payload.data["session"]["sessionId"] == session


class _Gate:
    """A loopback page that answers only when the test lets it, and says when it was asked for."""

    def __init__(self) -> None:
        self.asked = threading.Event()
        self.release = threading.Event()
        gate = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                gate.asked.set()
                gate.release.wait(60)
                body = b"<!doctype html><title>gate</title>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True

        self.server = Server(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/gate"

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()


@pytest.fixture
def gate() -> Iterator[_Gate]:
    gate = _Gate()
    try:
        yield gate
    finally:
        gate.close()


def test_cancel_answers_the_request_as_cancelled_and_the_connection_goes_on(
    home: BrowserdHome, site: str, gate: _Gate
) -> None:
    """§2: CANCEL {id} ends that request with errorCode CANCELLED; the connection keeps working.

    The page never answers until the test releases it, so only the CANCEL can end the request.
    """
    start_daemon(home, prewarm=True)
    with Wire(home.socket) as wire:
        session = wire.register().session_id
        wire.send(Request(id="slow-open", session_id=session, action="browser_open", params={"url": gate.url}))
        assert gate.asked.wait(WIRE_TIMEOUT_S), "the browser never asked for the page"
        wire.send(Cancel(id="slow-open"))
        reply = wire.answer()
        assert isinstance(reply, Response), f"expected the RESPONSE of the cancelled request, got {reply}"
        assert reply.id == "slow-open"
        assert not reply.payload.success
        assert reply.payload.error is not None and reply.payload.error.error_code == "CANCELLED", reply.payload
        wire.ping()

        # The session is still usable for real work after the cancelled call.
        wire.send(Request(id="open", session_id=session, action="browser_open", params={"url": f"{site}/index.html"}))
        opened = wire.answer()
        assert isinstance(opened, Response) and opened.id == "open", opened
        assert opened.payload.success, opened.payload.error


def test_cancel_sent_right_behind_its_request_still_cancels_it(home: BrowserdHome, gate: _Gate) -> None:
    """§2: a CANCEL that arrives in the same read as its REQUEST must not be lost."""
    start_daemon(home, prewarm=True)
    with Wire(home.socket) as wire:
        session = wire.register().session_id
        wire.send(
            Request(id="raced", session_id=session, action="browser_open", params={"url": gate.url}),
            Cancel(id="raced"),
        )
        reply = wire.answer()
        assert isinstance(reply, Response) and reply.id == "raced", reply
        assert reply.payload.error is not None and reply.payload.error.error_code == "CANCELLED", reply.payload


def test_cancel_of_an_unknown_id_is_ignored(home: BrowserdHome) -> None:
    """§2: a CANCEL for a request that already finished (or never was) changes nothing."""
    start_daemon(home)
    with Wire(home.socket) as wire:
        wire.register()
        wire.send(Cancel(id="nothing-by-this-id"))
        wire.ping()


# -- the socket, its folder and the instance lock ------------------------------------------------


def test_socket_folder_is_0700_socket_0600_and_the_lock_names_the_daemon(home: BrowserdHome) -> None:
    """S3-45, D-04: owner-only socket in an owner-only folder; daemon.lock holds the daemon's pid."""
    start_daemon(home)
    folder_mode = stat.S_IMODE(home.socket.parent.stat().st_mode)
    info = home.socket.stat()
    assert stat.S_ISSOCK(info.st_mode)
    assert folder_mode == 0o700, f"socket folder is {folder_mode:o}, expected 700"
    assert stat.S_IMODE(info.st_mode) == 0o600, f"socket is {stat.S_IMODE(info.st_mode):o}, expected 600"
    assert info.st_uid == os.getuid()
    assert home.lock.read_text().strip() == str(status_json(home)["pid"])


def test_second_daemon_exits_at_once_saying_another_runs(home: BrowserdHome) -> None:
    """§2, D-04: the flock on daemon.lock makes a second daemon exit 0 at once, naming the first."""
    pid = start_daemon(home)
    second = subprocess.run(
        [BROWSERD, "daemon", "--foreground"], env=home.env, capture_output=True, text=True, timeout=30
    )
    assert second.returncode == 0, second.stderr
    assert "another browserd daemon" in second.stdout, second.stdout
    assert f"pid {pid}" in second.stdout, second.stdout
    assert pid_alive(pid), "the first daemon must be unaffected"
    assert home.lock.read_text().strip() == str(pid), "the second daemon must not overwrite the lock"
    assert status_json(home)["pid"] == pid
    with Wire(home.socket) as wire:
        wire.ping()


def test_stale_socket_left_by_a_dead_daemon_is_replaced(home: BrowserdHome) -> None:
    """§2, D-04: a socket file nobody listens on is removed by the next daemon, which then serves."""
    home.socket.parent.mkdir(mode=0o700, parents=True)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(home.socket))
    stale.close()  # the file stays behind, as after a kill -9
    assert home.socket.exists()
    with pytest.raises(ConnectionRefusedError), Wire(home.socket):
        pass

    pid = start_daemon(home)
    assert status_json(home)["pid"] == pid
    with Wire(home.socket) as wire:
        wire.register()
        wire.ping()


def _squatted_socket_folder(home: BrowserdHome) -> subprocess.CompletedProcess[str]:
    home.socket.parent.mkdir(mode=0o700, parents=True)
    os.chown(home.socket.parent, 65534, 65534)
    home.env["BROWSERD_BROWSER_PREWARM"] = "false"
    return subprocess.run(
        [BROWSERD, "daemon", "--foreground"], env=home.env, capture_output=True, text=True, timeout=30
    )


def test_socket_folder_owned_by_another_user_is_refused(home: BrowserdHome) -> None:
    """D-04: a socket folder someone else owns could hold a squatted socket; the daemon will not use it."""
    if os.geteuid() != 0:
        pytest.skip("needs root to hand the folder to another user")
    refused = _squatted_socket_folder(home)
    assert refused.returncode != 0
    assert "belongs to uid 65534" in refused.stderr + refused.stdout
    assert not home.socket.exists()
    assert home.daemon_pid() is None


def test_socket_folder_owned_by_another_user_is_reported_without_a_traceback(home: BrowserdHome) -> None:
    """D-04: the refusal is a message a person can act on, not a crash."""
    if os.geteuid() != 0:
        pytest.skip("needs root to hand the folder to another user")
    refused = _squatted_socket_folder(home)
    assert "Traceback" not in refused.stderr, refused.stderr


def test_daemon_that_cannot_start_is_reported_with_its_cause(home: BrowserdHome) -> None:
    """Issue 21 item 10: `browserd daemon` learns that the daemon it spawned exited while starting (here its data
    folder is a file, so its stores cannot open) from the daemon's exit, and names the cause without a traceback."""
    data = Path(home.env["XDG_DATA_HOME"])
    data.parent.mkdir(parents=True, exist_ok=True)
    data.write_text("not a folder")
    home.env["BROWSERD_BROWSER_PREWARM"] = "false"
    failed = home.browserd("daemon")
    assert failed.returncode != 0
    assert "cannot start the browserd daemon" in failed.stderr, failed.stderr
    assert "exited with status 1 while starting" in failed.stderr, failed.stderr
    assert "Not a directory" in failed.stderr, "the message names the cause"
    assert "Traceback" not in failed.stderr, failed.stderr
    assert home.daemon_pid() is None
    assert "NotADirectoryError" in home.log.read_text(), "the traceback goes to the daemon's log"


@pytest.mark.anyio
async def test_sigterm_closes_the_browser_removes_the_socket_and_exits(home: BrowserdHome, site: str) -> None:
    """§2, S3-48: SIGTERM is a clean shutdown: sessions and Chromium close, the socket file goes."""
    pid = await anyio.to_thread.run_sync(lambda: start_daemon(home))
    async with mcp_client(home) as client:
        opened = await client.call_tool("browser_open", {"url": f"{site}/index.html"})
        assert not opened.is_error
        status = await anyio.to_thread.run_sync(status_json, home)
        assert status["browser"]["running"], status["browser"]
        chromium = status["browser"]["pid"]
        assert chromium and pid_alive(chromium), f"no live Chromium pid in status: {status['browser']}"

        os.kill(pid, signal.SIGTERM)
        exited = await anyio.to_thread.run_sync(lambda: wait_for(lambda: not pid_alive(pid), 20))
        assert exited, f"the daemon (pid {pid}) did not exit after SIGTERM"
        assert not home.socket.exists(), "the daemon must remove its socket file on exit"
        gone = await anyio.to_thread.run_sync(lambda: wait_for(lambda: not pid_alive(chromium), 10))
        assert gone, f"Chromium (pid {chromium}) outlived the daemon"


def test_sigterm_during_a_hanging_request_still_exits(home: BrowserdHome, gate: _Gate) -> None:
    """§2, S3-48: shutdown does not wait for a request that would never end; its client sees the close."""
    pid = start_daemon(home, prewarm=True)
    with Wire(home.socket) as wire:
        session = wire.register().session_id
        wire.send(Request(id="hangs", session_id=session, action="browser_open", params={"url": gate.url}))
        assert gate.asked.wait(WIRE_TIMEOUT_S), "the browser never asked for the page"
        os.kill(pid, signal.SIGTERM)
        assert wait_for(lambda: not pid_alive(pid), 20), "the daemon waited for a request that never ends"
        leftovers = [m for m in wire.recv_until_closed() if not isinstance(m, Event)]
        assert all(isinstance(m, Response) and m.id == "hangs" for m in leftovers), leftovers
    assert not home.socket.exists()


def test_client_vanishing_mid_request_costs_only_its_own_session(home: BrowserdHome, gate: _Gate) -> None:
    """§2: a connection that drops during a request ends its session; the daemon serves on."""
    pid = start_daemon(home, prewarm=True)
    wire = Wire(home.socket)
    session = wire.register().session_id
    wire.send(Request(id="orphan", session_id=session, action="browser_open", params={"url": gate.url}))
    assert gate.asked.wait(WIRE_TIMEOUT_S), "the browser never asked for the page"
    wire.close()
    assert wait_for(lambda: status_json(home)["sessions"] == [], 20), "the dropped client's session lingers"
    assert pid_alive(pid)
    with Wire(home.socket) as again:
        again.register()
        again.ping()


def _uid_nobody_python() -> str | None:
    """A Python that uid 65534 may run (the child needs only the standard library)."""
    for candidate in (sys.executable, "/usr/bin/python3", shutil.which("python3")):
        if not candidate:
            continue
        try:
            probe = subprocess.run(
                [candidate, "-c", "import socket"], user=65534, group=65534, extra_groups=[], timeout=20,
                capture_output=True, cwd="/",
            )  # fmt: skip
        except (OSError, subprocess.SubprocessError):
            continue
        if probe.returncode == 0:
            return candidate
    return None


_OTHER_USER_CLIENT = """
import socket, sys
sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
sock.settimeout(20)
sock.connect(sys.argv[1])
try:
    sock.sendall(bytes.fromhex(sys.argv[2]))
except OSError:
    pass  # the daemon may already have said no and closed
data = b""
while True:
    try:
        chunk = sock.recv(65536)
    except ConnectionResetError:
        break
    if not chunk:
        break
    data += chunk
sys.stdout.write(data.hex())
"""


def _messages(data: bytes) -> list[Message]:
    messages = []
    while data:
        (length,) = HEADER.unpack(data[: HEADER.size])
        messages.append(decode_body(data[HEADER.size : HEADER.size + length]))
        data = data[HEADER.size + length :]
    return messages


def test_another_user_is_refused_even_when_the_socket_is_open_to_all(home: BrowserdHome) -> None:
    """S3-45, D-04: the daemon checks SO_PEERCRED and refuses a peer whose uid is not its own."""
    if os.geteuid() != 0:
        pytest.skip("needs root to run a client as another user")
    python = _uid_nobody_python()
    if python is None:
        pytest.skip("no Python that uid 65534 can run")
    start_daemon(home)
    loosened = [(home.root, 0o755), (home.socket.parent, 0o755), (home.socket, 0o666)]
    modes = {path: stat.S_IMODE(path.stat().st_mode) for path, _ in loosened}
    try:
        for path, mode in loosened:
            path.chmod(mode)
        register = encode_frame(Register(id="intruder", protocol=PROTOCOL_VERSION, client=ClientInfo(name="nobody")))
        child = subprocess.run(
            [python, "-c", _OTHER_USER_CLIENT, str(home.socket), register.hex()],
            user=65534, group=65534, extra_groups=[], capture_output=True, text=True, timeout=30, cwd="/",
        )  # fmt: skip
    finally:
        for path, mode in modes.items():
            path.chmod(mode)
    assert child.returncode == 0, f"the other user's client failed: {child.stderr}"
    messages = _messages(bytes.fromhex(child.stdout))
    assert len(messages) == 1, f"expected one ERROR and then the close, got {messages}"
    assert isinstance(messages[0], Error), f"another user must be refused, got {messages[0]}"
    assert "own user" in messages[0].error.error
    assert status_json(home)["sessions"] == [], "the refused peer must not get a session"
    with Wire(home.socket) as wire:
        wire.register()
        wire.ping()


def test_browserd_stop_ends_the_daemon_and_status_then_says_not_running(home: BrowserdHome) -> None:
    """D-07: `browserd stop` shuts down gracefully and removes the socket; status then exits 3."""
    pid = start_daemon(home)
    stopped = home.browserd("stop")
    assert stopped.returncode == 0, stopped.stderr
    assert f"pid {pid}" in stopped.stdout and "stopped" in stopped.stdout, stopped.stdout
    assert wait_for(lambda: not pid_alive(pid), 15), f"the daemon (pid {pid}) is still alive after stop"
    assert not home.socket.exists()

    status = home.browserd("status")
    assert status.returncode == 3, status.stdout + status.stderr
    assert "not running" in status.stdout
    as_json = home.browserd("status", "--json")
    assert as_json.returncode == 3
    assert json.loads(as_json.stdout)["running"] is False

    again = home.browserd("stop")
    assert again.returncode == 0 and "not running" in again.stdout, "stop without a daemon is harmless"


# -- in process: TOOLS_CHANGED and the idle holders ----------------------------------------------


@pytest.fixture
def short_socket(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """BROWSERD_SOCKET at a short /tmp path (AF_UNIX paths end at 108 bytes), for an in-process daemon."""
    root = Path(tempfile.mkdtemp(prefix="bd-", dir="/tmp"))
    path = root / "run" / "daemon.sock"
    monkeypatch.setenv("BROWSERD_SOCKET", str(path))
    monkeypatch.setenv("XDG_STATE_HOME", str(root / "state"))
    monkeypatch.setenv("XDG_DATA_HOME", str(root / "data"))
    try:
        yield path
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.anyio
async def test_tools_changed_reaches_every_shim_and_a_session_holds_the_daemon(short_socket: Path) -> None:
    """§2, D-06: TOOLS_CHANGED goes to each shim with its tool list; a connected session holds the
    daemon awake (idle holder "session") until the connection closes."""
    from browserd.daemon.server.daemon_process import Daemon
    from browserd.daemon.server.listener import bind_socket
    from browserd.shim.daemon_client import DaemonClient

    config = msgspec.convert({"daemon": {"idle_exit_s": 0}, "browser": {"prewarm": False}}, Config)
    daemon = Daemon(config)
    assert daemon.socket_path == short_socket
    sock = bind_socket(short_socket)
    received: list[ToolsChanged] = []
    got = anyio.Event()

    async def on_tools_changed(message: ToolsChanged) -> None:
        received.append(message)
        got.set()

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(daemon.run, sock)
            assert not daemon.idle.holders
            client = DaemonClient(ClientInfo(name="test"), on_tools_changed=on_tools_changed)
            control = DaemonClient(ClientInfo(name="cli"), role="control")
            registered = await client.connect(spawn=False)
            await control.connect(spawn=False)
            try:
                assert daemon.idle.holders == {"session": 1}, "only the shim's session holds the daemon"
                await daemon.broadcast_tools_changed()
                with anyio.fail_after(10):
                    await got.wait()
                assert len(received) == 1, "the control connection has no tools and gets no TOOLS_CHANGED"
                names = [tool.name for tool in received[0].tools]
                assert names == [tool.name for tool in registered.tools]
                assert "get_runtime_profile" in names
            finally:
                await client.close()
            await until(lambda: not daemon.idle.holders, "the closed session to stop holding the daemon", 10)
            await control.close()
            daemon.request_stop("test over")
    finally:
        sock.close()
    assert daemon.connections == set()
