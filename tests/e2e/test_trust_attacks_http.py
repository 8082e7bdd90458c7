"""Issue 20's attack suite (test_trust_attacks.py) again with every client over HTTP (issue 22): the attacker
holds a remote-trust token, the user a local-trust one, each a legacy MCP session (one Mcp-Session-Id is one
browser session, as a stdio client's is). The same tests run unchanged: their `remote` and `local` clients
are swapped for HTTP ones, so a remote token is shown to stop exactly where a `--trust remote` shim does.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from tests.conftest import BrowserdHome
from tests.e2e import test_trust_attacks as attacks
from tests.e2e.bridge_chrome import free_port
from tests.e2e.http_clients import HttpDaemon, http_client
from tests.e2e.test_trust_attacks import (  # noqa: F401 - collected here again, over HTTP
    secret,
    test_a_flow_navigate_step_cannot_read_a_local_file,
    test_a_flows_start_url_cannot_be_a_local_file,
    test_a_local_session_still_reads_files_schedules_and_publishes,
    test_a_remote_flow_keeps_remote_rights_when_a_local_caller_or_trigger_starts_it,
    test_a_remote_session_cannot_schedule_trigger_or_publish,
    test_a_remote_session_neither_lists_nor_calls_a_tool_a_local_session_published,
    test_a_remote_session_neither_sees_nor_touches_a_local_flow,
    test_a_remote_subflow_does_not_run_in_a_local_runs_unguarded_windows,
    test_an_exported_script_carries_its_url_policy_or_is_refused,
    test_back_forward_and_reload_refuse_a_history_entry_the_policy_refuses,
    test_open_tab_and_subflow_nodes_load_nothing_the_policy_refuses,
    test_security_config_can_let_remote_sessions_schedule_and_publish,
)

pytestmark = [pytest.mark.anyio, pytest.mark.shared_daemon]


@pytest.fixture(scope="module")
def tokens(module_home: BrowserdHome) -> Iterator[dict[str, str]]:
    """The module's daemon serves HTTP (set before any test starts it); one token per trust level."""
    port = free_port()
    module_home.env.update(BROWSERD_HTTP_ENABLED="true", BROWSERD_HTTP_LISTEN=f"127.0.0.1:{port}")
    served = HttpDaemon(module_home, port)
    yield {
        "port": str(port),
        "remote": served.token("attacker", trust="remote", tools="all"),
        "local": served.token("user", trust="local", tools="all"),
    }


@pytest.fixture(autouse=True)
def over_http(home: BrowserdHome, tokens: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    served = HttpDaemon(home, int(tokens["port"]))
    opened: list[str] = []

    def client_of(trust: str) -> Any:
        @asynccontextmanager
        async def client(_home: BrowserdHome) -> AsyncIterator[Any]:
            served.start()  # an HTTP client spawns no daemon; a test that changed the config stopped it
            async with http_client(served.url, tokens[trust]) as connected:
                opened.append(trust)
                yield connected

        return client

    monkeypatch.setattr(attacks, "remote", client_of("remote"))
    monkeypatch.setattr(attacks, "local", client_of("local"))
    yield
    assert opened, "the test made no client over HTTP"
