"""The daemon's long-lived services, built once at start-up and handed to every tool call."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from browserd.daemon.bridge.server import BridgeServer
from browserd.daemon.config import Config
from browserd.daemon.errors import ExecutionError, UnknownTool
from browserd.daemon.flows.replay.run_template import FlowRun
from browserd.daemon.flows.service import FlowService
from browserd.daemon.policy.proxy import Guards
from browserd.daemon.policy.urls import UrlPolicy
from browserd.daemon.profiles.registry import Profiles
from browserd.daemon.runs.manager import RunManager
from browserd.daemon.runs.templates.registry import TemplateRegistry, builtin_templates
from browserd.daemon.runtime.browser import BrowserRuntime
from browserd.daemon.runtime.executor import TaskExecutor
from browserd.daemon.scrape.shared import ScrapeShared
from browserd.daemon.sessions.manager import SessionManager
from browserd.daemon.sessions.session import Session


class ToolCaller(Protocol):
    """The browser tools as runs use them (login_keep_session's steps). The tools layer provides it (its
    Catalog), so runs, below tools, call a tool by name and never import one."""

    def check(self, name: str, arguments: dict[str, Any]) -> None:
        """INVALID_PARAMETER unless `arguments` are valid for the tool `name`."""

    async def call(self, name: str, arguments: dict[str, Any], services: Services, session: Session) -> dict[str, Any]:
        """The tool's own handler on `session`, in-process; answers its structured data."""
        ...


class NoTools:
    """Until the daemon hands the catalog over (and in processes that have none)."""

    def check(self, name: str, arguments: dict[str, Any]) -> None:
        raise UnknownTool(f"unknown tool `{name}`: this process has no tool catalog", tool=name)

    async def call(self, name: str, arguments: dict[str, Any], services: Services, session: Session) -> dict[str, Any]:
        raise ExecutionError(f"cannot run {name}: this process has no tool catalog")


@dataclass
class Services:
    config: Config
    runtime: BrowserRuntime
    executor: TaskExecutor
    sessions: SessionManager
    profiles: Profiles
    guards: Guards
    # The fast path's HTTP pool, the resource policy and warm contexts of scrapes, batches and crawls.
    scrape: ScrapeShared
    # The extension bridge; it listens only when [bridge] enabled is set (the daemon starts it).
    bridge: BridgeServer
    tools: ToolCaller = field(default_factory=NoTools)
    started_at: float = field(default_factory=time.time)
    pid: int = field(default_factory=os.getpid)
    # Built from the finished Services, since runs use every other service (task runs, reference/001).
    runs: RunManager = field(init=False)
    flows: FlowService = field(init=False)

    def __post_init__(self) -> None:
        # The composition root: runs know templates only through the registry, so a flow's replay (which
        # imports runs) is registered here and runs never import flows.
        self.runs = RunManager(self, TemplateRegistry([*builtin_templates(), FlowRun()]))
        self.flows = FlowService(self.config)

    @classmethod
    def build(cls, config: Config, tools: ToolCaller | None = None) -> Services:
        runtime = BrowserRuntime(config.browser)
        profiles = Profiles(config.profiles)
        guards = Guards(UrlPolicy(config.security), config.browser.proxy)
        return cls(
            config=config,
            runtime=runtime,
            executor=TaskExecutor(runtime, config.browser.workers, config.browser.queue_size),
            sessions=SessionManager(runtime, config.browser, profiles, guards, config.runs.kept_session_idle_s),
            profiles=profiles,
            guards=guards,
            scrape=ScrapeShared.build(config),
            bridge=BridgeServer(config.bridge),
            tools=tools or NoTools(),
        )
