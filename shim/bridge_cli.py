"""`browserd bridge status|pair|unpair`: pair the Chrome extension once, see and revoke what is paired."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import click

from browserd.shim.control_client import control_request, data_or_fail


def _ask(action: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    # The daemon owns the bridge's port and its pending code, so it is started when not running.
    return data_or_fail(asyncio.run(control_request(action, params, spawn=True)))


@click.group()
def bridge() -> None:
    """The extension bridge: lets the daemon drive your own Chrome through extension-bridge/."""


@bridge.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def status(as_json: bool) -> None:
    """Whether the bridge listens, which extensions are paired and which one is connected."""
    data = _ask("bridge.status")
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    listening = "listening on " + data["address"] if data["listening"] else data["failure"] or "not enabled"
    click.echo(f"bridge: {listening}")
    for extension_id, paired_at in data["paired"].items():
        connected = "connected" if extension_id in data["connected"] else "not connected"
        click.echo(f"  {extension_id}  paired {paired_at}  {connected}")
    if not data["paired"]:
        click.echo("  no extension paired; `browserd bridge pair` pairs one")


@bridge.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def pair(as_json: bool) -> None:
    """Print a one-time code to enter in the extension's side panel."""
    data = _ask("bridge.pair")
    if as_json:
        click.echo(json.dumps(data))
        return
    click.echo(f"Pairing code: {data['code']}")
    click.echo(
        f"Enter it in the browserd side panel within {data['expiresInS']:.0f} s; it works once. "
        f"The daemon listens on 127.0.0.1:{data['port']}."
    )


@bridge.command()
@click.argument("extension_id", required=False)
def unpair(extension_id: str | None) -> None:
    """Forget an extension's key (all of them without EXTENSION_ID); it must pair again to connect."""
    data = _ask("bridge.unpair", {"extensionId": extension_id} if extension_id else {})
    gone = data["unpaired"]
    click.echo("Unpaired " + ", ".join(gone) if gone else "No paired extension to forget")
