"""docs/tools.md, the table of every tool with its group and module, says what the catalog holds."""

from __future__ import annotations

from browserd.daemon.tools.catalog import build_catalog
from scripts.tools_doc import DOC, render


def test_the_tools_table_is_in_step_with_the_catalog() -> None:
    assert DOC.read_text() == render(), "docs/tools.md is stale: run .venv/bin/python scripts/tools_doc.py"


def test_the_table_names_every_tool_once_with_its_module() -> None:
    rows = [line for line in DOC.read_text().splitlines() if line.startswith("| `")]
    names = [row.split("`")[1] for row in rows]
    assert sorted(names) == sorted(tool.name for tool in build_catalog())
    assert all("`daemon/tools/" in row for row in rows)
