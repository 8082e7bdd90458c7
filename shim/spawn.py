"""Starting the daemon on demand: one spawner at a time (spawn.lock), then wait until the daemon says it serves."""

from __future__ import annotations

import asyncio
import fcntl
import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from browserd.protocol import paths
from browserd.protocol.readiness import READY, READY_FD_ENV

T = TypeVar("T")

_POLL_S = 0.02
_CONNECT_ERRORS = (FileNotFoundError, ConnectionRefusedError)
_TAIL_LINES = 4  # of daemon.out in the error of a daemon that exited while starting: where its reason is


class DaemonUnavailable(Exception):
    pass


@dataclass
class StartingDaemon:
    """A daemon this client started, until it says it serves or exits: the read end of its readiness pipe
    (protocol/readiness.py) and where its output goes, from the offset this start began writing at."""

    process: subprocess.Popen[bytes]
    ready_fd: int
    out: Path
    out_offset: int

    async def wait_ready(self, deadline: float) -> None:
        """Return once the daemon serves its socket, or exited saying another daemon holds the lock. A daemon
        that exits with an error raises DaemonUnavailable at once, with its exit status and last words."""
        loop = asyncio.get_running_loop()
        said: asyncio.Future[bytes] = loop.create_future()

        def readable() -> None:
            if not said.done():
                said.set_result(os.read(self.ready_fd, 1))

        loop.add_reader(self.ready_fd, readable)
        try:
            byte = await asyncio.wait_for(said, max(deadline - time.monotonic(), 0))
        except TimeoutError:
            raise DaemonUnavailable(
                f"the daemon (pid {self.process.pid}) did not start serving {paths.socket_path()} in time; "
                f"see {self.out} and {paths.log_file()}"
            ) from None
        finally:
            loop.remove_reader(self.ready_fd)
            os.close(self.ready_fd)
        if byte == READY:
            return
        # End of file: the daemon exited before it served; its status comes within moments.
        try:
            status = await asyncio.to_thread(self.process.wait, max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            raise DaemonUnavailable(
                f"the daemon (pid {self.process.pid}) closed its readiness pipe without serving; see {self.out}"
            ) from None
        if status == 0:
            return  # it said "another browserd daemon is already running": that one will answer
        raise DaemonUnavailable(
            f"the daemon exited with status {status} while starting: {self._last_words()} (full output in {self.out})"
        )

    def _last_words(self) -> str:
        try:
            with open(self.out, "rb") as out:
                out.seek(self.out_offset)
                text = out.read().decode(errors="replace")
        except OSError:
            return "no output"
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        return " | ".join(lines[-_TAIL_LINES:]) or "no output"


def start_daemon_process() -> StartingDaemon:
    """Start `browserd daemon --foreground` detached from this process, with the write end of a readiness pipe."""
    out_path = paths.ensure_private_dir(paths.state_dir()) / "daemon.out"
    ready_fd, write_fd = os.pipe()
    try:
        with open(out_path, "ab") as out:
            offset = out.tell()  # before the daemon writes: it shares this file's offset
            process = subprocess.Popen(
                [sys.executable, "-m", "browserd.shim", "daemon", "--foreground", "--quiet"],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=out,
                start_new_session=True,  # the daemon outlives the shim and its client's process group
                close_fds=True,
                pass_fds=(write_fd,),
                env={**os.environ, READY_FD_ENV: str(write_fd)},
            )
    except BaseException:
        os.close(ready_fd)
        raise
    finally:
        os.close(write_fd)  # the daemon's copy is the only writer left: its exit means end of file here
    return StartingDaemon(process, ready_fd, out_path, offset)


async def _acquire(fd: int, deadline: float) -> None:
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise DaemonUnavailable("timed out waiting for another client that is starting the daemon") from None
            await asyncio.sleep(_POLL_S)


async def connect_or_spawn(connect: Callable[[], Awaitable[T]], timeout_s: float, spawn: bool = True) -> T:
    """`connect()`, starting the daemon first if nothing answers on the socket. `timeout_s` bounds a start
    that hangs; a daemon that fails to start is reported as soon as it exits."""
    try:
        return await connect()
    except _CONNECT_ERRORS:
        if not spawn:
            raise
    deadline = time.monotonic() + timeout_s
    paths.ensure_private_dir(paths.socket_dir())
    fd = os.open(paths.spawn_lock_path(), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        await _acquire(fd, deadline)
        try:
            return await connect()  # another client may have started it while we waited
        except _CONNECT_ERRORS:
            pass
        starting = start_daemon_process()
        await starting.wait_ready(deadline)
        # Served: the first connect succeeds. Polled only when another daemon (one this client did not start)
        # holds the instance lock and is still binding its socket.
        while True:
            try:
                return await connect()
            except _CONNECT_ERRORS as exc:
                if time.monotonic() > deadline:
                    raise DaemonUnavailable(
                        f"no daemon answered on {paths.socket_path()} within {timeout_s} s; "
                        f"see {starting.out} and {paths.log_file()}"
                    ) from exc
                await asyncio.sleep(_POLL_S)
    finally:
        os.close(fd)
