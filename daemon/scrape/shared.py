"""What every scrape, batch and crawl of the daemon shares: the HTTP pool, the resource policy, the
warm browser contexts, and the bound on extraction threads. Owned by Services, closed at exit."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import anyio

from browserd.daemon.config import Config
from browserd.daemon.runtime.contexts import ContextPool
from browserd.daemon.scrape.fetch import HttpPool
from browserd.daemon.scrape.resources import ResourcePolicy


@dataclass
class ScrapeShared:
    http: HttpPool
    resources: ResourcePolicy
    contexts: ContextPool
    # Extraction is CPU work in worker threads: more threads than cores only queue in the GIL.
    extraction: anyio.CapacityLimiter = field(default_factory=lambda: anyio.CapacityLimiter(os.cpu_count() or 2))

    @classmethod
    def build(cls, config: Config) -> ScrapeShared:
        return cls(
            http=HttpPool(config.browser.proxy, config.browser.proxy_bypass),
            resources=ResourcePolicy(config.scrape.block_lists),
            contexts=ContextPool(),
        )

    async def aclose(self) -> None:
        await self.contexts.aclose()
        await self.http.aclose()
