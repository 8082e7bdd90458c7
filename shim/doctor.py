"""`browserd doctor`: what this machine needs for browserd, each problem with the sentence that fixes it."""

from __future__ import annotations

import asyncio
import os
import shutil
import stat
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

from browserd.daemon.config import ConfigError, load
from browserd.protocol import paths

Status = Literal["ok", "warn", "fail"]

CHROMIUM_FIX = "apt-get install chromium (as root) or set BROWSERD_CHROMIUM=/path"
# A daemon that accepts but never answers must not hang the tool meant to diagnose it.
STATUS_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Check:
    name: str
    status: Status
    detail: str
    fix: str = ""  # empty when there is nothing to do


def check_python() -> Check:
    # Always ok once it runs: pip refuses browserd below 3.11 and its imports (tomllib) would fail first.
    return Check("python", "ok", f"Python {sys.version.split()[0]} ({sys.executable})")


def check_playwright() -> Check:
    try:
        import playwright  # noqa: F401
    except ImportError as exc:
        return Check("playwright", "fail", f"cannot import playwright: {exc}", "Reinstall browserd with pip.")
    return Check("playwright", "ok", f"playwright {metadata.version('playwright')}")


def check_driver_preload() -> Check:
    """Whether browserd's preload applies to the installed Playwright's driver (daemon/runtime/driver.py)."""
    from browserd.daemon.runtime.driver import preload_misses

    try:
        on = load().browser.driver_preload
    except ConfigError:
        return Check("driver preload", "ok", "not checked: the config does not parse (see config)")
    if not on:
        return Check("driver preload", "ok", "off ([browser] driver_preload = false): Playwright as it is")
    missed = preload_misses()
    if missed:
        return Check(
            "driver preload",
            "warn",
            f"left out for playwright {metadata.version('playwright')}: {missed}",
            "Nothing breaks, but what a patch left out saves is lost (the injected script sent and compiled "
            "again on each navigation: ~10-15 ms of CPU): a browserd release that knows this Playwright brings it "
            "back.",
        )
    return Check(
        "driver preload",
        "ok",
        f"applies to playwright {metadata.version('playwright')}: its injected script is sent once per page and "
        "compiled once per renderer, each message written once",
    )


def check_config() -> Check:
    path = paths.config_file()
    try:
        load()
    except ConfigError as exc:
        return Check("config", "fail", str(exc), f"Correct the setting named above, or move {path} away.")
    return Check("config", "ok", f"{path} parses" if path.exists() else f"no {path}: defaults")


def check_chromium() -> Check:
    from browserd.daemon.runtime.chromium import chromium_version, find_chromium

    try:
        configured = load().browser.executable
    except ConfigError:
        configured = ""  # the config check reports it; still look where Chromium usually lives
    found = find_chromium(configured)
    if found is None:
        return Check("chromium", "fail", "no Chromium or Chrome executable found", CHROMIUM_FIX)
    version = asyncio.run(chromium_version(found.path))
    if not version:
        return Check("chromium", "fail", f"{found.path} ({found.source}) does not run `--version`", CHROMIUM_FIX)
    detail = f"{version} at {found.path} (from {found.source})"
    shell = find_chromium(configured, headless=True)
    if shell is not None and shell.path != found.path:
        detail += f"; headless pages run in {shell.path}"
    # find_chromium passes over a configured path it cannot execute; say so, or the user's choice is lost.
    ignored = [
        f"{setting}={value}"
        for setting, value, source in (
            ("browser.executable", configured, "config"),
            ("BROWSERD_CHROMIUM", os.environ.get("BROWSERD_CHROMIUM", ""), "env"),
        )
        if value and source != found.source and not os.access(shutil.which(value) or value, os.X_OK)
    ]
    if ignored:
        return Check(
            "chromium",
            "warn",
            f"{detail}; not executable: {', '.join(ignored)}",
            "Point the setting at an executable Chromium, or remove it.",
        )
    return Check("chromium", "ok", detail)


def _nearest_existing(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def check_socket_dir() -> Check:
    folder = paths.socket_dir()
    if not folder.exists():
        parent = _nearest_existing(folder)
        if os.access(parent, os.W_OK | os.X_OK):
            return Check("socket folder", "ok", f"{folder} will be created (0700) by the first daemon")
        return Check(
            "socket folder",
            "fail",
            f"cannot create {folder}: {parent} is not writable",
            "Set BROWSERD_SOCKET to a path in a folder of your own.",
        )
    info = folder.stat()
    if not stat.S_ISDIR(info.st_mode):
        return Check("socket folder", "fail", f"{folder} is not a folder", f"Remove {folder} or set BROWSERD_SOCKET.")
    if info.st_uid != os.getuid():
        return Check(
            "socket folder",
            "fail",
            f"{folder} belongs to uid {info.st_uid}, not {os.getuid()}",
            "Set BROWSERD_SOCKET to a path in a folder of your own; the daemon refuses this one.",
        )
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077:
        return Check(
            "socket folder",
            "warn",
            f"{folder} has mode {mode:04o}, looser than 0700",
            f"chmod 700 {folder} (the next daemon also tightens it).",
        )
    return Check("socket folder", "ok", f"{folder} (0700, yours)")


async def _daemon_status() -> dict[str, Any] | None:
    from browserd.shim.control_client import control_request

    try:
        payload = await asyncio.wait_for(control_request("status"), STATUS_TIMEOUT_S)
    except (FileNotFoundError, ConnectionRefusedError):
        return None
    return payload.data if isinstance(payload.data, dict) else {}


def check_daemon() -> Check:
    sock = paths.socket_path()
    if not (sock.exists() or sock.is_symlink()):
        return Check("daemon", "ok", f"not running (no {sock}); the first client starts it")
    try:
        data = asyncio.run(_daemon_status())
    except TimeoutError:
        return Check(
            "daemon",
            "fail",
            f"{sock} accepts but no answer within {STATUS_TIMEOUT_S:.0f} s",
            "Kill the hung daemon (its pid is in daemon.lock next to the socket).",
        )
    except Exception as exc:  # any other failure is itself the diagnosis; show it rather than crash
        return Check("daemon", "fail", f"{sock}: {type(exc).__name__}: {exc}", "See the daemon's log file.")
    if data is None:
        return Check(
            "daemon", "warn", f"stale socket {sock}: no daemon answers", "Nothing to do: the next daemon removes it."
        )
    return Check(
        "daemon",
        "ok",
        f"pid {data.get('pid')}, version {data.get('version')}, {len(data.get('sessions', []))} session(s), on {sock}",
    )


def _check_writable(name: str, folder: Path, variable: str) -> Check:
    target = _nearest_existing(folder)
    if os.access(target, os.W_OK | os.X_OK):
        return Check(name, "ok", str(folder) if target == folder else f"{folder} (created on first use)")
    return Check(
        name,
        "fail",
        f"{target} is not writable, so {folder} cannot be used",
        f"Give this user write access to {target}, or set {variable} to a folder of your own.",
    )


def check_data_dir() -> Check:
    return _check_writable("data folder", paths.data_dir(), "XDG_DATA_HOME")


def check_state_dir() -> Check:
    return _check_writable("state folder", paths.state_dir(), "XDG_STATE_HOME")


def check_log_file() -> Check:
    log = paths.log_file()
    return Check("log file", "ok", str(log) if log.exists() else f"{log} (not written yet)")


CHECKS: tuple[Callable[[], Check], ...] = (
    check_python,
    check_playwright,
    check_chromium,
    check_config,
    check_driver_preload,
    check_socket_dir,
    check_daemon,
    check_data_dir,
    check_state_dir,
    check_log_file,
)


def run_checks() -> list[Check]:
    return [check() for check in CHECKS]


def as_json(checks: list[Check]) -> dict[str, Any]:
    return {"ok": all(check.status != "fail" for check in checks), "checks": [asdict(check) for check in checks]}
