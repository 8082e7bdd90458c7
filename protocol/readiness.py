"""The start-up handshake between a client that spawns the daemon and that daemon.

The spawner hands the daemon the write end of a pipe (its number in BROWSERD_READY_FD). The daemon writes one
byte once it serves its socket and closes the pipe; a daemon that exits while starting closes it without a
byte, so the spawner learns of a failed start at once instead of at its deadline. A daemon started any other
way (systemd, by hand) has no such variable and skips the handshake.
"""

from __future__ import annotations

import contextlib
import os

READY_FD_ENV = "BROWSERD_READY_FD"
READY = b"R"


def take_ready_fd() -> int | None:
    """The daemon's end of the handshake, taken out of the environment so that no child (Chromium, the
    Playwright driver) inherits it and holds the pipe open after the daemon is gone."""
    value = os.environ.pop(READY_FD_ENV, None)
    if value is None or not value.isdigit():
        return None
    fd = int(value)
    try:
        os.set_inheritable(fd, False)
    except OSError:  # not an open descriptor: whoever set the variable did not pass the pipe
        return None
    return fd


def announce_ready(fd: int | None) -> None:
    """Tell the spawner the daemon serves its socket; once, then the pipe is closed."""
    if fd is None:
        return
    with contextlib.suppress(OSError):  # a spawner that gave up and exited has closed its end: nothing to tell
        os.write(fd, READY)
    with contextlib.suppress(OSError):
        os.close(fd)
