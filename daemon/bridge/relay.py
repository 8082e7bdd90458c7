"""A CDP endpoint per extension-backed session, relayed to `chrome.debugger` in the user's Chrome.

Playwright's connect_over_cdp expects a browser-level endpoint; the extension can only debug single
tabs. The relay plays the browser: it answers the browser-level commands itself (Browser.getVersion,
Target.setAutoAttach, Target.createTarget/closeTarget, Target.getTargetInfo), announces each of the
session's tabs with Target.attachedToTarget under a session id of its own, and forwards every other
command to the extension as `cdp.send` for the tab (or the tab's child session: an iframe, a worker)
that the session id names. The extension re-checks that the tab is in the session's group before it
runs anything. The endpoint listens on 127.0.0.1 under an unguessable path, for one client: the daemon.
"""

from __future__ import annotations

import itertools
import json
import logging
import math
import secrets
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import anyio
from anyio.abc import TaskGroup
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from browserd.daemon.bridge.link import AnswerHandler, ExtensionLink
from browserd.daemon.errors import BrowserdError, ExtensionNotConnected, TabLeftSession

log = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 256 * 1024 * 1024  # full-page screenshots come back through here
_BROWSER_SESSION = "bridge-browser"  # Target.attachToBrowserTarget's answer: browser-level commands again
_BROWSER_TARGET = {
    "targetId": "browserd-bridge",
    "type": "browser",
    "title": "",
    "url": "",
    "attached": True,
    "canAccessOpener": False,
}


# Why the extension let go of a tab (its `detached` event's reason), as the model reads it.
_LEFT_BECAUSE = {
    "left-group": "was taken out of the session's tab group in Chrome",
    "closed": "was closed in Chrome",
    "debugger": "was taken back from the debugger in Chrome (its debugging bar was cancelled)",
    "stopped": "was let go: the session was stopped in the browserd side panel",
}
_CLOSED_BY_SESSION = "closed-by-session"  # Target.closeTarget: the daemon's own doing, no departure to report
_DEPARTURES_KEPT = 32  # enough for the calls in flight when several tabs go at once
# How long before a call a tab's departure still explains the call's failure (Playwright's page lags it).
_DEPARTURE_NOTICE_S = 2.0


@dataclass
class TabTarget:
    tab_id: int
    session_id: str  # the relay's CDP session id for this tab
    target_info: dict[str, Any]
    children: set[str] = field(default_factory=set)  # CDP sessions of its iframes and workers


class CdpRelay:
    def __init__(self, link: ExtensionLink, session_id: str, user_agent: str, product: str) -> None:
        self.link = link
        self.session_id = session_id
        self._user_agent = user_agent
        self._product = product
        self._path = f"/cdp/{secrets.token_urlsafe(24)}"
        self._server: Server | None = None
        self._client: ServerConnection | None = None
        self._tabs: dict[int, TabTarget] = {}
        self._aliases: dict[str, TabTarget] = {}  # further sessions on a tab -> the tab
        # Binding name -> the alias that added it: Chrome reports its calls to the tab's one debugger session,
        # and the relay hands them to the session that asked, as Chrome does for sessions of its own.
        self._bindings: dict[str, str] = {}
        self._numbers = itertools.count(1)
        self._auto_attach = False
        # Commands from Playwright run here, and so do attaches the extension asks for (a tab the user shared).
        self._tasks: TaskGroup | None = None
        # (anyio time, reason, url) of the tabs that left the session, newest last.
        self._departures: deque[tuple[float, str, str]] = deque(maxlen=_DEPARTURES_KEPT)
        self.endpoint = ""
        self.ended = anyio.Event()
        self._outbox, self._outbox_reader = anyio.create_memory_object_stream[dict[str, Any] | None](math.inf)

    async def start(self) -> None:
        self._server = await serve(
            self._serve_client, "127.0.0.1", 0, process_request=self._check, max_size=MAX_MESSAGE_BYTES
        )
        port = self._server.sockets[0].getsockname()[1]
        self.endpoint = f"ws://127.0.0.1:{port}{self._path}"
        self.link.on_events(self.session_id, self._on_extension_event)

    def _check(self, connection: ServerConnection, request: Request) -> Response | None:
        if request.path != self._path or self._client is not None:
            return connection.respond(404, "no such endpoint\n")
        return None

    async def close(self) -> None:
        self.link.on_events(self.session_id, None)
        if self._server is not None:
            self._server.close()
            with anyio.CancelScope(shield=True), anyio.move_on_after(2):
                await self._server.wait_closed()
        self.ended.set()

    # -- Playwright's side ----------------------------------------------------------------------------

    async def _serve_client(self, ws: ServerConnection) -> None:
        self._client = ws
        try:
            async with anyio.create_task_group() as tg:
                self._tasks = tg
                tg.start_soon(self._pump, ws)
                async for raw in ws:
                    message = json.loads(raw)
                    # Commands run concurrently, as a browser runs them; each answers under its own id.
                    tg.start_soon(self._answer, message)
                tg.cancel_scope.cancel()
        except ConnectionClosed:
            pass
        finally:
            self._client = None
            self._tasks = None
            # The daemon disconnected (window closed): the session's tabs leave the debugger.
            if not self.link.closed:
                with anyio.CancelScope(shield=True), anyio.move_on_after(5):
                    try:
                        await self.link.call("session.detach", {"sessionId": self.session_id})
                    except BrowserdError:
                        log.debug("bridge: detaching %s failed", self.session_id, exc_info=True)
            await self.close()

    async def _answer(self, message: dict[str, Any]) -> None:
        reply: dict[str, Any] = {"id": message.get("id")}
        if message.get("sessionId"):
            reply["sessionId"] = message["sessionId"]
        answered = False

        def answer(result: Any, error: BrowserdError | None) -> None:
            # Chrome sends an answer before the events of the commands after it (Page.getFrameTree before
            # Runtime.enable's executionContextCreated): Playwright drops a context of a frame it does not
            # know yet, so answers go out the moment they arrive, not when this task wakes after the events.
            nonlocal answered
            answered = True
            if error is None:
                self._emit({**reply, "result": result})
            else:
                self._emit({**reply, "error": {"code": -32000, "message": error.message}})

        try:
            result = await self._command(
                str(message.get("method")), message.get("params") or {}, message.get("sessionId"), answer
            )
        except BrowserdError as exc:
            if not answered:
                answer(None, exc)
            return
        if not answered:
            answer(result, None)

    def _emit(self, message: dict[str, Any]) -> None:
        # One queue to Playwright for answers and events alike, so each tab's events keep their order.
        if self._client is not None:
            self._outbox.send_nowait(message)

    async def _pump(self, ws: ServerConnection) -> None:
        async for message in self._outbox_reader:
            if message is None:
                await ws.close(1000, "the session ended in the extension")
                return
            await ws.send(json.dumps(message))

    async def _command(self, method: str, params: dict[str, Any], session_id: str | None, answer: AnswerHandler) -> Any:
        if session_id is None or session_id == _BROWSER_SESSION:
            return await self._browser_command(method, params, answer)
        tab = self._tab_of_session(session_id)
        own = session_id == tab.session_id or session_id in self._aliases
        if method == "Target.getTargetInfo" and own:
            return {"targetInfo": tab.target_info}
        if session_id in self._aliases:
            if method in ("Runtime.enable", "Page.enable"):
                # The tab's one debugger session has them on (Playwright's); enabling Runtime again would
                # make Chrome announce every execution context to Playwright a second time.
                return {}
            if method == "Runtime.addBinding":
                self._bindings[str(params.get("name"))] = session_id
            elif method == "Runtime.removeBinding":
                self._bindings.pop(str(params.get("name")), None)
        return await self._send(tab, None if own else session_id, method, params, answer)

    async def _browser_command(self, method: str, params: dict[str, Any], answer: AnswerHandler) -> Any:
        if method == "Browser.getVersion":
            return {
                "protocolVersion": "1.3",
                "product": self._product,
                "revision": "",
                "userAgent": self._user_agent,
                "jsVersion": "",
            }
        if method == "Target.setAutoAttach":
            self._auto_attach = True
            tabs = await self.link.call("session.tabs", {"sessionId": self.session_id})
            for tab_id in tabs:
                await self._attach(int(tab_id))
            return {}
        if method == "Target.getTargetInfo":
            return {"targetInfo": _BROWSER_TARGET}
        if method == "Target.attachToBrowserTarget":
            return {"sessionId": _BROWSER_SESSION}
        if method == "Target.attachToTarget":
            # A second session on a tab (Playwright's new_cdp_session): an alias of the tab's own session.
            tab = self._tab_of_target(params.get("targetId"))
            alias = f"{tab.session_id}-{next(self._numbers)}"
            self._aliases[alias] = tab
            return {"sessionId": alias}
        if method == "Target.createTarget":
            created = await self.link.call("tab.create", {"sessionId": self.session_id, "url": params.get("url")})
            tab = await self._attach(int(created["tabId"]))
            return {"targetId": tab.target_info.get("targetId")}
        if method == "Target.closeTarget":
            closing = self._tab_of_target(params.get("targetId"))
            await self.link.call("tab.close", {"sessionId": self.session_id, "tabId": closing.tab_id})
            return {"success": True}
        if method == "Target.detachFromTarget":
            session_id = params.get("sessionId")
            if self._aliases.pop(str(session_id), None) is not None:
                self._bindings = {name: alias for name, alias in self._bindings.items() if alias != session_id}
                return {}
            tab = self._tab_of_session(str(session_id))
            if tab.session_id == session_id:
                return {}  # Playwright letting go of a tab it does not want: it stays attached for the session
            return await self._send(tab, str(session_id), "Target.detachFromTarget", params)
        if method in ("Browser.setDownloadBehavior", "Browser.grantPermissions", "Browser.resetPermissions"):
            return {}  # the user's own browser keeps its own settings
        # Other browser-level commands (Storage.getCookies...) go through any of the session's tabs.
        if not self._tabs:
            raise BrowserdError(f"{method} needs an open tab in the session")
        return await self._send(next(iter(self._tabs.values())), None, method, params, answer)

    async def _send(
        self,
        tab: TabTarget,
        child: str | None,
        method: str,
        params: dict[str, Any],
        answer: AnswerHandler | None = None,
    ) -> Any:
        return await self.link.call(
            "cdp.send",
            {"sessionId": self.session_id, "tabId": tab.tab_id, "child": child, "method": method, "params": params},
            answered=answer,
        )

    def _tab_of_target(self, target_id: object) -> TabTarget:
        for tab in self._tabs.values():
            if tab.target_info.get("targetId") == target_id:
                return tab
        raise BrowserdError(f"no tab of this session is target {target_id}")

    def _tab_of_session(self, session_id: str) -> TabTarget:
        if session_id in self._aliases:
            return self._aliases[session_id]
        for tab in self._tabs.values():
            if session_id == tab.session_id or session_id in tab.children:
                return tab
        raise BrowserdError(f"no tab of this session has CDP session {session_id}")

    async def _attach(self, tab_id: int) -> TabTarget:
        known = self._tabs.get(tab_id)
        if known is not None:
            return known
        attached = await self.link.call("tab.attach", {"sessionId": self.session_id, "tabId": tab_id})
        tab = TabTarget(tab_id, f"bridge-tab-{next(self._numbers)}", dict(attached["targetInfo"]))
        tab.target_info["attached"] = True
        # Playwright files a target without a browserContextId away; the relay's tabs are all its default one.
        tab.target_info.setdefault("browserContextId", "browserd-bridge")
        self._tabs[tab_id] = tab
        self._emit(
            {
                "method": "Target.attachedToTarget",
                "params": {"sessionId": tab.session_id, "targetInfo": tab.target_info, "waitingForDebugger": False},
            }
        )
        return tab

    async def _attach_joined(self, tab_id: int) -> None:
        try:
            await self._attach(tab_id)
        except BrowserdError:
            log.info("bridge: a tab that joined %s could not be attached", self.session_id, exc_info=True)

    def departure(self, since: float) -> BrowserdError | None:
        """What a call that started at `since` and then failed ran into: the extension gone, or a tab gone back
        to the user. Both are what the user did (or Chrome did to the worker), and no crash of a browser."""
        if self.link.closed:
            return ExtensionNotConnected(
                "the browserd extension disconnected during the call (its service worker stopped, or Chrome "
                "closed), so this window's tabs are no longer driven",
                hint="The extension reconnects by itself within seconds; then open a new window with "
                "browser_windows {action: 'new', kind: 'extension'} and retry.",
            )
        # A departure just before the call counts too: Playwright may not have dropped the page yet when the
        # call starts, so the call still reaches for it and fails the way a crash would.
        left = [(at, reason, url) for at, reason, url in self._departures if at >= since - _DEPARTURE_NOTICE_S]
        if not left:
            return None
        at, reason, url = left[-1]
        when = "during the call" if at >= since else "just before the call"
        return TabLeftSession(
            f"the tab ({url}) {_LEFT_BECAUSE.get(reason, _LEFT_BECAUSE['closed'])} {when}",
            url=url,
            reason=reason,
        )

    # -- the extension's side --------------------------------------------------------------------------

    def _on_extension_event(self, event: dict[str, Any]) -> None:
        kind = event.get("kind")
        if kind == "ended":
            self._outbox.send_nowait(None)  # the pump hangs up on Playwright: the window is gone
            return
        if kind == "joined":  # the user shared a tab, or a session page opened one: Playwright gets a new page
            if self._auto_attach and self._tasks is not None:
                self._tasks.start_soon(self._attach_joined, int(event.get("tabId", -1)))
            return
        tab = self._tabs.get(int(event.get("tabId", -1)))
        if tab is None:
            return
        if kind == "detached":  # the tab closed, or left the session's group: it is no longer the session's
            reason = str(event.get("reason") or "closed")
            if reason != _CLOSED_BY_SESSION:
                self._departures.append((anyio.current_time(), reason, str(tab.target_info.get("url", ""))))
            del self._tabs[tab.tab_id]
            self._aliases = {alias: t for alias, t in self._aliases.items() if t is not tab}
            message: dict[str, Any] = {
                "method": "Target.detachedFromTarget",
                "params": {"sessionId": tab.session_id, "targetId": tab.target_info.get("targetId")},
            }
        else:
            method, params, child = event.get("method"), event.get("params") or {}, event.get("child")
            if method == "Target.attachedToTarget" and params.get("sessionId"):
                tab.children.add(params["sessionId"])
            elif method == "Target.detachedFromTarget" and params.get("sessionId"):
                tab.children.discard(params["sessionId"])
            to = child or tab.session_id
            caller = self._bindings.get(str(params.get("name"))) if method == "Runtime.bindingCalled" else None
            if caller is not None and not child and self._aliases.get(caller) is tab:
                to = caller
            message = {"sessionId": to, "method": method, "params": params}
        self._emit(message)
