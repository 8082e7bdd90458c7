"""Extraction benchmark for issue 5: our scrape pipeline against plain trafilatura on extraction-dev.

    .venv/bin/python tests/bench/extraction.py [--limit N] [--data DIR]

Runs ../shared/bench/extraction-dev/score.py in-process (`--py`) twice, on
`extract_for_score` (browserd.daemon.scrape.extract.extract, only_main_content, base URL
https://example.com/) and on `trafilatura_markdown` (trafilatura 2.3.1's own markdown, comments off:
the README's reference row), and prints for each: token F1, AEB F1, structure recall per kind
(headings, list items, links, tables) and pages per CPU-second, then one JSON line with both.
Prints figures, never asserts them (DESIGN.md §6).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parents[2]
DEFAULT_DATA = REPO.parent / "shared" / "bench" / "extraction-dev"
BASE_URL = "https://example.com/"


def extract_for_score(html: str) -> str:
    """score.py's callable: page HTML in, markdown out."""
    from browserd.daemon.scrape.extract import extract

    return extract(html, url=BASE_URL).markdown


def trafilatura_markdown(html: str) -> str:
    import trafilatura

    return str(trafilatura.extract(html, output_format="markdown", include_comments=False) or "")


def _load_scorer(data: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("extraction_dev_score", data / "score.py")
    if spec is None or spec.loader is None:
        raise SystemExit(f"no score.py in {data}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _score(scorer: ModuleType, data: Path, target: str, limit: int) -> dict[str, Any]:
    argv = [str(data), "--py", f"{__file__}:{target}", "--bootstrap", "0"]
    if limit:
        argv += ["--limit", str(limit)]
    with contextlib.redirect_stdout(io.StringIO()):
        summary: dict[str, Any] = scorer.main(argv)
    structure = summary.get("structure", {})
    return {
        "tok_F1": round(summary["tok_F1"], 4),
        "tok_P": round(summary["tok_P"], 4),
        "tok_R": round(summary["tok_R"], 4),
        "AEB_F1": round(summary["AEB_F1"], 4),
        "pages": summary["pages"],
        "failures": summary["failures"],
        "pages_per_cpu_s": round(summary["pages_per_cpu_s"] or 0.0, 1),
        "pages_per_s": round(summary["pages_per_s"] or 0.0, 1),
        "structure_recall": {
            kind: (round(v["recall"], 3) if v["recall"] is not None else None) for kind, v in structure.items()
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="extraction-dev folder (with score.py)")
    parser.add_argument("--limit", type=int, default=0, help="score only the first N pages")
    args = parser.parse_args()
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    scorer = _load_scorer(args.data)
    results = {
        "browserd": _score(scorer, args.data, "extract_for_score", args.limit),
        "trafilatura": _score(scorer, args.data, "trafilatura_markdown", args.limit),
    }
    print(f"extraction-dev ({args.data}), {results['browserd']['pages']} pages")
    header = ("extractor", "tok F1", "AEB F1", "head", "list", "links", "tables", "p/CPU-s")
    print(f"{header[0]:<12} " + " ".join(f"{h:>7}" for h in header[1:]))
    for name, r in results.items():
        s = r["structure_recall"]
        cells = [
            f"{s.get(k) if s.get(k) is not None else 'n/a':>6}" for k in ("headings", "list_items", "links", "tables")
        ]
        print(f"{name:<12} {r['tok_F1']:>7.3f} {r['AEB_F1']:>7.3f} {' '.join(cells)} {r['pages_per_cpu_s']:>7.1f}")
    print(json.dumps(results, sort_keys=True))


if __name__ == "__main__":
    main()
