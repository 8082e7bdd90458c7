"""Browser sessions of HTTP clients, and the handles that reach them (DESIGN.md §7).

A legacy MCP session (one `Mcp-Session-Id`) has one browser session, made on its first call. The
stateless 2026-07-28 protocol has no connection to hang a session on, so a call without a `session`
argument gets a fresh browser session and its answer names the session's handle: a server-minted,
unguessable string the client passes back as `session` to keep its tabs. Any client may use handles,
and `session: "new"` makes another: one agent can hold several isolated sessions. A handle opens its
session only with the token that minted it. A session closes after `[http] session_idle_s` without a
call, with the daemon, and when its token opens more than `[http] max_sessions_per_token` (the least
recently used goes).
"""

from __future__ import annotations

import contextlib
import logging
import math
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from browserd.daemon.errors import SessionNotFound
from browserd.daemon.policy.trust import stricter
from browserd.daemon.server.http.tokens import TokenRecord
from browserd.daemon.server.tool_clients import ToolClient

if TYPE_CHECKING:
    from browserd.daemon.server.daemon_process import Daemon

log = logging.getLogger(__name__)

HANDLE_PREFIX = "bs_"
# The `session` argument that asks for a fresh browser session, whatever the client has already.
NEW = "new"
IDLE_REASON = "httpSession"


@dataclass(eq=False)
class HttpSession:
    handle: str
    client: ToolClient
    token: TokenRecord
    # The legacy MCP session this browser session belongs to; None for one reached by its handle only.
    mcp_session_id: str | None
    last_used: float = field(default_factory=anyio.current_time)
    calls: int = 0


class HttpSessions:
    def __init__(self, daemon: Daemon) -> None:
        self._daemon = daemon
        self.idle_s = daemon.config.http.session_idle_s
        self._by_handle: dict[str, HttpSession] = {}
        self._by_mcp: dict[str, HttpSession] = {}
        self._changed = anyio.Event()

    def __len__(self) -> int:
        return len(self._by_handle)

    async def resolve(
        self, token: TokenRecord, handle: str | None, mcp_session_id: str | None
    ) -> tuple[HttpSession, bool]:
        """The session a call runs in, and whether it was made for this call (its handle is news to the client).

        `handle` None: the MCP session's own browser session, or a fresh one without an MCP session (the
        stateless protocol); NEW: a fresh one; else the session of that handle."""
        if handle == NEW:
            await self._make_room(token)
            return self._open(token, None), True
        if handle is not None:
            found = self._by_handle.get(handle)
            # Another token's handle is as unknown as a made-up one: it tells nothing about other clients.
            if found is None or found.token.token_id != token.token_id:
                raise SessionNotFound(
                    f"browser session {handle!r} is unknown or has ended",
                    hint="Call without `session` for a fresh browser session (the answer names its handle). Sessions "
                    "end after [http] session_idle_s without a call, when the daemon restarts, and the least "
                    "recently used when a token holds [http] max_sessions_per_token.",
                    session=handle,
                )
            return found, False
        if mcp_session_id is not None:
            own = self._by_mcp.get(mcp_session_id)
            if own is not None:
                return own, False
        await self._make_room(token)
        return self._open(token, mcp_session_id), True

    async def _make_room(self, token: TokenRecord) -> None:
        """Keep the token under [http] max_sessions_per_token: its least recently used idle session goes."""
        own = [e for e in self._by_handle.values() if e.token.token_id == token.token_id]
        idle = sorted((e for e in own if e.calls == 0), key=lambda e: e.last_used)
        for entry in idle[: max(0, len(own) - self._daemon.config.http.max_sessions_per_token + 1)]:
            log.info(
                "token %s holds too many sessions; closing %s, its least recently used", token.name, entry.handle[:8]
            )
            await self._close(entry)

    def _open(self, token: TokenRecord, mcp_session_id: str | None) -> HttpSession:
        daemon = self._daemon
        trust = stricter(token.trust_level, daemon.config.daemon.max_trust_level)
        browser_session = daemon.services.sessions.create(f"http:{token.name}", trust, connected=True)
        client = ToolClient(daemon.services, daemon.catalog, browser_session, token.tools, None)
        entry = HttpSession(HANDLE_PREFIX + secrets.token_urlsafe(18), client, token, mcp_session_id)
        self._by_handle[entry.handle] = entry
        if mcp_session_id is not None:
            self._by_mcp[mcp_session_id] = entry
        daemon.idle.acquire(IDLE_REASON)
        self._notify()
        log.info(
            "HTTP session %s (token %s) opened browser session %s", entry.handle[:8], token.name, browser_session.id
        )
        return entry

    def reselect_tools(self) -> None:
        """Published flows changed: every session's client selects its tools again (tools/list is fresh anyway)."""
        for entry in self._by_handle.values():
            entry.client.reselect()

    @contextlib.contextmanager
    def using(self, entry: HttpSession) -> Iterator[None]:
        """A call in flight: the session does not expire under it, and its idle time starts after it."""
        entry.calls += 1
        try:
            yield
        finally:
            entry.calls -= 1
            entry.last_used = anyio.current_time()
            self._notify()

    async def end_mcp_session(self, mcp_session_id: str) -> None:
        """The client ended its MCP session (DELETE): its own browser session closes with it."""
        entry = self._by_mcp.get(mcp_session_id)
        if entry is not None:
            await self._close(entry)

    async def _close(self, entry: HttpSession) -> None:
        if self._by_handle.pop(entry.handle, None) is None:
            return
        if entry.mcp_session_id is not None:
            self._by_mcp.pop(entry.mcp_session_id, None)
        self._daemon.idle.release(IDLE_REASON)
        with anyio.CancelScope(shield=True):
            await self._daemon.end_session(entry.client.session.id)

    def _notify(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def expire(self) -> None:
        """Close sessions idle for `idle_s`; runs until the daemon stops, then closes the rest."""
        try:
            while True:
                changed = self._changed
                now = anyio.current_time()
                for entry in list(self._by_handle.values()):
                    if entry.calls == 0 and now - entry.last_used >= self.idle_s:
                        log.info("HTTP session %s was idle for %s s; closing it", entry.handle[:8], self.idle_s)
                        await self._close(entry)
                idle = [e.last_used + self.idle_s for e in self._by_handle.values() if e.calls == 0]
                with anyio.move_on_after(min(idle) - anyio.current_time() if idle else math.inf):
                    await changed.wait()
        finally:
            for entry in list(self._by_handle.values()):
                await self._close(entry)

    def status(self) -> list[dict[str, Any]]:
        """For `browserd status`: each session's token and browser session; never a whole handle."""
        now = anyio.current_time()
        return [
            {
                "handle": entry.handle[:8] + "…",
                "token": entry.token.name,
                "trustLevel": entry.client.session.trust_level,
                "sessionId": entry.client.session.id,
                "mcpSession": entry.mcp_session_id is not None,
                "callsInFlight": entry.calls,
                "idleS": round(now - entry.last_used, 1) if entry.calls == 0 else 0.0,
            }
            for entry in self._by_handle.values()
        ]
