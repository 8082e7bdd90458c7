"""Tools that work on a tab, defined once: find the tab, hold its lock, report what the call changed.

Every action answers with what changed (navigation, new tab, dialog, download) and, as its
`snapshot` parameter asks (default delta), the page's snapshot once the page has settled.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal, TypeVar

import anyio
import msgspec

from browserd.daemon.elements import shadows
from browserd.daemon.errors import ElementNotFound
from browserd.daemon.flows.recording.recorded_action import RecordedAction
from browserd.daemon.sessions.tab import NAVIGATED, Tab, call_deadline_s
from browserd.daemon.snapshots.aria_capture import PAGE_FACTS_JS, PageFacts
from browserd.daemon.snapshots.field_edit import edited
from browserd.daemon.snapshots.reader import SnapshotOptions, read
from browserd.daemon.snapshots.settle import Settled
from browserd.daemon.snapshots.tab_call import TabCall
from browserd.daemon.tools.context import ToolContext
from browserd.daemon.tools.response import Response
from browserd.daemon.tools.tool_registry import Params, Tool

TabId = str  # the active tab when left out, as everywhere: saying so in every schema costs every client
TargetText = Annotated[str, msgspec.Meta(description="Ref (e5) or CSS selector.")]
TimeoutMs = Annotated[int, msgspec.Meta(ge=1, le=300_000, description="ms")]
SnapshotMode = Annotated[
    Literal["none", "delta", "full", "interactive"],
    msgspec.Meta(description="delta: changed lines only"),
]


class TabParams(Params):
    tab_id: TabId | None = None


class ActionParams(TabParams):
    snapshot: SnapshotMode = "delta"


P = TypeVar("P", bound=TabParams)
TabHandler = Callable[[ToolContext, TabCall, P, Response], Awaitable[None]]
TabResolver = Callable[[ToolContext, P], Awaitable[Tab]]
# The flow step a call is, while the session records (None: this call is no step, e.g. a wait for a time).
Records = Callable[[P], RecordedAction | None]


def tab_tool(
    name: str,
    group: str,
    description: str,
    params: type[P],
    *,
    read_only: bool = False,
    resolve: TabResolver[P] | None = None,
    titled: bool = False,
    records: Records[P] | None = None,
) -> Callable[[TabHandler[P]], Tool[P]]:
    """A tool on one tab: by default the one named by tabId, else the active tab. `titled`: its structured
    answer holds the page's title, read once the page has settled (with the snapshot, when there is one).
    `records`: the action a call is, recorded as a flow step while the session records one."""

    def register(handler: TabHandler[P]) -> Tool[P]:
        async def run(ctx: ToolContext, args: P, response: Response) -> None:
            tab = await (resolve(ctx, args) if resolve else ctx.session.tab(args.tab_id))
            own_timeouts = (getattr(args, "timeout", None), getattr(args, "time_ms", None))
            # Until the call acts, what the page reports is not its doing, though it may hold the lock already.
            task = anyio.get_current_task().id
            tab.starting.add(task)
            try:
                async with tab.lock, tab.answering(call_deadline_s(ctx.services.config.browser, *own_timeouts)):
                    tab.take_events()  # what happened before this call was reported by an earlier one
                    call = TabCall(tab, settles=isinstance(args, ActionParams) and args.snapshot != "none")
                    # While the session records a flow, the action becomes a step (flows/recording/tool_recorder.py).
                    action = records(args) if records is not None else None
                    async with ctx.services.flows.recording(ctx.session.id, tab, action, call, response):
                        tab.starting.discard(task)  # a person's input listener now takes it as acting
                        try:
                            await handler(ctx, call, args, response)
                        except ElementNotFound as exc:
                            # A selector that found nothing may aim inside a closed shadow root: say where they are.
                            raise await shadows.explained(tab.page, exc) from exc
                        if isinstance(args, ActionParams):
                            await report_changes(ctx, call, args.snapshot, response, titled)
            finally:
                tab.starting.discard(task)
            profile = tab.window.profile
            if profile is not None:
                profile.request_publish()  # debounced: a burst of calls publishes once (D-16)
                if profile.take_stale_notice():
                    response.text(
                        f"Note: profile {profile.profile_id} has a newer login than this window started from, so "
                        "this window's cookies are no longer written back (the newer login is kept). Open a new "
                        "window on the profile to use it."
                    )

        return Tool(name, group, description, params, run, read_only)

    return register


async def report_changes(ctx: ToolContext, call: TabCall, mode: str, response: Response, titled: bool = False) -> None:
    config = ctx.services.config.browser
    tab = call.tab
    settled = Settled()
    if mode != "none":
        # The settled page's annotations and title come back in the same round trip, for the snapshot.
        settled = await call.settle(
            config.settle_quiet_ms, config.settle_max_ms, PAGE_FACTS_JS, config.snapshot_timeout_ms
        )
    changes = tab.take_events()
    # With snapshot=none there is no settling, so a download that starts later is told by the next answer.
    downloads = tab.window.downloads.take_unreported(tab.id)
    if downloads:
        # Small files finish at once: then the answer can say where the file is, not just that it began.
        await tab.window.downloads.wait(downloads, config.download_report_wait_ms / 1000)
        changes.extend(record.summary() for record in downloads)
    opened, tab.window.opened = tab.window.opened, []
    for new_tab in opened:
        changes.append(
            f"the page opened a new tab {new_tab.id} ({new_tab.page.url}); browser_tabs select switches to it"
        )
    data: dict[str, Any] = {"url": tab.page.url, "tabId": tab.id}
    if opened:
        data["newTabs"] = [t.id for t in opened]
    if downloads:
        data["downloads"] = [record.info() for record in downloads]
    if changes:
        data["changes"] = changes
    # The page header after the snapshot names a new URL: "navigated to" it would say it twice.
    told = f"{NAVIGATED} {tab.page.url}" if mode != "none" and response.url_is_news(tab.page.url) else None
    changes = [change for change in changes if change != told]
    if changes:
        response.text("Changes:\n" + "\n".join(f"- {change}" for change in changes))
    response.merge_data(data)
    if mode == "none":
        tab.unseen_actions += 1
        if titled:
            response.merge_data({"title": await tab.page.title()})
        return
    # Facts read before a wait for a new tab or a download may be out of date: the snapshot reads its own.
    fresh = not (settled.opening or settled.downloading or downloads)
    options = SnapshotOptions(
        interactive=mode == "interactive",
        delta=mode == "delta",
        max_chars=config.snapshot_max_chars,
        timeout_ms=config.snapshot_timeout_ms,
        ticking=tuple(settled.ticking),
    )
    # A fill that changed its field and nothing else: the last snapshot with the field's line rewritten.
    known = call.ahead if fresh else None
    if call.filled and fresh and mode == "delta":
        known = edited(tab, *call.filled, settled)
    reading = await read(tab, options, PageFacts.of(settled.after) if fresh else None, known)
    if titled:
        response.merge_data({"title": reading.title})
    response.page(reading.header)
    response.text(reading.snapshot)
