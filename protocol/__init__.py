"""The wire format and shared settings that every browserd client and the daemon agree on."""

from browserd.protocol.messages import PROTOCOL_VERSION

__all__ = ["PROTOCOL_VERSION"]
