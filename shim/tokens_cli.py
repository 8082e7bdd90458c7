"""`browserd tokens ...`: the bearer tokens of the daemon's HTTP endpoint (docs/http.md).

Works on the token file directly, daemon running or not: the daemon reads the file again when it
changes, so a new or revoked token counts from the next request.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from browserd.daemon.server.http.tokens import TokenStore


def _store() -> TokenStore:
    from browserd.daemon.config import ConfigError, load
    from browserd.daemon.server.http.tokens import TokenStore

    try:
        return TokenStore.of(load().http)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from exc


def _when(epoch: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(epoch)) if epoch else "never"


@click.group()
def tokens() -> None:
    """Bearer tokens for MCP clients over HTTP (`browserd daemon --http`)."""


@tokens.command()
@click.option("--name", required=True, help="Who holds it (shown in `browserd status`).")
@click.option(
    "--trust",
    type=click.Choice(["local", "remote"]),
    default="remote",
    show_default=True,
    help="remote: no private or loopback hosts, no scripts, no login profiles unless allowed.",
)
@click.option("--tools", "tools", default=None, help="Tool groups its sessions see: pages,scrape,runs,flows or all.")
@click.option("--expires", default=None, metavar="DURATION", help="Lifetime: 90m, 12h, 30d, 2w (default: never).")
def create(name: str, trust: str, tools: str | None, expires: str | None) -> None:
    """Make a token and print it once; only its hash is kept."""
    from browserd.daemon.errors import BrowserdError
    from browserd.daemon.server.http.tokens import parse_duration

    groups = [g.strip() for g in tools.split(",") if g.strip()] if tools else None
    try:
        lifetime = parse_duration(expires) if expires else None
        bearer, record = _store().create(name, trust, groups, lifetime)  # type: ignore[arg-type]
    except BrowserdError as exc:
        raise click.ClickException(f"{exc} ({exc.recover_hint})") from exc
    click.echo(bearer)
    click.echo(
        f"token {record.name!r} ({record.trust_level}, tools {','.join(groups) if groups else 'default'}, "
        f"expires {_when(record.expires_at)}). It is shown only now: store it in the client's config.",
        err=True,
    )


@tokens.command(name="list")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def list_tokens(as_json: bool) -> None:
    """Every token: name, trust, tool groups, expiry and state (never the secret)."""
    now = time.time()
    rows: list[dict[str, Any]] = [
        {
            "tokenId": r.token_id,
            "name": r.name,
            "trustLevel": r.trust_level,
            "tools": r.tools,
            "createdAt": r.created_at,
            "expiresAt": r.expires_at,
            "state": r.state(now),
        }
        for r in _store().records()
    ]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        click.echo("no tokens; make one with `browserd tokens create --name NAME`")
    for row in rows:
        tools = ",".join(row["tools"]) if row["tools"] else "default"
        click.echo(
            f"{row['name']:<20} {row['state']:<8} {row['trustLevel']:<6} tools {tools:<18} "
            f"expires {_when(row['expiresAt'])}  id {row['tokenId']}"
        )


@tokens.command()
@click.argument("name")
def revoke(name: str) -> None:
    """Revoke the active token of this name (or id); its next request gets 401."""
    from browserd.daemon.errors import BrowserdError

    try:
        record = _store().revoke(name)
    except BrowserdError as exc:
        raise click.ClickException(f"{exc} ({exc.recover_hint})") from exc
    click.echo(f"revoked token {record.name!r} ({record.token_id})")
