"""A tab: one Playwright page, its lock, its element refs and what happened on it since it was last read."""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

import anyio
from playwright.async_api import CDPSession, ConsoleMessage, Dialog, Download, Frame, Page, Request
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Response as PageResponse

from browserd.daemon.errors import BrowserdError, ExecutionError, NavigationTimeout
from browserd.daemon.runtime.page_probe import page_answers
from browserd.daemon.sessions.network import NetworkLog
from browserd.daemon.sessions.page_records import CONSOLE_BUFFER, ConsoleRecord, DialogRecord
from browserd.daemon.sessions.ref_table import RefTable
from browserd.daemon.snapshots.aria_parser import Node
from browserd.daemon.snapshots.page_scripts import catch_up

if TYPE_CHECKING:
    from browserd.daemon.config import BrowserConfig
    from browserd.daemon.sessions.window import Window
    from browserd.daemon.snapshots.aria_capture import Capture

NAVIGATED = "navigated to"  # the event of a main-frame navigation, before its URL
PDF_TYPES = {"application/pdf", "application/x-pdf"}
# Answering a dialog is one message to the browser; one that gets no reply in this time never will.
DIALOG_ANSWER_TIMEOUT_S = 10
# Errors seen since the last snapshot; older ones only matter to browser_console (a later issue).
_MAX_CONSOLE_ERRORS = 20
# A page that answers takes a round trip to evaluate `1`; one stuck in a script never does.
PROBE_TIMEOUT_S = 2.0
# After its script was stopped, how long a page (a huge one, on a busy machine) may take to answer
# before it is replaced: replacing loses the page's state, so this waits longer than the first probe.
STOPPED_ANSWER_TIMEOUT_S = 6.0
# Stopping a script is answered off the page's main thread, at once unless the renderer is gone.
STOP_TIMEOUT_S = 2.0
# Loading the fresh page that replaces a stuck one; past this the fresh page stays blank.
REPLACE_LOAD_TIMEOUT_S = 15.0
# Beyond every limit a call on a tab may use (load, action, snapshot, settling) before it counts as stuck.
CALL_SLACK_S = 10.0


def _not_answering(tab_id: str, url: str, done: str, what: str) -> ExecutionError:
    return ExecutionError(
        f"{tab_id} {what.splitlines()[0]} (a script kept the page busy); {done}",
        hint="Call browser_snapshot to see the page as it is now, then go on; avoid the script or action that looped.",
        tabId=tab_id,
        url=url,
        recovered=done,
    )


def call_deadline_s(config: BrowserConfig, *call_timeouts_ms: int | None) -> float:
    """How long one call on a tab may take: one load, one action and one snapshot at their limits, the
    call's own timeouts on top, and some slack. Only a tab stuck for good reaches it."""
    limits_ms = config.navigation_timeout_ms + config.action_timeout_ms + config.snapshot_timeout_ms
    own_ms = sum(timeout for timeout in call_timeouts_ms if timeout)
    return (limits_ms + config.settle_max_ms + own_ms) / 1000 + CALL_SLACK_S


async def attach_cdp(page: Page) -> CDPSession | None:
    """A CDP session on the page (Tab.cdp); None for a backend without CDP, where a runaway script ends only
    with its page and the settle evaluates through Playwright."""
    with anyio.move_on_after(STOP_TIMEOUT_S):
        try:
            return await page.context.new_cdp_session(page)
        except PlaywrightError:
            return None
    return None


@dataclass
class Tab:
    id: str
    page: Page
    window: Window
    # Calls on one tab run one at a time; calls on different tabs run in parallel.
    lock: anyio.Lock = field(default_factory=anyio.Lock)
    # The tasks of tool calls that wait for or hold the lock but have not begun to act (tools/tabtool.py): what
    # the page reports meanwhile was caused before them, by a person (flows/recording/person_input.py).
    starting: set[int] = field(default_factory=set)
    # The refs this tab's snapshots issued, and what each pointed at.
    refs: RefTable = field(default_factory=RefTable)
    document: int = 0
    # Main-frame document loads, counted when their request starts (long before domcontentloaded moves
    # `document`): a ref that fails to resolve after one is stale, not missing, however the race with
    # the load went. Not framenavigated: it fires for history.pushState too, which keeps the document.
    navigations: int = 0
    # The count of `navigations` when the document's main world had Playwright's injected script (a click
    # there may go at rest, elements/at_rest.py); -1 for none yet. Only for a driver without the preload.
    main_world_navigations: int = -1
    # The whole (lean) snapshot last taken of this document, as text and as lines, for the next delta.
    last_snapshot: str | None = None
    last_snapshot_nodes: list[Node] = field(default_factory=list)
    last_snapshot_document: int = -1
    # What that snapshot was read from (Playwright's lines, annotated, and the page facts beside them), and how
    # many settles this tab had been through by then: a fill that changed one field and nothing else since
    # rewrites that field's line in it instead of reading the page again (snapshots/field_edit.py).
    last_capture: Capture | None = None
    last_capture_settles: int = -1
    settles: int = 0  # waits after an action that the page answered (snapshots/settle.py)
    # Actions answered without a snapshot since the last one: their changes show in the next delta.
    unseen_actions: int = 0
    # What happened on the page since an action started: navigations, dialogs, downloads, new tabs.
    events: list[str] = field(default_factory=list)
    console_errors: deque[str] = field(default_factory=lambda: deque(maxlen=_MAX_CONSOLE_ERRORS))
    console: deque[ConsoleRecord] = field(default_factory=lambda: deque(maxlen=CONSOLE_BUFFER))
    # The tab's requests (browser_network), sized by its window.
    network: NetworkLog = field(init=False)
    # A CDP session kept open, attached before any call runs (arm). It stops a runaway script
    # (Runtime.terminateExecution; attaching a session needs the page's main thread, which such a script
    # holds), and the settle evaluates over it (snapshots/settle.py).
    cdp: CDPSession | None = None
    armed: bool = False

    def __post_init__(self) -> None:
        self.network = NetworkLog(self.window.network_log_size)

    def watch(self) -> None:
        page = self.page
        page.on("domcontentloaded", self._new_document)
        page.on("framenavigated", self._navigated)
        page.on("console", self._console)
        page.on("pageerror", self._page_error)
        page.on("dialog", self._dialog)
        page.on("download", self._download)
        page.on("request", self._request)
        page.on("response", self._response)
        self.network.watch(page)

    def held(self) -> bool:
        """Whether something acts on the tab now: the lock's holder, unless that is a tool call that has not
        begun to act (the listener of a person's input knows when it does, PersonInput.acting)."""
        owner = self.lock.statistics().owner
        return owner is not None and owner.id not in self.starting

    @property
    def main_world_cheap(self) -> bool:
        """Whether an element handle in this tab's main world builds no injected script (the preload's driver):
        then every document is ready for an action at rest (elements/at_rest.py)."""
        return self.window.backend.preloaded_driver

    @property
    def refs_current(self) -> bool:
        return self.refs.document == self.document

    def _new_document(self, _page: Page) -> None:
        self.document += 1

    def _navigated(self, frame: Frame) -> None:
        if frame == self.page.main_frame:
            self.events.append(f"{NAVIGATED} {frame.url}")

    def _request(self, request: Request) -> None:
        if request.is_navigation_request() and request.frame == self.page.main_frame:
            self.navigations += 1

    def _console(self, message: ConsoleMessage) -> None:
        self.console.append(ConsoleRecord(message.type, message.text, self.page.url))
        if message.type == "error":
            self.console_errors.append(message.text)

    def _page_error(self, error: Exception) -> None:
        self.console.append(ConsoleRecord("uncaught", str(error), self.page.url))
        self.console_errors.append(f"uncaught: {error}")

    def _dialog(self, dialog: Dialog) -> None:
        # Answered at once by the session's policy (D-31): an open dialog would block every later call.
        self.window.tasks.start_soon(self._answer_dialog, dialog, name=f"{dialog.type} dialog of {self.id}")

    async def _answer_dialog(self, dialog: Dialog) -> None:
        with anyio.fail_after(DIALOG_ANSWER_TIMEOUT_S):
            await self._answer(dialog)

    async def _answer(self, dialog: Dialog) -> None:
        dialogs = self.window.dialogs
        if dialogs.policy == "accept" or dialog.type == "beforeunload":
            if dialog.type == "prompt":
                # Prompts get the set text, else their own default value (D-31), never an empty answer.
                await dialog.accept(dialogs.prompt_text if dialogs.prompt_text is not None else dialog.default_value)
            else:
                await dialog.accept()
            action = "accepted" + (
                f" with {dialogs.prompt_text!r}" if dialog.type == "prompt" and dialogs.prompt_text is not None else ""
            )
        else:
            await dialog.dismiss()
            action = "dismissed"
        dialogs.history.append(DialogRecord(dialog.type, dialog.message, dialog.default_value, action, self.id))
        self.events.append(f"{dialog.type} dialog said {dialog.message!r}; {action}")

    def _download(self, download: Download) -> None:
        # Reported by the action's answer (tabtool.report_changes) once it has had a moment to finish.
        self.window.downloads.begin(download, self.id)

    def _response(self, response: PageResponse) -> None:
        # Cheapest tests first: this runs for every response of the page.
        if not self.window.backend.shows_pdfs or not response.request.is_navigation_request() or not response.ok:
            return
        if response.headers.get("content-type", "").split(";")[0].strip().lower() not in PDF_TYPES:
            return
        try:
            if response.frame != self.page.main_frame:
                return
        except PlaywrightError:  # a request without a frame (a service worker's) is no page of this tab
            return
        # Chromium shows it in its PDF viewer, whose page reads as empty: save the file as a download.
        name = unquote(urlsplit(response.url).path.rstrip("/").rsplit("/", 1)[-1]) or "document"
        if not name.lower().endswith(".pdf"):
            name += ".pdf"
        self.window.downloads.fetch(self.page.context.request, response.url, name, self.id)

    async def arm(self) -> None:
        """Attach the tab's CDP session, once, while the page still answers; in the user's own browser, whose
        tabs may predate the window, also catch its document up with WINDOW_SCRIPT."""
        if self.armed:
            return
        self.armed = True
        self.cdp = await attach_cdp(self.page)
        if self.window.backend.shared:
            await catch_up(self.page)

    @asynccontextmanager
    async def answering(self, deadline_s: float) -> AsyncIterator[None]:
        """A call on this tab, with a deadline; when it fails, a tab stuck in a script is brought back.

        Only failing calls check the page, so a call that succeeds pays nothing for this.
        """
        await self.arm()
        tab_id = self.id  # a replaced page gives this id to the tab that takes its place
        with anyio.CancelScope(deadline=anyio.current_time() + deadline_s) as scope:
            try:
                yield
            except NavigationTimeout:
                raise  # a slow server, not a stuck script (and the page is busy navigating): it says what loaded
            except (BrowserdError, PlaywrightError) as exc:
                if await self.answers():
                    raise
                url = self.page.url
                raise _not_answering(tab_id, url, await self.recover(), f"stopped answering: {exc}") from exc
        if scope.cancelled_caught:
            url = self.page.url
            raise _not_answering(tab_id, url, await self.recover(), f"did not answer within {deadline_s:g} s")

    async def answers(self, within_s: float = PROBE_TIMEOUT_S) -> bool:
        """Whether the page runs a trivial script within `within_s` (a navigating page counts)."""
        return await page_answers(self.page, within_s)

    async def recover(self) -> str:
        """Stop the script that holds the page; if it still does not answer, put a fresh page at its URL
        in this tab's place. Answers what was done, for the error that reports it."""
        if self.cdp is not None:
            with anyio.move_on_after(STOP_TIMEOUT_S):
                with suppress(PlaywrightError):
                    await self.cdp.send("Runtime.terminateExecution")
            if await self.answers(STOPPED_ANSWER_TIMEOUT_S):
                return "its running script was stopped and the page answers again"
        return await self._replace()

    async def _replace(self) -> str:
        # navigation.py builds on Tab: imported here, where a tab loads its page again itself.
        from browserd.daemon.sessions.navigation import navigate

        old, url, window = self.page, self.page.url, self.window
        page = await old.context.new_page()
        window.put_in_place(self, page)
        with anyio.move_on_after(STOP_TIMEOUT_S):
            with suppress(PlaywrightError):
                await old.close(run_before_unload=False)
        done = f"the page was replaced by a fresh one at {url}"
        with anyio.move_on_after(REPLACE_LOAD_TIMEOUT_S) as loading:
            try:
                await navigate(page, url, window.guard, window.trust, wait_until="domcontentloaded")
            except (BrowserdError, PlaywrightError) as exc:
                return f"the page was replaced by a blank one ({url} did not load: {str(exc).splitlines()[0]})"
        if loading.cancelled_caught:
            return f"the page was replaced by a fresh one, still loading {url}"
        return done

    def take_events(self) -> list[str]:
        events, self.events = self.events, []
        return events

    def take_console_errors(self) -> list[str]:
        errors = list(self.console_errors)
        self.console_errors.clear()
        return errors
