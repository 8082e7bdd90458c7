"""`browserd service install|uninstall`: the systemd user units that socket-activate the daemon."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from importlib import resources
from pathlib import Path

UNITS = ("browserd.socket", "browserd.service")
SOCKET_UNIT = "browserd.socket"
WANTS_LINK = "sockets.target.wants/browserd.socket"  # from the socket unit's WantedBy=
# The canonical service unit names the executable a `pip install --user` puts on PATH; install swaps it
# for the browserd actually running, so the unit works from a venv or pipx too.
TEMPLATE_EXECUTABLE = "%h/.local/bin/browserd"

Echo = Callable[[str], None]


def unit_dir() -> Path:
    config = os.environ.get("XDG_CONFIG_HOME")
    base = Path(config) if config and os.path.isabs(config) else Path.home() / ".config"
    return base / "systemd" / "user"


def template(name: str) -> str:
    return resources.files("browserd.shim").joinpath("units", name).read_text()


def daemon_command() -> list[str]:
    """How to run this very browserd: its console script, else this interpreter with `-m`."""
    argv0 = sys.argv[0]
    if os.path.basename(argv0) == "browserd":
        found = argv0 if os.sep in argv0 else shutil.which(argv0)
        # absolute(), not resolve(): a ~/.local/bin symlink outlives the pipx venv it points into.
        if found and os.access(found, os.X_OK):
            return [str(Path(found).absolute())]
    return [sys.executable, "-m", "browserd.shim"]


def exec_quote(arg: str) -> str:
    """One ExecStart word: systemd unquotes C escapes and expands % specifiers and $ variables in it."""
    escaped = arg.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%").replace("$", "$$")
    return f'"{escaped}"' if any(c.isspace() for c in arg) else escaped


def render(name: str, command: list[str]) -> str:
    text = template(name)
    if name == "browserd.service":
        text = text.replace(TEMPLATE_EXECUTABLE, " ".join(exec_quote(arg) for arg in command), 1)
    return text


def user_manager() -> bool:
    """Whether `systemctl --user` reaches a running user manager (no manager in containers and CI)."""
    if shutil.which("systemctl") is None:
        return False
    try:
        result = subprocess.run(["systemctl", "--user", "show-environment"], capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return result.returncode == 0


def systemctl(args: list[str], echo: Echo) -> bool:
    echo(f"$ systemctl --user {' '.join(args)}")
    try:
        result = subprocess.run(["systemctl", "--user", *args], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        echo("systemctl did not answer within 60 s")
        return False
    if result.returncode != 0:
        echo(result.stderr.strip() or f"systemctl exited with {result.returncode}")
    return result.returncode == 0


def install(enable: bool, echo: Echo) -> int:
    target = unit_dir()
    target.mkdir(parents=True, exist_ok=True)
    command = daemon_command()
    for name in UNITS:
        (target / name).write_text(render(name, command))
        echo(f"wrote {target / name}")
    commands = [["daemon-reload"], ["enable", "--now", SOCKET_UNIT]]
    if not enable:
        echo(f"not enabled; to start it on demand: systemctl --user enable --now {SOCKET_UNIT}")
        commands = commands[:1]
    return run_or_show(commands, echo)


def run_or_show(commands: list[list[str]], echo: Echo) -> int:
    """Runs the `systemctl --user` commands, or prints them where no user manager answers (a container)."""
    if user_manager():
        return 0 if all(systemctl(args, echo) for args in commands) else 1
    echo("no systemd user manager answers here; where one does, run:")
    for args in commands:
        echo(f"  systemctl --user {' '.join(args)}")
    return 0


def uninstall(echo: Echo) -> int:
    target = unit_dir()
    present = [target / name for name in UNITS if (target / name).exists()]
    if not present:
        echo(f"no browserd units in {target}")
        return 0
    manager = user_manager()
    # Disable before removing: systemd can no longer read the [Install] section of a deleted unit.
    ok = systemctl(["disable", "--now", *UNITS], echo) if manager else True
    # What an offline `systemctl --user enable` leaves behind; disable removes it when a manager runs.
    wants = target / WANTS_LINK
    for path in [*present, *([wants] if wants.is_symlink() else [])]:
        path.unlink()
        echo(f"removed {path}")
    if manager:
        ok = systemctl(["daemon-reload"], echo) and ok
    return 0 if ok else 1
