"""Which IP addresses a `remote` session may not reach, and the rule each one breaks (D-33).

Addresses that embed an IPv4 address (IPv4-mapped, IPv4-compatible, NAT64, 6to4) are judged by the
IPv4 address inside, so `::ffff:127.0.0.1` is loopback like `127.0.0.1`.
"""

from __future__ import annotations

import ipaddress

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Ranges Python's ipaddress does not single out, or files under a broader "private" flag.
_SHARED = ipaddress.ip_network("100.64.0.0/10")  # carrier-grade NAT (RFC 6598): a provider's private side
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_ULA = ipaddress.ip_network("fc00::/7")
_THIS_NETWORK = ipaddress.ip_network("0.0.0.0/8")  # Linux routes 0.0.0.0 to the local host


def embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address stands for, if it is one of the forms that carry one."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    packed = int(address)
    if packed >> 32 == 0 and packed > 1:  # deprecated IPv4-compatible ::a.b.c.d (but not :: or ::1)
        return ipaddress.IPv4Address(packed)
    return None


def address_rule(address: IPAddress) -> str | None:
    """The rule `address` breaks for a remote session (e.g. "loopback"), or None when it is public."""
    if isinstance(address, ipaddress.IPv6Address):
        inner = embedded_ipv4(address)
        if inner is not None:
            return address_rule(inner)
        if address in _ULA:
            return "private-address"
    if address.is_loopback:
        return "loopback"
    if address.is_unspecified or (isinstance(address, ipaddress.IPv4Address) and address in _THIS_NETWORK):
        return "unspecified-address"
    if address.is_link_local:
        # 169.254.169.254, the cloud metadata service, is link-local too.
        return "link-local"
    if address.is_multicast:
        return "multicast"
    if isinstance(address, ipaddress.IPv4Address) and address in _SHARED:
        return "private-address"
    if address.is_private or address.is_reserved or not address.is_global:
        return "private-address"
    return None


def parse_address(host: str) -> IPAddress | None:
    """`host` as an IP address (brackets and an IPv6 zone dropped), or None for a name."""
    bare = host.strip("[]").split("%", 1)[0]
    try:
        return ipaddress.ip_address(bare)
    except ValueError:
        return None


def loopback_host(host: str, port: int) -> bool:
    """A Host header naming this machine's server on `port`: `127.0.0.1:port`, `localhost:port` or `[::1]:port`,
    what a browser here sends, and nothing a DNS-rebinding page (which names its own domain) can send."""
    name, sep, port_text = host.rpartition(":")
    if not sep or port_text != str(port):
        return False
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name.strip("[]")).is_loopback
    except ValueError:
        return False
