"""The `browserd` console script. `browserd mcp` goes straight to the MCP shim; every other command to the
click command line (shim/cli.py).

An MCP client spawns one `browserd mcp` per session and waits for its answer to `initialize`, so that path
imports what the shim needs and nothing else: no click, no subcommand, no daemon module (issue 21: click
and the subcommands alone cost the shim's start-up more than its own imports). Its three options are read
here; anything else (`--help`, a typo) goes to click, which explains or refuses as for every command.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from browserd.protocol.messages import TrustLevel


def mcp_options(args: list[str]) -> tuple[list[str] | None, TrustLevel, bool | None] | None:
    """`browserd mcp`'s options as (tool groups, trust, codegen), or None for what click must answer."""
    tools: str | None = None
    trust: TrustLevel = "local"
    codegen: bool | None = None
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        name, has_value, value = arg.partition("=")
        if name in ("--tools", "--trust"):
            if not has_value:
                if not rest:
                    return None
                value = rest.pop(0)
            if name == "--tools":
                tools = value
            elif value in ("local", "remote"):
                trust = "local" if value == "local" else "remote"
            else:
                return None
        elif arg in ("--codegen", "--no-codegen"):
            codegen = arg == "--codegen"
        else:
            return None
    groups = [g.strip() for g in tools.split(",") if g.strip()] if tools else None
    return groups, trust, codegen


def main() -> None:
    args = sys.argv[1:]
    options = mcp_options(args[1:]) if args[:1] == ["mcp"] else None
    if options is not None:
        from browserd.shim.mcp_server import run_stdio_server

        groups, trust, codegen = options
        sys.exit(run_stdio_server(groups, trust, codegen))
    from browserd.shim.cli import main as cli

    cli()
