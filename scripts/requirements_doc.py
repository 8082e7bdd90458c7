"""Write docs/requirements.md: the requirement ids (S0-01, D-44, TC-14) and issues ("issue 14 item 8") that
the repository cites, each resolved in one line. tests/unit/test_requirements_doc.py fails when a cited id
is missing; run this to fix it (REQUIREMENTS.md is the project's consolidated requirements; the issue
texts come from the `issues` command of the project's machines):

    .venv/bin/python scripts/requirements_doc.py /path/to/REQUIREMENTS.md
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "requirements.md"
# Where ids are cited: the product, its tests and its documentation (not this file's own output).
CITING = ("daemon", "shim", "protocol", "extension-bridge", "tests", "docs", "scripts", "systemd", "README.md")
SUFFIXES = {".py", ".js", ".mjs", ".md", ".html", ".toml", ".json", ".service", ".socket"}

ID = re.compile(r"\b((?:S[0-4]|D|TC)-)(\d+)(?:\.\.(?:(?:S[0-4]|D|TC)-)?(\d+))?")
ISSUE = re.compile(r"\b[Ii]ssues? (\d+)(?:,? items? (\d+(?:(?:, | and |, and )\d+)*))?")
WIDTH = 160


def _files() -> Iterator[Path]:
    for name in CITING:
        path = REPO / name
        candidates = [path] if path.is_file() else sorted(path.rglob("*"))
        for candidate in candidates:
            wanted = candidate.suffix in SUFFIXES and "node_modules" not in candidate.parts
            if wanted and candidate.is_file() and candidate != DOC:
                yield candidate


def cited() -> tuple[set[str], dict[int, set[int]]]:
    """The requirement ids cited (ranges such as S4-34..S4-41 expanded) and the issues with their items."""
    ids: set[str] = set()
    issues: dict[int, set[int]] = {}
    for path in _files():
        text = path.read_text(errors="replace")
        for prefix, first, last in ID.findall(text):
            start = int(first)
            end = int(last) if last and int(last) >= start and int(last) - start < 200 else start
            ids.update(f"{prefix}{n:02d}" for n in range(start, end + 1))
        for number, items in ISSUE.findall(text):
            issues.setdefault(int(number), set()).update(int(n) for n in re.findall(r"\d+", items))
    return ids, issues


def _plain(text: str) -> str:
    text = re.sub(r"\*\*|`", "", text).strip()
    return text if len(text) <= WIDTH else text[: WIDTH - 1].rsplit(" ", 1)[0] + "…"


def _first_sentence(text: str) -> str:
    return re.split(r"(?<=[.!?])\s", text.strip(), maxsplit=1)[0]


def defined(requirements: str) -> dict[str, str]:
    """id -> one line, from REQUIREMENTS.md: a requirement's statement, a decision's title and what it
    recommends, a test case's scenario."""
    lines: dict[str, str] = {}
    for line in requirements.splitlines():
        if match := re.match(r"- \*\*(S[0-4]-\d+)\*\* (.*?)(?: — \*\*.*)?$", line):
            lines[match[1]] = _plain(_first_sentence(match[2]))
        elif match := re.match(r"- \*\*(D-\d+) (.*?)\*\*(.*)$", line):
            recommend = re.search(r"Recommend: (.*)", match[3])
            said = f"{match[2].rstrip('.')}: {_first_sentence(recommend[1])}" if recommend else match[2]
            lines[match[1]] = _plain(said)
        elif match := re.match(r"\| (TC-\d+) \| (.*?) \|", line):
            lines[match[1]] = _plain(match[2])
    return lines


def _issue_text(number: int) -> str:
    command = shutil.which("issues")
    if command is None:
        return ""
    done = subprocess.run([command, "show", str(number)], capture_output=True, text=True, timeout=60)
    return done.stdout if done.returncode == 0 else ""


def _issue_lines(issues: dict[int, set[int]]) -> list[str]:
    rows = []
    for number in sorted(issues):
        text = _issue_text(number)
        title = re.search(r"^> # (.*)$", text, re.M)
        rows.append(f"- **issue {number}**: {_plain(title[1]) if title else '(title not available here)'}")
        for item in sorted(issues[number]):
            # The item's text runs on over the quoted lines that follow, up to the next item or a blank line.
            found = re.search(rf"^> {item}\. (.*(?:\n> +(?!\d+\. |#)\S.*)*)", text, re.M)
            if found:
                said = " ".join(part.lstrip("> ").strip() for part in found[1].splitlines())
                rows.append(f"  - item {item}: {_plain(_first_sentence(said))}")
    return rows


def render(requirements: str) -> str:
    ids, issues = cited()
    known = defined(requirements)

    def key(rid: str) -> tuple[str, int]:
        prefix, number = rid.rsplit("-", 1)
        return prefix, int(number)

    rows = [f"- **{rid}** {known[rid]}" for rid in sorted(ids & known.keys(), key=key)]
    unknown = sorted(ids - known.keys(), key=key)
    parts = [
        "# Requirement ids and issues cited in the code",
        "",
        "Code, tests and docs cite the project's requirements by id (S0-nn ... S4-nn: a seed document's",
        "requirement; D-nn: a decision where the seeds disagree; TC-nn: a seed test case) and the issues that",
        "asked for a behaviour. Each is said here in one line. Generated by `scripts/requirements_doc.py`",
        "from the project's REQUIREMENTS.md; `tests/unit/test_requirements_doc.py` keeps it complete.",
        "",
        "## Requirements and decisions",
        "",
        *rows,
        "",
        "## Issues",
        "",
        *_issue_lines(issues),
        "",
    ]
    if unknown:
        parts += ["## Cited but not defined in REQUIREMENTS.md", "", *(f"- {rid}" for rid in unknown), ""]
    return "\n".join(parts)


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    DOC.write_text(render(Path(sys.argv[1]).read_text()))
    print(f"wrote {DOC.relative_to(REPO)}")


if __name__ == "__main__":
    main()
