"""Whether an element is a file input, and whether it takes several files."""

from __future__ import annotations

from enum import IntEnum

from playwright.async_api import Locator

from browserd.daemon.runtime.page_js import load_js

_FILE_INPUT_JS = load_js("browserd.daemon.elements", "file_input.js")


class FileInput(IntEnum):
    NONE = 0  # not an <input type=file>: uploading means clicking it and catching the file chooser
    ONE = 1
    SEVERAL = 2  # `multiple`


async def file_input(locator: Locator, timeout_ms: float | None) -> FileInput:
    """What `locator`'s element is as a file input."""
    return FileInput(await locator.evaluate(_FILE_INPUT_JS, timeout=timeout_ms))
