"""Cron triggers without a daemon: cron checks, the next time, and the systemd timer a schedule becomes
(issue 14 item 8)."""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from datetime import datetime
from pathlib import Path

import pytest

from browserd.daemon.errors import InvalidParameter
from browserd.daemon.flows.catalogue.schedules import check_cron, next_time
from browserd.shim import flow_systemd_timers

needs_analyze = pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze not installed")


@pytest.mark.parametrize(
    "cron", ["61 * * * *", "* * * *", "every minute", "*/0 * * * *", "* * * * * 60", "* * * * * * 2027"]
)
def test_a_bad_cron_expression_is_refused_with_the_format(cron: str) -> None:
    with pytest.raises(InvalidParameter) as caught:
        check_cron(cron)
    assert caught.value.details["field"] == "cron" and "minute hour" in caught.value.recover_hint


def test_the_next_time_is_the_next_match_in_local_time() -> None:
    start = time.mktime(datetime(2026, 3, 2, 8, 59, 30).timetuple())  # a Monday, local time
    assert datetime.fromtimestamp(next_time("0 9 * * 1-5", start)) == datetime(2026, 3, 2, 9, 0)
    assert datetime.fromtimestamp(next_time("*/15 * * * *", start)) == datetime(2026, 3, 2, 9, 0)
    assert datetime.fromtimestamp(next_time("30 8 * * *", start)) == datetime(2026, 3, 3, 8, 30)


def test_a_sixth_field_names_the_second() -> None:
    check_cron("* * * * * 45")
    check_cron("0 9 * * 1-5 */10")
    start = time.mktime(datetime(2026, 3, 2, 8, 59, 30).timetuple())
    assert datetime.fromtimestamp(next_time("* * * * * 45", start)) == datetime(2026, 3, 2, 8, 59, 45)
    assert datetime.fromtimestamp(next_time("* * * * * 15", start)) == datetime(2026, 3, 2, 9, 0, 15)
    assert datetime.fromtimestamp(next_time("0 9 * * 1-5 */10", start)) == datetime(2026, 3, 2, 9, 0, 0)


@pytest.mark.parametrize(
    ("cron", "calendar"),
    [
        ("*/15 * * * *", "*-*-* *:0/15:00"),
        ("0 9 * * 1-5", "Mon..Fri *-*-* 9:0:00"),
        ("30 2 1,15 * *", "*-*-1,15 2:30:00"),
        ("0 0 * 1-3 sun", "Sun *-1..3-* 0:0:00"),
        ("5 4 * * 7", "Sun *-*-* 4:5:00"),
        ("* * * * * 30", "*-*-* *:*:30"),
        ("0 9 * * 1-5 */10", "Mon..Fri *-*-* 9:0:0/10"),
    ],
)
def test_cron_becomes_the_timer_calendar(cron: str, calendar: str) -> None:
    assert flow_systemd_timers.on_calendar(cron) == calendar


@needs_analyze
@pytest.mark.parametrize(
    "cron", ["*/15 * * * *", "0 9 * * 1-5", "30 2 1,15 * *", "0 0 * 1-3 sun", "0 */2 * * *", "*/5 * * * * 10,40"]
)
def test_systemd_reads_every_calendar_the_same_way_cron_does(cron: str) -> None:
    calendar = flow_systemd_timers.on_calendar(cron)
    result = subprocess.run(
        ["systemd-analyze", "calendar", "--iterations=3", calendar], capture_output=True, text=True, timeout=30
    )
    assert result.returncode == 0, result.stderr
    elapses = re.findall(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}", result.stdout)
    expected, at = [], time.time()
    for _ in range(3):
        at = next_time(cron, at)
        expected.append(datetime.fromtimestamp(at).strftime("%Y-%m-%d %H:%M:%S"))
    assert elapses == expected, result.stdout


@pytest.mark.parametrize(("cron", "said"), [("0 9 1 * 1", "two schedules"), ("0 1-5/2 * * *", "range with a step")])
def test_what_a_timer_cannot_say_is_refused(cron: str, said: str) -> None:
    with pytest.raises(flow_systemd_timers.CronNotCalendar, match=said):
        flow_systemd_timers.on_calendar(cron)


@needs_analyze
def test_the_timer_and_its_service_pass_systemd_analyze(tmp_path: Path) -> None:
    timer, service = flow_systemd_timers.unit_names("sch_1234abcd")
    (tmp_path / timer).write_text(flow_systemd_timers.timer_unit("sch_1234abcd", "flow_x", "0 9 * * 1-5"))
    (tmp_path / service).write_text(flow_systemd_timers.service_unit("sch_1234abcd", "flow_x"))
    text = (tmp_path / timer).read_text()
    assert "OnCalendar=Mon..Fri *-*-* 9:0:00" in text and "Persistent=true" in text
    assert "WantedBy=timers.target" in text and f"Unit={service}" in text
    exec_start = next(line for line in (tmp_path / service).read_text().splitlines() if line.startswith("ExecStart="))
    assert exec_start.endswith("flows schedule run sch_1234abcd") and "Type=oneshot" in (tmp_path / service).read_text()
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    env = {"XDG_RUNTIME_DIR": str(runtime), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    result = subprocess.run(
        ["systemd-analyze", "--user", "verify", str(tmp_path / timer), str(tmp_path / service)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0 and not result.stderr.strip(), result.stderr
