"""The HTTP server's listen address: what `[http] listen` and `browserd daemon --http` accept."""

from __future__ import annotations

import pytest

from browserd.daemon.config import HttpConfig
from browserd.daemon.errors import InvalidParameter, NotAllowed
from browserd.daemon.server.http.address import DEFAULT_PORT, ListenAddress, parse_listen
from browserd.daemon.server.http.server import check_listen


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


def test_a_network_address_is_refused_without_protection() -> None:
    with pytest.raises(NotAllowed, match="tokens"):
        check_listen(HttpConfig(enabled=True, listen="0.0.0.0:3027"))


def test_tls_needs_both_files() -> None:
    with pytest.raises(NotAllowed, match="tls_cert and tls_key"):
        check_listen(HttpConfig(enabled=True, tls_cert="/tmp/cert.pem"))
