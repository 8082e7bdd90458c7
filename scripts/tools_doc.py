"""Write docs/tools.md: every tool of the catalog with its group, the module that defines it and its first
sentence. tests/unit/test_tools_doc.py fails when the file and the catalog disagree; run this to fix it:

    .venv/bin/python scripts/tools_doc.py
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from browserd.daemon.tools import catalog, tool_registry  # noqa: E402

DOC = REPO / "docs" / "tools.md"
HEADER = """# Tools

Generated from the tool catalog by `scripts/tools_doc.py`; `tests/unit/test_tools_doc.py` keeps it in step.
A client sees `core` plus the groups it asks for (`browserd mcp --tools pages,runs`, or `all`); the default
is `pages`. Published flows add one `flow_<slug>` tool each (see [flows.md](flows.md)).

| tool | group | module | what it does |
|---|---|---|---|
"""


def _modules() -> dict[str, str]:
    """tool name -> the daemon/tools module that defines it."""
    package = Path(catalog.__file__).parent
    found: dict[str, str] = {}
    for info in pkgutil.iter_modules([str(package)]):
        module = importlib.import_module(f"browserd.daemon.tools.{info.name}")
        for tool in getattr(module, "TOOLS", []):
            found[tool.name] = f"daemon/tools/{info.name}.py"
    return found


def _first_sentence(text: str) -> str:
    sentence = re.split(r"(?<=[.!?])\s", text.strip(), maxsplit=1)[0]
    return sentence.replace("|", "\\|").replace("\n", " ")


def render() -> str:
    modules = _modules()
    order = {group: index for index, group in enumerate(tool_registry.GROUPS)}
    tools = sorted(catalog.build_catalog(), key=lambda t: (order.get(t.group, len(order)), t.name))
    rows = [f"| `{t.name}` | {t.group} | `{modules[t.name]}` | {_first_sentence(t.description)} |" for t in tools]
    return HEADER + "\n".join(rows) + "\n"


def main() -> None:
    DOC.write_text(render())
    print(f"wrote {DOC.relative_to(REPO)}")


if __name__ == "__main__":
    main()
