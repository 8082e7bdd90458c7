"""Which Chromium a launch gets: the headless shell for headless pages, the full browser for windows."""

from __future__ import annotations

from pathlib import Path

import pytest

from browserd.daemon.config import BrowserConfig
from browserd.daemon.runtime import chromium as chromium_module
from browserd.daemon.runtime.browser import BrowserRuntime
from browserd.daemon.runtime.chromium import accept_languages, find_chromium


def _executable(path: Path) -> str:
    path.parent.mkdir(parents=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return str(path)


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    """Playwright's own full browser and headless shell, and nothing on the system paths."""
    monkeypatch.setenv("PLAYWRIGHT_BROWSERS_PATH", str(tmp_path))
    monkeypatch.delenv("BROWSERD_CHROMIUM", raising=False)
    monkeypatch.setattr(chromium_module, "_SYSTEM_CANDIDATES", ())
    monkeypatch.setattr(chromium_module, "_SYSTEM_HEADLESS_SHELLS", ())
    full = _executable(tmp_path / "chromium-1200" / "chrome-linux64" / "chrome")
    shell = _executable(tmp_path / "chromium_headless_shell-1200" / "chrome-linux64" / "headless_shell")
    return full, shell


def test_headless_pages_get_the_headless_shell_and_windows_the_full_browser(installed: tuple[str, str]) -> None:
    full, shell = installed
    headless = find_chromium(headless=True)
    assert headless is not None and headless.path == shell and headless.headless_shell
    headed = find_chromium()
    assert headed is not None and headed.path == full and not headed.headless_shell


def test_a_named_executable_is_taken_as_it_is(installed: tuple[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    full, _shell = installed
    configured = find_chromium(full, headless=True)
    assert configured is not None and (configured.path, configured.source) == (full, "config")
    monkeypatch.setenv("BROWSERD_CHROMIUM", full)
    named = find_chromium(headless=True)
    assert named is not None and (named.path, named.source) == (full, "env")


def test_without_a_headless_shell_headless_pages_use_the_full_browser(installed: tuple[str, str]) -> None:
    full, shell = installed
    Path(shell).unlink()
    found = find_chromium(headless=True)
    assert found is not None and found.path == full


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({}, "en-US,en"),
        ({"LANG": "C.UTF-8"}, "en-US,en"),
        ({"LANG": "POSIX"}, "en-US,en"),
        ({"LANG": "de_DE.UTF-8"}, "de-DE,de"),
        ({"LANG": "de_DE.UTF-8", "LC_ALL": "fr_FR@euro"}, "fr-FR,fr"),
        ({"LANG": "pt"}, "pt"),
    ],
)
def test_the_shell_sends_the_accept_language_of_the_users_locale(environ: dict[str, str], expected: str) -> None:
    """A headless shell sends no Accept-Language unless told; many sites treat such a request as a bot's."""
    assert accept_languages(environ) == expected


def test_headless_shell_false_keeps_the_full_browser(installed: tuple[str, str]) -> None:
    full, shell = installed
    default = BrowserRuntime(BrowserConfig()).executable
    assert default is not None and default.path == shell and not BrowserRuntime(BrowserConfig()).shows_pdfs
    runtime = BrowserRuntime(BrowserConfig(headless_shell=False))
    assert runtime.executable is not None and runtime.executable.path == full
    assert runtime.shows_pdfs, "the full browser shows PDFs in its viewer"
