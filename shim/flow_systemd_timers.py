"""systemd user timers for flow schedules (`browserd flows schedule add --systemd`, issue 14 item 8).

A timer `browserd-flow-<scheduleId>.timer` fires a oneshot service that runs `browserd flows schedule run
<scheduleId>`: that command reaches the daemon (starting it when it is not running, as every command
does) and the daemon starts the flow's run. The cron expression becomes the timer's OnCalendar=: numbers,
`*`, lists, ranges, `*/n` and `a/n` steps, and day names or numbers; a sixth field (the second) becomes
the calendar's seconds. Cron fires when day-of-month OR
day-of-week matches, systemd when both do, so an expression naming both is refused.
"""

from __future__ import annotations

from pathlib import Path

from browserd.shim.systemd_units import Echo, daemon_command, exec_quote, run_or_show, systemctl, unit_dir, user_manager

_DAYS = ("Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_NAMES = {day.lower(): str(index) for index, day in enumerate(_DAYS[:7])}


class CronNotCalendar(ValueError):
    """A cron expression a systemd timer cannot say."""


def _day_number(value: str) -> str:
    return _NAMES.get(value.lower(), value)


def _part(part: str, first: int, day: bool) -> str:
    value = _day_number(part) if day else part
    if "/" in value:
        start, step = value.split("/", 1)
        if "-" in start:
            raise CronNotCalendar(f"`{part}`: a range with a step has no systemd form; list the values instead")
        return f"{_one(str(first) if start == '*' else start, day)}/{step}"
    if "-" in value:
        low, high = value.split("-", 1)
        return f"{_one(_day_number(low) if day else low, day)}..{_one(_day_number(high) if day else high, day)}"
    return _one(value, day)


def _one(value: str, day: bool) -> str:
    if not value.isdigit():
        raise CronNotCalendar(f"`{value}` is not a number{' or a day name' if day else ''}")
    return _DAYS[int(value)] if day else value


def _field(field: str, first: int, day: bool = False) -> str:
    if field == "*":
        return "*"
    return ",".join(_part(part, first, day) for part in field.split(","))


def on_calendar(cron: str) -> str:
    """The OnCalendar= value of a cron expression of five fields, or six with the second last."""
    fields = cron.split()
    if len(fields) not in (5, 6):
        raise CronNotCalendar(f"`{cron}` has {len(fields)} fields, not 5 or 6")
    minute, hour, dom, month, dow = fields[:5]
    second = _field(fields[5], 0) if len(fields) == 6 else "00"
    if dom != "*" and dow != "*":
        raise CronNotCalendar(
            "cron runs when the day of the month OR the weekday matches, a systemd timer when both do: "
            "make two schedules, one for each"
        )
    days = "" if dow == "*" else _field(dow, 0, day=True) + " "
    return f"{days}*-{_field(month, 1)}-{_field(dom, 1)} {_field(hour, 0)}:{_field(minute, 0)}:{second}"


def unit_names(schedule_id: str) -> tuple[str, str]:
    base = f"browserd-flow-{schedule_id}"
    return f"{base}.timer", f"{base}.service"


def timer_unit(schedule_id: str, flow_id: str, cron: str) -> str:
    return (
        f"# browserd flow schedule {schedule_id}: flow {flow_id} at cron '{cron}'.\n"
        "# `browserd flows schedule remove` removes it.\n\n"
        f"[Unit]\nDescription=browserd flow {flow_id} ({cron})\n\n"
        f"[Timer]\nOnCalendar={on_calendar(cron)}\n"
        "# A run missed while the machine was off happens once when it is back.\nPersistent=true\n"
        f"Unit={unit_names(schedule_id)[1]}\n\n"
        "[Install]\nWantedBy=timers.target\n"
    )


def service_unit(schedule_id: str, flow_id: str) -> str:
    command = " ".join(exec_quote(arg) for arg in [*daemon_command(), "flows", "schedule", "run", schedule_id])
    return (
        f"# Started by browserd-flow-{schedule_id}.timer: asks the daemon (started if need be) to run the flow.\n\n"
        f"[Unit]\nDescription=browserd flow {flow_id}, scheduled\n\n"
        f"[Service]\nType=oneshot\nExecStart={command}\n"
    )


def install(schedule_id: str, flow_id: str, cron: str, echo: Echo) -> int:
    target = unit_dir()
    target.mkdir(parents=True, exist_ok=True)
    timer, service = unit_names(schedule_id)
    (target / timer).write_text(timer_unit(schedule_id, flow_id, cron))
    (target / service).write_text(service_unit(schedule_id, flow_id))
    echo(f"wrote {target / timer} and {service}")
    return run_or_show([["daemon-reload"], ["enable", "--now", timer]], echo)


def uninstall(schedule_id: str, echo: Echo) -> None:
    target = unit_dir()
    names = unit_names(schedule_id)
    present: list[Path] = [target / name for name in names if (target / name).exists()]
    if not present:
        return
    manager = user_manager()
    if manager:
        systemctl(["disable", "--now", names[0]], echo)
    wants = target / "timers.target.wants" / names[0]
    for path in [*present, *([wants] if wants.is_symlink() else [])]:
        path.unlink()
        echo(f"removed {path}")
    if manager:
        systemctl(["daemon-reload"], echo)
