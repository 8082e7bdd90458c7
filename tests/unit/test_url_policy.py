"""The address and origin rules of the URL policy (D-33, S2-104), without a browser."""

from __future__ import annotations

import ipaddress

import pytest

from browserd.daemon.config import ConfigError, SecurityConfig, load
from browserd.daemon.errors import UrlNotAllowed
from browserd.daemon.policy.addresses import address_rule, parse_address
from browserd.daemon.policy.origins import BadPattern, OriginPattern
from browserd.daemon.policy.urls import UrlPolicy

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("address", "rule"),
    [
        ("127.0.0.1", "loopback"),
        ("127.255.0.9", "loopback"),
        ("::1", "loopback"),
        ("10.0.0.1", "private-address"),
        ("172.16.5.4", "private-address"),
        ("192.168.1.1", "private-address"),
        ("100.64.0.1", "private-address"),  # carrier-grade NAT
        ("fc00::1", "private-address"),
        ("fd12:3456::1", "private-address"),
        ("169.254.169.254", "link-local"),  # cloud metadata
        ("fe80::1", "link-local"),
        ("0.0.0.0", "unspecified-address"),
        ("0.1.2.3", "unspecified-address"),
        ("::", "unspecified-address"),
        ("224.0.0.1", "multicast"),
        ("ff02::1", "multicast"),
        ("::ffff:127.0.0.1", "loopback"),  # IPv4-mapped
        ("::ffff:10.0.0.1", "private-address"),
        ("::127.0.0.1", "loopback"),  # IPv4-compatible
        ("64:ff9b::a9fe:a9fe", "link-local"),  # NAT64 of 169.254.169.254
        ("2002:7f00:1::", "loopback"),  # 6to4 of 127.0.0.1
        ("255.255.255.255", "private-address"),
        ("240.0.0.1", "private-address"),
    ],
)
def test_addresses_a_remote_session_may_not_reach(address: str, rule: str) -> None:
    assert address_rule(ipaddress.ip_address(address)) == rule


@pytest.mark.parametrize("address", ["93.184.216.34", "8.8.8.8", "2606:4700::1111", "::ffff:8.8.8.8", "100.128.0.1"])
def test_public_addresses_are_allowed(address: str) -> None:
    assert address_rule(ipaddress.ip_address(address)) is None


def test_hosts_in_urls_parse_as_addresses() -> None:
    assert parse_address("[::1]") == ipaddress.ip_address("::1")
    assert parse_address("fe80::1%eth0") == ipaddress.ip_address("fe80::1")
    assert parse_address("example.com") is None


@pytest.mark.parametrize(
    ("pattern", "scheme", "host", "port", "expected"),
    [
        ("example.com", "https", "example.com", 443, True),
        ("example.com", "http", "example.com", 8080, True),
        ("example.com", "https", "www.example.com", 443, False),
        ("*.example.com", "https", "a.b.example.com", 443, True),
        ("*.example.com", "https", "example.com", 443, True),
        ("*.example.com", "https", "badexample.com", 443, False),
        ("https://example.com", "https", "example.com", 443, True),
        ("https://example.com", "http", "example.com", 80, False),
        ("https://example.com", "wss", "example.com", 443, True),
        ("https://example.com", None, "example.com", 443, True),  # a CONNECT tunnel: scheme unseen
        ("http://127.0.0.1:8080", "http", "127.0.0.1", 8080, True),
        ("http://127.0.0.1:8080", "http", "127.0.0.1", 8081, False),
        ("10.0.0.5:3000", "http", "10.0.0.5", 3000, True),
        ("[::1]:9000", "http", "::1", 9000, True),
        ("Example.COM.", "http", "example.com", 80, True),
    ],
)
def test_origin_patterns(pattern: str, scheme: str | None, host: str, port: int, expected: bool) -> None:
    assert OriginPattern.parse(pattern).matches(scheme, host, port) is expected


@pytest.mark.parametrize("pattern", ["*", "ftp://example.com", "https://example.com/path", "a.*.com", "http://:80"])
def test_bad_origin_patterns_are_refused(pattern: str) -> None:
    with pytest.raises(BadPattern):
        OriginPattern.parse(pattern)


def test_a_bad_pattern_in_the_configuration_names_its_key() -> None:
    with pytest.raises(ConfigError, match=r"security\.blocked_origins"):
        UrlPolicy(SecurityConfig(blocked_origins=["https://example.com/path"]))


def test_origin_lists_come_from_the_environment() -> None:
    config = load(environ={"BROWSERD_SECURITY_ALLOWED_ORIGINS": "https://a.example,*.b.example"})
    assert config.security.allowed_origins == ["https://a.example", "*.b.example"]


def test_local_sessions_need_no_guard_by_default() -> None:
    policy = UrlPolicy(SecurityConfig())
    assert not policy.guarded("local") and policy.guarded("remote")
    assert UrlPolicy(SecurityConfig(blocked_origins=["x.example"])).guarded("local")
    assert UrlPolicy(SecurityConfig(block_private_networks=True)).checks_addresses("local")


async def rule_of(policy: UrlPolicy, url: str, trust: str = "remote") -> str | None:
    try:
        await policy.check_url(url, trust)  # type: ignore[arg-type]
    except UrlNotAllowed as exc:
        return str(exc.details["rule"])
    return None


async def test_rules_in_order_blocked_then_allowed_then_addresses() -> None:
    policy = UrlPolicy(
        SecurityConfig(
            allowed_origins=["127.0.0.1", "localhost"],
            blocked_origins=["http://127.0.0.1:9999"],
            remote_exempt_origins=["http://127.0.0.1:8000"],
        )
    )
    assert await rule_of(policy, "http://127.0.0.1:9999/", "local") == "blocked-origin"
    assert await rule_of(policy, "http://127.0.0.2/", "local") == "not-in-allowed-origins"
    assert await rule_of(policy, "http://127.0.0.1:8000/page") is None  # exempt
    assert await rule_of(policy, "http://127.0.0.1:8001/page") == "loopback"
    assert await rule_of(policy, "http://localhost:8000/") == "loopback"  # resolved: exemption names an origin
    assert await rule_of(policy, "http://127.0.0.1:8001/", "local") is None


async def test_schemes_for_remote_sessions() -> None:
    policy = UrlPolicy(SecurityConfig())
    assert await rule_of(policy, "file:///etc/passwd") == "file-scheme"
    assert await rule_of(policy, "view-source:https://example.com") == "scheme"
    assert await rule_of(policy, "chrome://settings") == "scheme"
    assert await rule_of(policy, "about:blank") is None
    assert await rule_of(policy, "data:text/html,hi") is None
    assert await rule_of(policy, "file:///etc/passwd", "local") is None


async def test_numeric_host_forms_are_resolved_before_judging() -> None:
    """Browsers read http://2130706433/ and http://0x7f.1/ as 127.0.0.1; the resolver does too."""
    policy = UrlPolicy(SecurityConfig())
    assert await rule_of(policy, "http://2130706433/") == "loopback"
    assert await rule_of(policy, "http://0x7f.1/") == "loopback"


async def test_resolutions_are_cached() -> None:
    policy = UrlPolicy(SecurityConfig(dns_cache_s=60))
    first = await policy.resolve("localhost", 80)
    assert first and all(address_rule(a) == "loopback" for a in first)
    assert await policy.resolve("localhost", 80) is first
