"""`browserd flows ...`: stored flows from the command line, through the daemon's flow tools (issue 14).

`run` replays in a session of the command's own (a new tab on the flow's start page); sensitive
variables are read from FLOW_<KEY> environment variables, so they never appear in the shell history.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import click

from browserd.shim import flow_systemd_timers
from browserd.shim.runs_cli import echo_json, run

GROUPS = ("flows", "runs")


def _pairs(args: tuple[str, ...]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for pair in args:
        key, sep, value = pair.partition("=")
        if not sep:
            raise click.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="--arg")
        values[key] = value
    return values


@click.group()
def flows() -> None:
    """Recorded flows: list, show, replay, export, import."""


@flows.command("list")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def list_flows(as_json: bool) -> None:
    """The stored flows, newest first."""
    data = run(lambda call: call("flow_list", {}), GROUPS)
    if as_json:
        echo_json(data)
        return
    for flow in data["flows"]:
        published = f"  flow_{flow['slug']}" if flow["published"] else ""
        click.echo(f"{flow['flowId']}  v{flow['version']}  {flow['name']}{published}")
    if not data["flows"]:
        click.echo("no flows")


@flows.command("get")
@click.argument("flow_id")
def get_flow(flow_id: str) -> None:
    """A flow as JSON."""
    echo_json(run(lambda call: call("flow_get", {"flowId": flow_id}), GROUPS))


@flows.command("run")
@click.argument("flow_id")
@click.option("--arg", "args", multiple=True, help="KEY=VALUE for a variable (sensitive ones: FLOW_<KEY>).")
@click.option("--start-url", default=None, help="Start on this page instead of the recorded one.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def run_flow(flow_id: str, args: tuple[str, ...], start_url: str | None, as_json: bool) -> None:
    """Replay a flow and wait for it; exit status 1 when it did not succeed."""
    values = _pairs(args)

    async def work(call: Any) -> dict[str, Any]:
        flow = await call("flow_get", {"flowId": flow_id})
        for variable in flow["variables"]:
            env = os.environ.get(f"FLOW_{variable['key'].upper()}")
            if env is not None and variable["key"] not in values:
                values[variable["key"]] = env
        arguments: dict[str, Any] = {"flowId": flow_id, "args": values, "tabTarget": "new"}
        if start_url:
            arguments["startUrl"] = start_url
        answer: dict[str, Any] = await call("flow_run", arguments)
        return answer

    data = run(work, GROUPS)
    if as_json:
        echo_json(data)
    else:
        click.echo(f"{data['runId']}  {data['status']}")
        for step in data["steps"]:
            how = f"  {step['matchedBy']} ({step['score']})" if step.get("matchedBy") else ""
            click.echo(f"  {step['stepId']} {step['type']:<8} {step['status']}{how} {step.get('message') or ''}")
    if data["status"] != "succeeded":
        raise SystemExit(1)


@flows.command("export")
@click.argument("flow_id")
@click.option("--format", "fmt", type=click.Choice(["json", "playwright"]), default="json", show_default=True)
@click.option("-o", "--output", default=None, help="Write it to this file (default: standard output).")
def export_flow(flow_id: str, fmt: str, output: str | None) -> None:
    """A flow as JSON (never a sensitive value) or a Playwright Python script."""
    data = run(lambda call: call("flow_export", {"flowId": flow_id, "format": fmt}), GROUPS)
    text = data["script"] if fmt == "playwright" else json.dumps(data["flow"], indent=2)
    if output is None:
        click.echo(text)
    else:
        Path(output).write_text(text)
        click.echo(f"wrote {output}", err=True)


@flows.command("import")
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
@click.option("--overwrite", is_flag=True, help="Replace the flow with the same id (default: a copy).")
@click.option(
    "--format", "fmt", type=click.Choice(["browserd", "chrome_recorder"]), default="browserd", show_default=True
)
def import_flow(path: str, overwrite: bool, fmt: str) -> None:
    """Import a flow exported as JSON, or a Chrome DevTools Recorder JSON export."""
    flow = json.loads(Path(path).read_text())
    data = run(lambda call: call("flow_import", {"flow": flow, "overwrite": overwrite, "format": fmt}), GROUPS)
    click.echo(f"{data['flowId']}  v{data['version']}")


@flows.group("schedule")
def schedule() -> None:
    """Cron triggers: the daemon runs a flow on a schedule (or a systemd user timer does, with --systemd)."""


@schedule.command("add")
@click.argument("flow_id")
@click.option("--cron", default=None, help="Five fields, e.g. '*/15 * * * *'; a sixth is the second.")
@click.option(
    "--on-page", default=None, help="Instead of --cron: run in any daemon tab that loads a matching URL (glob)."
)
@click.option("--arg", "args", multiple=True, help="KEY=VALUE for a variable (a flow with sensitive ones is refused).")
@click.option("--start-url", default=None, help="Start on this page instead of the recorded one.")
@click.option("--systemd", "use_systemd", is_flag=True, help="Install a systemd user timer that fires it.")
def add_schedule(
    flow_id: str, cron: str | None, on_page: str | None, args: tuple[str, ...], start_url: str | None, use_systemd: bool
) -> None:
    """Run FLOW_ID on a cron schedule, or whenever a daemon tab loads a matching page."""
    if use_systemd and cron is not None:
        try:
            flow_systemd_timers.on_calendar(cron)  # refused before the daemon keeps a schedule no timer can fire
        except flow_systemd_timers.CronNotCalendar as exc:
            raise click.BadParameter(str(exc), param_hint="--cron") from exc
    arguments: dict[str, Any] = {"action": "add", "flowId": flow_id, "args": _pairs(args)}
    arguments.update({k: v for k, v in (("cron", cron), ("onPage", on_page)) if v is not None})
    if start_url:
        arguments["startUrl"] = start_url
    arguments["systemd"] = use_systemd
    data = run(lambda call: call("flow_schedule", arguments), GROUPS)
    click.echo(f"{data['scheduleId']}  {data['flowId']}  {data.get('cron') or data.get('onPage')}")
    if use_systemd and cron is not None:
        raise SystemExit(flow_systemd_timers.install(data["scheduleId"], data["flowId"], cron, click.echo))


@schedule.command("list")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def list_schedules(as_json: bool) -> None:
    """The schedules the daemon keeps."""
    data = run(lambda call: call("flow_schedule", {"action": "list"}), GROUPS)
    if as_json:
        echo_json(data)
        return
    for item in data["schedules"]:
        last = f"  last {item['lastRunId']}" if item.get("lastRunId") else ""
        timer = "  (systemd)" if item.get("systemd") else ""
        when = item.get("cron") or f"onPage {item.get('onPage')}"
        click.echo(f"{item['scheduleId']}  {item['flowId']}  {when}{timer}{last}")
    if not data["schedules"]:
        click.echo("no schedules")


@schedule.command("remove")
@click.argument("schedule_id")
def remove_schedule(schedule_id: str) -> None:
    """Remove a schedule (and its systemd timer, if it has one)."""
    run(lambda call: call("flow_schedule", {"action": "remove", "scheduleId": schedule_id}), GROUPS)
    flow_systemd_timers.uninstall(schedule_id, click.echo)
    click.echo(f"removed {schedule_id}")


@schedule.command("run")
@click.argument("schedule_id")
def run_schedule(schedule_id: str) -> None:
    """Start a schedule's flow now (what its systemd timer does)."""
    data = run(lambda call: call("flow_schedule", {"action": "run", "scheduleId": schedule_id}), GROUPS)
    click.echo(data["runId"])
