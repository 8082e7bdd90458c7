"""Every requirement id and issue the repository cites resolves in docs/requirements.md."""

from __future__ import annotations

import re

from scripts.requirements_doc import DOC, cited


def test_every_cited_requirement_id_and_issue_is_in_the_glossary() -> None:
    ids, issues = cited()
    text = DOC.read_text()
    resolved = set(re.findall(r"^- \*\*((?:S[0-4]|D|TC)-\d+)\*\* \S", text, re.M))
    listed = {int(n) for n in re.findall(r"^- \*\*issue (\d+)\*\*", text, re.M)}
    fix = "run .venv/bin/python scripts/requirements_doc.py REQUIREMENTS.md (the project's requirements file)"
    assert not ids - resolved, f"cited, not in docs/requirements.md: {sorted(ids - resolved)}; {fix}"
    assert not issues.keys() - listed, f"issues cited, not in docs/requirements.md: {sorted(issues.keys() - listed)}"
    assert "Cited but not defined" not in text, "an id the code cites is not a requirement: correct the citation"
