"""Starting the daemon on demand: one spawner at a time (spawn.lock), then wait for its socket."""

from __future__ import annotations

import asyncio
import fcntl
import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from browserd.protocol import paths

T = TypeVar("T")

_POLL_S = 0.02
_CONNECT_ERRORS = (FileNotFoundError, ConnectionRefusedError)


class DaemonUnavailable(Exception):
    pass


def start_daemon_process() -> int:
    """Start `browserd daemon --foreground` detached from this process; its pid."""
    log_dir = paths.ensure_private_dir(paths.state_dir())
    with open(log_dir / "daemon.out", "ab") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "browserd.shim", "daemon", "--foreground", "--quiet"],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            start_new_session=True,  # the daemon outlives the shim and its client's process group
            close_fds=True,
        )
    return process.pid


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
    """`connect()`, starting the daemon first if nothing answers on the socket."""
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
        pid = start_daemon_process()
        while True:
            try:
                return await connect()
            except _CONNECT_ERRORS as exc:
                if time.monotonic() > deadline:
                    raise DaemonUnavailable(
                        f"the daemon (pid {pid}) did not open {paths.socket_path()} within {timeout_s} s; "
                        f"see {paths.state_dir() / 'daemon.out'} and {paths.log_file()}"
                    ) from exc
                await asyncio.sleep(_POLL_S)
    finally:
        os.close(fd)
