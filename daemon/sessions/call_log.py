"""The tool calls a session made lately, as the user may see them (`browserd status`, the extension's side
panel): the tool, what it aimed at, when and how it ended. Never a value: what a fill typed, an expression,
a URL's query (tokens ride there) stay out, so the log can be shown anywhere."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

CALLS_KEPT = 50
TARGET_CHARS = 80


@dataclass
class CallLog:
    calls: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=CALLS_KEPT))
    # Told after each call is logged (SessionManager: the daemon's push channel).
    on_add: Callable[[], None] = lambda: None

    def add(self, tool: str, params: Any, started: float, error_code: str | None) -> None:
        """A call that ended; `started` is its time.time(), `error_code` None when it succeeded."""
        entry: dict[str, Any] = {"at": round(started * 1000), "tool": tool, "target": aimed_at(params)}
        entry["ms"] = round((time.time() - started) * 1000)
        entry["outcome"] = error_code or "ok"
        self.calls.append(entry)
        self.on_add()

    @property
    def last(self) -> dict[str, Any] | None:
        return self.calls[-1] if self.calls else None


def aimed_at(params: Any) -> str | None:
    """What a call aimed at: its element (a ref or a selector) or the page it opened (no query, no fragment)."""
    target = getattr(params, "target", None)
    if isinstance(target, str):
        return target[:TARGET_CHARS]
    url = getattr(params, "url", None)
    if isinstance(url, str):
        parts = urlsplit(url)
        return f"{parts.scheme}://{parts.netloc}{parts.path}"[:TARGET_CHARS] if parts.netloc else None
    return None
