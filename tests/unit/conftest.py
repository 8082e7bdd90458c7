"""The fast unit suite (`make test-unit`): no daemon, no browser. A test here that would launch Chromium fails
at once, saying where such a test belongs, instead of slowly making the unit suite an integration suite."""

from __future__ import annotations

from typing import Any

import pytest

from browserd.daemon.runtime.browser import BrowserRuntime


@pytest.fixture(autouse=True)
def no_browser(monkeypatch: pytest.MonkeyPatch) -> None:
    async def refuse(self: BrowserRuntime, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a unit test launched Chromium: move it to tests/integration")

    monkeypatch.setattr(BrowserRuntime, "_launch", refuse)
