"""The /mcp guard's rules that need no server: the per-token rate and which Host and Origin values pass."""

from __future__ import annotations

from browserd.daemon.config import HttpConfig
from browserd.daemon.server.http.address import ListenAddress
from browserd.daemon.server.http.mcp_guard import RateLimit, security_settings


def test_a_token_gets_its_burst_then_waits_for_the_refill() -> None:
    rate = RateLimit(per_minute=3)
    assert [rate.wait_s("a", now=0.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert rate.wait_s("a", now=0.0) == 20.0  # one request every 60/3 s
    assert rate.wait_s("b", now=0.0) == 0.0, "another token has its own bucket"
    assert rate.wait_s("a", now=20.0) == 0.0
    assert rate.wait_s("a", now=20.0) > 0


def test_a_loopback_listener_accepts_its_loopback_names_and_nothing_else() -> None:
    settings = security_settings(HttpConfig(), ListenAddress("127.0.0.1", 3027))
    assert settings.enable_dns_rebinding_protection
    assert {"127.0.0.1:3027", "localhost:*", "[::1]:*"} <= set(settings.allowed_hosts)
    assert "http://127.0.0.1:3027" in settings.allowed_origins
    assert not any("example" in host for host in settings.allowed_hosts)


def test_a_tls_listener_accepts_https_origins_of_its_configured_names_only() -> None:
    config = HttpConfig(
        listen="0.0.0.0:443",
        tls_cert="c.pem",
        tls_key="k.pem",
        allowed_hosts=["browser.example.com"],
        allowed_origins=["https://app.example.com"],
    )
    settings = security_settings(config, ListenAddress("0.0.0.0", 443))
    assert "browser.example.com" in settings.allowed_hosts and "localhost:*" not in settings.allowed_hosts
    assert "https://browser.example.com" in settings.allowed_origins
    assert "http://browser.example.com" not in settings.allowed_origins
    assert "https://app.example.com" in settings.allowed_origins
