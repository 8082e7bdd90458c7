"""The browser pool's configuration (issue 24): endpoints from the config file or one JSON variable, tokens
read from the environment and never shown, and names that must tell members apart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from browserd.daemon.config import BrowserConfig, EndpointConfig, load
from browserd.daemon.errors import InvalidParameter
from browserd.daemon.runtime.browser import BrowserRuntime
from browserd.daemon.runtime.members import remote_member
from browserd.daemon.runtime.pool import BrowserPool

SECRET = "s3cr3t-token-value"


def test_endpoints_come_from_one_json_variable(tmp_path: Path) -> None:
    endpoints = [
        {"name": "pw-a", "kind": "playwright", "url": "ws://10.0.0.11:3000/", "capacity": 8, "labels": ["eu"]},
        {"name": "grid", "kind": "webdriver", "url": "http://router:4444"},
    ]
    config = load(tmp_path / "none.toml", {"BROWSERD_BROWSER_ENDPOINTS": json.dumps(endpoints)})
    assert [(e.name, e.kind, e.capacity) for e in config.browser.endpoints] == [
        ("pw-a", "playwright", 8),
        ("grid", "webdriver", 4),
    ]
    assert config.browser.endpoints[0].labels == ["eu"]


def test_a_token_goes_where_the_endpoint_wants_it_and_never_into_listings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POOL_TOKEN", SECRET)
    runtime = BrowserRuntime(BrowserConfig())
    query = remote_member(
        EndpointConfig(
            name="bl", kind="cdp", url="wss://chrome.example.com/?x=1", token_env="POOL_TOKEN", token_param="token"
        ),
        runtime,
    )
    url, headers = query.address()
    assert url == f"wss://chrome.example.com/?x=1&token={SECRET}" and "Authorization" not in headers
    header = remote_member(
        EndpointConfig(name="pw", kind="playwright", url="ws://user:pw@10.0.0.11:3000/", token_env="POOL_TOKEN"),
        runtime,
    )
    assert header.address()[1]["Authorization"] == f"Bearer {SECRET}"
    # A token written into the URL itself is not shown either.
    inline = EndpointConfig(name="inline", kind="cdp", url=f"ws://h:3000/?token={SECRET}")
    pool = BrowserPool(runtime, BrowserConfig(local=False, endpoints=[query.config, header.config, inline]))
    listed = json.dumps(pool.status())
    assert SECRET not in listed and "user:pw" not in listed and "ws://h:3000/?token=***" in listed


def test_an_unset_token_variable_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("POOL_TOKEN", raising=False)
    member = remote_member(
        EndpointConfig(name="pw", kind="playwright", url="ws://h:3000/", token_env="POOL_TOKEN"),
        BrowserRuntime(BrowserConfig()),
    )
    with pytest.raises(Exception, match="POOL_TOKEN"):
        member.address()


def test_members_need_names_of_their_own() -> None:
    twice = [EndpointConfig(name="local", kind="cdp", url="http://h:9222")]
    with pytest.raises(InvalidParameter, match="names must differ"):
        BrowserPool(BrowserRuntime(BrowserConfig()), BrowserConfig(endpoints=twice))
