"""The `browserd` command: the MCP shim, the daemon, and the daemon's controls."""

from __future__ import annotations

import importlib
import json
import logging
import os
import sys
import time
from typing import TYPE_CHECKING

import click

from browserd.protocol import __version__, paths

if TYPE_CHECKING:
    from browserd.daemon.config import Config


def _load_config() -> Config:
    from browserd.daemon.config import ConfigError, load

    try:
        return load()
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from exc


# Command groups imported only when named: `browserd status` loads no flows or runs code.
LAZY_GROUPS = {
    "bridge": "browserd.shim.bridge_cli:bridge",
    "flows": "browserd.shim.flows_cli:flows",
    "runs": "browserd.shim.runs_cli:runs",
    "tokens": "browserd.shim.tokens_cli:tokens",
}


class LazyGroup(click.Group):
    """A group whose LAZY_GROUPS subcommands are imported when named, not when the CLI starts; a daemon that
    cannot be started is reported as a command-line error (its cause, no traceback) whichever command needed it."""

    def invoke(self, ctx: click.Context) -> object:
        from browserd.shim.spawn import DaemonUnavailable

        try:
            return super().invoke(ctx)
        except DaemonUnavailable as exc:
            raise click.ClickException(f"cannot start the browserd daemon: {exc}") from exc

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), *LAZY_GROUPS])

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in LAZY_GROUPS:
            return super().get_command(ctx, cmd_name)
        module, name = LAZY_GROUPS[cmd_name].split(":")
        command: click.Command = getattr(importlib.import_module(module), name)
        return command


@click.group(cls=LazyGroup)
@click.version_option(__version__, prog_name="browserd")
def main() -> None:
    """browserd gives AI agents a real browser: one shared daemon, one thin MCP shim per client."""


@main.command()
@click.option(
    "--tools",
    "tools",
    default=None,
    help="Tool groups: pages,devtools,scrape,runs,flows,agent or all (core always on).",
)
@click.option(
    "--trust",
    "trust",
    type=click.Choice(["local", "remote"]),
    default="local",
    show_default=True,
    help="remote: no private or loopback hosts, no scripts, no uploads.",
)
@click.option(
    "--codegen/--no-codegen",
    "codegen",
    default=None,
    help="Answers of actions carry the Playwright Python code they ran (default: [mcp] codegen, off).",
)
def mcp(tools: str | None, trust: str, codegen: bool | None) -> None:
    """Serve MCP over stdio for one client (what an MCP client starts)."""
    from browserd.shim.mcp_server import run_stdio_server

    groups = [g.strip() for g in tools.split(",") if g.strip()] if tools else None
    sys.exit(run_stdio_server(groups, trust, codegen))  # type: ignore[arg-type]


@main.command()
@click.option("--foreground", is_flag=True, help="Stay attached to the terminal and log to stderr too.")
@click.option("--quiet", is_flag=True, hidden=True, help="Log to the file only (used when spawned).")
@click.option(
    "--http",
    "http",
    default=None,
    metavar="HOST:PORT",
    help="Also serve MCP over HTTP on this address (sets [http] enabled and listen; docs/http.md).",
)
@click.option("--tls-cert", default=None, metavar="PEM", help="Serve HTTPS with this certificate ([http] tls_cert).")
@click.option("--tls-key", default=None, metavar="PEM", help="The certificate's private key ([http] tls_key).")
def daemon(foreground: bool, quiet: bool, http: str | None, tls_cert: str | None, tls_key: str | None) -> None:
    """Run the daemon (normally started on demand by `browserd mcp`)."""
    # Through the environment, so a daemon this command spawns detached gets the same settings.
    if http is not None:
        os.environ["BROWSERD_HTTP_ENABLED"] = "true"
        os.environ["BROWSERD_HTTP_LISTEN"] = http
    if tls_cert is not None:
        os.environ["BROWSERD_HTTP_TLS_CERT"] = os.path.abspath(tls_cert)
    if tls_key is not None:
        os.environ["BROWSERD_HTTP_TLS_KEY"] = os.path.abspath(tls_key)
    config = _load_config()
    if foreground:
        from browserd.daemon.server.daemon_process import serve

        code = serve(config, foreground=not quiet)
        # By now the daemon has closed everything it keeps (stores, profiles, the browser and its driver, the
        # socket and lock) and has no thread of its own; only the logs remain to flush. The interpreter's own
        # teardown of its thousands of modules and objects would add 0.2 s (seconds on a busy machine) to
        # every stop, which `browserd stop`, systemd and a client starting the next daemon all wait out.
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    import asyncio

    from browserd.shim.control_client import control_request

    payload = asyncio.run(control_request("status", spawn=True))
    click.echo(f"browserd daemon running (pid {payload.data['pid']}) on {paths.socket_path()}")
    served = payload.data.get("http")
    if served:
        click.echo(f"HTTP: {served['url']}")
    elif http is not None:
        click.echo("the running daemon serves no HTTP: `browserd stop`, then run this again", err=True)


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def status(as_json: bool) -> None:
    """Sessions, tabs, runs, browser and memory of the running daemon."""
    from browserd.shim.control_client import run_control

    payload = run_control("status")
    if payload is None:
        if as_json:
            click.echo(json.dumps({"running": False, "socket": str(paths.socket_path())}))
        else:
            click.echo(f"browserd daemon: not running (socket {paths.socket_path()})")
        sys.exit(3)
    data = payload.data
    if as_json:
        click.echo(json.dumps({"running": True, **data}, indent=2))
        return
    browser = data["browser"]
    memory = data["memory"]
    click.echo(
        f"browserd {data['version']} daemon pid {data['pid']}, up {data['uptimeS']:.0f} s, socket {data['socket']}"
    )
    click.echo(
        f"browser: {'running, pid ' + str(browser['pid']) if browser['running'] else 'not running'}"
        f" ({browser['executable'] or 'no executable found'})"
    )
    click.echo(f"memory: daemon {memory['daemonRssKiB'] // 1024} MiB, browser {memory['browserPssKiB'] // 1024} MiB")
    pool = data.get("scrapeContexts") or {}
    if pool:
        click.echo(
            f"scrape contexts: {pool['idle']} idle, {pool['leased']} in use; "
            f"{pool['created']} created, {pool['reused']} reuses"
        )
    members = data.get("pool") or []
    if len(members) > 1 or any(m["kind"] != "local" for m in members):
        click.echo("browser pool:")
        for m in members:
            state = "up" if m["up"] else f"down ({m['downReason']}; retry in {m['retryInS']} s)"
            click.echo(
                f"  {m['name']}  {m['kind']}  {m['url']}  {state}  {m['contextsUsed']}/{m['capacity']} contexts"
                f"  {m['pagesServed']} served"
            )
    click.echo(f"sessions: {len(data['sessions'])}")
    for session in data["sessions"]:
        kept = ""
        if session.get("kept"):
            expires = session.get("expiresAt")
            left = f", closes in {max(0, expires / 1000 - time.time()):.0f} s unless used" if expires else ""
            kept = f"  kept{left}"
        last = session.get("lastCall")
        called = f"  last: {last['tool']} {last.get('target') or ''}".rstrip() if last else ""
        click.echo(
            f"  {session['sessionId']}  {session['client']}  {session['trustLevel']}  {len(session['tabs'])} tab(s)"
            f"{kept}{called}"
        )
        for tab in session["tabs"]:
            click.echo(f"    {tab['tabId']}  {tab['url']}")
    served = data.get("http")
    if served:
        http_sessions = served.get("sessions", [])
        click.echo(f"http: {served['url']}/mcp, {len(http_sessions)} session(s)")
        for entry in http_sessions:
            how = "MCP session" if entry["mcpSession"] else "handle"
            busy = (
                f"{entry['callsInFlight']} call(s) in flight"
                if entry["callsInFlight"]
                else f"idle {entry['idleS']:.0f} s"
            )
            click.echo(
                f"  {entry['sessionId']}  token {entry['token']}  {entry['trustLevel']}"
                f"  {how} {entry['handle']}  {busy}"
            )
    active = data["runs"]
    click.echo(f"runs: {active['active']} active ({active.get('queued', 0)} queued)")
    for run in active.get("runs", []):
        click.echo(
            f"  {run['runId']}  {run['templateId']}  {run['status']}  {run['doneSteps']}/{run['totalSteps']} steps"
        )
    served = data.get("http")
    if served:
        # No link here: a status is pasted into bug reports, and a console link is a key.
        click.echo(f"console: {served['url']}/console/ (`browserd console` prints a link that opens it)")


@main.command()
@click.option(
    "--open/--no-open", "open_browser", default=None, help="Open it in the browser (default: with a display)."
)
def console(open_browser: bool | None) -> None:
    """A one-time link to the console, a local page of sessions, runs and flows (docs/console.md)."""
    from browserd.shim.control_client import data_or_fail, run_control

    payload = run_control("console")
    if payload is None:
        raise click.ClickException("the browserd daemon is not running: start it with `browserd daemon --http ...`")
    url = data_or_fail(payload)["url"]
    click.echo(url)
    click.echo("The link works once, for 2 minutes; it leaves a cookie in the browser that opens it.", err=True)
    if open_browser is None:
        open_browser = bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    if open_browser:
        import webbrowser

        webbrowser.open(url)


@main.command()
@click.option("--wait", "wait_s", default=15.0, show_default=True, help="Seconds to wait for the daemon to exit.")
def stop(wait_s: float) -> None:
    """Stop the daemon: sessions and browsers close, the socket is removed."""
    from browserd.shim.control_client import run_control

    payload = run_control("stop")
    if payload is None:
        click.echo("browserd daemon: not running")
        return
    pid = payload.data["pid"]
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline and paths.socket_path().exists():
        time.sleep(0.05)
    click.echo(f"browserd daemon (pid {pid}) stopped")


@main.command()
def version() -> None:
    """Versions of browserd and of the wire protocol."""
    from browserd.protocol import PROTOCOL_VERSION

    click.echo(f"browserd {__version__} (protocol {PROTOCOL_VERSION}, Python {sys.version.split()[0]})")


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def doctor(as_json: bool) -> None:
    """Check Python, Playwright (and browserd's preload for its driver), Chromium, the socket, the config and the
    folders; say how to fix each."""
    from browserd.shim.doctor import as_json as checks_json
    from browserd.shim.doctor import run_checks

    checks = run_checks()
    report = checks_json(checks)
    if as_json:
        click.echo(json.dumps(report, indent=2))
    else:
        width = max(len(check.name) for check in checks)
        for check in checks:
            click.echo(f"{check.status:<4}  {check.name:<{width}}  {check.detail}")
            if check.fix:
                click.echo(f"{'':<4}  {'':<{width}}  fix: {check.fix}")
    sys.exit(0 if report["ok"] else 1)


@main.group()
def service() -> None:
    """Run the daemon under systemd: user units with socket activation."""


@service.command("install")
@click.option("--no-enable", is_flag=True, help="Write the units only; do not enable and start the socket.")
@click.option("--http", is_flag=True, help="Also browserd-http.socket: MCP over HTTP on 127.0.0.1:3027 on demand.")
def service_install(no_enable: bool, http: bool) -> None:
    """Write browserd.socket and browserd.service to ~/.config/systemd/user and enable the socket."""
    from browserd.shim.systemd_units import install

    sys.exit(install(enable=not no_enable, echo=click.echo, http=http))


@service.command("uninstall")
def service_uninstall() -> None:
    """Stop and disable the units, then remove them."""
    from browserd.shim.systemd_units import uninstall

    sys.exit(uninstall(echo=click.echo))


@main.command("mcp-config")
@click.option("--tools", "tools", default=None, help="Tool groups to put in the configuration.")
def mcp_config(tools: str | None) -> None:
    """Print the MCP client configuration (Claude Desktop, Cursor, ...) that starts this browserd."""
    from browserd.shim.systemd_units import daemon_command

    command = daemon_command()
    args = [*command[1:], "mcp", *(["--tools", tools] if tools else [])]
    click.echo(json.dumps({"mcpServers": {"browserd": {"command": command[0], "args": args}}}, indent=2))


@main.command()
@click.argument("url")
@click.option(
    "--format",
    "format_",
    type=click.Choice(["markdown", "html", "links", "screenshot", "fullscreenshot"]),
    default="markdown",
    show_default=True,
)
@click.option("--profile", "profile", default=None, help="Login profile whose cookies to use (default master).")
@click.option("--wait-for", "wait_for", type=click.IntRange(0, 60_000), default=0, help="Fixed wait in ms.")
@click.option("--full-page-content", is_flag=True, help="Keep the whole page, not only its main content.")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    help="Write the result to this file (screenshots need it).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the metadata as JSON on stderr.")
def scrape(
    url: str,
    format_: str,
    profile: str | None,
    wait_for: int,
    full_page_content: bool,
    output: str | None,
    as_json: bool,
) -> None:
    """Scrape one page through the daemon's browser."""
    import asyncio

    from browserd.protocol.messages import ImageContent, TextContent
    from browserd.shim.control_client import tool_call

    arguments: dict[str, object] = {
        "url": url,
        "format": format_,
        "waitFor": wait_for,
        "onlyMainContent": not full_page_content,
    }
    if profile:
        arguments["profileId"] = profile
    if format_ in ("screenshot", "fullscreenshot") and output is None:
        raise click.UsageError("screenshots need -o FILE.png")
    payload = asyncio.run(tool_call("scrape", arguments, ["scrape"]))
    if not payload.success:
        error = payload.error
        assert error is not None
        raise click.ClickException(f"[{error.error_code}] {error.error}\n{error.recover_hint}")
    images = [block.data for block in payload.content if isinstance(block, ImageContent)]
    texts = [block.text for block in payload.content if isinstance(block, TextContent)]
    body = images[0] if images else "\n".join(texts).encode()
    if output:
        with open(output, "wb") as out:
            out.write(body)
        click.echo(f"wrote {len(body)} bytes to {output}", err=True)
    else:
        sys.stdout.buffer.write(body if body.endswith(b"\n") else body + b"\n")
    if as_json:
        click.echo(json.dumps(payload.data, indent=2), err=True)


@main.command()
@click.option("--profile", "profile", default="master", show_default=True, help="The login profile to fill.")
@click.option("--url", "url", default=None, help="Page to open first (the site's login page).")
@click.option(
    "--timeout",
    "timeout_s",
    type=click.FloatRange(min=0),
    default=None,
    help="Give up after this many seconds (default: config profiles.login_timeout_ms, 0 = never).",
)
@click.option("--headless", is_flag=True, help="No window (for scripted logins and tests).")
def login(profile: str, url: str | None, timeout_s: float | None, headless: bool) -> None:
    """Log in to a site in a real browser window; the login is saved to the profile for every scrape."""
    import os

    import anyio

    from browserd.daemon.errors import BrowserdError
    from browserd.daemon.profiles.login import LoginRequest, run_login

    config = _load_config()
    if not headless and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        raise click.ClickException(
            "no display for the browser window: run it on a desktop, under xvfb-run, or with --headless"
        )
    timeout = timeout_s if timeout_s is not None else config.profiles.login_timeout_ms / 1000
    request = LoginRequest(profile, url, timeout, headless)
    try:
        code = anyio.run(run_login, config, request, lambda text: click.echo(text, err=True))
    except BrowserdError as exc:
        click.echo(f"browserd login: [{exc.code}] {exc.message}\n{exc.recover_hint}", err=True)
        sys.exit(2)
    sys.exit(code)


@main.command()
@click.option("--profile", "profile", default="master", show_default=True, help="The login profile's browser.")
@click.option("--url", "url", required=True, help="The page the flow starts on.")
@click.option("--name", "name", default="Recorded flow", show_default=True, help="The flow's name.")
def record(profile: str, url: str, name: str) -> None:
    """Record a flow yourself in a browser window on a login profile; prints the new flow's id."""
    import anyio
    import msgspec

    from browserd.daemon.errors import BrowserdError
    from browserd.daemon.flows.recording.record_command import RecordRequest, check_display, run_record
    from browserd.shim.flows_cli import GROUPS
    from browserd.shim.runs_cli import run

    try:
        check_display()  # before anything starts: the config, the daemon, the profile
        request = RecordRequest(profile, url, name)
        flow = anyio.run(run_record, _load_config(), request, lambda text: click.echo(text, err=True))
    except BrowserdError as exc:
        click.echo(f"browserd record: [{exc.code}] {exc.message}\n{exc.recover_hint}", err=True)
        sys.exit(2)
    data = run(lambda call: call("flow_import", {"flow": msgspec.to_builtins(flow), "overwrite": True}), GROUPS)
    click.echo(f"{data['flowId']}  v{data['version']}  ({len(flow.steps)} steps)")
