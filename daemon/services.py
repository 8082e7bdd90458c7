"""The daemon's long-lived services, built once at start-up and handed to every tool call."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from browserd.daemon.policy.proxy import Guards
from browserd.daemon.policy.urls import UrlPolicy
from browserd.daemon.profiles.registry import Profiles
from browserd.daemon.runtime.browser import BrowserRuntime
from browserd.daemon.runtime.executor import TaskExecutor
from browserd.daemon.sessions.manager import SessionManager
from browserd.protocol.config import Config

if TYPE_CHECKING:
    from browserd.daemon.flows.service import FlowService
    from browserd.daemon.runs.manager import RunManager


@dataclass
class Services:
    config: Config
    runtime: BrowserRuntime
    executor: TaskExecutor
    sessions: SessionManager
    profiles: Profiles
    guards: Guards
    started_at: float = field(default_factory=time.time)
    pid: int = field(default_factory=os.getpid)
    # Built from the finished Services, since runs use every other service (task runs, reference/001).
    runs: RunManager = field(init=False)
    flows: FlowService = field(init=False)

    def __post_init__(self) -> None:
        from browserd.daemon.flows.service import FlowService
        from browserd.daemon.runs.manager import RunManager

        self.runs = RunManager(self)
        self.flows = FlowService(self.config)

    @classmethod
    def build(cls, config: Config) -> Services:
        runtime = BrowserRuntime(config.browser)
        profiles = Profiles(config.profiles)
        guards = Guards(UrlPolicy(config.security))
        return cls(
            config=config,
            runtime=runtime,
            executor=TaskExecutor(runtime, config.browser.workers, config.browser.queue_size),
            sessions=SessionManager(runtime, config.browser, profiles, guards, config.runs.kept_session_idle_s),
            profiles=profiles,
            guards=guards,
        )
