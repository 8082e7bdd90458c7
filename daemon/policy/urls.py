"""The URL policy: which URLs a session may reach, given its trust level and the [security] lists.

Order of the rules: blocked origins (both levels) win, then the allowed list when it is non-empty
(both levels), then for `remote` sessions the scheme (no file:, javascript:, chrome: ...) and every
address the host resolves to (no loopback, private, link-local ... addresses), unless the origin is
in `remote_exempt_origins`. A refusal names its rule in `details.rule`.
"""

from __future__ import annotations

import logging
import socket
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

import anyio

from browserd.daemon.config import SecurityConfig
from browserd.daemon.errors import UrlNotAllowed
from browserd.daemon.policy.addresses import IPAddress, address_rule, parse_address
from browserd.daemon.policy.origins import DEFAULT_PORTS, first_match, parse_patterns
from browserd.protocol.messages import TrustLevel

log = logging.getLogger(__name__)

# Schemes a page loads without any network request: nothing to guard.
# A lookup the resolver does not answer in this time counts as "does not resolve": a guarded request then
# fails with the guard's 502 page instead of holding the browser's connection (and a tool call) forever.
DNS_TIMEOUT_S = 10.0
LOCAL_SCHEMES = {"about", "data", "blob"}
NETWORK_SCHEMES = {"http", "https", "ws", "wss"}
_HINTS = {
    "blocked-origin": "This origin is in security.blocked_origins; choose another site.",
    "not-in-allowed-origins": "Only the origins in security.allowed_origins are reachable; choose one of them.",
    "scheme": "A remote session may open http(s) URLs only.",
}
_ADDRESS_HINT = (
    "A remote session reaches public addresses only; the operator can list this origin in "
    "security.remote_exempt_origins, or use a local session."
)


@dataclass(frozen=True)
class Refusal:
    url: str
    rule: str
    reason: str

    def error(self) -> UrlNotAllowed:
        return UrlNotAllowed(
            f"URL not allowed: {self.url} ({self.reason})",
            hint=_HINTS.get(self.rule, _ADDRESS_HINT),
            url=self.url,
            rule=self.rule,
        )


class UrlPolicy:
    def __init__(self, config: SecurityConfig) -> None:
        self.config = config
        self.allowed = parse_patterns(config.allowed_origins, "allowed_origins")
        self.blocked = parse_patterns(config.blocked_origins, "blocked_origins")
        self.exempt = parse_patterns(config.remote_exempt_origins, "remote_exempt_origins")
        self._dns: dict[tuple[str, int], tuple[float, list[IPAddress]]] = {}

    def guarded(self, trust: TrustLevel) -> bool:
        """Whether a browser context of this trust level needs the guard at all (local: only with lists)."""
        return trust == "remote" or self.config.block_private_networks or bool(self.allowed or self.blocked)

    def checks_addresses(self, trust: TrustLevel) -> bool:
        return trust == "remote" or self.config.block_private_networks

    def scheme_refusal(self, url: str, trust: TrustLevel) -> Refusal | None:
        scheme = urlsplit(url).scheme.lower()
        if trust == "remote" and scheme not in NETWORK_SCHEMES | LOCAL_SCHEMES:
            rule = "file-scheme" if scheme == "file" else "scheme"
            return Refusal(url, rule, f"a remote session cannot open {scheme}: URLs")
        return None

    def origin_refusal(self, url: str, scheme: str | None, host: str, port: int) -> Refusal | None:
        blocked = first_match(self.blocked, scheme, host, port)
        if blocked is not None:
            return Refusal(url, "blocked-origin", f"matches blocked origin {blocked.text!r}")
        if self.allowed and first_match(self.allowed, scheme, host, port) is None:
            return Refusal(url, "not-in-allowed-origins", "not in the allowed origins")
        return None

    async def check_target(
        self, url: str, scheme: str | None, host: str, port: int, trust: TrustLevel, *, connect: bool = False
    ) -> tuple[Refusal | None, list[IPAddress]]:
        """A refusal, or (with `connect`) the addresses to reach the host at (empty: it did not resolve)."""
        refusal = self.origin_refusal(url, scheme, host, port)
        if refusal is not None:
            return refusal, []
        if not self.checks_addresses(trust) or first_match(self.exempt, scheme, host, port) is not None:
            return None, await self.resolve(host, port) if connect else []
        addresses = await self.resolve(host, port)
        for address in addresses:
            rule = address_rule(address)
            if rule is not None:
                named = "" if parse_address(host) is not None else f"{host} resolves to "
                return Refusal(url, rule, f"{named}{address}, a {rule.replace('-', ' ')}"), []
        return None, addresses

    async def refusal(self, url: str, trust: TrustLevel) -> Refusal | None:
        """Why `url` may not load at this trust level, after resolving its host; None: it may."""
        refusal = self.scheme_refusal(url, trust)
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if refusal is None and scheme in NETWORK_SCHEMES and parts.hostname:
            try:
                port = parts.port or DEFAULT_PORTS[scheme]
            except ValueError:
                return None  # the browser reports a bad port better than we can
            refusal, _ = await self.check_target(url, scheme, parts.hostname, port, trust)
        return refusal

    async def check_url(self, url: str, trust: TrustLevel) -> None:
        """Before a tool loads `url`: raise URL_NOT_ALLOWED now rather than let the guard refuse it later."""
        refusal = await self.refusal(url, trust)
        if refusal is not None:
            raise refusal.error()

    async def resolve(self, host: str, port: int) -> list[IPAddress]:
        """Every address `host` resolves to, cached for dns_cache_s; resolved off the event loop."""
        literal = parse_address(host)
        if literal is not None:
            return [literal]
        key = (host.lower(), port)
        cached = self._dns.get(key)
        now = time.monotonic()
        if cached is not None and cached[0] > now:
            return cached[1]
        try:
            with anyio.fail_after(DNS_TIMEOUT_S):
                infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as exc:  # TimeoutError included: an unanswered lookup resolves to nothing, uncached
            log.debug("cannot resolve %s: %s", host, exc)
            return []
        addresses: list[IPAddress] = []
        for info in infos:
            address = parse_address(str(info[4][0]))
            if address is not None and address not in addresses:
                addresses.append(address)
        if len(self._dns) > 1024:
            self._dns.clear()
        self._dns[key] = (now + self.config.dns_cache_s, addresses)
        return addresses
