"""Shared fixtures: the tests/site pages on 127.0.0.1, an isolated browserd home, MCP clients.

Every test gets its own socket, config, data and state folders, so the daemon it starts is its
own; teardown ends exactly that daemon (by the pid in its lock file) and nothing else.
"""

from __future__ import annotations

import http.server
import inspect
import json
import os
import shutil
import signal
import socketserver
import subprocess
import tempfile
import threading
import time
import urllib.parse
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import hypothesis
import pytest

REPO = Path(__file__).resolve().parent.parent
SITE = REPO / "tests" / "site"
HANG_S = 300
STRICT_POLICY = (
    "default-src 'self'; script-src 'self'; object-src 'none'; base-uri 'none'; require-trusted-types-for 'script'"
)
API_ITEMS = {"items": [{"id": 1, "name": "Teapot"}, {"id": 2, "name": "Mug"}], "source": "server"}
VENV_BIN = Path(os.environ.get("VIRTUAL_ENV", REPO / ".venv")) / "bin"
BROWSERD = str(VENV_BIN / "browserd")

# Property tests assert behaviour, never how long an example took: the suite runs its modules in parallel
# on a busy machine, where Hypothesis's per-example deadline (200 ms) fails tests that are correct.
hypothesis.settings.register_profile("browserd", deadline=None)
hypothesis.settings.load_profile("browserd")


class Gates:
    """The /gate endpoint's meeting points. Two calls that each load `/gate?key=K&parties=2` both succeed only
    if they are in flight at the same time, which proves they overlap; `wait_arrived` tells a test that a
    call has reached the server (so it is under way), without sleeping and hoping."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._arrived: dict[str, int] = {}
        self._released: set[str] = set()

    def meet(self, key: str, parties: int, wait_s: float) -> bool:
        with self._changed:
            self._arrived[key] = self._arrived.get(key, 0) + 1
            self._changed.notify_all()
            return self._changed.wait_for(
                lambda: self._arrived[key] >= parties or key in self._released, timeout=min(wait_s, HANG_S)
            )

    def wait_arrived(self, key: str, count: int = 1, timeout: float = 60) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: self._arrived.get(key, 0) >= count, timeout=timeout)

    def release(self, key: str) -> None:
        with self._changed:
            self._released.add(key)
            self._changed.notify_all()


GATES = Gates()


class SiteHandler(http.server.SimpleHTTPRequestHandler):
    """Static files from tests/site, plus endpoints for what static files cannot do:

    /slow?ms=N answers after N ms; /events?ms=N is an event stream that pushes one message `ready` after N ms
    and stays open (30 s at most); /late.js?ms=N answers after N ms with a script that adds a paragraph
    "Written by a late script" to #later; /hang never answers; /status?code=N answers with that status;
    /headers echoes the request headers as JSON; /set-cookie?name=value sets a cookie and
    /cookies shows the Cookie header the browser sent; /members answers 200 only to a session cookie;
    /gen/<n>/<i>.html is page i of a generated n-page site (generated_page).
    /download?name=F[&ms=N] answers an attachment named F (its body `contents of F` repeated 100 times),
    holding back the second half for N ms when asked, and never sending it with `&broken=1`.
    /api/items answers a JSON list of items (GET) or echoes a posted JSON item with 201 (POST);
    /api/redirect answers 302 to /api/items.
    /redirect?to=URL answers 302 to that URL. Everything under /strict/ comes with STRICT_POLICY.
    /gate?key=K&parties=N[&wait_s=S] holds each request until N requests with key K have arrived (or the
    test releases K), then answers 200; after S s (default 30) without that, 504 (GATES below).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, directory=str(SITE), **kwargs)

    def do_GET(self) -> None:
        url = urllib.parse.urlsplit(self.path)
        if url.path == "/hang":
            # Bounded so a forgotten page cannot pin a thread past the test session.
            time.sleep(HANG_S)
            return
        query = {key: values[0] for key, values in urllib.parse.parse_qs(url.query).items()}
        if url.path == "/gate":
            met = GATES.meet(query.get("key", ""), int(query.get("parties", "2")), float(query.get("wait_s", "30")))
            title = "Gate passed" if met else "Gate timed out"
            self._send(200 if met else 504, f"<!doctype html><title>{title}</title><h1>{title}</h1>".encode())
            return
        if url.path == "/status":
            code = int(query.get("code", "404"))
            self._send(code, f"<!doctype html><title>Status {code}</title><h1>Status {code}</h1>".encode())
            return
        if url.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", query.get("to", "/"))
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if url.path == "/headers":
            self._send(200, json.dumps(dict(self.headers.items())).encode(), "application/json")
            return
        if url.path == "/set-cookie":
            cookies = tuple(f"{name}={value}; Path=/" for name, value in query.items())
            self._send(200, b"<!doctype html><title>Cookie set</title><h1>Cookie set</h1>", cookies=cookies)
            return
        if url.path == "/members":
            # Members only: a session cookie (from /set-cookie?session=NAME, as a login would set it).
            cookies = dict(
                part.strip().split("=", 1) for part in self.headers.get("Cookie", "").split(";") if "=" in part
            )
            name = cookies.get("session")
            if name:
                self._send(
                    200,
                    f"<!doctype html><title>Members</title><main><h1>Members area</h1>"
                    f"<p>Welcome back, {name}.</p></main>".encode(),
                )
            else:
                self._send(401, b"<!doctype html><title>Log in</title><main><h1>Please log in</h1></main>")
            return
        if url.path == "/api/items":
            self._send(200, json.dumps(API_ITEMS).encode(), "application/json")
            return
        if url.path == "/api/redirect":
            self.send_response(302)
            self.send_header("Location", "/api/items")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if url.path == "/cookies":
            cookie = self.headers.get("Cookie", "")
            self._send(200, f"<!doctype html><title>Cookies</title><p id=cookies>{cookie}</p>".encode())
            return
        if url.path.startswith("/gen/"):
            page = generated_page(url.path)
            if page is None:
                self._send(404, b"<!doctype html><title>Not found</title><h1>Not found</h1>")
            else:
                self._send(200, page.encode())
            return
        if url.path == "/download":
            self._attachment(query.get("name", "file.bin"), int(query.get("ms", "0")), "broken" in query)
            return
        if url.path == "/late.js":
            time.sleep(int(query.get("ms", "700")) / 1000)
            script = (
                b"document.getElementById('later').insertAdjacentHTML('beforeend', '<p>Written by a late script</p>');"
            )
            self._send(200, script, "text/javascript")
            return
        if url.path == "/events":
            self._events(int(query.get("ms", "1000")))
            return
        if url.path == "/slow":
            delay_ms = int(urllib.parse.parse_qs(url.query).get("ms", ["3000"])[0])
            time.sleep(delay_ms / 1000)
            body = b"<!doctype html><title>slow</title><h1>Slow page</h1>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()

    def _events(self, delay_ms: int) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.flush()
        time.sleep(delay_ms / 1000)
        try:
            self.wfile.write(b"data: ready\n\n")
            self.wfile.flush()
            # Open until the page closes it (its next write fails) or a bounded while has passed.
            for _ in range(30):
                time.sleep(1)
                self.wfile.write(b": still here\n\n")
                self.wfile.flush()
        except OSError:
            pass
        self.close_connection = True

    def _attachment(self, name: str, delay_ms: int, broken: bool = False) -> None:
        body = f"contents of {name}\n".encode() * 100
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Disposition", f'attachment; filename="{name}"')
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        half = len(body) // 2
        self.wfile.write(body[:half])
        self.wfile.flush()
        time.sleep(delay_ms / 1000)
        if broken:
            self.close_connection = True  # the body stops halfway: the browser sees a failed download
            return
        self.wfile.write(body[half:])

    def end_headers(self) -> None:
        if self.path.startswith("/strict/"):
            # A strict policy as security-minded sites send it: scripts from the origin's files only (no
            # inline script, no eval), and Trusted Types for every script sink.
            self.send_header("Content-Security-Policy", STRICT_POLICY)
        if self.path.startswith("/network-dot.svg"):
            # Cacheable, so a test can see a response that Chromium's cache answered.
            self.send_header("Cache-Control", "max-age=3600")
        super().end_headers()

    def do_POST(self) -> None:
        if urllib.parse.urlsplit(self.path).path != "/api/items":
            self._send(404, b"<!doctype html><title>Not found</title><h1>Not found</h1>")
            return
        sent = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self._send(201, json.dumps({"received": json.loads(sent or b"null")}).encode(), "application/json")

    def _send(self, code: int, body: bytes, content_type: str = "text/html", cookies: tuple[str, ...] = ()) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for cookie in cookies:
            self.send_header("Set-Cookie", cookie)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # keep test output readable
        pass


def generated_page(path: str) -> str | None:
    """Page i of an n-site for crawl tests and benchmarks (`/gen/<n>/<i>.html`, 0 <= i < n), or None.

    Deterministic: page i links to pages 2i+1 and 2i+2 (a binary tree, so every page is within
    log2(n) links of page 0), to i+1, and back to page 0; a few paragraphs make extraction real work.
    """
    parts = path.removeprefix("/gen/").removesuffix(".html").split("/")
    if len(parts) != 2 or not all(part.isdigit() for part in parts):
        return None
    n, i = int(parts[0]), int(parts[1])
    if not 0 <= i < n:
        return None
    targets = [t for t in (2 * i + 1, 2 * i + 2, i + 1, 0) if t < n and t != i]
    links = "".join(f'<li><a href="{t}.html">Generated page {t}</a></li>' for t in targets)
    text = "".join(
        f"<p>Paragraph {p} of generated page {i}: a site of {n} pages, each reachable from page 0.</p>"
        for p in range(1, 6)
    )
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Generated page {i} of {n}</title>'
        f"</head><body><nav><ul>{links}</ul></nav><main><h1>Generated page {i}</h1>{text}</main></body></html>"
    )


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


@contextmanager
def serve_site_on(host: str) -> Iterator[str]:
    """tests/site served on a loopback address `host`, for as long as the block runs; yields its base URL."""
    server = _Server((host, 0), SiteHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://{host}:{server.server_address[1]}"
    finally:
        server.shutdown()


@pytest.fixture(scope="session")
def site() -> Iterator[str]:
    """Base URL of tests/site served on 127.0.0.1 (only loopback traffic)."""
    with serve_site_on("127.0.0.1") as url:
        yield url


@pytest.fixture(scope="session")
def gates() -> Gates:
    """The site's /gate meeting points. A fixture, not an import: pytest loads this file as `conftest`, so
    `from tests.conftest import GATES` would be another module's copy, which the site never sees."""
    return GATES


@dataclass
class BrowserdHome:
    """An isolated browserd installation state: socket, config, data and logs in temp folders."""

    root: Path
    env: dict[str, str] = field(default_factory=dict)

    @property
    def socket(self) -> Path:
        return Path(self.env["BROWSERD_SOCKET"])

    @property
    def lock(self) -> Path:
        return self.socket.parent / "daemon.lock"

    @property
    def log(self) -> Path:
        return self.root / "state" / "browserd" / "daemon.log"

    def daemon_pid(self) -> int | None:
        try:
            pid = int(self.lock.read_text().strip())
        except (OSError, ValueError):
            return None
        return pid if pid_alive(pid) else None

    def browserd(self, *args: str, timeout: float = 60, check: bool = False) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [BROWSERD, *args], env=self.env, capture_output=True, text=True, timeout=timeout, check=check
        )

    def status_json(self) -> dict[str, Any]:
        """`browserd status --json` of this home's daemon, parsed."""
        done = self.browserd("status", "--json", timeout=30)
        assert done.returncode == 0, done.stderr
        status: dict[str, Any] = json.loads(done.stdout)
        return status

    def stop_daemon(self) -> None:
        pid = self.daemon_pid()
        if pid is None:
            return
        os.kill(pid, signal.SIGTERM)
        if not wait_for(lambda: not pid_alive(pid), 15):
            os.kill(pid, signal.SIGKILL)
            wait_for(lambda: not pid_alive(pid), 5)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie still answers kill(0), and a killed process's leader turns zombie while its other threads are
    # still exiting with its sockets open: it is gone once no thread of it is anything but a zombie.
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
        return any((task / "stat").read_text().split(") ", 1)[1][0] != "Z" for task in tasks)
    except (OSError, IndexError):
        return False


def wait_for(predicate: Any, timeout: float, interval: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return bool(predicate())


async def until(check: Callable[[], Any], what: str, timeout: float = 60, interval: float = 0.05) -> Any:
    """`check()`'s first true answer, asked every `interval` s; the test fails saying `what` did not happen if
    none comes within `timeout` s. For what the daemon does in its own time and announces to no client (a
    debounced publish, a sweep, an exit): the test waits exactly as long as the daemon takes, never a fixed
    sleep. A plain function runs in a thread (it may read files or run a command); what it returns is awaited
    if awaitable, so `check` may ask the daemon too (`lambda: client.call_tool(...)`)."""
    with anyio.move_on_after(timeout):
        while True:
            answer = await check() if inspect.iscoroutinefunction(check) else await anyio.to_thread.run_sync(check)
            if inspect.isawaitable(answer):
                answer = await answer
            if answer:
                return answer
            await anyio.sleep(interval)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def terminate(process: subprocess.Popen[Any]) -> None:
    """End a process the test started: SIGTERM, then SIGKILL if it lingers."""
    if process.poll() is None:
        os.kill(process.pid, signal.SIGTERM)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait(5)


def isolated_env(root: Path, **extra: str) -> dict[str, str]:
    """This process's environment with browserd's socket, config, data and state moved under `root`."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("BROWSERD_", "XDG_"))}
    env.update(
        BROWSERD_SOCKET=str(root / "run" / "daemon.sock"),
        XDG_CONFIG_HOME=str(root / "config"),
        XDG_DATA_HOME=str(root / "data"),
        XDG_STATE_HOME=str(root / "state"),
        **extra,
    )
    return env


def short_temp_dir(prefix: str = "bd-") -> Path:
    # Not pytest's tmp_path: AF_UNIX socket paths are limited to 108 bytes and its paths can be longer.
    return Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))


def make_home(idle_exit_s: float = 30) -> BrowserdHome:
    root = short_temp_dir()
    return BrowserdHome(root, isolated_env(root, BROWSERD_DAEMON_IDLE_EXIT_S=str(idle_exit_s)))


@pytest.fixture
def scratch() -> Iterator[Path]:
    """A short temporary folder for tests that build their own environment."""
    root = short_temp_dir()
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


class ConfigEnv(dict[str, str]):
    """The environment of a test on a shared daemon: setting a key (a config override) stops that daemon
    first, so the test's client starts one that reads it; the test then leaves it to be stopped too."""

    def __init__(self, base: dict[str, str], stop_daemon: Any) -> None:
        super().__init__(base)
        self.changed = False
        self._stop_daemon = stop_daemon

    def __setitem__(self, key: str, value: str) -> None:
        if not self.changed:
            self._stop_daemon()
        self.changed = True
        super().__setitem__(key, value)


@contextmanager
def own_home() -> Iterator[BrowserdHome]:
    home = make_home()
    try:
        yield home
    finally:
        home.stop_daemon()
        shutil.rmtree(home.root, ignore_errors=True)


@pytest.fixture(scope="module")
def module_home() -> Iterator[BrowserdHome]:
    with own_home() as home:
        yield home


@pytest.fixture
def home(request: pytest.FixtureRequest) -> Iterator[BrowserdHome]:
    """A daemon of the test's own; in a module marked `shared_daemon`, the module's daemon (each test still
    has a session of its own, as every MCP client does), which saves a daemon and Chromium start per test."""
    if request.node.get_closest_marker("shared_daemon") is not None:
        shared: BrowserdHome = request.getfixturevalue("module_home")
        env = ConfigEnv(shared.env, shared.stop_daemon)
        yield BrowserdHome(shared.root, env)
        if env.changed:
            shared.stop_daemon()
        return
    with own_home() as home:
        yield home


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def mcp_client(
    home: BrowserdHome, mode: str = "legacy", args: tuple[str, ...] = (), **options: Any
) -> AsyncIterator[Any]:
    """The official MCP SDK client driving a real `browserd mcp` process; `options` go to mcp.Client."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=BROWSERD, args=["mcp", *args], env=home.env)
    async with Client(stdio_client(params), mode=mode, **options) as client:  # type: ignore[arg-type]
        yield client
