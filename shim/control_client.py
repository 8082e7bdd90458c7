"""The command line's conversations with the daemon: a control connection, no browser session."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from browserd.protocol.messages import ClientInfo, Payload
from browserd.shim.daemon_client import DaemonClient


def data_or_fail(payload: Payload) -> dict[str, Any]:
    """A command's answer, or its error as the command line shows one: code, message, what to do."""
    if not payload.success:
        import click

        error = payload.error
        assert error is not None
        raise click.ClickException(f"[{error.error_code}] {error.error}\n{error.recover_hint}")
    data: dict[str, Any] = payload.data
    return data


async def control_request(action: str, params: dict[str, Any] | None = None, spawn: bool = False) -> Payload:
    """One control action; raises FileNotFoundError/ConnectionRefusedError when no daemon runs."""
    client = DaemonClient(ClientInfo(name="browserd-cli", pid=os.getpid()), role="control")
    await client.connect(spawn=spawn)
    try:
        return await client.request(action, params or {})
    finally:
        await client.close()


def run_control(action: str, params: dict[str, Any] | None = None) -> Payload | None:
    """Like control_request, but None when no daemon is running (status and stop never start one)."""
    try:
        return asyncio.run(control_request(action, params))
    except (FileNotFoundError, ConnectionRefusedError):
        return None


async def tool_call(name: str, arguments: dict[str, Any], groups: list[str]) -> Payload:
    """One tool call from the command line: a short-lived session of its own, the daemon started if needed."""
    client = DaemonClient(ClientInfo(name="browserd-cli", pid=os.getpid()), role="shim", tools=groups)
    await client.connect(spawn=True)
    try:
        return await client.request(name, arguments)
    finally:
        await client.close()
