"""Every tool of the daemon, gathered from the tool-family modules."""

from __future__ import annotations

from browserd.daemon.tools import actions, cdp, core, observe, pages, reading, scrape, tabs
from browserd.daemon.tools.registry import Catalog


def build_catalog() -> Catalog:
    return Catalog(
        [
            *core.TOOLS,
            *pages.TOOLS,
            *actions.TOOLS,
            *reading.TOOLS,
            *tabs.TOOLS,
            *observe.TOOLS,
            *scrape.TOOLS,
            *cdp.TOOLS,
        ]
    )
