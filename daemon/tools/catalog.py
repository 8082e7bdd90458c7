"""Every tool of the daemon, gathered from the tool-family modules."""

from __future__ import annotations

from browserd.daemon.tools import (
    actions,
    agent,
    cdp,
    core,
    evaluate,
    files,
    flows,
    network,
    observe,
    pages,
    reading,
    runs,
    scrape,
    storage,
    tabs,
)
from browserd.daemon.tools.tool_registry import Catalog


def build_catalog() -> Catalog:
    return Catalog(
        [
            *core.TOOLS,
            *pages.TOOLS,
            *actions.TOOLS,
            *reading.TOOLS,
            *tabs.TOOLS,
            *observe.TOOLS,
            *files.TOOLS,
            *storage.TOOLS,
            *evaluate.TOOLS,
            *network.TOOLS,
            *cdp.TOOLS,
            *scrape.TOOLS,
            *runs.TOOLS,
            *flows.TOOLS,
            *agent.TOOLS,
        ]
    )
