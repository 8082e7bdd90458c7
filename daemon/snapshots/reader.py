"""Reading a tab for a model: a header saying where it is, then its snapshot in the asked-for form.

Every snapshot replaces the tab's refs (D-28); `delta` answers only the lines that changed since
this tab's previous snapshot (D-30); the output is always bounded by `max_chars`.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from browserd.daemon.errors import ElementAmbiguous, ElementNotFound, ExecutionError, InvalidParameter
from browserd.daemon.sessions.page_errors import action_errors
from browserd.daemon.sessions.ref_table import RefInfo
from browserd.daemon.sessions.tab import Tab
from browserd.daemon.snapshots import aria_capture, aria_filters, aria_parser
from browserd.daemon.snapshots.delta import delta
from browserd.daemon.snapshots.secret_fields import hide_in_frames
from browserd.daemon.snapshots.targets import is_ref, locate

ERRORS_SHOWN = 3
PAGE_LINE = "- Page:"  # the first line of a page header
TOO_BIG_HINT = "The page may be very large: narrow the snapshot with scope=<ref>, maxDepth or interactive=true."


@dataclass(frozen=True)
class SnapshotOptions:
    interactive: bool = False
    compact: bool = False
    max_depth: int | None = None
    scope: str | None = None
    delta: bool = False
    max_chars: int = 40_000
    timeout_ms: int = 30_000
    # Where to start in a snapshot longer than max_chars: the cut note names the next offset.
    offset: int = 0
    # Texts that change on their own (clocks, counters: snapshots.settle): a delta leaves their lines out.
    ticking: tuple[str, ...] = ()


@dataclass
class Reading:
    header: str  # where the tab is: url, title, tab, new console errors
    snapshot: str  # the (possibly cut) snapshot under its title, without the header
    full: str  # the whole snapshot, for saveTo
    lines: int
    refs: int  # refs the whole (lean) snapshot shows
    truncated: bool
    delta: bool
    next_offset: int | None = None
    # The whole page's lines (scope and depth applied) before interactive/compact: what browser_find searches.
    nodes: list[aria_parser.Node] = field(default_factory=list)
    title: str = ""  # the page's title, as the header shows it


async def header(tab: Tab, errors: list[str] | None = None, title: str | None = None) -> str:
    """`title`: the page's title when it was just read (saves asking the page again)."""
    page = tab.page
    open_tabs = tab.window.open_tabs()
    lines = [f"{PAGE_LINE} {page.url}", f"- Title: {title if title is not None else await page.title()}"]
    if len(open_tabs) > 1:  # with one tab, every call is on it: its id is no news
        others = ", ".join(t.id for t in open_tabs)
        lines.append(f"- Tab: {tab.id} (one of {len(open_tabs)} in {tab.window.id}: {others})")
    if errors:
        shown = "; ".join(error.splitlines()[0][:200] for error in errors[-ERRORS_SHOWN:])
        lines.append(f"- Console: {len(errors)} new error(s): {shown}")
    return "\n".join(lines)


async def read(
    tab: Tab,
    options: SnapshotOptions,
    facts: aria_capture.PageFacts | None = None,
    captured: aria_capture.Capture | None = None,
) -> Reading:
    """`facts`: the page's annotations and title, when the caller has just read them (after settling);
    `captured`: what the page would answer now, when the caller knows it without asking (snapshots/field_edit.py)."""
    root_ref = await _scope_ref(tab, options.scope) if options.scope else None
    # A scope is cut out of a whole-page snapshot: Playwright resolves aria-ref against its latest
    # snapshot only, so a snapshot of part of the page would stale the refs of the rest.
    depth = options.max_depth if root_ref is None else None
    if captured is None:
        try:
            with action_errors("snapshot", "the page"):
                captured = await aria_capture.capture(tab.page, None, depth, options.timeout_ms, facts, tab.cdp)
        except ExecutionError as exc:
            raise ExecutionError(exc.message, hint=TOO_BIG_HINT, **exc.details) from exc
    captured.text = await hide_in_frames(tab.page, captured.text)
    nodes = aria_parser.parse(captured.text)
    tab.refs.replace(_refs(nodes, captured.clickables), tab.document, tab.navigations)
    if root_ref is not None:
        nodes = [node for node in aria_parser.walk(nodes) if node.ref == root_ref][:1]
        if not nodes:
            raise ElementNotFound(f"scope {options.scope} is not in the page's snapshot", scope=options.scope)
        if options.max_depth is not None:
            nodes = aria_filters.prune(nodes, options.max_depth)
    nodes = aria_filters.lean(nodes, _origin(tab.page.url), captured.actionable)
    if root_ref is None:
        nodes = aria_filters.unwrapped(nodes, captured.actionable)
    whole = "\n".join(aria_parser.render(nodes))
    page_nodes = nodes
    shown_refs = sum(1 for node in aria_parser.walk(nodes) if node.ref is not None and f"[ref={node.ref}]" in node.text)
    if options.interactive:
        nodes = aria_filters.interactive_only(nodes)
    if options.compact:
        nodes = aria_filters.compact(nodes)
    body = "\n".join(aria_parser.render(nodes))
    # Deltas compare whole snapshots, whatever form the previous one was shown in. Against another
    # document (the tab navigated) a delta would be noise: answer in full instead.
    complete = root_ref is None and options.max_depth is None
    same_document = tab.last_snapshot_document == tab.document and complete
    previous = tab.last_snapshot if same_document else None
    previous_nodes = tab.last_snapshot_nodes
    if complete:
        tab.last_snapshot, tab.last_snapshot_nodes, tab.last_snapshot_document = whole, page_nodes, tab.document
        tab.last_capture, tab.last_capture_settles = captured, tab.settles
    is_delta = options.delta and previous is not None
    if is_delta and previous == whole:
        body = ""  # the same lines, refs and all: nothing to compare (a click that changed nothing on a big page)
    elif is_delta:
        changed = delta(previous_nodes, page_nodes, options.ticking)
        body = changed.text
        # The refs an earlier answer showed of what was rendered anew stand for the new ones.
        tab.refs.rendered_anew(changed.aliases)
    start = 0 if is_delta else _line_start(body, options.offset)
    cut, next_offset = _page(body, start, options.max_chars)
    truncated = next_offset is not None
    if truncated and is_delta:
        cut += (
            f"… cut at {len(cut)} of {len(body)} characters of changes. browser_snapshot {{}} shows the whole page "
            "(in parts, with offset)."
        )
    elif next_offset is not None:
        cut += (
            f"… cut at {options.max_chars} characters (this part: {start}-{next_offset} of {len(body)}). Next part: "
            f"browser_snapshot {json.dumps(_next_call(options, next_offset))}. Or narrow it with interactive=true, "
            "maxDepth, scope=<ref>, or pass saveTo to get the whole snapshot in a file."
        )
    elif start:
        cut += f"\n… end of the snapshot ({len(body)} characters)."
    unseen = tab.unseen_actions
    earlier = f" (with {unseen} earlier action(s) answered without a snapshot)" if unseen else ""
    if is_delta and not body:
        shown = f"The page did not change{earlier}."
    elif is_delta:
        shown = (f"Changes{earlier}:\n" if earlier else "") + f"```diff\n{cut}\n```"
    else:
        shown = (f"Snapshot from character {start}:\n" if start else "") + f"```yaml\n{cut}\n```"
    if complete:
        tab.unseen_actions = 0
    page_title = captured.title if captured.title is not None else await tab.page.title()
    where = await header(tab, tab.take_console_errors(), page_title)
    return Reading(
        where,
        shown,
        whole if is_delta else body,
        body.count("\n") + 1,
        shown_refs,
        truncated,
        is_delta,
        next_offset,
        page_nodes,
        page_title,
    )


def _origin(url: str) -> str:
    """scheme://host[:port] of an http(s) page: the part of its own links' /url a reader can do without."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme in ("http", "https") and parts.netloc else ""


def _line_start(body: str, offset: int) -> int:
    """The start of the line `offset` falls in, so a part never begins halfway through a line."""
    if offset <= 0:
        return 0
    if offset >= len(body):
        raise InvalidParameter(
            f"offset {offset} is past the end of the snapshot ({len(body)} characters)",
            hint="Pass the offset the previous part's note named, or 0 for the start.",
            field="offset",
        )
    return body.rfind("\n", 0, offset) + 1


def _page(body: str, start: int, max_chars: int) -> tuple[str, int | None]:
    """At most max_chars of body from start, ending at a line's end; and where the next part starts."""
    end = start + max_chars
    if end >= len(body):
        return body[start:], None
    last_break = body.rfind("\n", start, end)
    if last_break < 0:
        return body[start:end] + "\n", end  # one line longer than a part: cut inside it
    return body[start : last_break + 1], last_break + 1


def _next_call(options: SnapshotOptions, offset: int) -> dict[str, object]:
    """The browser_snapshot arguments that read the next part: the same view, from `offset`."""
    same = {
        "interactive": options.interactive or None,
        "compact": options.compact or None,
        "maxDepth": options.max_depth,
        "scope": options.scope,
        "maxChars": options.max_chars if options.max_chars != SnapshotOptions.max_chars else None,
    }
    return {"offset": offset, **{name: value for name, value in same.items() if value is not None}}


def _refs(nodes: list[aria_parser.Node], clickables: dict[str, aria_capture.Clickable]) -> dict[str, RefInfo]:
    ref_nodes = [node for node in aria_parser.walk(nodes) if node.ref is not None]
    page_frame = _frame_prefix(ref_nodes[0].ref or "") if ref_nodes else ""
    totals = Counter((node.role, node.name) for node in ref_nodes)
    seen: Counter[tuple[str, str]] = Counter()
    refs: dict[str, RefInfo] = {}
    for node in ref_nodes:
        key = (node.role, node.name)
        nth = seen[key] if totals[key] > 1 else None
        seen[key] += 1
        ref = node.ref or ""
        in_frame = not ref.startswith("c") and _frame_prefix(ref) != page_frame
        refs[ref] = RefInfo(
            node.role,
            node.name,
            clickables.get(ref),
            nth,
            kind=node.attrs.get("type"),
            editable="disabled" not in node.attrs and "readonly" not in node.attrs,
            in_frame=in_frame,
        )
    return refs


def _frame_prefix(ref: str) -> str:
    """`f3` of `f3e2`; '' of `e5`, a ref of the first document's main frame."""
    return ref[: ref.index("e")] if ref.startswith("f") and "e" in ref else ""


async def _scope_ref(tab: Tab, scope: str) -> str:
    """The ref of the one element `scope` names (a ref, or a CSS selector matching exactly one element)."""
    if is_ref(scope):
        await locate(tab, scope)  # a stale or unknown ref says so here
        return scope.strip().lstrip("@")
    target = await locate(tab, scope)
    count = await target.locator.count()
    if count == 0:
        raise ElementNotFound(f"scope {target.described} matches no element", scope=scope)
    if count > 1:
        raise ElementAmbiguous(f"scope {target.described} matches {count} elements; it must match one", scope=scope)
    with action_errors("snapshot", target.described):
        head = await target.locator.aria_snapshot(mode="ai", depth=1)
    found = next((node.ref for node in aria_parser.walk(aria_parser.parse(head)) if node.ref), None)
    if found is None:
        raise ElementNotFound(f"scope {target.described} is not in the accessibility tree (hidden?)", scope=scope)
    return found


def save(reading: Reading, folder: Path, name: str) -> Path:
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = folder / name
    path.write_text(reading.full)
    return path
