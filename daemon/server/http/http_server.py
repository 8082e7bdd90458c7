"""The daemon's HTTP server: uvicorn on the daemon's own event loop, under the daemon's task group.

Started only when `[http] enabled` (or `browserd daemon --http ADDR`). The daemon binds the port itself
(or takes it from systemd), so a taken port or a refused address is a clear start-up error, and
uvicorn never installs signal handlers or logging of its own: the daemon owns both.
"""

from __future__ import annotations

import contextlib
import logging
import socket
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import anyio
import uvicorn
from anyio.abc import TaskStatus

from browserd.daemon.config import HttpConfig
from browserd.daemon.errors import NotAllowed
from browserd.daemon.server.http.address import ListenAddress, parse_listen
from browserd.daemon.server.http.http_app import HttpApp, build_app
from browserd.daemon.server.http.tokens import TokenStore

if TYPE_CHECKING:
    from browserd.daemon.server.daemon_process import Daemon

log = logging.getLogger(__name__)
# uvicorn's own start and stop lines repeat the daemon's; its errors still reach the daemon log.
logging.getLogger("uvicorn.error").setLevel(logging.WARNING)

# Open streams (SSE) get this long to end once the daemon stops, then they are cut.
_GRACEFUL_S = 2


class _EmbeddedServer(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield  # the daemon's own signal watcher stops everything, this server included


def check_listen(config: HttpConfig, tokens: TokenStore, address: ListenAddress | None = None) -> ListenAddress:
    """The address to serve on (`[http] listen` unless given), or NotAllowed when it may not be served so."""
    address = address or parse_listen(config.listen)
    if bool(config.tls_cert) != bool(config.tls_key):
        raise NotAllowed("[http] tls_cert and tls_key go together", hint="Set both PEM files, or neither.")
    if address.loopback:
        return address
    if not tokens.active():
        raise NotAllowed(
            f"the HTTP server listens on {address} (beyond this machine) only once a token exists",
            hint="Create one with `browserd tokens create --name NAME --trust remote`, then start the daemon again.",
        )
    if not config.tls_cert:
        raise NotAllowed(
            f"the HTTP server listens on {address} (beyond this machine) only over TLS: tokens must not cross "
            "the network in clear text",
            hint="Give --tls-cert and --tls-key, or listen on 127.0.0.1 and put a TLS reverse proxy (Caddy, "
            "nginx) in front, listing its public host name in [http] allowed_hosts (docs/http.md).",
        )
    return address


def bind(address: ListenAddress) -> socket.socket:
    family = socket.AF_INET6 if ":" in address.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((address.host, address.port))
    except OSError as exc:
        sock.close()
        raise NotAllowed(
            f"cannot listen on {address}: {exc.strerror}",
            hint="Choose another port with [http] listen or `browserd daemon --http HOST:PORT`.",
        ) from None
    sock.listen(128)
    sock.setblocking(False)
    return sock


class HttpServer:
    def __init__(self, daemon: Daemon, sock: socket.socket) -> None:
        self._daemon = daemon
        self._sock = sock
        host, port = sock.getsockname()[:2]
        self.address = ListenAddress(host, port)
        self._app: HttpApp | None = None

    async def serve(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        config = self._daemon.config.http
        http_app = self._app = build_app(self._daemon)
        server = _EmbeddedServer(
            uvicorn.Config(
                http_app.app,
                lifespan="off",  # route sets' life cycles run in the daemon's task group (HttpApp.running)
                log_config=None,
                access_log=False,
                server_header=False,
                timeout_graceful_shutdown=_GRACEFUL_S,
                ssl_certfile=config.tls_cert or None,
                ssl_keyfile=config.tls_key or None,
            )
        )
        ended = anyio.Event()

        async def run_server() -> None:
            # Shielded: uvicorn closes its connections only when asked to exit, never when cancelled.
            with anyio.CancelScope(shield=True):
                try:
                    await server.serve(sockets=[self._sock])
                finally:
                    ended.set()

        async with http_app.running(), anyio.create_task_group() as tg:
            tg.start_soon(run_server)
            log.info("HTTP server on %s", self.url)
            task_status.started()
            try:
                await anyio.sleep_forever()
            finally:
                server.should_exit = True
                with anyio.CancelScope(shield=True), anyio.move_on_after(_GRACEFUL_S + 3):
                    await ended.wait()

    def status(self) -> dict[str, Any]:
        return {"url": self.url, **(self._app.status() if self._app is not None else {})}

    @property
    def url(self) -> str:
        return f"{'https' if self._daemon.config.http.tls_cert else 'http'}://{self.address}"
