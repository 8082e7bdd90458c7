"""A tab's network log: a ring buffer of its requests, cheap to keep; bodies are read only when asked.

Each request costs one small record and three events (request, requestfinished, requestfailed); the
"response" event is not subscribed, since the finished event carries the response too. A record holds
only a weak reference to Playwright's Request, so the log never keeps Playwright's objects alive: once
Playwright lets a request go (it keeps at most 10,000 per connection) or Chromium drops the body (for
example after the page navigated), reading the body says it is no longer available.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import re
import time
import weakref
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page, Request

from browserd.daemon.errors import InvalidParameter
from browserd.daemon.sessions.routes import glob_matcher
from browserd.daemon.sessions.urlglob import is_glob

ResourceType = Literal[
    "document",
    "stylesheet",
    "image",
    "media",
    "font",
    "script",
    "texttrack",
    "xhr",
    "fetch",
    "eventsource",
    "websocket",
    "manifest",
    "other",
]
_TEXT_TYPES = ("json", "xml", "javascript", "ecmascript", "x-www-form-urlencoded", "graphql", "csv", "yaml")
_BINARY_TYPES = (
    "image/",
    "audio/",
    "video/",
    "font/",
    "application/octet-stream",
    "application/pdf",
    "application/zip",
)


@dataclass(slots=True)
class NetworkRecord:
    id: str  # n1, n2 ... per tab, never reused
    method: str
    url: str
    resource_type: str
    started: float  # time.monotonic() when the request was sent
    handle: weakref.ref[Request]
    redirected_from: str | None = None
    status: int | None = None  # None while pending, and for a request that failed without a response
    status_text: str = ""
    failure: str | None = None
    duration_ms: float | None = None
    size: int | None = None  # the response's Content-Length, when it sent one
    # Playwright gives a response that Chromium served from its cache no network timing.
    no_network_timing: bool = False
    from_service_worker: bool = False

    @property
    def failed(self) -> bool:
        return self.failure is not None or (self.status is not None and self.status >= 400)

    @property
    def state(self) -> str:
        if self.failure is not None:
            return "failed"
        return "pending" if self.status is None else "finished"


class NetworkLog:
    def __init__(self, size: int) -> None:
        self.size = size
        self.records: deque[NetworkRecord] = deque(maxlen=size)
        self._numbers = itertools.count(1)
        # Requests not finished yet; a request that never ends leaves when its record leaves the ring.
        self._live: dict[Request, NetworkRecord] = {}

    def watch(self, page: Page) -> None:
        if self.size == 0:
            return  # no listeners, so Playwright does not even send the events
        page.on("request", self._request)
        page.on("requestfinished", self._finished)
        page.on("requestfailed", self._failed)

    def clear(self) -> None:
        self.records.clear()
        self._live.clear()

    def find(self, request_id: str) -> NetworkRecord | None:
        return next((r for r in self.records if r.id == request_id), None)

    def _request(self, request: Request) -> None:
        if len(self.records) == self.size:
            oldest = self.records[0].handle()
            if oldest is not None:
                self._live.pop(oldest, None)
        record = NetworkRecord(
            f"n{next(self._numbers)}",
            request.method,
            request.url,
            request.resource_type,
            time.monotonic(),
            weakref.ref(request),
        )
        previous = request.redirected_from
        if previous is not None:
            record.redirected_from = next((r.id for r in reversed(self.records) if r.handle() is previous), None)
        self.records.append(record)
        self._live[request] = record

    def _finished(self, request: Request) -> None:
        record = self._live.pop(request, None)
        if record is None:
            return
        response = request.existing_response
        if response is not None:
            record.status = response.status
            record.status_text = response.status_text
            record.from_service_worker = response.from_service_worker
            length = response.headers.get("content-length")
            record.size = int(length) if length is not None and length.isdigit() else None
            record.no_network_timing = request.timing["requestStart"] < 0 and not record.url.startswith("data:")
        record.duration_ms = self._duration(request, record)

    def _failed(self, request: Request) -> None:
        record = self._live.pop(request, None)
        if record is None:
            return
        record.failure = request.failure or "failed"
        response = request.existing_response
        if response is not None:
            record.status = response.status
            record.status_text = response.status_text
        record.duration_ms = self._duration(request, record)

    @staticmethod
    def _duration(request: Request, record: NetworkRecord) -> float:
        end = request.timing["responseEnd"]
        return round(end if end >= 0 else (time.monotonic() - record.started) * 1000, 1)


_STATUS = re.compile(r"^\s*(?:(?P<class>[1-5])xx|(?P<op>>=|<=|>|<|=)?\s*(?P<code>\d{3}))\s*$", re.IGNORECASE)


def status_filter(expression: str) -> tuple[str, int]:
    """A status filter ("404", "4xx", ">=400") as (operator, value); INVALID_PARAMETER for anything else."""
    found = _STATUS.match(expression)
    if found is None:
        raise InvalidParameter(
            f"status {expression!r} is not a status filter",
            hint='Use a code ("404"), a class ("4xx") or a comparison (">=400", "<300").',
            field="status",
        )
    if found["class"]:
        return "class", int(found["class"])
    return found["op"] or "=", int(found["code"])


def status_matches(status: int | None, wanted: tuple[str, int]) -> bool:
    if status is None:
        return False
    op, value = wanted
    return {
        "class": status // 100 == value,
        "=": status == value,
        ">=": status >= value,
        "<=": status <= value,
        ">": status > value,
        "<": status < value,
    }[op]


def url_matches(url: str, pattern: str) -> bool:
    """A glob (browser_route's, so both tools agree on what `**/api/*` means), else a substring."""
    return bool(glob_matcher(pattern).match(url)) if is_glob(pattern) else pattern in url


@dataclass(frozen=True)
class RequestFilter:
    """Which records of a tab's network log browser_network lists; None or False: no condition."""

    url: str | None = None
    method: str | None = None
    status: str | None = None
    resource_type: ResourceType | None = None
    failed: bool = False

    def select(self, records: Iterable[NetworkRecord]) -> list[NetworkRecord]:
        wanted_status = status_filter(self.status) if self.status is not None else None
        method = self.method.upper() if self.method else None
        return [
            r
            for r in records
            if (self.url is None or url_matches(r.url, self.url))
            and (method is None or r.method == method)
            and (wanted_status is None or status_matches(r.status, wanted_status))
            and (self.resource_type is None or r.resource_type == self.resource_type)
            and (not self.failed or r.failed)
        ]


@dataclass(frozen=True)
class Body:
    """A response or post body as shown to an agent: text (JSON pretty-printed), or why there is none."""

    text: str | None  # None: binary or no longer available; `note` says which
    content_type: str
    size: int | None  # bytes, when known
    truncated: bool = False
    note: str | None = None


def _text(data: bytes, content_type: str) -> str | None:
    """The body as text, or None when it is binary (by its type, else by failing to decode as UTF-8)."""
    kind = content_type.split(";", 1)[0].strip().lower()
    if kind.startswith("text/") or kind.endswith(("+json", "+xml")) or any(word in kind for word in _TEXT_TYPES):
        return data.decode("utf-8", errors="replace")
    if kind.startswith(_BINARY_TYPES):
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return None if "\x00" in text else text


def render_body(data: bytes, content_type: str, max_chars: int) -> Body:
    text = _text(data, content_type)
    if text is None:
        return Body(None, content_type, len(data), note=f"binary body ({content_type or 'no type'}), not shown")
    if "json" in content_type.lower():
        with contextlib.suppress(ValueError):  # not valid JSON after all: shown as sent
            text = json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    if len(text) <= max_chars:
        return Body(text, content_type, len(data))
    return Body(
        text[:max_chars],
        content_type,
        len(data),
        truncated=True,
        note=f"cut after {max_chars} of {len(text)} characters; raise maxChars for more",
    )


async def response_body(record: NetworkRecord, max_chars: int) -> Body:
    """The record's response body, fetched from the browser now (never stored in the log)."""
    if record.status is None:
        reason = f"it failed ({record.failure})" if record.failure else "it has no response yet"
        raise InvalidParameter(
            f"request {record.id} has no response body: {reason}",
            hint="Pick a request with a status from browser_network (failed requests have no body).",
            field="requestId",
            requestId=record.id,
        )
    if 300 <= record.status < 400:
        raise InvalidParameter(
            f"request {record.id} is a redirect ({record.status}); redirects have no body",
            hint="Read the body of the request it redirected to (its redirectedFrom names this one).",
            field="requestId",
            requestId=record.id,
        )
    gone = Body(None, "", record.size, note="the body is no longer available (the page moved on or it was dropped)")
    request = record.handle()
    response = request.existing_response if request is not None else None
    if response is None:
        return gone
    content_type = response.headers.get("content-type", "")
    try:
        data = await response.body()
    except PlaywrightError:
        return Body(None, content_type, record.size, note=gone.note)
    return render_body(data, content_type, max_chars)


def post_data(record: NetworkRecord, max_chars: int) -> Body:
    request = record.handle()
    if request is None:
        return Body(None, "", None, note="the request is no longer available")
    data = request.post_data_buffer
    if data is None:
        raise InvalidParameter(
            f"request {record.id} ({record.method}) sent no post data",
            hint="Ask for postData of a POST, PUT or PATCH request from browser_network (method filter).",
            field="postData",
            requestId=record.id,
        )
    return render_body(data, request.headers.get("content-type", ""), max_chars)
