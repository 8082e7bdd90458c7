"""The wire format and shared settings that every browserd client and the daemon agree on."""

from browserd.protocol.messages import PROTOCOL_VERSION

# The one place the release number lives; pyproject.toml reads it from here.
__version__ = "0.1.0"

__all__ = ["PROTOCOL_VERSION", "__version__"]
