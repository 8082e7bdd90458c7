"""`browserd doctor` run as the user runs it, against folders and sockets made for each test."""

from __future__ import annotations

import json
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import BROWSERD, isolated_env


def doctor(env: dict[str, str]) -> tuple[int, dict[str, dict[str, Any]]]:
    result = subprocess.run([BROWSERD, "doctor", "--json"], env=env, capture_output=True, text=True, timeout=60)
    assert result.stdout, f"doctor printed nothing; stderr: {result.stderr}"
    report = json.loads(result.stdout)
    return result.returncode, {check["name"]: check for check in report["checks"]}


def test_fresh_machine_has_no_failure(scratch: Path) -> None:
    code, checks = doctor(isolated_env(scratch))
    failures = {name: check for name, check in checks.items() if check["status"] == "fail"}
    assert code == 0 and not failures, failures
    assert checks["config"]["detail"].endswith(": defaults")
    assert checks["daemon"]["detail"].startswith("not running")
    assert checks["log file"]["detail"].startswith(str(scratch / "state" / "browserd" / "daemon.log"))


def test_every_check_that_is_not_ok_says_how_to_fix_it(scratch: Path) -> None:
    (scratch / "config" / "browserd").mkdir(parents=True)
    (scratch / "config" / "browserd" / "config.toml").write_text("[daemon\n")
    _, checks = doctor(isolated_env(scratch, BROWSERD_CHROMIUM="/nonexistent/chromium"))
    for check in checks.values():
        assert set(check) == {"name", "status", "detail", "fix"}
        assert check["status"] in ("ok", "warn", "fail")
        assert check["status"] == "ok" or check["fix"], f"{check['name']} is {check['status']} without a fix"


def test_chromium_on_this_machine_is_found_and_runs(scratch: Path) -> None:
    _, checks = doctor(isolated_env(scratch))
    chromium = checks["chromium"]
    assert chromium["status"] == "ok", chromium
    assert "Chromium" in chromium["detail"] or "Chrome" in chromium["detail"]


def test_browserd_chromium_wins_when_it_is_executable(scratch: Path) -> None:
    fake = scratch / "my-chromium"
    fake.write_text("#!/bin/sh\necho 'Chromium 999.1.2.3 test build'\n")
    fake.chmod(0o755)
    _, checks = doctor(isolated_env(scratch, BROWSERD_CHROMIUM=str(fake)))
    assert checks["chromium"] == {
        "name": "chromium",
        "status": "ok",
        "detail": f"Chromium 999.1.2.3 test build at {fake} (from env)",
        "fix": "",
    }


def test_unusable_browserd_chromium_is_reported_not_silently_skipped(scratch: Path) -> None:
    # find_chromium goes on to the system paths, where this machine has one: a warning, not a failure.
    code, checks = doctor(isolated_env(scratch, BROWSERD_CHROMIUM="/nonexistent/chromium"))
    chromium = checks["chromium"]
    assert chromium["status"] == "warn", chromium
    assert "not executable: BROWSERD_CHROMIUM=/nonexistent/chromium" in chromium["detail"]
    assert code == 0


def test_chromium_that_does_not_run_fails_with_the_install_hint(scratch: Path) -> None:
    broken = scratch / "broken-chromium"
    broken.write_text("#!/bin/sh\nexit 1\n")
    broken.chmod(0o755)
    code, checks = doctor(isolated_env(scratch, BROWSERD_CHROMIUM=str(broken)))
    assert code == 1
    assert checks["chromium"]["status"] == "fail"
    assert str(broken) in checks["chromium"]["detail"]
    assert checks["chromium"]["fix"] == "apt-get install chromium (as root) or set BROWSERD_CHROMIUM=/path"


@pytest.mark.parametrize(
    ("text", "named"),
    [("[daemon\nidle_exit_s = 5\n", "cannot read"), ("[browser]\nheadles = true\n", "headles")],
    ids=["toml-syntax", "unknown-key"],
)
def test_broken_config_fails_with_its_message(scratch: Path, text: str, named: str) -> None:
    config = scratch / "config" / "browserd" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(text)
    code, checks = doctor(isolated_env(scratch))
    assert code == 1
    assert checks["config"]["status"] == "fail"
    assert named in checks["config"]["detail"], checks["config"]
    assert str(config) in checks["config"]["fix"]


def test_loose_socket_folder_is_a_warning(scratch: Path) -> None:
    folder = scratch / "run"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)  # mkdir's mode is filtered through the umask
    code, checks = doctor(isolated_env(scratch))
    assert checks["socket folder"]["status"] == "warn", checks["socket folder"]
    assert "0755" in checks["socket folder"]["detail"]
    assert f"chmod 700 {folder}" in checks["socket folder"]["fix"]
    assert code == 0


def test_socket_without_a_daemon_is_reported_stale(scratch: Path) -> None:
    folder = scratch / "run"
    folder.mkdir(mode=0o700)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(folder / "daemon.sock"))
    dead.close()  # the file stays and nobody listens: what a killed daemon leaves
    code, checks = doctor(isolated_env(scratch))
    assert checks["daemon"]["status"] == "warn", checks["daemon"]
    assert "stale" in checks["daemon"]["detail"]
    assert "next daemon removes it" in checks["daemon"]["fix"]
    assert code == 0


@pytest.mark.slow
def test_running_daemon_answers(scratch: Path) -> None:
    env = isolated_env(scratch, BROWSERD_BROWSER_PREWARM="false", BROWSERD_DAEMON_IDLE_EXIT_S="30")
    daemon = subprocess.Popen(
        [BROWSERD, "daemon", "--foreground", "--quiet"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        sock = scratch / "run" / "daemon.sock"
        deadline = time.monotonic() + 20
        while not sock.exists():
            assert daemon.poll() is None, f"daemon exited with {daemon.returncode}"
            assert time.monotonic() < deadline, "daemon did not open its socket within 20 s"
            time.sleep(0.05)
        code, checks = doctor(env)
        assert checks["daemon"]["status"] == "ok", checks["daemon"]
        assert f"pid {daemon.pid}" in checks["daemon"]["detail"]
        assert code == 0
    finally:
        daemon.terminate()
        try:
            daemon.wait(timeout=15)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait()


def test_plain_output_prints_the_fix_under_the_problem(scratch: Path) -> None:
    (scratch / "config" / "browserd").mkdir(parents=True)
    (scratch / "config" / "browserd" / "config.toml").write_text("[daemon\n")
    result = subprocess.run([BROWSERD, "doctor"], env=isolated_env(scratch), capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    config_line = next(i for i, line in enumerate(lines) if line.startswith("fail") and "config" in line)
    assert "fix:" in lines[config_line + 1]


def test_the_driver_preload_applies_to_this_playwright_and_can_be_turned_off(scratch: Path) -> None:
    _, checks = doctor(isolated_env(scratch))
    preload = checks["driver preload"]
    assert preload["status"] == "ok" and "applies to playwright" in preload["detail"], preload
    _, checks = doctor(isolated_env(scratch, BROWSERD_BROWSER_DRIVER_PRELOAD="false"))
    assert checks["driver preload"]["detail"].startswith("off ([browser] driver_preload = false)"), checks
