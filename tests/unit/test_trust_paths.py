"""Issue 20: one way to load a URL into a page. Every load goes through daemon/sessions/navigation.py, which asks
the caller's TrustPolicy first; a page.goto, reload or history move anywhere else would be a path past it."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO

NAVIGATION = Path("daemon/sessions/navigation.py")
LOADS = {"goto", "reload", "go_back", "go_forward"}
# Not a load of anything a policy could refuse: a warm context's reset between scrapes (runtime/contexts.py).
HARMLESS = "about:blank"


def _loads(path: Path, root: Path = REPO) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        name = node.func.attr
        harmless = [a for a in node.args if isinstance(a, ast.Constant) and a.value == HARMLESS]
        if (name in LOADS and not harmless) or (name == "new_page" and (node.args or node.keywords)):
            found.append(f"{path.relative_to(root)}:{node.lineno} calls {name}")
    return found


def test_only_navigation_loads_a_url_into_a_page() -> None:
    files = [p for p in (REPO / "daemon").rglob("*.py") if p.relative_to(REPO) != NAVIGATION]
    assert len(files) > 100, "the daemon's files were not found"
    found = [line for path in files for line in _loads(path)]
    assert not found, "load pages through browserd.daemon.sessions.navigation (navigate, goto):\n" + "\n".join(found)


def test_the_check_finds_a_load_past_navigation(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        'async def f(page):\n    await page.goto("file:///etc/passwd")\n    await page.goto("about:blank")\n'
    )
    assert _loads(sample, tmp_path) == ["sample.py:2 calls goto"]

