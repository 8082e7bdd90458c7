"""The daemon's socket: single-instance lock, stale-socket recovery, permissions, socket activation."""

from __future__ import annotations

import fcntl
import os
import socket
import struct
from pathlib import Path

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


def inherited_socket() -> socket.socket | None:
    """The listening socket systemd passed in (LISTEN_FDS), if this process was socket-activated."""
    if os.environ.get("LISTEN_PID") != str(os.getpid()):
        return None
    if int(os.environ.get("LISTEN_FDS", "0")) < 1:
        return None
    for name in ("LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"):
        os.environ.pop(name, None)  # children (Chromium) must not think the socket is theirs
    sock = socket.socket(fileno=_SD_LISTEN_FDS_START)
    sock.setblocking(False)
    return sock


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
