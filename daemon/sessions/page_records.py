"""What a session remembers of its pages: the dialogs they raised and what they logged to the console."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal

DIALOG_HISTORY = 10  # D-31: the last 10 dialogs of a session
CONSOLE_BUFFER = 500  # per tab; the oldest messages go first

DialogAction = Literal["accept", "dismiss"]


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class DialogRecord:
    type: str
    message: str
    default_value: str
    action: str
    tab_id: str
    at: str = field(default_factory=now_iso)


@dataclass
class Dialogs:
    """A session's dialog policy (`[browser] dialog_policy`, D-31) and its recent dialogs."""

    policy: DialogAction = "accept"
    prompt_text: str | None = None  # what a prompt is answered with; None: its default value
    history: deque[DialogRecord] = field(default_factory=lambda: deque(maxlen=DIALOG_HISTORY))


@dataclass(frozen=True)
class ConsoleRecord:
    level: str  # log, info, warning, error, debug... as the page's console names it; "uncaught" for page errors
    text: str
    url: str
    at: str = field(default_factory=now_iso)
