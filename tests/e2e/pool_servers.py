"""Browser servers for the browser pool's tests and benchmark (issue 24), on loopback, each in a process
group of its own so that "kill -9 of a member" ends the server and its browser at once, as a host dying
would: `playwright run-server`, a Chromium with a debugging port, Debian's chromedriver."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from typing import Any

from playwright._impl._driver import compute_driver_executable

from browserd.daemon.runtime.chromium import find_chromium
from tests.conftest import BrowserdHome
from tests.e2e.bridge_chrome import free_port

START_TIMEOUT_S = 30
CAPACITY = 2


def _shell() -> str:
    found = find_chromium(headless=True)
    assert found is not None, "no Chromium: run scripts/setup.sh"
    return found.path


@dataclass
class Server:
    name: str
    kind: str
    url: str
    process: subprocess.Popen[bytes]
    extra: dict[str, Any] = field(default_factory=dict)

    def endpoint(self, capacity: int = CAPACITY) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "url": self.url, "capacity": capacity, **self.extra}

    def kill(self) -> None:
        """kill -9 of the server and everything it started (its process group)."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(10)


def _wait_for_port(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        assert process.poll() is None, f"the server exited with {process.returncode}"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"nothing listens on port {port} after {START_TIMEOUT_S} s")


def _start(name: str, kind: str, command: list[str], port: int, url: str, **extra: Any) -> Server:
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        _wait_for_port(port, process)
    except BaseException:
        os.killpg(process.pid, signal.SIGKILL)
        raise
    return Server(name, kind, url, process, extra)


def run_server(name: str, port: int | None = None) -> Server:
    """`playwright run-server` (Playwright's own Node CLI, as `python -m playwright run-server` starts it);
    --unsafe lets the daemon name the browser to launch, since no Playwright browser can be downloaded here."""
    node, cli = compute_driver_executable()
    port = port or free_port()
    command = [node, cli, "run-server", "--host", "127.0.0.1", "--port", str(port), "--unsafe"]
    launch = {"executablePath": _shell(), "headless": True}
    return _start(name, "playwright", command, port, f"ws://127.0.0.1:{port}/", launch_options=launch)


def cdp_chromium(name: str, profile_dir: str) -> Server:
    port = free_port()
    command = [_shell(), f"--remote-debugging-port={port}", f"--user-data-dir={profile_dir}", "--no-sandbox"]
    return _start(name, "cdp", [*command, "about:blank"], port, f"http://127.0.0.1:{port}")


def chromedriver(name: str) -> Server:
    port = free_port()
    command = [shutil.which("chromedriver") or "chromedriver", f"--port={port}"]
    options = {"binary": _shell(), "args": ["--headless", "--no-sandbox", "--disable-dev-shm-usage"]}
    return _start(
        name, "webdriver", command, port, f"http://127.0.0.1:{port}", capabilities={"goog:chromeOptions": options}
    )


def configure(home: BrowserdHome, servers: list[Server], capacity: int = CAPACITY, local: bool = False) -> None:
    """These members; by default the daemon's own Chromium is off, so every page is a remote member's."""
    home.env.update(
        BROWSERD_BROWSER_LOCAL="1" if local else "0",
        BROWSERD_BROWSER_LOCAL_CAPACITY=str(capacity),
        BROWSERD_BROWSER_ENDPOINTS=json.dumps([server.endpoint(capacity) for server in servers]),
        BROWSERD_BROWSER_HEALTH_INTERVAL_S="1",
        BROWSERD_BROWSER_PREWARM="0",
    )
