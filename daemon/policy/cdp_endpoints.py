"""Which browsers `browser_connect_cdp` may attach to: a debugging port gives full control of that browser,
so a remote session none (D-33), a local one only a browser on this machine unless [security]
cdp_allow_remote_hosts says otherwise (S2-30)."""

from __future__ import annotations

from urllib.parse import urlsplit

from browserd.daemon.errors import InvalidParameter, UrlNotAllowed
from browserd.daemon.policy.addresses import address_rule
from browserd.daemon.policy.origins import DEFAULT_PORTS
from browserd.daemon.policy.trust import TrustPolicy

_SCHEMES = ("http", "https", "ws", "wss")


async def check_cdp_endpoint(trust: TrustPolicy, endpoint: str, tool: str) -> None:
    trust.check_cdp(tool)
    parts = urlsplit(endpoint)
    scheme = parts.scheme.lower()
    if scheme not in _SCHEMES or not parts.hostname:
        raise InvalidParameter(
            f"`{endpoint}` is not a debugging endpoint",
            hint="Pass the http:// address of the browser's debugging port, e.g. http://127.0.0.1:9222.",
            field="endpoint",
        )
    if trust.security.cdp_allow_remote_hosts:
        return
    try:
        port = parts.port or DEFAULT_PORTS[scheme]
    except ValueError as exc:
        raise InvalidParameter(f"bad port in `{endpoint}`", field="endpoint") from exc
    addresses = await trust.urls.resolve(parts.hostname, port)
    if not addresses or any(address_rule(address) != "loopback" for address in addresses):
        raise UrlNotAllowed(
            f"{endpoint} is not on this machine; {tool} attaches to loopback endpoints only",
            hint="Attach to a browser on this machine, or set security.cdp_allow_remote_hosts in the config.",
            url=endpoint,
            rule="cdp-not-loopback",
        )
