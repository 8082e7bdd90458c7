"""Tools that work on a tab, defined once: find the tab, hold its lock, report what the call changed.

Every action answers with what changed (navigation, new tab, dialog, download) and, as its
`snapshot` parameter asks (default delta), the page's snapshot once the page has settled.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal, TypeVar

import msgspec

from browserd.daemon.sessions.reader import SnapshotOptions, read
from browserd.daemon.sessions.settle import settle
from browserd.daemon.sessions.tab import Tab
from browserd.daemon.tools.context import ToolContext
from browserd.daemon.tools.registry import Params, Tool
from browserd.daemon.tools.response import Response

TabId = Annotated[str, msgspec.Meta(description="Default: the active tab.")]
TargetText = Annotated[str, msgspec.Meta(description="Ref (e5) or CSS selector.")]
TimeoutMs = Annotated[int, msgspec.Meta(ge=1, le=300_000, description="ms")]
SnapshotMode = Annotated[
    Literal["none", "delta", "full", "interactive"],
    msgspec.Meta(description="Snapshot in the answer; delta: changed lines only."),
]


class TabParams(Params):
    tab_id: TabId | None = None


class ActionParams(TabParams):
    snapshot: SnapshotMode = "delta"


P = TypeVar("P", bound=TabParams)
TabHandler = Callable[[ToolContext, Tab, P, Response], Awaitable[None]]
TabResolver = Callable[[ToolContext, P], Awaitable[Tab]]


def tab_tool(
    name: str,
    group: str,
    description: str,
    params: type[P],
    *,
    read_only: bool = False,
    resolve: TabResolver[P] | None = None,
) -> Callable[[TabHandler[P]], Tool[P]]:
    """A tool on one tab: by default the one named by tabId, else the active tab."""

    def register(handler: TabHandler[P]) -> Tool[P]:
        async def run(ctx: ToolContext, args: P, response: Response) -> None:
            tab = await (resolve(ctx, args) if resolve else ctx.session.tab(args.tab_id))
            async with tab.lock:
                tab.take_events()  # what happened before this call was reported by an earlier one
                # While the session records a flow, the action becomes a step (daemon/flows/recorder.py).
                async with ctx.services.flows.recording(ctx.session.id, name, tab, args, response):
                    await handler(ctx, tab, args, response)
                    if isinstance(args, ActionParams):
                        await report_changes(ctx, tab, args.snapshot, response)
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


async def report_changes(ctx: ToolContext, tab: Tab, mode: str, response: Response) -> None:
    config = ctx.services.config.browser
    if mode != "none":
        await settle(tab.page, config.settle_quiet_ms, config.settle_max_ms)
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
        response.text("Changes:\n" + "\n".join(f"- {change}" for change in changes))
        data["changes"] = changes
    response.merge_data(data)
    if mode == "none":
        tab.unseen_actions += 1
        return
    options = SnapshotOptions(
        interactive=mode == "interactive",
        delta=mode == "delta",
        max_chars=config.snapshot_max_chars,
        timeout_ms=config.snapshot_timeout_ms,
    )
    response.text((await read(tab, options)).text)
