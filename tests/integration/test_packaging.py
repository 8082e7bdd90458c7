"""Packaging: both the editable install and a built wheel import under the `browserd.` namespace.

DESIGN.md §1: protocol/, daemon/ and shim/ install as browserd.protocol, browserd.daemon and
browserd.shim; nothing generic (`protocol`, `daemon`, `shim`) lands at the top of site-packages.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.conftest import REPO

VENV = REPO / ".venv"
VENV_PYTHON = VENV / "bin" / "python"


def clean_env() -> dict[str, str]:
    """The environment without anything that would point Python at the repo or the dev venv."""
    drop = {"PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "PYTHONSTARTUP"}
    return {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("BROWSERD_")}


def run(*args: str | Path, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=clean_env(), capture_output=True, text=True, timeout=timeout
    )
    assert result.returncode == 0, f"{' '.join(map(str, args))} failed:\n{result.stdout}\n{result.stderr}"
    return result


def test_editable_install_imports_every_layer(tmp_path: Path) -> None:
    """§1: `pip install -e .` gives importable browserd.protocol, .daemon and .shim."""
    result = run(
        VENV_PYTHON,
        "-c",
        "import browserd.protocol, browserd.daemon.server.daemon_process, browserd.shim.cli, browserd.shim.mcp_server;"
        "print(browserd.daemon.__file__)",
        cwd=tmp_path,  # not the repo: the import must come from the install, not the working folder
    )
    assert Path(result.stdout.strip()).is_relative_to(REPO / "daemon")


def _copy_source(to: Path) -> Path:
    """The repo without venv, VCS and build leftovers, so building never writes into the work tree."""
    ignore = shutil.ignore_patterns(
        ".venv", ".git", ".*cache", ".hypothesis", "__pycache__", "build", "dist", "*.egg-info", "tests"
    )
    shutil.copytree(REPO, to, ignore=ignore)
    return to


@pytest.mark.slow
def test_built_wheel_installs_and_imports_without_the_source_tree(tmp_path: Path) -> None:
    """§1: a wheel built from pyproject.toml works on its own: CLI, daemon, shim and packaged units."""
    source = _copy_source(tmp_path / "src")
    dist = tmp_path / "dist"
    run(VENV_PYTHON, "-m", "build", "--wheel", "--outdir", dist, source, cwd=tmp_path, timeout=240)
    (wheel,) = dist.glob("browserd-*.whl")

    fresh = tmp_path / "fresh"
    run(sys.executable, "-m", "venv", "--without-pip", fresh, cwd=tmp_path)
    fresh_python = fresh / "bin" / "python"
    run(VENV_PYTHON, "-m", "pip", "--python", fresh_python, "install", "--no-deps", "--no-index", wheel, cwd=tmp_path)

    site_packages = Path(
        run(
            fresh_python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=tmp_path
        ).stdout.strip()
    )
    # Dependencies (playwright, anyio, msgspec, click...) come from the dev venv. A path line in a .pth
    # does not process that folder's own .pth files, so the editable finder stays out.
    dev_site_packages = sysconfig.get_paths(vars={"base": str(VENV), "platbase": str(VENV)})["purelib"]
    assert Path(dev_site_packages).is_dir(), dev_site_packages
    (site_packages / "deps.pth").write_text(dev_site_packages + "\n")

    top_level = {p.name for p in site_packages.iterdir()}
    assert "browserd" in top_level
    assert not top_level & {"protocol", "daemon", "shim"}, f"generic top-level packages installed: {top_level}"
    assert {p.name for p in (site_packages / "browserd").iterdir()} >= {"protocol", "daemon", "shim"}

    # Every source folder that is a package is in the wheel (pyproject lists them one by one).
    for layer in ("protocol", "daemon", "shim"):
        for init in (REPO / layer).rglob("__init__.py"):
            package = init.parent.relative_to(REPO)
            installed = site_packages / "browserd" / package / "__init__.py"
            assert installed.is_file(), f"{package} is not in the wheel; add browserd.{package} to pyproject"

    where = run(
        fresh_python,
        "-c",
        "import browserd.daemon, browserd.shim, browserd.protocol;"
        "print(browserd.daemon.__file__); print(browserd.shim.__file__); print(browserd.protocol.__file__)",
        cwd=tmp_path,
    )
    for line in where.stdout.split():
        assert Path(line).is_relative_to(site_packages), f"{line} was imported from outside the fresh venv"

    version = run(fresh / "bin" / "browserd", "version", cwd=tmp_path)
    assert version.stdout.startswith("browserd 0."), version.stdout
    assert "protocol 1." in version.stdout

    units = run(
        fresh_python,
        "-c",
        "import browserd.daemon.server.daemon_process, browserd.shim.mcp_server;"
        "from importlib import resources;"
        "print(resources.files('browserd.shim').joinpath('units', 'browserd.service').read_text());"
        "print(resources.files('browserd.shim').joinpath('units', 'browserd.socket').read_text())",
        cwd=tmp_path,
    )
    assert "[Service]" in units.stdout and "[Socket]" in units.stdout

    # The preload Playwright's driver loads (runtime/node/, a folder of data beside the runtime's modules).
    preload = run(
        fresh_python,
        "-c",
        "from browserd.daemon.runtime.driver import PRELOAD; print(PRELOAD.is_file(), PRELOAD)",
        cwd=tmp_path,
    )
    assert preload.stdout.startswith("True "), preload.stdout
    assert Path(preload.stdout.split()[1]).is_relative_to(site_packages)
