"""The daemon's sessions, one per registered client (DESIGN.md §2: one connection is one session)."""

from __future__ import annotations

import secrets

from browserd.daemon.policy.proxy import Guards
from browserd.daemon.profiles.registry import Profiles
from browserd.daemon.runtime.browser import BrowserRuntime
from browserd.daemon.sessions.session import Session
from browserd.protocol.config import BrowserConfig
from browserd.protocol.messages import TrustLevel


def new_session_id() -> str:
    return f"sess_{secrets.token_hex(4)}"


class SessionManager:
    def __init__(self, runtime: BrowserRuntime, config: BrowserConfig, profiles: Profiles, guards: Guards) -> None:
        self._guards = guards
        self._runtime = runtime
        self._config = config
        self._profiles = profiles
        self.sessions: dict[str, Session] = {}

    def create(self, client_name: str, trust_level: TrustLevel) -> Session:
        session_id = new_session_id()
        while session_id in self.sessions:
            session_id = new_session_id()
        session = Session(
            session_id, client_name, trust_level, self._runtime, self._config, self._profiles, self._guards
        )
        self.sessions[session_id] = session
        return session

    async def close(self, session_id: str) -> None:
        session = self.sessions.pop(session_id, None)
        if session is not None:
            await session.aclose()

    async def close_all(self) -> None:
        for session_id in list(self.sessions):
            await self.close(session_id)
