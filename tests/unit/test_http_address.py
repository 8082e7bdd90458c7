"""The HTTP server's listen address: what `[http] listen` and `browserd daemon --http` accept."""

from __future__ import annotations

from pathlib import Path

import pytest

from browserd.daemon.config import HttpConfig
from browserd.daemon.errors import InvalidParameter, NotAllowed
from browserd.daemon.server.http.address import DEFAULT_PORT, ListenAddress, parse_listen
from browserd.daemon.server.http.http_server import check_listen
from browserd.daemon.server.http.tokens import TokenStore


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("127.0.0.1:3027", ListenAddress("127.0.0.1", 3027)),
        ("[::1]:8080", ListenAddress("::1", 8080)),
        ("::1", ListenAddress("::1", DEFAULT_PORT)),
        ("localhost", ListenAddress("localhost", DEFAULT_PORT)),
        (":9000", ListenAddress("127.0.0.1", 9000)),
        ("0.0.0.0:0", ListenAddress("0.0.0.0", 0)),
    ],
)
def test_listen_addresses_parse(text: str, expected: ListenAddress) -> None:
    assert parse_listen(text) == expected


@pytest.mark.parametrize("text", ["127.0.0.1:http", "[::1", "127.0.0.1:70000"])
def test_a_bad_listen_address_names_the_format(text: str) -> None:
    with pytest.raises(InvalidParameter) as caught:
        parse_listen(text)
    assert repr(text) in str(caught.value)
    assert "host:port" in caught.value.recover_hint


def test_loopback_addresses_are_told_from_the_network() -> None:
    assert parse_listen("127.0.0.2:1").loopback
    assert parse_listen("[::1]:1").loopback
    assert not parse_listen("0.0.0.0:1").loopback
    assert not parse_listen("example.com:1").loopback


def test_a_network_address_needs_a_token_then_tls(tmp_path: Path) -> None:
    tokens = TokenStore(tmp_path / "tokens.json")
    config = HttpConfig(enabled=True, listen="0.0.0.0:3027")
    with pytest.raises(NotAllowed, match="only once a token exists") as caught:
        check_listen(config, tokens)
    assert "browserd tokens create" in caught.value.recover_hint
    tokens.create("ci", "remote", None, None)
    with pytest.raises(NotAllowed, match="only over TLS") as caught:
        check_listen(config, tokens)
    assert "reverse proxy" in caught.value.recover_hint
    tls = HttpConfig(enabled=True, listen="0.0.0.0:3027", tls_cert="/tmp/c.pem", tls_key="/tmp/k.pem")
    assert check_listen(tls, tokens) == ListenAddress("0.0.0.0", 3027)


def test_loopback_needs_neither(tmp_path: Path) -> None:
    assert check_listen(HttpConfig(enabled=True), TokenStore(tmp_path / "none.json")).loopback


def test_tls_needs_both_files(tmp_path: Path) -> None:
    with pytest.raises(NotAllowed, match="tls_cert and tls_key"):
        check_listen(HttpConfig(enabled=True, tls_cert="/tmp/cert.pem"), TokenStore(tmp_path / "t.json"))
