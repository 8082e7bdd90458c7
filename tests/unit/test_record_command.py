"""`browserd record` (D-47) where no window can open: a clear error, and the other way to record."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from browserd.shim.cli import main


def test_without_a_display_record_names_the_error_and_how_to_record_instead(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    result = CliRunner().invoke(main, ["record", "--profile", "shop", "--url", "http://127.0.0.1:9/"])
    assert result.exit_code == 2
    assert "[NOT_SUPPORTED]" in result.output and "no display" in result.output
    assert "flow_record_start" in result.output and "browserd bridge pair" in result.output  # the recover hint
