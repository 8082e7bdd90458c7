"""The code stays ruff- and mypy-clean: a style or type regression fails the suite, not a later review."""

from __future__ import annotations

import ast
import subprocess
from collections.abc import Iterator
from pathlib import Path

from tests.conftest import REPO, VENV_BIN


def run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)


def test_ruff_finds_nothing_to_fix() -> None:
    result = run(str(VENV_BIN / "ruff"), "check", "protocol", "daemon", "shim", "tests")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_leaves_the_code_as_it_is() -> None:
    result = run(str(VENV_BIN / "ruff"), "format", "--check", "protocol", "daemon", "shim")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_is_clean() -> None:
    result = run(str(REPO / "scripts" / "typecheck.sh"))
    assert result.returncode == 0, result.stdout + result.stderr


# Layers (DESIGN.md §3): server -> tools -> services -> runtime. Below the tools layer nothing imports it,
# not even for a type: runs reach the browser tools through services.tools (a ToolCaller), by name. Every
# package of daemon/ other than these two is below tools, so a new package is covered without a word here.
ABOVE_SERVICES = ("server", "tools")
DAEMON = REPO / "daemon"


def _imported_modules(path: Path) -> Iterator[str]:
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names)


def _imports_of(paths: list[Path], package: str) -> set[str]:
    """`<file> imports <module>` for every import of browserd.daemon.<package> (whole or by name) in paths."""
    prefix = f"browserd.daemon.{package}"
    depth = len(prefix.split(".")) + 1
    return {
        f"{path.relative_to(REPO)} imports {'.'.join(module.split('.')[:depth])}"
        for path in paths
        for module in _imported_modules(path)
        if module == prefix or module.startswith(prefix + ".")
    }


def _below_tools() -> list[Path]:
    return [
        path
        for path in DAEMON.rglob("*.py")
        if path.relative_to(DAEMON).parts[0] not in ABOVE_SERVICES and path.parent != DAEMON / "tools"
    ]


def test_nothing_below_the_tools_layer_imports_tools_or_the_server() -> None:
    files = _below_tools()
    packages = {path.relative_to(DAEMON).parts[0] for path in files if len(path.relative_to(DAEMON).parts) > 1}
    assert packages >= {"bridge", "elements", "flows", "policy", "profiles", "runs", "runtime", "scrape"}
    assert packages >= {"sessions", "snapshots"}, "the layer's packages were not found"
    upward = _imports_of(files, "tools") | _imports_of(files, "server")
    assert not upward, "\n".join(sorted(upward))


def test_the_tools_layer_never_imports_the_server() -> None:
    upward = _imports_of(sorted((DAEMON / "tools").glob("*.py")), "server")
    assert not upward, "\n".join(sorted(upward))


def test_runs_never_import_flows() -> None:
    """Flows replay as a run (a template registered in services.py), so flows sit above runs: the other way
    round would be a cycle."""
    upward = _imports_of(sorted((DAEMON / "runs").rglob("*.py")), "flows")
    assert not upward, "\n".join(sorted(upward))


def _is_tool_module(path: Path) -> bool:
    """A module that defines tools (its TOOLS list), as against the layer's shared helpers."""
    assigned = [
        target
        for node in ast.parse(path.read_text()).body
        for target in (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
    ]
    return any(isinstance(target, ast.Name) and target.id == "TOOLS" for target in assigned)


def test_a_tool_module_imports_no_other_tool_module() -> None:
    """Tool modules share the layer's helpers (context, response, registry, tabtool...), never each other:
    what two tools share lives in a helper or in a service. catalog.py alone gathers them all."""
    tools = DAEMON / "tools"
    tool_modules = {path.stem for path in tools.glob("*.py") if _is_tool_module(path)}
    assert len(tool_modules) > 10, "the tool modules were not found"
    crossing = {
        f"tools/{path.name} imports tools.{module.split('.')[3]}"
        for path in sorted(tools.glob("*.py"))
        if path.name != "catalog.py"
        for module in _imported_modules(path)
        if module.startswith("browserd.daemon.tools.")
        and module.split(".")[3] in tool_modules
        and module.split(".")[3] != path.stem
    }
    assert not crossing, "\n".join(sorted(crossing))


def test_a_module_name_leads_to_one_file() -> None:
    """A name in a traceback or a log names one file (docs/architecture.md): no two modules share a basename,
    except a tool group's module (`tools/<group>.py`) and a template's (`runs/templates/<id>.py`), which are
    named after what the user calls them."""
    named_after_the_user = {DAEMON / "tools", DAEMON / "runs" / "templates"}
    modules = [
        path
        for folder in ("daemon", "shim", "protocol")
        for path in (REPO / folder).rglob("*.py")
        if path.name not in {"__init__.py", "__main__.py"} and path.parent not in named_after_the_user
    ]
    seen: dict[str, Path] = {}
    repeated = set()
    for path in sorted(modules):
        if path.name in seen:
            repeated.add(f"{seen[path.name].relative_to(REPO)} and {path.relative_to(REPO)}")
        seen.setdefault(path.name, path)
    assert not repeated, "\n".join(sorted(repeated))


# What only services touch (issue 21 item 4): the executor that runs browser tasks in fresh contexts, the
# profiles' publishers and stores, and the run and flow stores and the scheduler behind their services. A tool
# that reaches for one does a service's work, which then has no other caller (runs, the console) to share it.
# Also what a profile snapshot or a flow's metadata hold for their services: a profile's storage state
# (Profiles.state_to_import) and the candidate orders a flow's runs suggested (FlowService.for_export).
SERVICE_INTERNALS = frozenset(
    {"executor", "run_in_context", "publisher", "publish_cas", "publish_now", "publish_later", "store", "scheduler"}
    | {"storage_state", "suggested_order"}
)


def test_tool_modules_leave_service_internals_to_the_services() -> None:
    reached = set()
    for path in sorted((DAEMON / "tools").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Attribute) and node.attr in SERVICE_INTERNALS:
                reached.add(f"tools/{path.name}:{node.lineno} uses .{node.attr}")
            elif isinstance(node, ast.ImportFrom):
                names = {alias.name for alias in node.names} & SERVICE_INTERNALS
                reached.update(f"tools/{path.name}:{node.lineno} imports {name}" for name in names)
    assert not reached, "call a service method instead:\n" + "\n".join(sorted(reached))
