"""Where a scrape's resource policy applies: every target its page loads from, not only the page's own.

A page's CDP session sees the requests of its main frame, of its in-process frames and of its dedicated
workers. Three kinds of target load outside it:

- Frames in a renderer of their own (a cross-site frame). The page's session auto-attaches to them,
  held before they run (waitForDebuggerOnStart); each gets the same interception, and the same
  auto-attach for the frames in it, before it is let go. Not covered: Chromium does not hold an isolated
  sandboxed srcdoc frame, so its first requests usually go out before its interception is on.
- Popups, which no page-level auto-attach reaches, and which a browser-level session cannot hold either:
  Playwright resumes each new page once its own set-up is done, and the popup's first requests go out
  while this daemon's answer is still on its way (measured: they always did when the answer took 1 s).
  So a scrape's page cannot open one: `CONFINE_JS` makes `window.open` answer null, as a popup blocker
  does, and cancels the clicks and form submissions that would open another window (a scrape never
  clicks; a script does). `PopupGuard` closes any popup a scrape context still opens as soon as it
  sees it.
- Workers of the browser's own: service workers are not registered in a scrape's context at all
  (service_workers="block", set by the scrape service), and `CONFINE_JS` takes shared workers away.

Children are attached in CDP's legacy (non-flat) mode because Playwright's CDPSession cannot address a
flat child session: commands to a child travel in Target.sendMessageToTarget and its events come back
in Target.receivedMessageFromTarget. Those commands are not awaited for their answers: a target runs its
commands in order, so its Fetch.enable is on before runIfWaitingForDebugger starts it.
"""

from __future__ import annotations

import contextlib
import itertools
import json
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from playwright.async_api import Browser, CDPSession
from playwright.async_api import Error as PlaywrightError

from browserd.daemon.runtime.page_js import load_js

# Sends one CDP command on a session (a page's, or a child's through its parent).
Send = Callable[[str, dict[str, Any]], Awaitable[object]]
# Whether a paused request is failed: (its resource type, its URL, whether its frame is the page's own).
Decide = Callable[[str, str, bool], bool]

EVENTS = (
    "Fetch.requestPaused",
    "Target.attachedToTarget",
    "Target.receivedMessageFromTarget",
    "Target.detachedFromTarget",
)
_PAUSE_ALL = {"patterns": [{"urlPattern": "*", "requestStage": "Request"}]}
_ATTACH_PAUSED = {"autoAttach": True, "waitForDebuggerOnStart": True, "flatten": False}

CONFINE_JS = load_js("browserd.daemon.scrape", "confine.js")


class Interception:
    """The policy on one session and, through it, on the targets auto-attached under it."""

    def __init__(self, send: Send, decide: Decide, main_frame: str | None, ids: Iterator[int] | None = None) -> None:
        self._send = send
        self._decide = decide
        self._main_frame = main_frame  # None on a child: none of its frames is the page's own
        self._children: dict[str, Interception] = {}
        self._ids = ids or itertools.count(1)

    async def start(self) -> None:
        await self._send("Fetch.enable", _PAUSE_ALL)
        await self._send("Target.setAutoAttach", _ATTACH_PAUSED)

    async def on_event(self, method: str, params: dict[str, Any]) -> None:
        try:
            if method == "Fetch.requestPaused":
                await self._paused(params)
            elif method == "Target.attachedToTarget":
                await self._attached(params)
            elif method == "Target.receivedMessageFromTarget":
                child = self._children.get(params["sessionId"])
                message = json.loads(params["message"])
                if child is not None and "method" in message:  # answers to our commands are not awaited
                    await child.on_event(message["method"], message.get("params", {}))
            elif method == "Target.detachedFromTarget":
                self._children.pop(params.get("sessionId", ""), None)
        except PlaywrightError:
            pass  # the page or context closed while the event was handled

    async def _paused(self, params: dict[str, Any]) -> None:
        main = params.get("frameId") == self._main_frame
        if self._decide(_kind(params), params["request"]["url"], main):
            await self._send("Fetch.failRequest", {"requestId": params["requestId"], "errorReason": "BlockedByClient"})
        else:
            await self._send("Fetch.continueRequest", {"requestId": params["requestId"]})

    async def _attached(self, params: dict[str, Any]) -> None:
        # Registered before any await: the child's own events can only follow its start below.
        child = Interception(self._relay(params["sessionId"]), self._decide, None, self._ids)
        self._children[params["sessionId"]] = child
        # Every kind of child gets it; a dedicated worker has no Fetch domain (its requests pass its frame's
        # session), and that error answer is ignored like all answers.
        await child.start()
        if params.get("waitingForDebugger"):
            await child._send("Runtime.runIfWaitingForDebugger", {})

    def _relay(self, session_id: str) -> Send:
        async def send(method: str, params: dict[str, Any]) -> None:
            message = json.dumps({"id": next(self._ids), "method": method, "params": params})
            await self._send("Target.sendMessageToTarget", {"sessionId": session_id, "message": message})

        return send


async def intercept(cdp: CDPSession, decide: Decide) -> Interception:
    """`decide` on every request of the page `cdp` is attached to, and of its frames in other renderers."""
    main_frame = (await cdp.send("Page.getFrameTree"))["frameTree"]["frame"]["id"]
    interception = Interception(cdp.send, decide, main_frame)
    for method in EVENTS:
        cdp.on(method, lambda params, method=method: interception.on_event(method, params))
    await interception.start()
    return interception


def _kind(event: dict[str, Any]) -> str:
    """The request's resource type; the browser's own icon fetches (type Other) count as the images they are."""
    kind = str(event.get("resourceType", "other")).lower()
    if kind == "other":
        headers = event["request"].get("headers") or {}
        accept = next((str(v) for k, v in headers.items() if k.lower() == "accept"), "")
        if accept.startswith("image/"):
            return "image"
    return kind


class PopupGuard:
    """For one browser: closes each new page of a guarded (scrape) context other than its scrape's own, as
    soon as it is seen. Nothing waits on it: every other page goes on as if it were not there."""

    def __init__(self, session: CDPSession) -> None:
        self._session = session
        # A guarded context's browserContextId -> the targetId of the page its scrape opened.
        self._pages: dict[str, str] = {}

    @classmethod
    async def start(cls, browser: Browser) -> PopupGuard:
        session = await browser.new_browser_cdp_session()
        guard = cls(session)
        session.on("Target.targetCreated", guard._created)
        await session.send("Target.setDiscoverTargets", {"discover": True, "filter": [{"type": "page"}]})
        return guard

    def guard(self, context_id: str, page_id: str) -> None:
        self._pages[context_id] = page_id

    def release(self, context_id: str) -> None:
        self._pages.pop(context_id, None)

    async def _created(self, params: dict[str, Any]) -> None:
        info = params["targetInfo"]
        own = self._pages.get(info.get("browserContextId", ""))
        if own is None or info["targetId"] == own:
            return
        with contextlib.suppress(PlaywrightError):  # the page or the browser went first
            await self._session.send("Target.closeTarget", {"targetId": info["targetId"]})
