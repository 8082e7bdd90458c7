"""The daemon's long-lived services, built once at start-up and handed to every tool call."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from browserd.daemon.bridge.bridge_server import BridgeServer
from browserd.daemon.config import Config
from browserd.daemon.errors import ExecutionError, UnknownTool
from browserd.daemon.events import Events
from browserd.daemon.flows.flow_service import FlowService
from browserd.daemon.flows.replay.run_template import FlowRun
from browserd.daemon.llm.llm_service import Llm
from browserd.daemon.policy.proxy import Guards
from browserd.daemon.policy.urls import UrlPolicy
from browserd.daemon.profiles.profile_registry import Profiles
from browserd.daemon.runs.run_manager import RunManager
from browserd.daemon.runs.templates.template_registry import TemplateRegistry, builtin_templates
from browserd.daemon.runtime.browser import BrowserRuntime
from browserd.daemon.runtime.executor import TaskExecutor
from browserd.daemon.runtime.pool import BrowserPool
from browserd.daemon.scrape.shared import ScrapeShared
from browserd.daemon.sessions.backends.factory import Backends
from browserd.daemon.sessions.session import Session
from browserd.daemon.sessions.session_manager import SessionManager


@dataclass(frozen=True)
class ToolAnswer:
    """A tool's answer as a model reads it (its text: page header, changes, snapshot) and its structured data."""

    text: str
    data: dict[str, Any]


class ToolCaller(Protocol):
    """The browser tools as runs use them (login_keep_session's steps). The tools layer provides it (its
    Catalog), so runs, below tools, call a tool by name and never import one."""

    def check(self, name: str, arguments: dict[str, Any]) -> None:
        """INVALID_PARAMETER unless `arguments` are valid for the tool `name`."""

    async def call(self, name: str, arguments: dict[str, Any], services: Services, session: Session) -> dict[str, Any]:
        """The tool's own handler on `session`, in-process; answers its structured data."""
        ...

    async def answer(self, name: str, arguments: dict[str, Any], services: Services, session: Session) -> ToolAnswer:
        """The same, answering the text a client would read too (an agent run's observation)."""
        ...


class NoTools:
    """Until the daemon hands the catalog over (and in processes that have none)."""

    def check(self, name: str, arguments: dict[str, Any]) -> None:
        raise UnknownTool(f"unknown tool `{name}`: this process has no tool catalog", tool=name)

    async def call(self, name: str, arguments: dict[str, Any], services: Services, session: Session) -> dict[str, Any]:
        raise ExecutionError(f"cannot run {name}: this process has no tool catalog")

    async def answer(self, name: str, arguments: dict[str, Any], services: Services, session: Session) -> ToolAnswer:
        raise ExecutionError(f"cannot run {name}: this process has no tool catalog")


@dataclass
class Services:
    config: Config
    runtime: BrowserRuntime
    # Where windows and scrape pages get a browser: the daemon's own Chromium and remote browser servers.
    pool: BrowserPool
    executor: TaskExecutor
    sessions: SessionManager
    profiles: Profiles
    guards: Guards
    # The fast path's HTTP pool, the resource policy and warm contexts of scrapes, batches and crawls.
    scrape: ScrapeShared
    # The extension bridge; it listens only when [bridge] enabled is set (the daemon starts it).
    bridge: BridgeServer
    # The model of scrape format=json and agent runs ([llm]); nothing connects until a call needs it.
    llm: Llm
    tools: ToolCaller = field(default_factory=NoTools)
    # What just changed (runs' progress, sessions' tabs and calls), for the console's live view.
    events: Events = field(default_factory=Events)
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
        self.sessions.on_change = lambda session_id: self.events.publish("session", sessionId=session_id)

    @classmethod
    def build(cls, config: Config, tools: ToolCaller | None = None) -> Services:
        runtime = BrowserRuntime(config.browser)
        profiles = Profiles(config.profiles)
        guards = Guards(UrlPolicy(config.security), config.browser.proxy)
        bridge = BridgeServer(config.bridge)
        pool = BrowserPool(runtime, config.browser)
        backends = Backends(runtime, guards, bridge, pool)
        return cls(
            config=config,
            runtime=runtime,
            pool=pool,
            # Each remote member's capacity adds as many browser tasks as it may run at once.
            executor=TaskExecutor(pool, config.browser.workers + pool.remote_capacity, config.browser.queue_size),
            sessions=SessionManager(
                runtime, config.browser, profiles, guards, backends, config.runs.kept_session_idle_s
            ),
            profiles=profiles,
            guards=guards,
            scrape=ScrapeShared.build(config),
            bridge=bridge,
            llm=Llm(config.llm),
            tools=tools or NoTools(),
        )
