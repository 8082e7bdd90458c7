"""A session's downloads: every file its pages download is saved to the session's download folder.

Files are user data: they stay on disk after the session ends (nothing the user saved is lost); only the
records of them live in memory. A PDF that Chromium shows in its viewer instead of downloading is
fetched again with the window's cookies and saved the same way, since its viewer page reads as empty.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import anyio
from playwright.async_api import APIRequestContext, Download
from playwright.async_api import Error as PlaywrightError

from browserd.daemon.runtime.tasks import TaskOwner
from browserd.daemon.sessions.page_records import now_iso

log = logging.getLogger(__name__)

DownloadState = Literal["in_progress", "done", "failed", "cancelled"]
# Records listed per session; older ones are dropped from the list, never from the disk.
DOWNLOAD_RECORDS = 200
_NOTICE_POLL_S = 0.02
_FALLBACK_NAME = "download"
_MAX_NAME_CHARS = 200


@dataclass
class DownloadRecord:
    id: str
    name: str
    url: str
    tab_id: str
    path: Path
    state: DownloadState = "in_progress"
    size: int | None = None
    error: str | None = None
    started_at: str = field(default_factory=now_iso)
    finished_at: str | None = None
    # Whether an action's answer has told of it already (each download is announced once).
    reported: bool = False
    finished: anyio.Event = field(default_factory=anyio.Event, repr=False)

    def info(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "state": self.state,
            "size": self.size,
            "path": str(self.path),
            "url": self.url,
            "tabId": self.tab_id,
            "startedAt": self.started_at,
            "finishedAt": self.finished_at,
            "error": self.error,
        }

    def summary(self) -> str:
        if self.state == "done":
            return f"downloaded {self.name} ({self.size} bytes) from {self.url} to {self.path}"
        if self.state == "in_progress":
            return (
                f"download {self.id} of {self.name} from {self.url} is in progress, saving to {self.path}; "
                "browser_downloads with wait=true waits for it"
            )
        return f"download {self.id} of {self.name} from {self.url} {self.state}: {self.error}"


def _safe_name(suggested: str) -> str:
    # The page chooses the name: keep only its last path part, never a hidden or empty name.
    name = Path(suggested.replace("\\", "/")).name.strip().lstrip(".")
    return name[:_MAX_NAME_CHARS] or _FALLBACK_NAME


class Downloads:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.records: deque[DownloadRecord] = deque(maxlen=DOWNLOAD_RECORDS)
        self._numbers = itertools.count(1)
        # Each save runs as its own task, owned here and cancelled when the session closes.
        self.tasks = TaskOwner("downloads")

    def _reserve(self, suggested: str) -> Path:
        """A file name of its own in the folder, created empty at once so two downloads never share it."""
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        name = _safe_name(suggested)
        stem, suffix = os.path.splitext(name)
        for n in itertools.count(1):
            path = self.folder / (name if n == 1 else f"{stem} ({n}){suffix}")
            try:
                os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
            except FileExistsError:
                continue
            return path
        raise AssertionError("unreachable")

    def _record(self, suggested: str, url: str, tab_id: str) -> DownloadRecord:
        record = DownloadRecord(f"dl_{next(self._numbers)}", "", url, tab_id, self._reserve(suggested))
        record.name = record.path.name
        self.records.append(record)
        return record

    def _run(self, record: DownloadRecord, work: Callable[[], Awaitable[None]]) -> None:
        async def guarded() -> None:
            try:
                await work()
                record.size = record.path.stat().st_size
                record.state = "done"
            except asyncio.CancelledError:
                record.state, record.error = "cancelled", "the session ended before the download finished"
                raise
            except (PlaywrightError, OSError) as exc:
                if record.state == "in_progress":
                    record.state, record.error = "failed", str(exc).strip().splitlines()[0] if str(exc) else "failed"
            finally:
                if record.state != "done":
                    record.path.unlink(missing_ok=True)
                record.finished_at = now_iso()
                record.finished.set()
                log.info("download %s %s (%s)", record.id, record.state, record.name)

        if not self.tasks.start_soon(guarded, name=f"download {record.id}"):
            record.state, record.error = "cancelled", "the session ended before the download started"
            record.path.unlink(missing_ok=True)
            record.finished.set()

    def begin(self, download: Download, tab_id: str) -> DownloadRecord:
        """A download Chromium started: save it under its suggested name once it completes."""
        record = self._record(download.suggested_filename, download.url, tab_id)

        async def save() -> None:
            try:
                await download.save_as(record.path)
            except PlaywrightError:
                try:
                    reason = await download.failure()
                except PlaywrightError:
                    reason = None
                # Chromium says "canceled" for a transfer cut short too; only the session's end is a cancel.
                record.state, record.error = "failed", f"the download did not complete ({reason or 'unknown reason'})"
                raise

        self._run(record, save)
        return record

    def fetch(self, request: APIRequestContext, url: str, name: str, tab_id: str) -> DownloadRecord:
        """A file Chromium displays rather than downloads (a PDF): fetch it again with the window's cookies."""
        record = self._record(name, url, tab_id)

        async def save() -> None:
            # No redirects: the URL is the one the page already loaded, checked by the session's URL policy.
            response = await request.get(url, max_redirects=0)
            try:
                if not response.ok:
                    raise OSError(f"fetching it again answered HTTP {response.status}")
                body = await response.body()
            finally:
                await response.dispose()
            await anyio.Path(record.path).write_bytes(body)

        self._run(record, save)
        return record

    def take_unreported(self, tab_id: str) -> list[DownloadRecord]:
        fresh = [r for r in self.records if r.tab_id == tab_id and not r.reported]
        for record in fresh:
            record.reported = True
        return fresh

    async def started(self, tab_id: str, timeout_s: float) -> bool:
        """Wait, at most `timeout_s`, until the tab has a download not yet reported."""
        with anyio.move_on_after(timeout_s):
            while not any(r.tab_id == tab_id and not r.reported for r in self.records):
                await anyio.sleep(_NOTICE_POLL_S)
            return True
        return False

    async def wait(self, records: list[DownloadRecord], timeout_s: float) -> bool:
        """Wait until every record has finished, at most `timeout_s`; True when they all have."""
        with anyio.move_on_after(timeout_s):
            for record in records:
                await record.finished.wait()
        return all(r.finished.is_set() for r in records)

    def find(self, download_id: str) -> DownloadRecord | None:
        return next((r for r in self.records if r.id == download_id), None)

    async def aclose(self) -> None:
        await self.tasks.aclose()
