"""`browserd bridge status|pair|unpair`: the command line's control actions on the bridge."""

from __future__ import annotations

from typing import Any

from browserd.daemon.bridge.bridge_server import BridgeServer
from browserd.daemon.bridge.pairing import EXTENSION_ID
from browserd.daemon.errors import BridgeDisabled, InvalidParameter

ACTIONS = ("bridge.status", "bridge.pair", "bridge.unpair")


async def bridge_control(bridge: BridgeServer, action: str, params: dict[str, Any]) -> dict[str, Any]:
    if action == "bridge.status":
        return bridge.status()
    if action == "bridge.pair":
        if not bridge.listening:
            raise BridgeDisabled(
                "the bridge is not listening"
                + (f" ({bridge.failure})" if bridge.failure else ": [bridge] enabled is false"),
                port=bridge.config.port,
            )
        return bridge.new_code()
    extension_id = params.get("extensionId")
    if extension_id is not None and not (isinstance(extension_id, str) and EXTENSION_ID.match(extension_id)):
        raise InvalidParameter("extensionId is 32 letters a-p, as chrome://extensions shows it", field="extensionId")
    return {"unpaired": bridge.unpair(extension_id)}
