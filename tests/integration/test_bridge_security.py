"""The extension bridge's WebSocket against an attacker (DESIGN.md §3 "bridge/", D-45, S3-44).

A real daemon with `[bridge] enabled`; a Python WebSocket client plays both the paired extension and
the attacker. Every attack is refused and leaves nothing behind: no key stored, no extension connected,
and the daemon still answers the real extension afterwards.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
import stat
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from browserd.daemon.bridge.pairing import PROTOCOL, key_from_code, mac, transcript
from tests.conftest import BrowserdHome, own_home

pytestmark = pytest.mark.anyio

EXTENSION = "abcdefghijklmnopabcdefghijklmnop"
OTHER_EXTENSION = "ponmlkjihgfedcbaponmlkjihgfedcba"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Bridge:
    """The daemon's bridge as a test sees it: its port, the CLI, and clients that speak its protocol."""

    def __init__(self, home: BrowserdHome, port: int) -> None:
        self.home = home
        self.port = port
        self.url = f"ws://127.0.0.1:{port}/"

    def cli(self, *args: str) -> Any:
        result = self.home.browserd("bridge", *args, "--json") if args[0] != "unpair" else None
        if result is None:
            done = self.home.browserd("bridge", *args)
            assert done.returncode == 0, done.stderr
            return done.stdout
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)

    def status(self) -> dict[str, Any]:
        data: dict[str, Any] = self.cli("status")
        return data

    @asynccontextmanager
    async def raw(self, origin: str | None = f"chrome-extension://{EXTENSION}", **kwargs: Any) -> AsyncIterator[Any]:
        url = kwargs.pop("url", self.url)
        async with connect(url, origin=origin, open_timeout=10, **kwargs) as ws:  # type: ignore[arg-type]
            yield ws

    async def pair(self, extension: str = EXTENSION) -> bytes:
        """Pair like the side panel: take a code from `browserd bridge pair`, prove it, derive the key."""
        code = self.cli("pair")["code"]
        async with self.raw(origin=f"chrome-extension://{extension}") as ws:
            challenge = await _recv(ws)
            client_nonce = secrets.token_hex(16)
            proof = mac(code.replace("-", "").encode(), transcript("pair", extension, challenge["nonce"], client_nonce))
            await ws.send(_hello("PAIR", extension, client_nonce, proof))
            welcome = await _recv(ws)
            assert welcome["type"] == "WELCOME", welcome
            return key_from_code(code, extension, challenge["nonce"], client_nonce)

    @asynccontextmanager
    async def connected(self, key: bytes, extension: str = EXTENSION) -> AsyncIterator[ClientConnection]:
        async with self.raw(origin=f"chrome-extension://{extension}") as ws:
            challenge = await _recv(ws)
            client_nonce = secrets.token_hex(16)
            proof = mac(key, transcript("hello", extension, challenge["nonce"], client_nonce))
            await ws.send(_hello("HELLO", extension, client_nonce, proof))
            welcome = await _recv(ws)
            assert welcome["type"] == "WELCOME", welcome
            expected = mac(key, transcript("server", extension, challenge["nonce"], client_nonce))
            assert welcome["serverProof"] == expected, "the daemon did not prove it holds the key"
            yield ws


def _hello(kind: str, extension: str, client_nonce: str, proof: str, protocol: int = PROTOCOL) -> str:
    return json.dumps(
        {"type": kind, "protocol": protocol, "extensionId": extension, "clientNonce": client_nonce, "proof": proof}
    )


def _signed_hello(key: bytes, challenge: dict[str, Any], protocol: int = PROTOCOL) -> str:
    nonce = secrets.token_hex(16)
    return _hello(
        "HELLO", EXTENSION, nonce, mac(key, transcript("hello", EXTENSION, challenge["nonce"], nonce)), protocol
    )


async def _recv(ws: ClientConnection) -> dict[str, Any]:
    message: dict[str, Any] = json.loads(await ws.recv())
    return message


async def _refused_status(bridge: Bridge, **kwargs: Any) -> int:
    with pytest.raises(InvalidStatus) as refused:
        async with bridge.raw(**kwargs):
            pass
    return int(refused.value.response.status_code)


async def _closed_with(ws: ClientConnection) -> tuple[int | None, list[dict[str, Any]]]:
    """Read until the daemon closes; its close code and what it said before."""
    said = []
    try:
        while True:
            said.append(json.loads(await ws.recv()))
    except ConnectionClosed as closed:
        return (closed.rcvd.code if closed.rcvd else None), said


@pytest.fixture(scope="module")
def bridge() -> Iterator[Bridge]:
    port = _free_port()
    with own_home() as home:
        # Idle exit off: bridge connections do not hold the daemon (D-06), and these tests open no session.
        home.env.update(BROWSERD_BRIDGE_ENABLED="1", BROWSERD_BRIDGE_PORT=str(port), BROWSERD_DAEMON_IDLE_EXIT_S="0")
        bridge = Bridge(home, port)
        assert bridge.status()["listening"], home.log.read_text() if home.log.exists() else "no daemon log"
        yield bridge


@pytest.fixture
def key(bridge: Bridge) -> Iterator[bytes]:
    """A freshly paired extension, unpaired again after the test."""
    import anyio

    key = anyio.run(bridge.pair)
    yield key
    bridge.cli("unpair")


def _nothing_connected(bridge: Bridge) -> None:
    status = bridge.status()
    assert status["connected"] == [], f"an attacker got a connection: {status}"


# -- pairing and the real extension ------------------------------------------------------------------


async def test_pairing_stores_a_private_key_and_the_extension_then_connects_by_proof(bridge: Bridge) -> None:
    key = await bridge.pair()
    try:
        keys_file = bridge.home.root / "data" / "browserd" / "bridge" / "keys.json"
        assert stat.S_IMODE(keys_file.stat().st_mode) == 0o600
        assert stat.S_IMODE(keys_file.parent.stat().st_mode) == 0o700
        assert key.hex() in keys_file.read_text()
        async with bridge.connected(key):
            status = bridge.status()
            assert status["connected"] == [EXTENSION] and EXTENSION in status["paired"]
            daemon_status = json.loads(bridge.home.browserd("status", "--json").stdout)
            assert daemon_status["bridge"]["connected"] == [EXTENSION], "browserd status does not show the bridge"
        log = bridge.home.log.read_text()
        assert key.hex() not in log, "the key was logged"
    finally:
        bridge.cli("unpair")


async def test_a_wrong_pairing_code_uses_the_code_up(bridge: Bridge) -> None:
    code = bridge.cli("pair")["code"]
    async with bridge.raw() as ws:
        challenge = await _recv(ws)
        nonce = secrets.token_hex(16)
        proof = mac(b"WRONGCOD", transcript("pair", EXTENSION, challenge["nonce"], nonce))
        await ws.send(_hello("PAIR", EXTENSION, nonce, proof))
        code_, said = await _closed_with(ws)
        assert code_ == 4001 and said[0]["errorCode"] == "BRIDGE_AUTH_FAILED" and said[0]["recoverHint"]
    # The right code, now, is too late: one attempt per code, so it cannot be guessed.
    assert not bridge.status()["codePending"]
    assert await _refused_status(bridge) == 403
    assert code not in bridge.home.log.read_text(), "the pairing code was logged"
    assert EXTENSION not in bridge.status()["paired"]


# -- the attacks -------------------------------------------------------------------------------------


async def test_an_unpaired_process_is_refused(bridge: Bridge) -> None:
    assert await _refused_status(bridge, origin=f"chrome-extension://{OTHER_EXTENSION}") == 403
    _nothing_connected(bridge)


async def test_a_missing_origin_is_refused(bridge: Bridge, key: bytes) -> None:
    assert await _refused_status(bridge, origin=None) == 403
    _nothing_connected(bridge)


async def test_a_forged_origin_without_the_key_is_refused(bridge: Bridge, key: bytes) -> None:
    # The paired extension's Origin is easy to forge outside a browser; the proof is not.
    async with bridge.raw() as ws:
        challenge = await _recv(ws)
        nonce = secrets.token_hex(16)
        forged = mac(secrets.token_bytes(32), transcript("hello", EXTENSION, challenge["nonce"], nonce))
        await ws.send(_hello("HELLO", EXTENSION, nonce, forged))
        code, said = await _closed_with(ws)
    assert code == 4001 and said[-1]["type"] == "ERROR"
    _nothing_connected(bridge)


async def test_a_web_page_origin_is_refused(bridge: Bridge, key: bytes) -> None:
    assert await _refused_status(bridge, origin="http://evil.test") == 403
    _nothing_connected(bridge)


async def test_a_host_other_than_loopback_is_refused_as_dns_rebinding_would_send(bridge: Bridge, key: bytes) -> None:
    sock = socket.create_connection(("127.0.0.1", bridge.port))
    status = await _refused_status(bridge, url=f"ws://evil.test:{bridge.port}/", sock=sock)
    assert status == 403
    _nothing_connected(bridge)


async def test_a_replayed_handshake_is_refused(bridge: Bridge, key: bytes) -> None:
    async with bridge.raw() as ws:
        recorded = _signed_hello(key, await _recv(ws))
        await ws.send(recorded)
        assert (await _recv(ws))["type"] == "WELCOME"
    async with bridge.raw() as ws:
        await _recv(ws)  # a new challenge, which the recorded answer does not answer
        await ws.send(recorded)
        code, _ = await _closed_with(ws)
    assert code == 4001
    _nothing_connected(bridge)


async def test_a_stale_key_after_unpair_is_refused_and_the_live_connection_ends(bridge: Bridge, key: bytes) -> None:
    async with bridge.connected(key) as ws:
        assert "Unpaired" in bridge.cli("unpair", EXTENSION)
        code, _ = await _closed_with(ws)
        assert code == 4001
    assert await _refused_status(bridge) == 403
    _nothing_connected(bridge)


async def test_a_token_in_a_query_string_is_refused_and_not_logged(bridge: Bridge, key: bytes) -> None:
    token = key.hex()
    assert await _refused_status(bridge, url=f"{bridge.url}?token={token}") == 400
    assert await _refused_status(bridge, url=f"ws://127.0.0.1:{bridge.port}/{token}") == 400
    assert token not in bridge.home.log.read_text()
    _nothing_connected(bridge)


async def test_a_flood_of_frames_before_authentication_closes_the_connection(bridge: Bridge, key: bytes) -> None:
    async with bridge.raw() as ws:
        with contextlib.suppress(ConnectionClosed):
            for _ in range(200):
                await ws.send(json.dumps({"type": "REQUEST", "id": 1, "action": "tabs.create", "params": {}}))
        code, _ = await _closed_with(ws)
    assert code == 4001
    async with bridge.raw() as ws:
        with contextlib.suppress(ConnectionClosed):
            await ws.send("x" * 100_000)  # bigger than any answer to a challenge
        code, _ = await _closed_with(ws)
    assert code == 1009
    _nothing_connected(bridge)
    async with bridge.connected(key):  # and the daemon still serves the real extension
        assert bridge.status()["connected"] == [EXTENSION]


async def test_a_second_extension_instance_is_refused(bridge: Bridge, key: bytes) -> None:
    async with bridge.connected(key):
        async with bridge.raw() as second:
            await second.send(_signed_hello(key, await _recv(second)))
            code, said = await _closed_with(second)
        assert code == 4009 and said[-1]["errorCode"] == "ALREADY_CONNECTED"
        assert bridge.status()["connected"] == [EXTENSION]


async def test_a_wrong_protocol_version_is_a_clear_error(bridge: Bridge, key: bytes) -> None:
    async with bridge.raw() as ws:
        challenge = await _recv(ws)
        assert challenge["protocol"] == PROTOCOL
        await ws.send(_signed_hello(key, challenge, protocol=PROTOCOL + 1))
        code, said = await _closed_with(ws)
    assert code == 4002
    assert said[-1]["errorCode"] == "PROTOCOL_MISMATCH" and "protocol" in said[-1]["error"]
    _nothing_connected(bridge)


def _non_loopback_address() -> str | None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # no packet is sent: this only picks the outgoing interface
        except OSError:
            return None
        address = str(probe.getsockname()[0])
    return None if address.startswith("127.") or address == "0.0.0.0" else address


def test_the_bridge_listens_on_loopback_only(bridge: Bridge) -> None:
    listening = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as rows:
            for row in list(rows)[1:]:
                local, state = row.split()[1], row.split()[3]
                if state == "0A" and int(local.rsplit(":", 1)[1], 16) == bridge.port:
                    listening.append(local.rsplit(":", 1)[0])
    assert listening == ["0100007F"], f"the bridge listens on {listening}, not 127.0.0.1 only"
    address = _non_loopback_address()
    if address is None:
        pytest.skip("this machine has no non-loopback address to connect from")
    with pytest.raises(OSError), socket.create_connection((address, bridge.port), timeout=5):
        pass


def test_pairing_is_refused_while_the_bridge_is_disabled(scratch: os.PathLike[str]) -> None:
    with own_home() as home:
        result = home.browserd("bridge", "pair")
        assert result.returncode != 0
        assert "[NOT_SUPPORTED]" in result.stderr and "[bridge]" in result.stderr
