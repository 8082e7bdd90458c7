"""The one place that decides what a tool's answer looks like (after Playwright MCP's Response).

Handlers add results to a Response; `payload()` renders them once into the wire Payload, and
`error_payload()` renders any BrowserdError the same way for every tool.

Answers are lean (issue 10): of the page header (url, title, tab) only the lines that differ from the
ones the same client was last told, and the Playwright code only for a client that asked for it (codegen).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec

from browserd.daemon.errors import BrowserdError
from browserd.daemon.snapshots.reader import PAGE_LINE
from browserd.protocol.messages import Content, ImageContent, Payload, TextContent

CONSOLE_LINE = "- Console:"


@dataclass
class PageSeen:
    """The page header last shown to one client: an answer repeats only the lines of it that changed."""

    header: str | None = None


@dataclass
class _Header:
    lines: list[str]


class Response:
    def __init__(self, codegen: bool = False, seen: PageSeen | None = None) -> None:
        self._sections: list[str | _Header] = []
        self._images: list[ImageContent] = []
        self._code: list[str] = []
        self._data: dict[str, Any] | None = None
        self._codegen = codegen
        # Without a client to remember for (runs, flows), every header is shown.
        self._seen = seen if seen is not None else PageSeen()

    def text(self, text: str) -> None:
        self._sections.append(text)

    def page(self, header: str) -> None:
        """The page header (url, title, tab, new console errors); shown where it was added, when it is news."""
        self._sections.append(_Header(header.splitlines()))

    def url_is_news(self, url: str) -> bool:
        """Whether a page header for `url` would be shown: this client was last told of another page."""
        return self._seen.header is None or not self._seen.header.startswith(f"{PAGE_LINE} {url}\n")

    def image(self, data: bytes, mime_type: str) -> None:
        self._images.append(ImageContent(data=data, mime_type=mime_type))

    def code(self, line: str) -> None:
        """The Playwright Python equivalent of what the tool did, so a session can become a script."""
        self._code.append(line)

    def data(self, data: dict[str, Any]) -> None:
        """Structured result (MCP structuredContent); also the text when a tool adds no text."""
        self._data = data

    def merge_data(self, data: dict[str, Any]) -> None:
        """Add fields to the structured result without dropping what the handler put there."""
        self._data = {**data, **(self._data or {})}

    def _render(self, section: str | _Header) -> str:
        if isinstance(section, str):
            return section
        where = [line for line in section.lines if not line.startswith(CONSOLE_LINE)]
        console = [line for line in section.lines if line.startswith(CONSOLE_LINE)]
        told = set(self._seen.header.splitlines()) if self._seen.header is not None else set()
        self._seen.header = "\n".join(where)
        # Only the lines that changed (a URL the page pushed keeps its title); console errors are always news.
        return "\n".join([line for line in where if line not in told] + console)

    def redact(self, secret: str) -> None:
        """Take a sensitive value (a password typed while recording a flow) out of everything said so far."""
        self._sections = [s.replace(secret, "***") if isinstance(s, str) else s for s in self._sections]
        self._code = [line.replace(secret, "***") for line in self._code]
        if self._data is not None:
            encoded = msgspec.json.encode(self._data).decode()
            masked = msgspec.json.encode(secret).decode()[1:-1]
            self._data = msgspec.json.decode(encoded.replace(masked, "***"))

    def payload(self) -> Payload:
        sections = [text for text in map(self._render, self._sections) if text]
        if not sections and self._data is not None:
            sections.append(msgspec.json.encode(self._data).decode())
        if self._code and self._codegen:
            sections.append("```python\n" + "\n".join(self._code) + "\n```")
        content: list[Content] = [TextContent("\n\n".join(sections))] if sections else []
        content.extend(self._images)
        return Payload(success=True, data=self._data, content=content)


def error_payload(error: BrowserdError) -> Payload:
    info = error.info()
    text = f"Error [{info.error_code}]: {info.error}"
    if info.recover_hint:
        text += f"\nNext: {info.recover_hint}"
    return Payload(success=False, error=info, content=[TextContent(text)])
