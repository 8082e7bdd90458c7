"""Origin patterns of the allowed and blocked lists: `example.com`, `*.example.com`, `https://x.org`,
`http://127.0.0.1:8080`, `10.0.0.5:3000`.

A pattern without a scheme matches every scheme, without a port every port (a pattern with a scheme
and no port means that scheme's default port). `*.example.com` matches example.com and all its
subdomains. ws: and wss: count as http: and https:.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from browserd.daemon.config import ConfigError

DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}
_SAME_SCHEME = {"ws": "http", "wss": "https"}


class BadPattern(ConfigError):
    pass


def web_scheme(scheme: str) -> str:
    return _SAME_SCHEME.get(scheme, scheme)


def normal_host(host: str) -> str:
    return host.strip("[]").rstrip(".").lower()


@dataclass(frozen=True)
class OriginPattern:
    text: str
    scheme: str | None
    host: str  # without the leading "*." of a wildcard
    wildcard: bool
    port: int | None

    @classmethod
    def parse(cls, text: str) -> OriginPattern:
        raw = text.strip()
        has_scheme = "://" in raw
        try:
            parts = urlsplit(raw if has_scheme else f"//{raw}")
            port = parts.port
        except ValueError as exc:
            raise BadPattern(f"origin pattern {text!r}: {exc}") from exc
        scheme = web_scheme(parts.scheme.lower()) if has_scheme else None
        if scheme is not None and scheme not in ("http", "https"):
            raise BadPattern(f"origin pattern {text!r}: only http(s) and ws(s) origins can be listed")
        if parts.path not in ("", "/") or parts.query or parts.fragment or parts.username:
            raise BadPattern(f"origin pattern {text!r} has more than scheme, host and port")
        host = normal_host(parts.hostname or "")
        wildcard = host.startswith("*.")
        host = host.removeprefix("*.")
        if not host or "*" in host:
            raise BadPattern(f"origin pattern {text!r}: give a host, optionally starting with `*.`")
        if port is None and scheme is not None:
            port = DEFAULT_PORTS[scheme]
        return cls(text, scheme, host, wildcard, port)

    def matches(self, scheme: str | None, host: str, port: int) -> bool:
        """`scheme` None is a CONNECT tunnel, whose scheme the proxy cannot see: any scheme matches."""
        if self.scheme is not None and scheme is not None and web_scheme(scheme) != self.scheme:
            return False
        if self.port is not None and port != self.port:
            return False
        host = normal_host(host)
        return host == self.host or (self.wildcard and host.endswith("." + self.host))


def parse_patterns(texts: list[str], key: str) -> tuple[OriginPattern, ...]:
    try:
        return tuple(OriginPattern.parse(text) for text in texts)
    except BadPattern as exc:
        raise BadPattern(f"security.{key}: {exc}") from exc


def first_match(patterns: tuple[OriginPattern, ...], scheme: str | None, host: str, port: int) -> OriginPattern | None:
    return next((p for p in patterns if p.matches(scheme, host, port)), None)
