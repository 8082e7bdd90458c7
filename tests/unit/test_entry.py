"""`browserd mcp` starts without click and without the daemon's modules (issue 21: an MCP client waits on
the shim's initialize answer), and reads its options as click would."""

from __future__ import annotations

import subprocess
import sys

import pytest

from browserd.shim.entry import mcp_options
from tests.conftest import REPO


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ([], (None, "local", None)),
        (["--tools", "pages,scrape"], (["pages", "scrape"], "local", None)),
        (["--tools=all", "--trust=remote"], (["all"], "remote", None)),
        (["--trust", "remote", "--codegen"], (None, "remote", True)),
        (["--no-codegen", "--tools", " runs , "], (["runs"], "local", False)),
        (["--tools="], (None, "local", None)),
    ],
)
def test_the_mcp_options_read_as_click_reads_them(args: list[str], expected: object) -> None:
    assert mcp_options(args) == expected


@pytest.mark.parametrize("args", [["--help"], ["--trust", "admin"], ["--tools"], ["--verbose"], ["extra"]])
def test_what_the_shim_does_not_know_goes_to_click(args: list[str]) -> None:
    assert mcp_options(args) is None  # click then explains or refuses, as for every other command


def test_the_shim_path_imports_no_click_and_no_daemon_module() -> None:
    probe = (
        "import sys\n"
        "import browserd.shim.entry, browserd.shim.mcp_server\n"
        "print(' '.join(m for m in sys.modules if m == 'click' or m.startswith(('click.', 'browserd.daemon'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == []


def test_every_other_command_goes_to_click() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "browserd.shim", "mcp", "--help"], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "Serve MCP over stdio" in done.stdout and "--trust [local|remote]" in done.stdout
