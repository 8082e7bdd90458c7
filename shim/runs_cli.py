"""`browserd runs ...`: task runs from the command line, through the daemon's run tools."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any, BinaryIO

import click

from browserd.protocol.messages import ClientInfo
from browserd.shim.control_client import data_or_fail
from browserd.shim.daemon_client import DaemonClient

TERMINAL = ("succeeded", "failed", "partial_success", "canceled")
BAR_WIDTH = 30

Call = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]


async def _with_client(work: Callable[[Call], Awaitable[Any]], groups: list[str]) -> Any:
    """One session for the whole command (a followed run is polled many times)."""
    client = DaemonClient(ClientInfo(name="browserd-cli", pid=os.getpid()), role="shim", tools=groups)
    await client.connect(spawn=True)

    async def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return data_or_fail(await client.request(name, arguments))

    try:
        return await work(call)
    finally:
        await client.close()


def run(work: Callable[[Call], Awaitable[Any]], groups: tuple[str, ...] = ("runs",)) -> Any:
    """`work` with a session offering the tool `groups`; a failed tool call is a ClickException."""
    return asyncio.run(_with_client(work, list(groups)))


def echo_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2))


def describe(run: dict[str, Any]) -> str:
    progress = run["progress"]
    lines = [
        f"{run['runId']}  {run['templateId']} {run['templateVersion']}  {run['status']}",
        f"steps {progress['doneSteps']}/{progress['totalSteps']}  elapsed {run['metrics']['elapsedMs'] / 1000:.1f} s"
        f"  session {run['sessionId']}{' (kept)' if run['sessionKept'] else ''}",
    ]
    result = run.get("result")
    if result:
        summary = result["summary"]
        lines.append(f"items {summary['succeeded']} succeeded, {summary['failed']} failed of {summary['total']}")
    if run.get("error"):
        lines.append(f"error [{run['error']['errorCode']}] {run['error']['error']}")
    for artifact in run.get("artifacts") or []:
        lines.append(f"artifact {artifact['artifactId']}  {artifact['mimeType']}  {artifact['size']} bytes")
    return "\n".join(lines)


def progress_bar(run: dict[str, Any]) -> str:
    done, total = run["progress"]["doneSteps"], run["progress"]["totalSteps"]
    filled = int(BAR_WIDTH * done / total) if total else 0
    return f"\r[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {done}/{total} steps  {run['status']:<16}"


async def follow(call: Call, run_id: str, interval_s: float = 0.5) -> dict[str, Any]:
    """Poll until the run is terminal, drawing a progress bar on stderr."""
    while True:
        current = await call("get_task_run", {"runId": run_id})
        click.echo(progress_bar(current), err=True, nl=False)
        if current["status"] in TERMINAL:
            click.echo("", err=True)
            return current
        await asyncio.sleep(interval_s)


async def save_artifact(call: Call, artifact_id: str, out: BinaryIO) -> int:
    offset = 0
    while True:
        chunk = await call("get_artifact", {"artifactId": artifact_id, "offset": offset})
        data = base64.b64decode(chunk["data"])
        out.write(data)
        offset += len(data)
        if chunk["complete"]:
            return offset


@click.group()
def runs() -> None:
    """Task runs: list them, follow one, cancel one, save an artifact."""


@runs.command("list")
@click.option("--status", default=None, help="Only runs in this status.")
@click.option("--template", "template_id", default=None, help="Only runs of this template.")
@click.option("--limit", type=click.IntRange(1, 100), default=20, show_default=True)
@click.option("--offset", type=click.IntRange(0), default=0)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def list_runs(status: str | None, template_id: str | None, limit: int, offset: int, as_json: bool) -> None:
    """The runs the daemon keeps, newest first."""
    arguments: dict[str, Any] = {"limit": limit, "offset": offset}
    if status:
        arguments["status"] = status
    if template_id:
        arguments["templateId"] = template_id
    data = run(lambda call: call("list_task_runs", arguments))
    if as_json:
        echo_json(data)
        return
    for entry in data["runs"]:
        click.echo(f"{entry['runId']}  {entry['status']:<16} {entry['templateId']}")
    if not data["runs"]:
        click.echo("no runs")


@runs.command("get")
@click.argument("run_id")
@click.option("--follow", "follow_", is_flag=True, help="Show a progress bar until the run ends.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def get_run(run_id: str, follow_: bool, as_json: bool) -> None:
    """A run's status, progress, result summary and artifacts."""

    async def work(call: Call) -> dict[str, Any]:
        if follow_:
            return await follow(call, run_id)
        return await call("get_task_run", {"runId": run_id})

    data = run(work)
    if as_json:
        echo_json(data)
    else:
        click.echo(describe(data))


@runs.command("cancel")
@click.argument("run_id")
@click.option("--force", is_flag=True, help="Also interrupt the step in flight.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def cancel_run(run_id: str, force: bool, as_json: bool) -> None:
    """Ask a run to stop between steps."""
    data = run(lambda call: call("cancel_task_run", {"runId": run_id, "force": force}))
    if as_json:
        echo_json(data)
    elif data["cancelRequested"]:
        click.echo(f"cancel requested; {run_id} is {data['currentStatus']}")
    else:
        click.echo(f"{run_id} has already ended ({data['currentStatus']})")


@runs.command("artifact")
@click.argument("artifact_id")
@click.option("-o", "--output", default=None, help="Write it to this file (default: standard output).")
def artifact(artifact_id: str, output: str | None) -> None:
    """Save an artifact, read chunk by chunk."""
    if output is None:
        run(lambda call: save_artifact(call, artifact_id, sys.stdout.buffer))
        return
    with open(output, "wb") as out:
        size = run(lambda call: save_artifact(call, artifact_id, out))
    click.echo(f"wrote {size} bytes to {output}", err=True)
