"""The systemd user units: what `browserd service` writes, what systemd thinks of it, socket activation."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from browserd.shim import systemd_units
from tests.conftest import BROWSERD, VENV_BIN, isolated_env, wait_for

PYTHON = str(VENV_BIN / "python")
REPO_UNITS = Path(__file__).resolve().parents[2] / "systemd"

# What systemd does for a socket-activated service: the listening socket at fd 3, LISTEN_PID = own pid.
ACTIVATE = """
import os, sys
fd = int(sys.argv[1])
os.dup2(fd, 3)
if fd != 3:
    os.close(fd)
os.environ.update(LISTEN_PID=str(os.getpid()), LISTEN_FDS="1")
os.execv(sys.argv[2], sys.argv[2:])
"""

needs_analyze = pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze not installed")


def cli_env(scratch: Path, **extra: str) -> dict[str, str]:
    empty_bin = scratch / "empty-bin"
    empty_bin.mkdir(exist_ok=True)
    # No systemctl on PATH: a developer's real user manager must never see these test units.
    return isolated_env(scratch, PATH=str(empty_bin), **extra)


def browserd(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([BROWSERD, *args], env=env, capture_output=True, text=True, timeout=60)


def unit_dir(scratch: Path) -> Path:
    return scratch / "config" / "systemd" / "user"


def exec_start(unit: str) -> str:
    return next(line for line in unit.splitlines() if line.startswith("ExecStart=")).removeprefix("ExecStart=")


def verify(scratch: Path, *units: Path) -> None:
    runtime = scratch / "runtime"
    runtime.mkdir(mode=0o700, exist_ok=True)
    env = {
        **os.environ,
        "XDG_RUNTIME_DIR": str(runtime),
        "XDG_CONFIG_HOME": str(scratch / "config"),
        "HOME": str(scratch),
    }
    result = subprocess.run(
        ["systemd-analyze", "--user", "verify", *map(str, units)], env=env, capture_output=True, text=True, timeout=60
    )
    # systemd only warns about an unknown key, so any output at all counts as a failure.
    assert result.returncode == 0 and not result.stderr.strip(), result.stderr


@pytest.mark.parametrize("name", [*systemd_units.UNITS, systemd_units.HTTP_UNIT])
def test_repo_units_are_the_packaged_templates(name: str) -> None:
    assert systemd_units.template(name) == (REPO_UNITS / name).read_text(), (
        f"systemd/{name} and shim/units/{name} differ; copy the one you edited over the other"
    )


def test_units_socket_activate_on_the_path_clients_use() -> None:
    socket_unit = systemd_units.template("browserd.socket")
    service_unit = systemd_units.template("browserd.service")
    assert "ListenStream=%t/browserd/daemon.sock" in socket_unit
    assert "SocketMode=0600" in socket_unit and "DirectoryMode=0700" in socket_unit
    assert "Restart=on-failure" in service_unit and "Restart=always" not in service_unit
    assert "Requires=browserd.socket" in service_unit and "After=browserd.socket" in service_unit
    assert exec_start(service_unit) == f"{systemd_units.TEMPLATE_EXECUTABLE} daemon --foreground --quiet"


def test_install_writes_both_units_with_an_absolute_exec_start(scratch: Path) -> None:
    result = browserd(cli_env(scratch), "service", "install", "--no-enable")
    assert result.returncode == 0, result.stderr
    installed = unit_dir(scratch)
    assert (installed / "browserd.socket").read_text() == systemd_units.template("browserd.socket")
    assert exec_start((installed / "browserd.service").read_text()) == f"{BROWSERD} daemon --foreground --quiet"
    # Without a user manager the commands are printed for the user to run.
    assert "systemctl --user daemon-reload" in result.stdout
    assert "systemctl --user enable --now browserd.socket" in result.stdout


def test_install_with_http_adds_the_http_socket_and_uninstall_removes_it(scratch: Path) -> None:
    env = cli_env(scratch)
    result = browserd(env, "service", "install", "--http")
    assert result.returncode == 0, result.stderr
    installed = unit_dir(scratch)
    http_unit = (installed / systemd_units.HTTP_UNIT).read_text()
    assert "ListenStream=127.0.0.1:3027" in http_unit and "Service=browserd.service" in http_unit
    assert "systemctl --user enable --now browserd.socket browserd-http.socket" in result.stdout
    assert browserd(env, "service", "uninstall").returncode == 0
    assert not (installed / systemd_units.HTTP_UNIT).exists()


def test_install_from_python_m_runs_the_same_interpreter(scratch: Path) -> None:
    result = subprocess.run(
        [PYTHON, "-m", "browserd.shim", "service", "install", "--no-enable"],
        env=cli_env(scratch),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    command = exec_start((unit_dir(scratch) / "browserd.service").read_text())
    assert command == f"{PYTHON} -m browserd.shim daemon --foreground --quiet"


def test_uninstall_removes_the_units_and_the_enable_link(scratch: Path) -> None:
    env = cli_env(scratch)
    assert browserd(env, "service", "install").returncode == 0
    installed = unit_dir(scratch)
    wants = installed / "sockets.target.wants" / "browserd.socket"
    wants.parent.mkdir()
    wants.symlink_to(installed / "browserd.socket")  # as an offline `systemctl --user enable` leaves it

    result = browserd(env, "service", "uninstall")
    assert result.returncode == 0, result.stderr
    assert [p for p in installed.rglob("*") if not p.is_dir()] == []
    assert not wants.is_symlink()

    again = browserd(env, "service", "uninstall")
    assert again.returncode == 0 and "no browserd units" in again.stdout


@needs_analyze
def test_installed_units_pass_systemd_analyze(scratch: Path) -> None:
    assert browserd(cli_env(scratch), "service", "install", "--no-enable", "--http").returncode == 0
    installed = unit_dir(scratch)
    verify(scratch, installed / "browserd.socket", installed / systemd_units.HTTP_UNIT, installed / "browserd.service")


@needs_analyze
def test_repo_units_pass_systemd_analyze_for_a_user_install(scratch: Path) -> None:
    user_bin = scratch / ".local" / "bin"
    user_bin.mkdir(parents=True)
    (user_bin / "browserd").symlink_to(BROWSERD)  # where %h/.local/bin/browserd points with HOME=scratch
    verify(scratch, REPO_UNITS / "browserd.socket", REPO_UNITS / "browserd.service")


@needs_analyze
def test_exec_start_survives_spaces_and_percent_in_the_path(scratch: Path) -> None:
    odd = scratch / "my tools 100%" / "browserd"
    odd.parent.mkdir()
    odd.symlink_to(BROWSERD)
    unit = scratch / "config" / "systemd" / "user" / "browserd.service"
    unit.parent.mkdir(parents=True)
    unit.write_text(systemd_units.render("browserd.service", [str(odd)]))
    (unit.parent / "browserd.socket").write_text(systemd_units.template("browserd.socket"))
    # verify fails on an ExecStart whose executable does not exist, so passing proves the path parsed.
    verify(scratch, unit.parent / "browserd.socket", unit)


def assert_activated_then_idle_exit(daemon: subprocess.Popen[bytes], sock: Path, env: dict[str, str]) -> None:
    inode = sock.stat().st_ino
    status = browserd(env, "status", "--json")
    assert status.returncode == 0, f"status: {status.stdout} {status.stderr}"
    data = json.loads(status.stdout)
    assert data["running"] is True and data["pid"] == daemon.pid
    assert data["socket"] == str(sock), "the daemon lost BROWSERD_SOCKET and would lock the wrong folder"
    assert data["idle"]["idleExitS"] == 2
    assert daemon.wait(timeout=30) == 0, "the daemon should exit 0 when idle"
    # The socket belongs to whoever passed it in: the daemon neither rebinds nor removes it.
    assert sock.exists() and sock.stat().st_ino == inode


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def activation_env(scratch: Path) -> dict[str, str]:
    return cli_env(scratch, BROWSERD_BROWSER_PREWARM="false", BROWSERD_DAEMON_IDLE_EXIT_S="2")


@pytest.mark.slow
@pytest.mark.timeout(90)
@pytest.mark.skipif(shutil.which("systemd-socket-activate") is None, reason="systemd-socket-activate not installed")
def test_systemd_socket_activate_starts_the_daemon_on_first_connection(scratch: Path) -> None:
    env = activation_env(scratch)
    sock = Path(env["BROWSERD_SOCKET"])
    sock.parent.mkdir(mode=0o700)
    activator = shutil.which("systemd-socket-activate")
    assert activator is not None
    # Like systemd, it gives the service a clean environment: every setting must be passed on by name.
    passed = [f"--setenv={key}={value}" for key, value in env.items() if key.startswith(("BROWSERD_", "XDG_"))]
    daemon = subprocess.Popen(
        [activator, "-l", str(sock), *passed, BROWSERD, "daemon", "--foreground", "--quiet"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert wait_for(sock.exists, 20), f"systemd-socket-activate did not listen on {sock}"
        # It execs the daemon in its own process on the first connection, so the pid stays the same.
        assert_activated_then_idle_exit(daemon, sock, env)
    finally:
        stop(daemon)


@pytest.mark.slow
@pytest.mark.timeout(90)
def test_daemon_takes_the_socket_handed_over_at_fd_3(scratch: Path) -> None:
    env = activation_env(scratch)
    sock = Path(env["BROWSERD_SOCKET"])
    sock.parent.mkdir(mode=0o700)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listening:
        listening.bind(str(sock))
        listening.listen()
        daemon = subprocess.Popen(
            [PYTHON, "-c", ACTIVATE, str(listening.fileno()), BROWSERD, "daemon", "--foreground", "--quiet"],
            env=env,
            pass_fds=(listening.fileno(),),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            assert_activated_then_idle_exit(daemon, sock, env)
        finally:
            stop(daemon)


@pytest.mark.slow
@pytest.mark.timeout(90)
@pytest.mark.skipif(shutil.which("systemd-socket-activate") is None, reason="systemd-socket-activate not installed")
def test_the_http_port_socket_activates_the_daemon_too(scratch: Path) -> None:
    """Both sockets passed in (browserd.socket and browserd-http.socket): a request to the HTTP port starts
    the daemon, which serves HTTP on the passed socket although [http] is not enabled in its config."""
    env = activation_env(scratch)
    sock = Path(env["BROWSERD_SOCKET"])
    sock.parent.mkdir(mode=0o700)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    activator = shutil.which("systemd-socket-activate")
    assert activator is not None
    passed = [f"--setenv={key}={value}" for key, value in env.items() if key.startswith(("BROWSERD_", "XDG_"))]
    listen = ["-l", str(sock), "-l", f"127.0.0.1:{port}", "--fdname=control:http"]
    daemon = subprocess.Popen(
        [activator, *listen, *passed, BROWSERD, "daemon", "--foreground", "--quiet"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert wait_for(sock.exists, 20), f"systemd-socket-activate did not listen on {sock}"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=60) as answer:
            assert json.load(answer)["service"] == "browserd"
        status = json.loads(browserd(env, "status", "--json").stdout)
        assert status["pid"] == daemon.pid and status["http"]["url"] == f"http://127.0.0.1:{port}"
        # No token, no MCP: the activated port is guarded as any other.
        request = urllib.request.Request(f"http://127.0.0.1:{port}/mcp", data=b"{}", method="POST")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=30)
        assert refused.value.code == 401
        assert daemon.wait(timeout=30) == 0, "no session: the daemon exits when idle, the sockets stay systemd's"
    finally:
        stop(daemon)
