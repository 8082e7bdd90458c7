"""The daemon's socket: single-instance lock, stale-socket recovery, permissions, socket activation."""

from __future__ import annotations

import fcntl
import os
import socket
import struct
from pathlib import Path
from typing import NamedTuple

from browserd.protocol import paths

_SD_LISTEN_FDS_START = 3  # systemd hands inherited sockets over from this descriptor on


class AlreadyRunning(Exception):
    pass


def acquire_instance_lock(lock_path: Path) -> int:
    """Hold daemon.lock for the daemon's whole life; a second daemon fails here at once."""
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
        os.close(fd)
        raise AlreadyRunning(f"another browserd daemon (pid {holder}) already serves {lock_path.parent}") from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, str(os.getpid()).encode(), 0)
    return fd


class Inherited(NamedTuple):
    """The listening sockets systemd passed in: the daemon's own (AF_UNIX) and the HTTP server's (TCP)."""

    control: socket.socket | None
    http: socket.socket | None


def inherited_sockets() -> Inherited:
    """What this process got by socket activation (LISTEN_FDS); two sockets when browserd-http.socket runs too."""
    if os.environ.get("LISTEN_PID") != str(os.getpid()):
        return Inherited(None, None)
    count = int(os.environ.get("LISTEN_FDS", "0"))
    for name in ("LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"):
        os.environ.pop(name, None)  # children (Chromium) must not think the sockets are theirs
    control = http = None
    for fd in range(_SD_LISTEN_FDS_START, _SD_LISTEN_FDS_START + count):
        sock = socket.socket(fileno=fd)
        sock.setblocking(False)
        # By family, not by name: a hand-written unit may leave FileDescriptorName= out.
        if sock.family == socket.AF_UNIX:
            control = sock
        else:
            http = sock
    return Inherited(control, http)


def bind_socket(path: Path) -> socket.socket:
    """A fresh 0600 listening socket at `path`; call only while holding the instance lock."""
    paths.ensure_private_dir(path.parent)
    if path.exists() or path.is_symlink():
        path.unlink()  # we hold the lock, so whoever made this file is dead
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    previous = os.umask(0o077)
    try:
        sock.bind(str(path))
    finally:
        os.umask(previous)
    path.chmod(0o600)
    sock.listen(128)
    sock.setblocking(False)
    return sock


def peer_uid(sock: socket.socket) -> int:
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return int(uid)
