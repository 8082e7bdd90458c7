"""A person's own input in a recorded tab, as steps of the recording (S4-34..S4-41, D-47).

One `PersonInput` per tab a recording watches. It injects person_input_js into an isolated world of every
frame (a new-document script, run at once in the documents already there) with a CDP binding that
only that world sees. This works alike on the daemon's own Chromium, on CDP attach and on the user's
Chrome through the extension, since each gives Playwright a CDP session per page.

Events the session's own tool calls caused are not recorded twice: whatever the page reports while a
call acts on the tab (the action and its settling) is dropped, and so is a fill or scroll whose burst
began then. Main-frame navigations the person made (a typed URL, back, forward, reload) are
navigate steps; those a click or a submit caused are that step's doing and are not repeated.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from contextlib import asynccontextmanager, suppress
from typing import Any, Literal
from urllib.parse import urlsplit

import anyio
from playwright.async_api import CDPSession, Frame, Page
from playwright.async_api import Error as PlaywrightError

from browserd.daemon.flows.recording.person_input_js import BINDING, STOP_JS, WORLD, person_script
from browserd.daemon.flows.recording.tool_recorder import Recorder

log = logging.getLogger(__name__)

# Transitions of a new history entry the person asked for themselves; `link`, `form_submit` and the
# like are caused by something on the page, which is recorded as its own step.
_PERSONS_TRANSITIONS = frozenset({"typed", "address_bar", "auto_bookmark", "generated", "keyword", "keyword_generated"})
_DETACH_TIMEOUT_S = 5.0
_BARRIER_TIMEOUT_S = 2.0
# How long a navigation's history read waits for the browser to list the entry the page reported committed.
_HISTORY_TIMEOUT_S = 1.0
_HISTORY_POLL_S = 0.02


class PersonInput:
    """`busy`: whether something else holds the page now (a tool call, a flow run): what it reports then is
    not the person's doing. `name` names the page in logs."""

    def __init__(self, page: Page, recorder: Recorder, name: str, busy: Callable[[], bool]) -> None:
        self.page = page
        self.recorder = recorder
        self.name = name
        self.busy = busy
        self._cdp: CDPSession | None = None
        self._script_id: str | None = None
        # Bursts (a field's edits, a scroll) that began while a tool call was acting on the tab.
        self._tools_bursts: set[int] = set()
        # The tab's history as last seen: its entry ids and the current one's index, to tell back from forward.
        self._history: tuple[list[int], int] = ([], -1)
        self._send, self._receive = anyio.create_memory_object_stream[tuple[dict[str, Any], bool, str]](math.inf)
        self._drained = anyio.Event()
        # Reports queued and not yet handled; `_idle` is set when there are none.
        self._pending = 0
        self._idle = anyio.Event()
        self._idle.set()
        # A tool call of the session on the tab: "starting" until the page has reported all it saw before
        # the call (person's input), "acting" from then until the call and its settling are over.
        self._call: Literal["starting", "acting"] | None = None
        self._start_soon: Callable[[Callable[[], Coroutine[Any, Any, None]]], object] | None = None

    async def attach(self, start_soon: Callable[[Callable[[], Coroutine[Any, Any, None]]], object]) -> None:
        """Listen from now on; `start_soon` runs the task that turns the page's reports into steps."""
        cdp = self._cdp = await self.page.context.new_cdp_session(self.page)
        cdp.on("Runtime.bindingCalled", self._called)
        # Bindings are reported, and new-document scripts run, only to a session with these domains on.
        await cdp.send("Runtime.enable")
        await cdp.send("Page.enable")
        await cdp.send("Runtime.addBinding", {"name": BINDING, "executionContextName": WORLD})
        added = await cdp.send(
            "Page.addScriptToEvaluateOnNewDocument",
            {"source": person_script(self.recorder.keep_values), "worldName": WORLD, "runImmediately": True},
        )
        self._script_id = str(added["identifier"])
        self._history = (await self._read_history())[:2]
        self.page.on("framenavigated", self._navigated)
        self._start_soon = start_soon
        start_soon(self._consume)

    def detach_soon(self) -> None:
        """Detach in the background (the recording's session is going away)."""
        if self._start_soon is not None:
            self._start_soon(self.detach)

    async def detach(self) -> None:
        """Report what the page still holds (a field being typed in), then stop listening."""
        cdp = self._cdp
        if cdp is None:
            return
        self._cdp = None
        self.page.remove_listener("framenavigated", self._navigated)
        self._warn_of_other_origins()
        with anyio.move_on_after(_DETACH_TIMEOUT_S):
            try:
                await self._evaluate_in_frames(cdp, STOP_JS)
                if self._script_id is not None:
                    await cdp.send("Page.removeScriptToEvaluateOnNewDocument", {"identifier": self._script_id})
                await cdp.send("Runtime.removeBinding", {"name": BINDING})
            except PlaywrightError:
                log.debug("person input in %s: the page went away first", self.name, exc_info=True)
        self._send.close()
        if self._start_soon is not None:  # (an attach that failed part way started no task to wait for)
            with anyio.move_on_after(_DETACH_TIMEOUT_S):
                await self._drained.wait()
        # (A closed tab's session is gone with it.)
        with anyio.move_on_after(_DETACH_TIMEOUT_S), suppress(PlaywrightError):
            await cdp.detach()

    def _warn_of_other_origins(self) -> None:
        """Frames of another origin than their page are not recorded (D-47: the listener cannot name the way
        to them, and site isolation keeps them in processes of their own): the recording says which."""
        top = _origin(self.page.url)
        others = sorted({_origin(frame.url) for frame in self.page.frames[1:]} - {top, "null", ""})
        if others:
            self.recorder.warnings.append(
                f"{self.name}: a person's input inside frames of {', '.join(others)} was not recorded "
                "(frames of another origin); act there with the browser tools while recording instead"
            )

    @asynccontextmanager
    async def acting(self) -> AsyncIterator[None]:
        """Around a tool call on the tab: what the page reports from now on is the call's doing, not the person's."""
        self._call = "starting"
        try:
            # The person's reports of what they did before the call are steps before the call's own.
            await self._barrier()
            self._call = "acting"
            try:
                yield
            finally:
                # And the page's reports of the call's own input (a click dispatched as mouse events, keys) are
                # the call's, however late they come through, failed call or not: none may read as the person's.
                with anyio.CancelScope(shield=True):
                    await self._barrier()
        finally:
            self._call = None

    async def _barrier(self) -> None:
        """Until every report the page sent before now has been handled."""
        if self._cdp is None:
            return
        # Evaluated on the page's main thread after every event before it, so its answer comes after their
        # reports, even when they were slow to come through a bridge. A page whose scripts hold its main
        # thread never answers: then the call goes on without it.
        with anyio.move_on_after(_BARRIER_TIMEOUT_S), suppress(PlaywrightError):
            await self._cdp.send("Runtime.evaluate", {"expression": "0"})
            await self._idle.wait()

    async def _evaluate_in_frames(self, cdp: CDPSession, expression: str) -> None:
        """Run `expression` in the recorder's world of every frame of the tab (what it reports arrives first)."""
        trees = [(await cdp.send("Page.getFrameTree"))["frameTree"]]
        while trees:
            tree = trees.pop(0)
            trees += tree.get("childFrames", [])
            frame = {"frameId": tree["frame"]["id"], "worldName": WORLD}
            with suppress(PlaywrightError):  # a frame that went away meanwhile
                world = await cdp.send("Page.createIsolatedWorld", frame)
                await cdp.send("Runtime.evaluate", {"expression": expression, "contextId": world["executionContextId"]})

    # -- events, in the order they happened ----------------------------------------------------------

    def _called(self, event: dict[str, Any]) -> None:
        if event.get("name") != BINDING:
            return
        try:
            message = json.loads(str(event.get("payload")))
        except ValueError:
            return
        if isinstance(message, dict):
            self._queue(message)

    def _navigated(self, frame: Frame) -> None:
        if frame == self.page.main_frame:
            # The history as this navigation left it, asked for now: read when the report is handled, after the
            # reports before it, a person who went on (back, another page) would have moved it already.
            history = asyncio.ensure_future(self._read_history(frame.url))
            self._queue({"k": "navigated", "url": frame.url, "history": history})

    def _queue(self, message: dict[str, Any]) -> None:
        # Whether a tool call is acting on the tab is read now, as the event arrives, not when it is handled.
        # A flow run in the tab takes its lock without a tool call: that counts as acting too.
        tools_acting = self._call == "acting" or (self._call is None and self.busy())
        with suppress(anyio.ClosedResourceError):  # recording stopped
            self._send.send_nowait((message, tools_acting, self.page.url))
            self._pending += 1
            if self._idle.is_set():
                self._idle = anyio.Event()

    async def _consume(self) -> None:
        try:
            async with self._receive:
                async for message, tools_acting, url in self._receive:
                    try:
                        await self._handle(message, tools_acting, url)
                    except Exception:  # one odd report must not end the recording of all that follow
                        log.exception("person input in %s: a report could not be recorded", self.name)
                    finally:
                        self._pending -= 1
                        if not self._pending:
                            self._idle.set()
        finally:
            self._drained.set()

    async def _handle(self, message: dict[str, Any], tools_acting: bool, url: str) -> None:
        kind, burst = message.get("k"), message.get("b")
        if kind == "began":
            if tools_acting and isinstance(burst, int):
                self._tools_bursts.add(burst)
            return
        if kind == "navigated":
            message = {"k": "navigate", "url": await self._persons_navigation(str(message["url"]), message["history"])}
            if message["url"] is None:
                return
        if burst is not None:
            if burst in self._tools_bursts:
                return
        elif tools_acting:
            return
        self.recorder.person(message, url)

    async def _read_history(self, url: str | None = None) -> tuple[list[int], int, str]:
        """The entry ids, the current index, and how the current entry was reached; after a navigation to
        `url`, once the browser's current entry is that navigation's.

        The page reports its commit to the browser's navigation controller and to the DevTools client over
        separate channels, so a read sent on the report can find the history as it was before: that
        navigation would then look like no move at all, and the person's step would be lost."""
        cdp = self._cdp
        if cdp is None:
            return *self._history, ""
        history: dict[str, Any] | None = None
        with anyio.move_on_after(_HISTORY_TIMEOUT_S):
            while True:
                try:
                    history = await cdp.send("Page.getNavigationHistory")
                except PlaywrightError:
                    break
                listed = history["entries"][int(history["currentIndex"])].get("url")
                if url is None or listed == url or self.page.url != url:  # (or the person went on already)
                    break
                await anyio.sleep(_HISTORY_POLL_S)
        if history is None:
            return *self._history, ""
        index = int(history["currentIndex"])
        entries = history["entries"]
        return [int(entry["id"]) for entry in entries], index, str(entries[index].get("transitionType", ""))

    async def _persons_navigation(self, url: str, reading: Awaitable[tuple[list[int], int, str]]) -> str | None:
        """The navigate step's url when the person made this main-frame navigation (`reading`: the history as
        it left it), else None."""
        (before_ids, before_index), (ids, index, transition) = self._history, await reading
        self._history = (ids, index)
        if not ids:
            return None
        entry = ids[index]
        if 0 <= before_index < len(before_ids) and entry in before_ids:
            # An entry that was there already: back, forward, or the same one again (reload).
            moved = before_ids.index(entry) - before_index
            if moved == 0:
                return "history:reload" if transition == "reload" else None
            if abs(moved) == 1:
                return "history:back" if moved < 0 else "history:forward"
            return url
        return url if transition in _PERSONS_TRANSITIONS else None


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme in ("http", "https") else ""
