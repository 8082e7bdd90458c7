"""Configuration: defaults, the TOML file, BROWSERD_* overrides and errors that name the key (D-19)."""

from __future__ import annotations

from pathlib import Path

import pytest

from browserd.daemon.config import Config, ConfigError, load


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path


def test_without_file_or_environment_every_default_applies(tmp_path: Path) -> None:
    """D-19: no file and no BROWSERD_* variables give the documented defaults."""
    config = load(tmp_path / "absent.toml", {})
    assert config == Config()
    assert config.daemon.idle_exit_s == 60
    assert config.daemon.spawn_timeout_s == 30
    assert config.daemon.max_frame_bytes == 64 * 1024 * 1024
    assert config.browser.headless is True
    assert config.browser.prewarm is True
    assert (config.browser.workers, config.browser.queue_size) == (4, 200)  # D-20
    assert (config.browser.max_tabs_per_session, config.browser.max_total_tabs) == (20, 50)  # S1-74, S1-77
    assert config.mcp.tools == ["pages"]  # under 15k characters of tools/list (issue 10)
    assert config.mcp.codegen is False
    assert config.runs.max_concurrent_runs == 5
    assert config.runs.max_run_timeout_ms == 900_000


def test_defaults_ignore_unrelated_environment_variables(tmp_path: Path) -> None:
    config = load(tmp_path / "absent.toml", {"BROWSERD_SOCKET": "/tmp/x.sock", "HOME": "/root", "BROWSERD_": "1"})
    assert config == Config()


@pytest.mark.parametrize("key", ["idle-exit-s", "idle_exit_s"])
def test_file_keys_may_be_kebab_or_snake_case(tmp_path: Path, key: str) -> None:
    """D-19: the references spell keys in kebab-case; snake_case works as well."""
    config = load(write(tmp_path, f"[daemon]\n{key} = 5\n"), {})
    assert config.daemon.idle_exit_s == 5
    assert config.daemon.spawn_timeout_s == 30, "keys the file does not name keep their defaults"


def test_file_sets_values_in_several_sections(tmp_path: Path) -> None:
    text = """
[daemon]
log-level = "DEBUG"
[browser]
headless = false
args = ["--foo"]
queue-size = 0
[mcp]
tools = ["pages", "runs"]
[runs]
max-concurrent-runs = 2
"""
    config = load(write(tmp_path, text), {})
    assert config.daemon.log_level == "DEBUG"
    assert config.browser.headless is False
    assert config.browser.args == ["--foo"]
    assert config.browser.queue_size == 0
    assert config.mcp.tools == ["pages", "runs"]
    assert config.runs.max_concurrent_runs == 2


def test_environment_overrides_the_file(tmp_path: Path) -> None:
    """D-19: BROWSERD_<SECTION>_<KEY> wins over the file; other file values stay."""
    path = write(tmp_path, "[daemon]\nidle-exit-s = 5\nspawn-timeout-s = 3\n")
    config = load(path, {"BROWSERD_DAEMON_IDLE_EXIT_S": "7.5"})
    assert config.daemon.idle_exit_s == 7.5
    assert config.daemon.spawn_timeout_s == 3


def test_environment_strings_become_numbers_and_booleans(tmp_path: Path) -> None:
    environ = {
        "BROWSERD_BROWSER_PREWARM": "false",
        "BROWSERD_BROWSER_WORKERS": "2",
        "BROWSERD_DAEMON_MAX_FRAME_BYTES": "1024",
        "BROWSERD_DAEMON_IDLE_EXIT_S": "0",
    }
    config = load(tmp_path / "absent.toml", environ)
    assert config.browser.prewarm is False
    assert config.browser.workers == 2
    assert config.daemon.max_frame_bytes == 1024
    assert config.daemon.idle_exit_s == 0


@pytest.mark.parametrize(
    ("value", "expected"),
    [("pages,runs", ["pages", "runs"]), (" pages , runs ,", ["pages", "runs"]), ("flows", ["flows"])],
)
def test_list_setting_from_the_environment_is_comma_separated(tmp_path: Path, value: str, expected: list[str]) -> None:
    config = load(tmp_path / "absent.toml", {"BROWSERD_MCP_TOOLS": value})
    assert config.mcp.tools == expected


def test_environment_list_replaces_the_file_list(tmp_path: Path) -> None:
    path = write(tmp_path, '[mcp]\ntools = ["scrape"]\n')
    assert load(path, {"BROWSERD_MCP_TOOLS": "pages,runs"}).mcp.tools == ["pages", "runs"]


def test_environment_list_can_hold_an_item_with_a_comma(tmp_path: Path) -> None:
    """D-19: every key is settable from the environment, Chromium flags with comma lists included."""
    value = '["--disable-features=Foo,Bar", "--mute-audio"]'
    config = load(tmp_path / "absent.toml", {"BROWSERD_BROWSER_ARGS": value})
    assert config.browser.args == ["--disable-features=Foo,Bar", "--mute-audio"]


@pytest.mark.parametrize(
    ("text", "environ"),
    [
        ("[daemon]\nidle_exit_s = -1\n", {}),
        ('[daemon]\nidle-exit-s = "abc"\n', {}),
        ("", {"BROWSERD_DAEMON_IDLE_EXIT_S": "abc"}),
        ("", {"BROWSERD_DAEMON_IDLE_EXIT_S": "-1"}),
    ],
    ids=["negative-in-file", "string-in-file", "string-in-env", "negative-in-env"],
)
def test_bad_value_is_a_config_error_naming_the_key(tmp_path: Path, text: str, environ: dict[str, str]) -> None:
    """D-19: a bad value is refused at load, and the message says which key."""
    with pytest.raises(ConfigError) as caught:
        load(write(tmp_path, text), environ)
    assert "idle_exit_s" in str(caught.value)


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("[daemon]\ncolour = 1\n", "colour"),
        ("[browser]\nworkers = 0\n", "workers"),
        ('[daemon]\nlog-level = "LOUD"\n', "log_level"),
        ("[nonsense]\nx = 1\n", "nonsense"),
    ],
)
def test_unknown_or_invalid_key_in_the_file_is_named(tmp_path: Path, text: str, named: str) -> None:
    """D-19: a typo in the file is an error, not a silently ignored setting."""
    with pytest.raises(ConfigError) as caught:
        load(write(tmp_path, text), {})
    assert named in str(caught.value)


def test_malformed_toml_is_a_config_error_naming_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, "[daemon\nidle_exit_s = 5\n")
    with pytest.raises(ConfigError) as caught:
        load(path, {})
    assert str(path) in str(caught.value)


def test_path_defaults_to_browserd_config_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """D-19: without an explicit path, the file named by BROWSERD_CONFIG is read."""
    path = write(tmp_path, "[daemon]\nidle-exit-s = 11\n")
    monkeypatch.setenv("BROWSERD_CONFIG", str(path))
    assert load(None, {}).daemon.idle_exit_s == 11


def test_environment_defaults_to_the_process_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BROWSERD_DAEMON_IDLE_EXIT_S", "13")
    assert load(tmp_path / "absent.toml").daemon.idle_exit_s == 13
