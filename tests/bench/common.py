"""What the benchmarks in tests/bench share: a raw MCP client over `browserd mcp`, the tests/site
server, and the small helpers that sample, summarise and format their figures.

The MCP side is a raw newline-delimited JSON-RPC client over the shim's pipes: the official SDK
would not change the shim's figures, but it is slow to import and a raw client keeps the measuring
process out of the way.
"""

from __future__ import annotations

import json
import os
import select
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from browserd.daemon.runtime.procinfo import descendants  # noqa: E402
from tests.conftest import BROWSERD, BrowserdHome, SiteHandler, _Server  # noqa: E402

PROTOCOL_VERSION = "2025-11-25"
MAX_FAILURES = 3  # per measurement: stop taking samples after this many failed runs


class BenchError(Exception):
    pass


# -- a raw JSON-RPC client over a `browserd mcp` process ----------------------------------------------


class RawShim:
    """`browserd mcp` with stdin/stdout pipes; requests are one JSON line each way."""

    def __init__(self, home: BrowserdHome, args: list[str] | None = None) -> None:
        self._stderr: IO[bytes] = open(home.root / "shim.err", "ab")  # noqa: SIM115 - closed in close()
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            [BROWSERD, "mcp", *(args or [])],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=home.env,
        )
        self._buffer = b""
        self._next_id = 0

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._send(message)

    def request(self, method: str, params: dict[str, Any], timeout: float) -> dict[str, Any]:
        """Send a request and return its `result`; notifications on the way are skipped."""
        self._next_id += 1
        request_id = self._next_id
        self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        while True:
            message = json.loads(self._read_line(deadline))
            if message.get("id") != request_id or "method" in message:
                continue
            if "error" in message:
                raise BenchError(f"{method}: JSON-RPC error {message['error']}")
            result: dict[str, Any] = message["result"]
            return result

    def _read_line(self, deadline: float) -> bytes:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BenchError("timed out waiting for the shim's answer")
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise BenchError(f"the shim closed its stdout (exit code {self.proc.poll()})")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line

    def initialize(self, timeout: float = 15) -> dict[str, Any]:
        return self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "browserd-bench", "version": "0"},
            },
            timeout,
        )

    def call_tool(self, name: str, arguments: dict[str, Any], timeout: float = 60) -> dict[str, Any]:
        result = self.request("tools/call", {"name": name, "arguments": arguments}, timeout)
        if result.get("isError"):
            text = " ".join(block.get("text", "") for block in result.get("content", []))
            raise BenchError(f"{name} failed: {text[:300]}")
        return result

    def close(self, timeout: float = 10) -> None:
        """Close stdin (the client goes away) and wait for the shim to exit; kill it if it does not."""
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self._stderr.close()

    def __enter__(self) -> RawShim:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# -- helpers -------------------------------------------------------------------------------------------


def ready_shim(home: BrowserdHome, args: list[str]) -> RawShim:
    """A shim past the MCP handshake, closed again if the handshake fails."""
    shim = RawShim(home, args)
    try:
        shim.initialize()
        shim.notify("notifications/initialized")
    except BaseException:
        shim.close()
        raise
    return shim


def text_of(result: dict[str, Any]) -> str:
    """The text blocks of a tools/call result, joined."""
    return "\n".join(block.get("text", "") for block in result.get("content", []) if block.get("type") == "text")


def percentile(values: list[float], q: float) -> float:
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(q) - 1]


def summary(values: list[float]) -> dict[str, Any]:
    if not values:
        return {"n": 0}
    return {
        "n": len(values),
        "median": round(statistics.median(values), 1),
        "p95": round(percentile(values, 95), 1),
        "min": round(min(values), 1),
        "max": round(max(values), 1),
    }


def vm_rss_kib(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_ms(pids: list[int], *, reaped: bool = False) -> float:
    """User plus system CPU time of these processes so far; `reaped`: with that of their ended children."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].split()
        except OSError:  # ended meanwhile: its time is its parent's reaped time now
            continue
        # utime, stime (fields 14 and 15 of stat), then cutime, cstime
        total += sum(int(f) for f in fields[11 : 15 if reaped else 13])
    return total * 1000 / _TICKS


def tree_cpu_ms(pid: int) -> tuple[float, float]:
    """CPU time so far of a process alone, and of it with all its descendants (Chromium under the daemon)."""
    return cpu_ms([pid]), cpu_ms([pid, *descendants(pid)], reaped=True)


def mib(kib: float | None) -> float | None:
    return None if kib is None else round(kib / 1024, 1)


def status_json(home: BrowserdHome) -> dict[str, Any] | None:
    done = home.browserd("status", "--json", timeout=30)
    if done.returncode != 0:
        return None
    data: dict[str, Any] = json.loads(done.stdout)
    return data


class Budget:
    """A wall-clock cap for the whole script: once spent, measurements stop taking new samples."""

    def __init__(self, seconds: float) -> None:
        self.deadline = time.monotonic() + seconds
        self.exhausted = False

    def left(self) -> bool:
        if time.monotonic() >= self.deadline:
            self.exhausted = True
        return not self.exhausted


def sample(
    label: str, runs: int, measure: Callable[[], float], budget: Budget, before: Callable[[], None] | None = None
) -> tuple[list[float], list[str]]:
    times: list[float] = []
    failures: list[str] = []
    for _ in range(runs):
        if not budget.left() or len(failures) >= MAX_FAILURES:
            break
        if before is not None:
            before()
        try:
            times.append(measure())
        except (BenchError, OSError, subprocess.TimeoutExpired) as exc:
            failures.append(str(exc))
            print(f"  ! {label}: {exc}", file=sys.stderr)
        print(".", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return times, failures


def serve_site() -> tuple[_Server, str]:
    """tests/site on 127.0.0.1 (loopback only) in a background thread; answers the server and its base URL."""
    server = _Server(("127.0.0.1", 0), SiteHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def stop_site(server: _Server) -> None:
    server.shutdown()
    server.server_close()


# -- output --------------------------------------------------------------------------------------------


def fmt_ms(value: Any) -> str:
    return "-" if value is None else f"{value:.0f} ms"


def fmt_mib(value: Any) -> str:
    return "-" if value is None else f"{value:.1f} MiB"


def verdict(value: float | None, target: float) -> str:
    if value is None:
        return "no figure"
    return "met" if value < target else "MISSED"
