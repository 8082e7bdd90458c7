"""Tools every client sees: what this daemon is and what it can do."""

from __future__ import annotations

import platform
import sys
from importlib import metadata
from typing import Any

import msgspec

from browserd.daemon.tools.context import ToolContext
from browserd.daemon.tools.response import Response
from browserd.daemon.tools.tool_registry import NoParams, Tool, tool
from browserd.protocol import __version__
from browserd.protocol.messages import PROTOCOL_VERSION

# The task-run contract version of reference/001 (S1-08, D-34); the daemon's own version is separate.
RUNTIME_CONTRACT_VERSION = "0.2.0"


def package_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "unknown"


class RuntimeLimits(msgspec.Struct, rename="camel", kw_only=True):
    max_concurrent_runs: int
    max_run_timeout_ms: int
    max_artifact_inline_bytes: int
    browser_workers: int | None = None
    browser_queue_size: int | None = None


class RuntimeProfile(msgspec.Struct, rename="camel", kw_only=True):
    """The answer's schema (outputSchema). reference/001 §2's example has only runtimeVersion and the three
    run limits, so only they are required (S1-88); the handler always sends the rest too."""

    runtime_version: str
    daemon_version: str | None = None
    daemon_pid: int | None = None
    protocol_version: str | None = None
    limits: RuntimeLimits
    browser: dict[str, Any] | None = None
    # The browser pool's members (docs/pool.md): kind, URL without secrets, up/down, contexts used/capacity.
    pool: list[dict[str, Any]] | None = None
    versions: dict[str, str] | None = None
    session: dict[str, str] | None = None
    platform: str | None = None


@tool(
    "get_runtime_profile",
    "core",
    "Versions, limits and the browser this daemon drives.",
    NoParams,
    read_only=True,
    output=RuntimeProfile,
)
async def get_runtime_profile(ctx: ToolContext, params: NoParams, response: Response) -> None:
    services = ctx.services
    runs = services.config.runs
    found = services.runtime.executable
    response.data(
        {
            "runtimeVersion": RUNTIME_CONTRACT_VERSION,
            "daemonVersion": __version__,
            "daemonPid": services.pid,
            "protocolVersion": PROTOCOL_VERSION,
            "limits": {
                "maxConcurrentRuns": runs.max_concurrent_runs,
                "maxRunTimeoutMs": runs.max_run_timeout_ms,
                "maxArtifactInlineBytes": runs.max_artifact_inline_bytes,
                "browserWorkers": services.config.browser.workers,
                "browserQueueSize": services.config.browser.queue_size,
            },
            "browser": {
                "executable": found.path if found else None,
                "foundBy": found.source if found else None,
                "headlessShell": found.headless_shell if found else False,
                "version": await services.runtime.executable_version() or None,
                "headless": services.config.browser.headless,
                "running": services.runtime.is_running(),
            },
            "pool": services.pool.status(),
            "versions": {
                "python": platform.python_version(),
                "playwright": package_version("playwright"),
                "msgspec": package_version("msgspec"),
            },
            "session": {"sessionId": ctx.session.id, "trustLevel": ctx.session.trust_level},
            "platform": sys.platform,
        }
    )


TOOLS: list[Tool[Any]] = [get_runtime_profile]
