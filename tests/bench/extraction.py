"""Extraction benchmark (issues 5 and 12): our scrape pipeline against plain trafilatura on both corpora.

    .venv/bin/python tests/bench/extraction.py [--data DIR ...] [--limit N] [--only browserd|trafilatura]
                                               [--out DIR]

By default scores ../shared/bench/extraction-dev and ../shared/bench/extraction-cleaneval (each folder's
own score.py, run in-process with `--py`), each twice: on `extract_for_score`
(browserd.daemon.scrape.extract.extract, only_main_content, base URL https://example.com/) and on
`trafilatura_markdown` (trafilatura's own markdown, comments off: the READMEs' reference row). Prints
per corpus and extractor: token F1, AEB F1, failures, empty outputs, structure recall per kind
(headings, list items, links, tables; extraction-dev only: CleanEval's gold is plain text), pages per
CPU-second and median ms per page, then one JSON line with everything. `--out DIR` keeps each run's
per-page scores (`<corpus>-<extractor>.json`) for comparing two versions page by page.
`--speed N` instead times the first N pages of each corpus three times and keeps each page's least
process CPU time: on a busy shared machine that is the steadier speed figure (median ms per page and
pages per CPU-second).
Prints figures, never asserts them (DESIGN.md §6).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import statistics
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parents[2]
# ../shared/bench beside the main checkout; a worktree (../wt/<name>) finds it a level further up
BENCH_DATA = next(
    (bench for bench in (p / "shared" / "bench" for p in REPO.parents) if bench.is_dir()),
    REPO.parent / "shared" / "bench",
)
DEV_DATA = BENCH_DATA / "extraction-dev"
DEFAULT_DATA = (DEV_DATA, BENCH_DATA / "extraction-cleaneval")
BASE_URL = "https://example.com/"
EXTRACTORS = {"browserd": "extract_for_score", "trafilatura": "trafilatura_markdown"}
STRUCTURE_KINDS = ("headings", "list_items", "links", "tables")


def extract_for_score(html: str) -> str:
    """score.py's callable: page HTML in, markdown out."""
    from browserd.daemon.scrape.extract import extract

    return extract(html, url=BASE_URL).markdown


def trafilatura_markdown(html: str) -> str:
    import trafilatura

    return str(trafilatura.extract(html, output_format="markdown", include_comments=False) or "")


def _load_scorer(data: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"score_{data.name.replace('-', '_')}", data / "score.py")
    if spec is None or spec.loader is None:
        raise SystemExit(f"no score.py in {data}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _score(data: Path, target: str, limit: int, out: Path | None) -> dict[str, Any]:
    argv = [str(data), "--py", f"{__file__}:{target}", "--bootstrap", "0"]
    if limit:
        argv += ["--limit", str(limit)]
    if out is not None:
        argv += ["--out", str(out)]
    with contextlib.redirect_stdout(io.StringIO()):
        summary: dict[str, Any] = _load_scorer(data).main(argv)
    structure = summary.get("structure", {})
    return {
        "tok_F1": round(summary["tok_F1"], 4),
        "tok_P": round(summary["tok_P"], 4),
        "tok_R": round(summary["tok_R"], 4),
        "AEB_F1": round(summary["AEB_F1"], 4),
        "pages": summary["pages"],
        "failures": summary["failures"],
        "empty": summary["empty_outputs"],
        "pages_per_cpu_s": round(summary["pages_per_cpu_s"] or 0.0, 1),
        "pages_per_s": round(summary["pages_per_s"] or 0.0, 1),
        "median_ms": summary["median_ms"],
        "structure_recall": {
            kind: (round(v["recall"], 3) if v["recall"] is not None else None) for kind, v in structure.items()
        },
    }


def _speed(data: Path, extractors: dict[str, str], limit: int) -> None:
    scorer = _load_scorer(data)
    pages, _ = scorer.load_dataset(data)
    htmls = [scorer.decode_html(scorer._read_text(page["path"])) for page in pages[:limit]]
    for name, target in extractors.items():
        function = globals()[target]
        least: list[float] = []
        for html in htmls:
            times = []
            for _ in range(3):
                start = time.process_time()
                function(html)
                times.append(time.process_time() - start)
            least.append(min(times))
        print(
            f"{data.name} {name}: {len(least)} pages, median {1000 * statistics.median(least):.1f} ms,"
            f" {len(least) / sum(least):.1f} pages per CPU-second (least of 3 runs per page)"
        )


def _row(name: str, r: dict[str, Any]) -> str:
    s = r["structure_recall"]
    cells = " ".join(f"{s[k] if s.get(k) is not None else 'n/a':>6}" for k in STRUCTURE_KINDS)
    return (
        f"{name:<12} {r['tok_F1']:>7.4f} {r['AEB_F1']:>7.4f} {r['failures']:>5} {r['empty']:>5} {cells}"
        f" {r['pages_per_cpu_s']:>7.1f} {r['median_ms']:>7.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--data", type=Path, action="append", help="a corpus folder with score.py (repeatable; default: both)"
    )
    parser.add_argument("--limit", type=int, default=0, help="score only the first N pages of each corpus")
    parser.add_argument("--only", choices=sorted(EXTRACTORS), help="run one extractor instead of both")
    parser.add_argument("--out", type=Path, help="folder for per-page results (<corpus>-<extractor>.json)")
    parser.add_argument("--speed", type=int, default=0, help="only time the first N pages of each corpus")
    args = parser.parse_args()
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    corpora: list[Path] = args.data or list(DEFAULT_DATA)
    extractors = {args.only: EXTRACTORS[args.only]} if args.only else EXTRACTORS
    if args.speed:
        for data in corpora:
            _speed(data, extractors, args.speed)
        return
    results: dict[str, dict[str, Any]] = {}
    header = ("extractor", "tok F1", "AEB F1", "fail", "empty", "head", "list", "links", "tables", "p/CPU-s", "med ms")
    for data in corpora:
        results[data.name] = {
            name: _score(data, target, args.limit, args.out / f"{data.name}-{name}.json" if args.out else None)
            for name, target in extractors.items()
        }
        first = next(iter(results[data.name].values()))
        print(f"{data.name} ({data}), {first['pages']} pages")
        print(f"{header[0]:<12} {header[1]:>7} {header[2]:>7} {header[3]:>5} {header[4]:>5} ", end="")
        print(" ".join(f"{h:>6}" for h in header[5:9]) + f" {header[9]:>7} {header[10]:>7}")
        for name, r in results[data.name].items():
            print(_row(name, r))
        print()
    print(json.dumps(results, sort_keys=True))


if __name__ == "__main__":
    main()
