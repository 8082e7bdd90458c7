"""The daemon process: start-up, the accept loop, idle exit, control actions and clean shutdown."""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import signal
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import SocketListener, SocketStream

from browserd.daemon import summary
from browserd.daemon.bridge.bridge_control import ACTIONS as BRIDGE_ACTIONS
from browserd.daemon.bridge.bridge_control import bridge_control
from browserd.daemon.config import Config
from browserd.daemon.console.auth import ConsoleAuth
from browserd.daemon.errors import BrowserdError, NotAllowed, NotSupported
from browserd.daemon.flows.catalogue.schedule_runs import start_on_page, start_scheduled
from browserd.daemon.flows.catalogue.schedules import Scheduler
from browserd.daemon.runtime.procinfo import rss_kib, tree_pss_kib
from browserd.daemon.runtime.tasks import window_task_counts
from browserd.daemon.server.connection import Connection, connection_refused
from browserd.daemon.server.idle import IdleMonitor
from browserd.daemon.server.listener import (
    AlreadyRunning,
    acquire_instance_lock,
    bind_socket,
    inherited_sockets,
    peer_uid,
)
from browserd.daemon.server.logs import setup_logging
from browserd.daemon.services import Services
from browserd.daemon.tools.catalog import build_catalog
from browserd.daemon.tools.flows import published_tools
from browserd.protocol import __version__, paths
from browserd.protocol.framing import encode_frame
from browserd.protocol.messages import Payload

if TYPE_CHECKING:
    from browserd.daemon.server.http.http_server import HttpServer

log = logging.getLogger(__name__)


class Daemon:
    def __init__(self, config: Config) -> None:
        self.config = config
        self.version = __version__
        self.catalog = build_catalog()
        self.services = Services.build(config, tools=self.catalog)
        self.idle = IdleMonitor(config.daemon.idle_exit_s)
        self.services.sessions.idle = self.idle
        # The side panel shows the sessions and runs `browserd status` shows, from the same summary.
        self.services.bridge.summary = lambda: {**summary.activity(self.services), "console": self._console_address()}
        flows = self.services.flows
        self.catalog.dynamic = lambda: published_tools(flows.published)
        flows.on_tools_changed = self.broadcast_tools_changed
        flows.scheduler = Scheduler(
            flows.store.schedules,
            functools.partial(start_scheduled, self.services),
            functools.partial(start_on_page, self.services),
            flows.schedule_ran,
        )
        self.services.sessions.on_page_load = flows.scheduler.page_loaded
        self.connections: set[Connection] = set()
        # Clients beside the socket's (the HTTP endpoint's sessions) that select their tools again when
        # published flows change.
        self.tools_listeners: list[Callable[[], None]] = []
        self._stop = anyio.Event()
        self.socket_path = paths.socket_path()
        self.http: HttpServer | None = None
        # The console's one-time links and cookies (daemon/console/): minted over this socket, used over HTTP.
        self.console_auth = ConsoleAuth()

    # -- connections -------------------------------------------------------------------------

    def attach(self, connection: Connection) -> None:
        self.connections.add(connection)
        self.idle.acquire("session")

    def detach(self, connection: Connection) -> None:
        if connection in self.connections:
            self.connections.discard(connection)
            self.idle.release("session")

    async def end_session(self, session_id: str) -> None:
        """A client let go of its session: its recordings stop, and it closes unless a run holds it or it is kept."""
        self.services.flows.stop_all(session_id)
        sessions = self.services.sessions
        await sessions.disconnect(session_id)
        still = session_id in sessions.sessions
        log.info("session %s %s", session_id, "outlives its client" if still else "closed")

    async def broadcast_tools_changed(self) -> None:
        for connection in list(self.connections):
            await connection.tools_changed()
        for listener in self.tools_listeners:
            listener()

    async def _handle(self, stream: SocketStream) -> None:
        # Whatever one connection does wrong, it must not reach the listener's task group.
        try:
            raw = stream.extra(anyio.abc.SocketAttribute.raw_socket)
            if peer_uid(raw) != os.getuid():
                log.warning("refused a connection from another user")
                await stream.send(encode_frame(connection_refused("this daemon serves only its own user")))
                await stream.aclose()
                return
            await Connection(stream, self).serve()
        except Exception:
            log.exception("connection handler failed")

    # -- control actions (the browserd command line) ------------------------------------------

    async def control(self, action: str, params: dict[str, Any]) -> Payload:
        if action == "status":
            return Payload(success=True, data=await self.status())
        if action == "stop":
            # The connection calls request_stop() once this answer is on its way.
            return Payload(success=True, data={"stopping": True, "pid": os.getpid()})
        if action == "console":
            return Payload(success=True, data={"url": self._console_link()})
        if action in BRIDGE_ACTIONS:
            return Payload(success=True, data=await bridge_control(self.services.bridge, action, params))
        raise NotAllowed(f"unknown control action `{action}`", hint="Use status, stop or console.")

    def _console_address(self) -> str | None:
        """Where the console is (no key: the side panel links there, and its browser needs the cookie)."""
        return f"{self.http.url}/console/" if self.http is not None else None

    def _console_link(self) -> str:
        if self.http is None:
            raise NotSupported(
                "this daemon serves no HTTP, so it has no console",
                hint="Set [http] enabled = true in config.toml (or start it with `browserd daemon --http "
                "127.0.0.1:3027`), then run `browserd console` again.",
            )
        return self.console_auth.new_link(self.http.url)

    def request_stop(self, reason: str) -> None:
        log.info("stopping: %s", reason)
        # A Ctrl-C reaches Playwright's driver too; its dying pipe is not news at shutdown.
        logging.getLogger("asyncio").setLevel(logging.CRITICAL)
        self._stop.set()

    async def status(self) -> dict[str, Any]:
        runtime = self.services.runtime
        browser_pid = runtime.browser_pid
        return {
            "pid": os.getpid(),
            "version": self.version,
            "socket": str(self.socket_path),
            "uptimeS": round(time.time() - self.services.started_at, 1),
            **summary.activity(self.services),
            "browser": {
                "running": runtime.is_running(),
                "pid": browser_pid,
                "launches": runtime.launches,
                "spareWindow": runtime.spare_context is not None,
                "executable": runtime.executable.path if runtime.executable else None,
            },
            "memory": {
                "daemonRssKiB": rss_kib(os.getpid()),
                "browserPssKiB": tree_pss_kib(browser_pid) if browser_pid else 0,
            },
            "executor": {"running": self.services.executor.running, "waiting": self.services.executor.waiting},
            "scrapeContexts": self.services.scrape.contexts.status(),
            "pool": self.services.pool.status(),
            "tasks": window_task_counts(),
            "idle": {"idleExitS": self.idle.idle_exit_s, "heldBy": dict(self.idle.holders)},
            "bridge": self.services.bridge.status(),
            "http": self.http.status() if self.http is not None else None,
        }

    # -- life cycle ----------------------------------------------------------------------------

    async def run(self, sock: socket.socket, http_sock: socket.socket | None = None) -> None:
        listener = await SocketListener.from_socket(sock)
        services = self.services
        # Profiles outlive the sessions: the windows' last publishes are flushed before the browser goes (D-16).
        # The URL guards carry the windows' traffic until close_all below has closed every window.
        await services.flows.open()
        async with services.profiles, services.guards:
            # Runs end (failed, saying the daemon stopped) before the sessions they use are closed.
            async with services.runs.serving(self.idle), anyio.create_task_group() as tg:
                tg.start_soon(self._watch_signals, tg.cancel_scope)
                tg.start_soon(services.sessions.expire_kept)
                tg.start_soon(services.sessions.keep_spare)
                tg.start_soon(services.pool.watch)
                if services.flows.scheduler is not None:
                    tg.start_soon(services.flows.scheduler.serve)
                if self.config.bridge.enabled:  # the daemon owns the bridge's port only while it is enabled
                    await tg.start(services.bridge.serve)
                if http_sock is not None:
                    from browserd.daemon.server.http.http_server import HttpServer

                    self.http = HttpServer(self, http_sock)
                    await tg.start(self.http.serve)
                # Clients are served once the bridge and HTTP listen (`bridge pair`, `console` never see them starting).
                tg.start_soon(listener.serve, self._handle, tg)
                if self.config.browser.prewarm:
                    tg.start_soon(self._prewarm)
                with anyio.CancelScope() as waiting:
                    tg.start_soon(self._cancel_when_set, waiting)
                    await self.idle.wait_until_idle_expired()
                    log.info("idle for %s s; exiting", self.idle.idle_exit_s)
                tg.cancel_scope.cancel()
            await services.sessions.close_all()
        await services.scrape.aclose()
        await services.llm.aclose()
        services.flows.store.close()
        await services.pool.aclose()
        await services.runtime.aclose()
        log.info("daemon stopped")

    async def _cancel_when_set(self, scope: anyio.CancelScope) -> None:
        await self._stop.wait()
        scope.cancel()

    async def _watch_signals(self, scope: anyio.CancelScope) -> None:
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async for signum in signals:
                self.request_stop(f"received {signal.Signals(signum).name}")
                return

    async def _prewarm(self) -> None:
        try:
            await self.services.runtime.browser()
        except BrowserdError as exc:
            log.error("browser prewarm failed: %s", exc)
        except Exception:  # the first tool call will report the launch failure to its client
            log.exception("browser prewarm failed")


def serve(config: Config, foreground: bool) -> int:
    """Run the daemon until idle exit, `browserd stop` or SIGTERM; the exit status of the process."""
    socket_path = paths.socket_path()
    try:
        setup_logging(config.daemon, foreground)
        paths.ensure_private_dir(socket_path.parent)
    except PermissionError as exc:
        print(f"browserd: {exc}", file=sys.stderr, flush=True)
        return 1
    try:
        lock_fd = acquire_instance_lock(paths.daemon_lock_path())
    except AlreadyRunning as exc:
        log.info("%s", exc)
        print(f"browserd: {exc}", flush=True)
        return 0
    inherited = inherited_sockets()
    try:
        http_sock = _http_socket(config, inherited.http)
    except BrowserdError as exc:
        log.error("%s", exc)
        print(f"browserd: {exc} ({exc.recover_hint})", file=sys.stderr, flush=True)
        os.close(lock_fd)
        return 1
    sock = inherited.control or bind_socket(socket_path)
    log.info(
        "daemon %s listening on %s (pid %s%s)",
        __version__,
        socket_path,
        os.getpid(),
        ", socket-activated" if inherited.control else "",
    )

    async def main() -> None:
        # Built inside the event loop: anyio's locks and events belong to the loop that made them.
        await Daemon(config).run(sock, http_sock)

    try:
        anyio.run(main, backend="asyncio", backend_options={"use_uvloop": config.daemon.use_uvloop and _has_uvloop()})
    finally:
        sock.close()
        if http_sock is not None:
            http_sock.close()
        if inherited.control is None:
            _unlink(socket_path)
        os.close(lock_fd)
    return 0


def _http_socket(config: Config, inherited: socket.socket | None) -> socket.socket | None:
    """The HTTP server's listening socket: the one systemd passed (browserd-http.socket), else a new one when
    [http] is enabled. Checked and bound before the loop starts, so a refused address or a taken port stops
    the daemon at once with a clear message."""
    if inherited is None and not config.http.enabled:
        return None
    # Imported only when serving HTTP: the HTTP stack (starlette, uvicorn, the MCP SDK) costs start-up time.
    from browserd.daemon.server.http.address import ListenAddress
    from browserd.daemon.server.http.http_server import bind, check_listen
    from browserd.daemon.server.http.tokens import TokenStore

    tokens = TokenStore.of(config.http)
    if inherited is not None:
        host, port = inherited.getsockname()[:2]
        check_listen(config.http, tokens, ListenAddress(host, port))
        return inherited
    return bind(check_listen(config.http, tokens))


def _has_uvloop() -> bool:
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return False
    return True


def _unlink(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
