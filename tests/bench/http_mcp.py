"""MCP over HTTP against the stdio shim, on one daemon, in one run (issue 22).

    .venv/bin/python tests/bench/http_mcp.py [--clients 16] [--calls 50] [--samples 100]

Not part of `make test`. Starts a daemon serving HTTP on a free loopback port (its own home, tests/site on
127.0.0.1) and drives it with the official MCP SDK client, over streamable HTTP and over `browserd mcp`
stdio shims alike:

1. load: `--clients` HTTP clients at once (half legacy sessions, half the stateless 2026-07-28 protocol
   with session handles), each making `--calls` mixed calls (open its own page, snapshot, read the url,
   list tabs, find an element) on a page whose URL names the client; every answer is checked: an error
   or an answer that names another client's page (a cross-session answer) is counted. Then the same load
   through as many stdio shims. For each: errors, cross-session answers, calls/s, and CPU time per call
   of the daemon, the shims (with their start-up: a stdio client costs one) and the clients
   (deterministic enough under load; wall times are not; /proc counts CPU in 10 ms ticks).
2. per-call overhead: one client, the same cheap call (`browser_get url`) and a snapshot, `--samples`
   times each, over HTTP (legacy and stateless) and over stdio: wall median and p95, CPU per call of
   client + shim + daemon, and HTTP minus stdio of both.

The load average is printed beside each figure: the machine is shared, so timings are noisy.
"""

from __future__ import annotations

import sys
from pathlib import Path

# Run as a script, this file's folder heads sys.path, and this file (http.py) would shadow the standard
# library's `http` package that starlette and httpx import.
if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
    sys.path.pop(0)

import argparse
import json
import os
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from browserd.daemon.runtime.procinfo import descendants  # noqa: E402
from tests.bench.common import cpu_ms, serve_site, stop_site, summary  # noqa: E402
from tests.conftest import BROWSERD, make_home  # noqa: E402
from tests.e2e.bridge_chrome import free_port  # noqa: E402
from tests.e2e.http_clients import HttpDaemon, handle_of, http_client  # noqa: E402

OVERHEAD_TARGET_MS = 5.0
MARKER = re.compile(r"[?&]client=(\d+)")
Call = Callable[[str, dict[str, Any]], Awaitable[Any]]


def load() -> str:
    return "load {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


@dataclass
class Tally:
    calls: int = 0
    errors: list[str] = field(default_factory=list)
    crossed: list[str] = field(default_factory=list)


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


async def mixed_calls(index: int, site: str, calls: int, call: Call, tally: Tally) -> None:
    """`calls` calls of one client, each answer checked for errors and for another client's page."""
    steps = ("browser_open", "browser_snapshot", "browser_get", "browser_tabs", "browser_find")
    for n in range(calls):
        tool = steps[n % len(steps)]
        page = f"{site}/index.html?client={index}&n={n // len(steps)}"
        arguments: dict[str, Any] = {
            "browser_open": {"url": page},
            "browser_snapshot": {},
            "browser_get": {"what": "url"},
            "browser_tabs": {"action": "list"},
            "browser_find": {"role": "heading"},
        }[tool]
        result = await call(tool, arguments)
        tally.calls += 1
        text = text_of(result)
        if result.is_error:
            tally.errors.append(f"client {index} {tool}: {text[:200]}")
            continue
        seen = {int(m) for m in MARKER.findall(text + json.dumps(result.structured_content or {}))}
        if seen - {index}:
            tally.crossed.append(f"client {index} {tool} saw client(s) {sorted(seen - {index})}")


@asynccontextmanager
async def stdio(daemon: HttpDaemon) -> AsyncIterator[Call]:
    params = StdioServerParameters(command=BROWSERD, args=["mcp"], env=daemon.home.env)
    async with Client(stdio_client(params), mode="legacy", cache=None) as client:

        async def call(tool: str, arguments: dict[str, Any]) -> Any:
            return await client.call_tool(tool, arguments)

        yield call


@asynccontextmanager
async def over_http(daemon: HttpDaemon, token: str, mode: str) -> AsyncIterator[Call]:
    async with http_client(daemon.url, token, mode) as client:
        handle: list[str] = []

        async def call(tool: str, arguments: dict[str, Any]) -> Any:
            # Stateless: the first answer names the session, every later call passes it back.
            sent = {**arguments, "session": handle[0]} if handle else arguments
            result = await client.call_tool(tool, sent)
            if mode != "legacy" and not handle and not result.is_error:
                handle.append(handle_of(result))
            return result

        yield call


async def run_load(
    clients: int, calls: int, site: str, open_client: Callable[[int], Any], daemon_pid: int
) -> dict[str, Any]:
    tally = Tally()
    cpu_before = cpu_ms([daemon_pid])
    # The shims are this process's children, reaped when their clients close: their CPU lands in os.times().
    reaped_before = sum(os.times()[2:4])
    client_before = time.process_time()
    started = time.perf_counter()

    async def one(index: int) -> None:
        async with open_client(index) as call:
            await mixed_calls(index, site, calls, call, tally)

    async with anyio.create_task_group() as group:
        for index in range(clients):
            group.start_soon(one, index)
    wall = time.perf_counter() - started
    calls = max(tally.calls, 1)
    return {
        "calls": tally.calls,
        "errors": len(tally.errors),
        "crossSession": len(tally.crossed),
        "callsPerS": round(tally.calls / wall, 1),
        "cpuMsPerCall": {
            "daemon": round((cpu_ms([daemon_pid]) - cpu_before) / calls, 2),
            "shims": round((sum(os.times()[2:4]) - reaped_before) * 1000 / calls, 2),
            "clients": round((time.process_time() - client_before) * 1000 / calls, 2),
        },
        "examples": (tally.errors + tally.crossed)[:5],
        "load": load(),
    }


async def timed(call: Call, tool: str, arguments: dict[str, Any], samples: int, daemon_pid: int) -> dict[str, Any]:
    """Wall time per call, and CPU per call of the client, the shim (stdio) and the daemon: the CPU is what a
    loaded machine cannot blur, and the overhead that matters is what HTTP costs there beyond stdio."""
    await call(tool, arguments)  # warm: the first call of a client pays for its session
    # This process's children are the stdio shims, and the daemon it started with its browser: not shims.
    daemon_tree = {daemon_pid, *descendants(daemon_pid)}
    shims = [pid for pid in descendants(os.getpid()) if pid not in daemon_tree]
    before = (time.process_time(), cpu_ms(shims), cpu_ms([daemon_pid]))
    times = []
    for _ in range(samples):
        started = time.perf_counter()
        result = await call(tool, arguments)
        times.append((time.perf_counter() - started) * 1000)
        assert not result.is_error, text_of(result)
    client = (time.process_time() - before[0]) * 1000 / samples
    shim = (cpu_ms(shims) - before[1]) / samples
    daemon = (cpu_ms([daemon_pid]) - before[2]) / samples
    return {
        **summary(times),
        "cpuMs": {
            "client": round(client, 2),
            "shim": round(shim, 2),
            "daemon": round(daemon, 2),
            "total": round(client + shim + daemon, 2),
        },
    }


async def overhead(daemon: HttpDaemon, token: str, site: str, samples: int, daemon_pid: int) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    transports = {
        "stdio": lambda: stdio(daemon),
        "http-legacy": lambda: over_http(daemon, token, "legacy"),
        "http-stateless": lambda: over_http(daemon, token, "2026-07-28"),
    }
    for name, opened in transports.items():
        async with opened() as call:
            await call("browser_open", {"url": f"{site}/form.html"})
            figures[name] = {
                "get_url": await timed(call, "browser_get", {"what": "url"}, samples, daemon_pid),
                "snapshot": await timed(call, "browser_snapshot", {}, samples, daemon_pid),
                "load": load(),
            }
    for name in ("http-legacy", "http-stateless"):
        figures[f"{name} minus stdio"] = {
            what: {
                "medianMs": round(figures[name][what]["median"] - figures["stdio"][what]["median"], 1),
                "cpuMs": round(figures[name][what]["cpuMs"]["total"] - figures["stdio"][what]["cpuMs"]["total"], 2),
            }
            for what in ("get_url", "snapshot")
        }
    return figures


async def main(args: argparse.Namespace) -> dict[str, Any]:
    home = make_home(idle_exit_s=0)
    home.env["BROWSERD_HTTP_RATE_PER_MINUTE"] = "100000"
    daemon = HttpDaemon(home, free_port())
    site_server, site = serve_site()
    try:
        daemon.start()
        pid = home.daemon_pid()
        assert pid is not None
        tokens = [daemon.token(f"bench-{i}") for i in range(args.clients)]
        eras = ("legacy", "2026-07-28")
        print(f"daemon pid {pid}, {daemon.url}; {load()}", file=sys.stderr)
        http_load = await run_load(
            args.clients,
            args.calls,
            site,
            lambda i: over_http(daemon, tokens[i], eras[i % 2]),
            pid,
        )
        print(f"http load: {http_load}", file=sys.stderr)
        stdio_load = await run_load(args.clients, args.calls, site, lambda i: stdio(daemon), pid)
        print(f"stdio load: {stdio_load}", file=sys.stderr)
        per_call = await overhead(daemon, tokens[0], site, args.samples, pid)
        return {"load": {"http": http_load, "stdio": stdio_load}, "perCall": per_call}
    finally:
        home.stop_daemon()
        stop_site(site_server)


def report(figures: dict[str, Any], args: argparse.Namespace) -> None:
    print(f"\n== {args.clients} clients x {args.calls} mixed calls ==")
    for name, row in figures["load"].items():
        cpu = row["cpuMsPerCall"]
        print(
            f"{name:<6} calls {row['calls']}  errors {row['errors']}  cross-session {row['crossSession']}  "
            f"{row['callsPerS']} calls/s  CPU ms/call: daemon {cpu['daemon']} + shims {cpu['shims']} "
            f"(clients {cpu['clients']})  ({row['load']})"
        )
        for example in row["examples"]:
            print(f"       {example}")
    print("\n== per call, one client: wall median / p95 ms, and CPU ms (client + shim + daemon) ==")
    for name, row in figures["perCall"].items():
        if "minus" in name:
            worst = max(cell["medianMs"] for cell in row.values())
            verdict = "within" if worst <= OVERHEAD_TARGET_MS else "over"
            print(f"{name}: {row}  (wall: {verdict} the {OVERHEAD_TARGET_MS:g} ms target)")
            continue
        cells = "  ".join(
            f"{what} {row[what]['median']} / {row[what]['p95']} (CPU {row[what]['cpuMs']['total']})"
            for what in ("get_url", "snapshot")
        )
        print(f"{name:<15} {cells}  ({row['load']})")
    print("\n" + json.dumps(figures))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--samples", type=int, default=100)
    options = parser.parse_args()
    report(anyio.run(main, options), options)
