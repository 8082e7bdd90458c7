"""A tab: one Playwright page, its lock, its element refs and what happened on it since it was last read."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

import anyio
from playwright.async_api import ConsoleMessage, Dialog, Download, Frame, Page, Request
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Response as PageResponse

from browserd.daemon.sessions.network import NetworkLog
from browserd.daemon.sessions.records import CONSOLE_BUFFER, ConsoleRecord, DialogRecord

if TYPE_CHECKING:
    from browserd.daemon.sessions.window import Window

PDF_TYPES = {"application/pdf", "application/x-pdf"}
# Answering a dialog is one message to the browser; one that gets no reply in this time never will.
DIALOG_ANSWER_TIMEOUT_S = 10
# Errors seen since the last snapshot; older ones only matter to browser_console (a later issue).
_MAX_CONSOLE_ERRORS = 20


@dataclass
class RefInfo:
    """What a ref pointed at when the snapshot that issued it was taken."""

    role: str
    name: str
    # Set for refs of ours (c1...), which Playwright cannot resolve: the element's unique CSS selector.
    selector: str | None = None
    # Position among the elements of the same role and name, when there are several (S2-21).
    nth: int | None = None


@dataclass
class Tab:
    id: str
    page: Page
    window: Window
    # Calls on one tab run one at a time; calls on different tabs run in parallel.
    lock: anyio.Lock = field(default_factory=anyio.Lock)
    # Refs of this tab's latest snapshot; cleared when the tab loads a new document, because
    # Playwright numbers refs afresh in every document (e5 on the next page is another element).
    refs: dict[str, RefInfo] = field(default_factory=dict)
    document: int = 0
    refs_document: int = -1
    # Main-frame document loads, counted when their request starts (long before domcontentloaded moves
    # `document`): a ref that fails to resolve after one is stale, not missing, however the race with
    # the load went. Not framenavigated: it fires for history.pushState too, which keeps the document.
    navigations: int = 0
    refs_navigations: int = -1
    last_snapshot: str | None = None
    last_snapshot_document: int = -1
    # Actions answered without a snapshot since the last one: their changes show in the next delta.
    unseen_actions: int = 0
    # What happened on the page since an action started: navigations, dialogs, downloads, new tabs.
    events: list[str] = field(default_factory=list)
    console_errors: deque[str] = field(default_factory=lambda: deque(maxlen=_MAX_CONSOLE_ERRORS))
    console: deque[ConsoleRecord] = field(default_factory=lambda: deque(maxlen=CONSOLE_BUFFER))
    # The tab's requests (browser_network), sized by its window.
    network: NetworkLog = field(init=False)

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

    @property
    def refs_current(self) -> bool:
        return self.refs_document == self.document

    def _new_document(self, _page: Page) -> None:
        self.document += 1

    def _navigated(self, frame: Frame) -> None:
        if frame == self.page.main_frame:
            self.events.append(f"navigated to {frame.url}")

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
        if not response.request.is_navigation_request() or not response.ok:
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

    def take_events(self) -> list[str]:
        events, self.events = self.events, []
        return events

    def take_console_errors(self) -> list[str]:
        errors = list(self.console_errors)
        self.console_errors.clear()
        return errors
