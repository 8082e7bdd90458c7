"""The bridge's WebSocket server: who may connect, and the challenge-response every connection passes.

Refused before the upgrade (HTTP 4xx, nothing read from the client): a query string (no secret ever
travels in a URL), a Host that is not this loopback port (DNS rebinding), an Origin that is not
`chrome-extension://<id>` of a paired extension (or of any extension while a pairing code is pending).
After the upgrade the client has one frame, of bounded size and within a deadline, to answer the
challenge; anything else closes the connection. Only then does it become an ExtensionLink.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import secrets
from collections.abc import Callable
from http import HTTPStatus
from typing import Any

import anyio
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from browserd.daemon.bridge.link import ExtensionLink
from browserd.daemon.bridge.pairing import (
    EXTENSION_ID,
    NONCE,
    PROTOCOL,
    Pairing,
    key_from_code,
    mac,
    normalise_code,
    transcript,
)
from browserd.daemon.bridge.relay import CdpRelay
from browserd.daemon.config import BridgeConfig
from browserd.daemon.errors import BridgeDisabled, ExtensionNotConnected
from browserd.daemon.policy.addresses import loopback_host

log = logging.getLogger(__name__)

HOST = "127.0.0.1"
ORIGIN_PREFIX = "chrome-extension://"
HANDSHAKE_TIMEOUT_S = 5.0
# The answer to the challenge is a few hundred bytes; after it, CDP results (screenshots) are large.
PRE_AUTH_MAX_BYTES = 4096
AUTHED_MAX_BYTES = 64 * 1024 * 1024
# Connections that have not proven a key yet, at once: more are refused before the upgrade.
MAX_PENDING = 8

# How often the side panel's copy of the daemon's sessions and runs is brought up to date.
SUMMARY_EVERY_S = 0.5

# How long a window waits for the extension to (re)connect before saying it is not connected.
RESUME_WAIT_S = 2.0

# Close codes the side panel shows the user (4000-4999 are the application's).
CLOSE_REFUSED = 4001
CLOSE_PROTOCOL = 4002
CLOSE_DUPLICATE = 4009

_NEW_CODE = "Run `browserd bridge pair` for a new code and enter it in the side panel."


class Refused(Exception):
    def __init__(self, code: int, reason: str, error_code: str = "BRIDGE_AUTH_FAILED", hint: str = "") -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason
        self.error_code = error_code
        self.hint = hint


class BridgeServer:
    def __init__(self, config: BridgeConfig, pairing: Pairing | None = None) -> None:
        self.config = config
        self.pairing = pairing or Pairing(code_ttl_s=config.pair_code_ttl_s)
        self.links: dict[str, ExtensionLink] = {}
        self.listening = False
        self.port = config.port
        self.failure: str | None = None
        self._pending = 0
        self._link_changed = anyio.Event()
        # The daemon's sessions and runs as `browserd status` shows them (daemon/summary.py), for the side panel.
        self.summary: Callable[[], dict[str, Any]] | None = None

    # -- serving -------------------------------------------------------------------------------------

    async def serve(self, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Listen until cancelled; a port in use is logged and reported by status, not fatal to the daemon."""
        try:
            server = await serve(
                self._handle,
                HOST,
                self.config.port,
                process_request=self._check_request,
                max_size=PRE_AUTH_MAX_BYTES,
                max_queue=4,
                server_header=None,
            )
        except OSError as exc:
            self.failure = f"cannot listen on {HOST}:{self.config.port}: {exc.strerror or exc}"
            log.error("bridge: %s", self.failure)
            task_status.started()
            return
        self.port = server.sockets[0].getsockname()[1]
        self.listening = True
        log.info("bridge listening on %s:%s", HOST, self.port)
        task_status.started()
        try:
            await anyio.sleep_forever()
        finally:
            self.listening = False
            server.close()
            with anyio.CancelScope(shield=True), anyio.move_on_after(2):
                await server.wait_closed()

    def _check_request(self, connection: ServerConnection, request: Request) -> Response | None:
        reason = self._refusal(request)
        if reason is not None:
            status, text = reason
            log.warning("bridge: refused a connection: %s", text)
            return connection.respond(status, text + "\n")
        self._pending += 1
        return None

    def _refusal(self, request: Request) -> tuple[HTTPStatus, str] | None:
        if "?" in request.path or request.path != "/":
            # Never log the path: it may carry exactly the kind of token this refuses.
            return HTTPStatus.BAD_REQUEST, "the bridge takes no path or query string; a key never goes in a URL"
        if not loopback_host(request.headers.get("Host", ""), self.port):
            return HTTPStatus.FORBIDDEN, "Host is not this loopback address"
        origin = request.headers.get("Origin", "")
        extension_id = origin.removeprefix(ORIGIN_PREFIX)
        if not origin.startswith(ORIGIN_PREFIX) or not EXTENSION_ID.match(extension_id):
            return HTTPStatus.FORBIDDEN, "only the browserd extension may connect"
        if self.pairing.key(extension_id) is None and not self.pairing.code_pending():
            return HTTPStatus.FORBIDDEN, "this extension is not paired; run `browserd bridge pair`"
        if self._pending >= MAX_PENDING:
            return HTTPStatus.SERVICE_UNAVAILABLE, "too many connections waiting to authenticate"
        return None

    async def _handle(self, ws: ServerConnection) -> None:
        try:
            try:
                link = await self._authenticate(ws)
            finally:
                self._pending -= 1
        except Refused as refused:
            log.warning("bridge: %s", refused.reason)
            error = {"error": refused.reason, "errorCode": refused.error_code, "recoverHint": refused.hint}
            try:
                await ws.send(json.dumps({"type": "ERROR", **error}))
                await ws.close(refused.code, refused.reason[:120])
            except ConnectionClosed:
                pass
            return
        except ConnectionClosed:
            return
        self.links[link.extension_id] = link
        self._changed()
        log.info("bridge: extension %s connected", link.extension_id)
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._keep_informed, link)
                await link.serve()
                tg.cancel_scope.cancel()
        finally:
            if self.links.get(link.extension_id) is link:
                del self.links[link.extension_id]
            self._changed()
            log.info("bridge: extension %s disconnected", link.extension_id)

    async def _keep_informed(self, link: ExtensionLink) -> None:
        """The side panel's view of the daemon, live: the summary again whenever it changed (checked twice a
        second; a status is a few dicts, and an unchanged one is not sent)."""
        last: dict[str, Any] | None = None
        while self.summary is not None and not link.closed:
            current: dict[str, Any] | None = last
            try:
                current = self.summary()
            except Exception:  # a session closing mid-read: the panel waits for the next one, the link lives on
                log.debug("bridge: reading the summary failed", exc_info=True)
            if current is not None and current != last:
                try:
                    await link.send({"type": "SUMMARY", **current})
                except ExtensionNotConnected:
                    return
                last = current
            await anyio.sleep(SUMMARY_EVERY_S)

    async def _authenticate(self, ws: ServerConnection) -> ExtensionLink:
        remote = ws.remote_address[0] if ws.remote_address else ""
        if not ipaddress.ip_address(remote).is_loopback:  # the bind address makes this unreachable; belt and braces
            raise Refused(CLOSE_REFUSED, "connections come from this machine only")
        assert ws.request is not None
        extension_id = ws.request.headers["Origin"].removeprefix(ORIGIN_PREFIX)
        server_nonce = secrets.token_hex(32)
        await ws.send(json.dumps({"type": "CHALLENGE", "protocol": PROTOCOL, "nonce": server_nonce}))
        try:
            with anyio.fail_after(HANDSHAKE_TIMEOUT_S):
                raw = await ws.recv()
        except TimeoutError as exc:
            raise Refused(CLOSE_REFUSED, "no answer to the challenge in time") from exc
        hello = _decode(raw)
        if hello.get("type") not in ("HELLO", "PAIR"):
            raise Refused(CLOSE_REFUSED, "the first frame must be HELLO or PAIR")
        if hello.get("protocol") != PROTOCOL:
            raise Refused(
                CLOSE_PROTOCOL,
                f"the extension speaks bridge protocol {hello.get('protocol')!r}, this daemon {PROTOCOL}",
                "PROTOCOL_MISMATCH",
                "Update the extension or browserd so that both are from the same release.",
            )
        client_nonce = hello.get("clientNonce")
        if (
            hello.get("extensionId") != extension_id
            or not isinstance(client_nonce, str)
            or not NONCE.match(client_nonce)
        ):
            raise Refused(CLOSE_REFUSED, "the hello does not match this connection")
        proof = hello.get("proof")
        if not isinstance(proof, str):
            raise Refused(CLOSE_REFUSED, "the hello carries no proof")
        if hello.get("type") == "PAIR":
            key = self._pair(extension_id, server_nonce, client_nonce, proof)
        else:
            stored = self.pairing.key(extension_id)
            expected = mac(stored, transcript("hello", extension_id, server_nonce, client_nonce)) if stored else ""
            if stored is None or not _same(proof, expected):
                raise Refused(CLOSE_REFUSED, "the extension's key does not verify", hint=_NEW_CODE)
            key = stored
        if extension_id in self.links and not self.links[extension_id].closed:
            raise Refused(
                CLOSE_DUPLICATE,
                "another instance of this extension is connected already",
                "ALREADY_CONNECTED",
                "Close the other Chrome window or profile running the browserd extension.",
            )
        ws.protocol.max_message_size = AUTHED_MAX_BYTES
        await ws.send(
            json.dumps(
                {
                    "type": "WELCOME",
                    "protocol": PROTOCOL,
                    # Proves the daemon holds the key too: a process squatting the port cannot answer this.
                    "serverProof": mac(key, transcript("server", extension_id, server_nonce, client_nonce)),
                }
            )
        )
        return ExtensionLink(extension_id, ws)

    def _pair(self, extension_id: str, server_nonce: str, client_nonce: str, proof: str) -> bytes:
        code = self.pairing.take_code()
        if code is None:
            raise Refused(CLOSE_REFUSED, "no pairing code is pending", hint=_NEW_CODE)
        expected = mac(normalise_code(code).encode(), transcript("pair", extension_id, server_nonce, client_nonce))
        if not _same(proof, expected):
            raise Refused(CLOSE_REFUSED, "wrong pairing code", hint=_NEW_CODE)
        key = key_from_code(code, extension_id, server_nonce, client_nonce)
        self.pairing.store(extension_id, key)
        log.info("bridge: paired extension %s", extension_id)
        return key

    # -- what the daemon asks ------------------------------------------------------------------------

    def _changed(self) -> None:
        self._link_changed.set()
        self._link_changed = anyio.Event()

    async def wait_for_link(self, timeout_s: float) -> ExtensionLink | None:
        """The connected extension, waiting up to `timeout_s` for one (a service worker coming back)."""
        with anyio.move_on_after(timeout_s):
            while True:
                link = self.link()
                if link is not None:
                    return link
                await self._link_changed.wait()
        return None

    async def open_relay(self, session_id: str, client_name: str) -> CdpRelay:
        """A CDP endpoint for a new extension window: its tabs live in a tab group named after the client (who
        may open one is the session's TrustPolicy's decision, made before this)."""
        if not self.listening:
            raise BridgeDisabled("the extension bridge is not listening", port=self.config.port)
        # A service worker that was suspended comes back within a couple of seconds: wait that long, no more.
        link = await self.wait_for_link(RESUME_WAIT_S)
        if link is None:
            raise ExtensionNotConnected("no browserd extension is connected to the bridge")
        info = await link.call("session.start", {"sessionId": session_id, "client": client_name})
        relay = CdpRelay(link, session_id, str(info.get("userAgent", "")), str(info.get("product", "Chrome/0")))
        await relay.start()
        return relay

    def link(self) -> ExtensionLink | None:
        return next((link for link in self.links.values() if not link.closed), None)

    def new_code(self) -> dict[str, Any]:
        pending = self.pairing.new_code()
        return {"code": pending.code, "expiresInS": self.pairing.code_ttl_s, "port": self.port}

    def unpair(self, extension_id: str | None) -> list[str]:
        gone = self.pairing.unpair(extension_id)
        for ext in gone:
            link = self.links.get(ext)
            if link is not None:
                link.close(CLOSE_REFUSED, "unpaired")
        return gone

    def status(self) -> dict[str, Any]:
        return {
            "enabled": self.config.enabled,
            "listening": self.listening,
            "address": f"{HOST}:{self.port}",
            "failure": self.failure,
            "paired": self.pairing.paired(),
            "connected": [ext for ext, link in self.links.items() if not link.closed],
            "codePending": self.pairing.code_pending(),
        }


def _decode(raw: str | bytes) -> dict[str, Any]:
    try:
        message = json.loads(raw)
    except ValueError as exc:
        raise Refused(CLOSE_REFUSED, "the first frame is not JSON") from exc
    if not isinstance(message, dict):
        raise Refused(CLOSE_REFUSED, "the first frame is not an object")
    return message


def _same(given: str, expected: str) -> bool:
    return hmac.compare_digest(given.encode(), expected.encode())
