"""The page scripts in daemon/**/js/ and the modules that load them (daemon/runtime/page_js.py) stay in step:
every `.js` file is loaded by some module (no orphan left behind by a change), every `load_js` call names a
file that exists, and the wheel ships them."""

from __future__ import annotations

import ast
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path

from tests.conftest import REPO

DAEMON = REPO / "daemon"


def _load_calls() -> Iterator[tuple[Path, int, str, str]]:
    """(module, line, package, file name) of every load_js call with literal arguments."""
    for path in DAEMON.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "load_js":
                args = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
                assert len(args) == 2, f"{path}:{node.lineno}: load_js takes a package and a file name, as literals"
                yield path, node.lineno, args[0], args[1]


def _script_path(package: str, name: str) -> Path:
    assert package == "browserd.daemon" or package.startswith("browserd.daemon."), package
    return DAEMON.joinpath(*package.split(".")[2:], "js", name)


def test_every_load_names_an_existing_script() -> None:
    missing = [f"{p.relative_to(REPO)}:{line}: {pkg} {name}" for p, line, pkg, name in _load_calls()
               if not _script_path(pkg, name).is_file()]  # fmt: skip
    assert not missing, "load_js names files that do not exist:\n" + "\n".join(missing)


def test_every_script_is_loaded_by_a_module() -> None:
    loaded = {_script_path(pkg, name) for _, _, pkg, name in _load_calls()}
    scripts = set(DAEMON.rglob("js/*.js"))
    assert scripts, "no page scripts found under daemon/**/js/"
    orphans = sorted(str(p.relative_to(REPO)) for p in scripts - loaded)
    assert not orphans, "page scripts no module loads (delete them, or load them):\n" + "\n".join(orphans)


def test_page_scripts_ship_as_package_data() -> None:
    setuptools = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    # Each js/ folder is a package of data only (setuptools warns about an importable folder left out of
    # `packages`), whose .js files are its package data.
    assert "*.js" in setuptools["package-data"]["*"]
    packages = set(setuptools["packages"])
    for script in DAEMON.rglob("js/*.js"):
        package = ".".join(["browserd", *script.parent.parent.relative_to(REPO).parts])
        assert package in packages, f"{script.relative_to(REPO)}: its package {package} is not installed"
        assert f"{package}.js" in packages, f"{script.relative_to(REPO)}: its folder {package}.js is not shipped"


def test_every_prelude_declaration_is_used_beside_it() -> None:
    # eslint sees a prelude's declarations only as the programs' globals, so it cannot tell one nobody uses.
    unused = []
    for prelude in DAEMON.rglob("js/*.prelude.js"):
        others = "\n".join(p.read_text() for p in prelude.parent.glob("*.js") if p != prelude)
        own = prelude.read_text()
        for name in re.findall(r"^const (\w+)", own, re.MULTILINE):
            if not re.search(rf"\b{name}\b", others) and len(re.findall(rf"\b{name}\b", own)) < 2:
                unused.append(f"{prelude.relative_to(REPO)}: {name}")
    assert not unused, "prelude declarations nothing uses:\n" + "\n".join(unused)
