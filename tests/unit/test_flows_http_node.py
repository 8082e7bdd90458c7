"""The flows' `http` node under a session's URL guard (daemon/flows/replay/http_node.py): it connects to the address
the guard checked, never to one a second lookup of the name gives, and a refused target sees no request."""

from __future__ import annotations

import pytest

from browserd.daemon.config import SecurityConfig
from browserd.daemon.errors import UrlNotAllowed
from browserd.daemon.flows.flow_model import Step
from browserd.daemon.flows.replay import http_node
from browserd.daemon.policy.proxy import Guards
from browserd.daemon.policy.trust import TrustPolicy
from browserd.daemon.scrape.fetch import HttpPool
from tests.unit.test_guard_proxy import PinnedResolver, origin_server

pytestmark = pytest.mark.anyio


async def send(policy: PinnedResolver, url: str) -> dict[str, object]:
    pool = HttpPool()
    try:
        async with Guards(policy) as guards:
            node = Step(id="call", type="http", url=url)
            return await http_node.send(node, TrustPolicy("remote", policy), guards, pool, {}, {}, 10)
    finally:
        await pool.aclose()


async def test_the_http_node_reaches_the_address_the_guard_checked() -> None:
    """`rebind.invalid` resolves only in the policy's (pinned) answer: the request arrives only if the node
    connects to that checked address instead of resolving the name again on its own."""
    seen: list[tuple[int, str]] = []
    async with origin_server(seen) as port:
        policy = PinnedResolver(SecurityConfig(remote_exempt_origins=[f"rebind.invalid:{port}"]))
        answer = await send(policy, f"http://rebind.invalid:{port}/page")
    assert answer["status"] == 200 and answer["text"] == "answer to /page"
    assert len(seen) == 1 and seen[0][1].startswith("GET /page ")


async def test_a_name_that_resolves_to_a_refused_address_sees_no_request() -> None:
    seen: list[tuple[int, str]] = []
    async with origin_server(seen) as port:
        with pytest.raises(UrlNotAllowed) as refused:
            await send(PinnedResolver(SecurityConfig()), f"http://rebind.invalid:{port}/page")
    assert refused.value.details["rule"] == "loopback" and "remote_exempt_origins" in refused.value.recover_hint
    assert seen == []
