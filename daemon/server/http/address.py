"""The HTTP server's listen address: parsing `[http] listen` and telling loopback from the network."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from browserd.daemon.errors import InvalidParameter

DEFAULT_PORT = 3027


@dataclass(frozen=True)
class ListenAddress:
    host: str
    port: int

    @property
    def loopback(self) -> bool:
        """Only this machine's processes can connect; any other address needs tokens and TLS."""
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False  # a host name may resolve to anything

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"


def parse_listen(text: str) -> ListenAddress:
    """`host:port`, `[v6]:port`, `host` (default port) or `:port` (127.0.0.1)."""
    value = text.strip()
    hint = "Write host:port, e.g. 127.0.0.1:3027 or [::1]:3027."
    if value.startswith("["):
        host, sep, rest = value[1:].partition("]")
        if not sep or (rest and not rest.startswith(":")):
            raise InvalidParameter(f"bad HTTP listen address {text!r}", hint=hint)
        port_text = rest[1:]
    elif value.count(":") == 1:
        host, port_text = value.split(":")
    elif ":" in value:
        host, port_text = value, ""  # a bare IPv6 address
    else:
        host, port_text = value, ""
    try:
        port = int(port_text) if port_text else DEFAULT_PORT
    except ValueError:
        raise InvalidParameter(f"bad port in HTTP listen address {text!r}", hint=hint) from None
    if not 0 <= port <= 65535:
        raise InvalidParameter(f"port {port} is out of range in {text!r}", hint=hint)
    return ListenAddress(host or "127.0.0.1", port)
