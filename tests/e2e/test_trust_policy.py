"""Trust and URL policy (issue 4 item 8; DESIGN.md §5, D-33, S2-104).

A `remote` session cannot reach loopback, private or link-local addresses nor file: URLs: checked
before loading, after DNS resolution, on every redirect and on every subresource request (the URL
guard proxy, daemon/policy/proxy.py). Allowed and blocked origins apply to both trust levels. The
test site is on 127.0.0.1 and only loopback traffic is allowed here, so a remote session reaches it
through `security.remote_exempt_origins`; 127.0.0.2 and `localhost` stand for the private targets.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import quote, urlsplit

import pytest

from tests.conftest import BrowserdHome, mcp_client
from tests.e2e.results import failed, ok, text_of

pytestmark = [pytest.mark.anyio, pytest.mark.shared_daemon]
REMOTE = ("--trust", "remote")
TOOLS = ("--tools", "pages,devtools,scrape")


def other_loopback(site: str, path: str = "/index.html") -> str:
    """The same port on 127.0.0.2: a loopback address that no exemption names."""
    return f"http://127.0.0.2:{urlsplit(site).port}{path}"


def refused(result: Any, rule: str) -> dict[str, Any]:
    error = failed(result, "URL_NOT_ALLOWED")
    assert error["details"]["rule"] == rule, f"expected rule {rule}, got:\n{text_of(result)}"
    return error


@asynccontextmanager
async def remote_client(home: BrowserdHome, **security: str) -> AsyncIterator[Any]:
    for key, value in security.items():
        home.env[f"BROWSERD_SECURITY_{key.upper()}"] = value
    async with mcp_client(home, args=(*REMOTE, *TOOLS)) as client:
        yield client


async def test_remote_session_is_refused_loopback_before_anything_loads(home: BrowserdHome, site: str) -> None:
    """S2-104: a remote session refused on 127.0.0.1 (browser_open, browser_tabs, scrape, map)."""
    async with remote_client(home) as client:
        error = refused(await client.call_tool("browser_open", {"url": f"{site}/index.html"}), "loopback")
        assert error["details"]["url"] == f"{site}/index.html"
        assert "remote_exempt_origins" in error["recoverHint"]
        refused(await client.call_tool("browser_tabs", {"action": "new", "url": f"{site}/help.html"}), "loopback")
        refused(await client.call_tool("scrape", {"url": f"{site}/index.html"}), "loopback")
        refused(await client.call_tool("map", {"url": f"{site}/index.html"}), "loopback")
        refused(await client.call_tool("browser_open", {"url": "http://[::ffff:127.0.0.1]:9/"}), "loopback")
        refused(await client.call_tool("browser_open", {"url": "http://169.254.169.254/latest/"}), "link-local")
        refused(await client.call_tool("browser_open", {"url": "http://10.1.2.3/"}), "private-address")
        refused(await client.call_tool("browser_open", {"url": "http://0.0.0.0:8080/"}), "unspecified-address")
        # What needs no network stays open to a remote session, and the daemon keeps serving.
        blank = ok(await client.call_tool("browser_open", {"url": "data:text/html,<h1>Inline page</h1>"}))
        assert "Inline page" in text_of(blank)


async def test_remote_session_is_refused_file_urls(home: BrowserdHome) -> None:
    async with remote_client(home) as client:
        error = refused(await client.call_tool("browser_open", {"url": "file:///etc/hostname"}), "file-scheme")
        assert error["details"]["url"] == "file:///etc/hostname"


async def test_hostname_resolving_to_loopback_is_refused(home: BrowserdHome, site: str) -> None:
    """The check runs on the addresses a name resolves to: `localhost` stands for any private name."""
    port = urlsplit(site).port
    async with remote_client(home, remote_exempt_origins=site) as client:
        error = refused(await client.call_tool("browser_open", {"url": f"http://localhost:{port}/"}), "loopback")
        assert "localhost resolves to" in error["error"]
        # The same name reached through a redirect is refused by the guard, after its own resolution.
        redirect = f"{site}/redirect?to={quote(f'http://localhost:{port}/help.html')}"
        refused(await client.call_tool("browser_open", {"url": redirect}), "loopback")


async def test_redirect_from_an_allowed_origin_to_loopback_is_refused(home: BrowserdHome, site: str) -> None:
    """Every hop of a redirect chain is checked: plain http ends on the guard's refusal, https fails its tunnel."""
    target = other_loopback(site, "/help.html")
    async with remote_client(home, remote_exempt_origins=site) as client:
        opened = ok(await client.call_tool("browser_open", {"url": f"{site}/index.html", "snapshot": "none"}))
        assert "Opened" in text_of(opened)
        hop = f"{site}/redirect?to={quote(target)}"
        error = refused(await client.call_tool("browser_open", {"url": hop}), "loopback")
        assert error["details"]["url"] == target
        # A chain of allowed hops still arrives.
        chain = f"{site}/redirect?to={quote(f'{site}/redirect?to=/help.html')}"
        arrived = ok(await client.call_tool("browser_open", {"url": chain, "snapshot": "none"}))
        assert arrived.structured_content["url"] == f"{site}/help.html"
        tunnel = f"{site}/redirect?to={quote(f'https://127.0.0.2:{urlsplit(site).port}/')}"
        refused(await client.call_tool("browser_open", {"url": tunnel}), "loopback")
        refused(await client.call_tool("scrape", {"url": hop}), "loopback")


async def test_subresources_to_private_addresses_are_refused(home: BrowserdHome, site: str) -> None:
    """fetch, WebSocket and image requests of an allowed page go through the guard too."""
    target = other_loopback(site, "/index.html")
    probe = f"{site}/trust-probe.html?target={quote(target)}"
    async with remote_client(home, remote_exempt_origins=site) as client:
        ok(await client.call_tool("browser_open", {"url": probe, "snapshot": "none"}))
        fetched = ok(await client.call_tool("browser_click", {"target": "#fetch"}))
        assert f"the URL policy refused a request to {target} (loopback)" in text_of(fetched)
        image = ok(await client.call_tool("browser_click", {"target": "#image"}))
        assert f"refused a request to {target} (loopback)" in text_of(image)
        socket = ok(await client.call_tool("browser_click", {"target": "#socket"}))
        assert "127.0.0.2" in text_of(socket) and "(loopback)" in text_of(socket), text_of(socket)


async def test_subresources_are_reported_by_browser_open(home: BrowserdHome, site: str) -> None:
    page = f"data:text/html,<img src='{other_loopback(site, '/favicon.ico')}'>"
    async with remote_client(home) as client:
        opened = ok(await client.call_tool("browser_open", {"url": page, "snapshot": "none"}))
        assert "While loading, the URL policy refused a request to http://127.0.0.2" in text_of(opened)


async def test_local_session_still_reaches_loopback(home: BrowserdHome, site: str) -> None:
    """Regression: local sessions pay nothing and reach the local machine by default (D-33)."""
    async with mcp_client(home, args=TOOLS) as client:
        ok(await client.call_tool("browser_open", {"url": f"{site}/trust-probe.html?target=/help.html"}))
        fetched = ok(await client.call_tool("browser_click", {"target": "#fetch"}))
        assert "fetch answered" in text_of(fetched) and "URL policy" not in text_of(fetched)
        ok(await client.call_tool("browser_open", {"url": f"http://localhost:{urlsplit(site).port}/help.html"}))
        ok(await client.call_tool("scrape", {"url": f"{site}/help.html"}))


async def test_blocked_origins_are_refused_to_local_sessions_too(home: BrowserdHome, site: str) -> None:
    home.env["BROWSERD_SECURITY_BLOCKED_ORIGINS"] = f"{site},127.0.0.2"
    async with mcp_client(home, args=TOOLS) as client:
        error = refused(await client.call_tool("browser_open", {"url": f"{site}/index.html"}), "blocked-origin")
        assert site in error["error"]
        refused(await client.call_tool("scrape", {"url": f"{site}/index.html"}), "blocked-origin")
        # Another origin of the same host is not blocked, but its subresource to a blocked host is.
        port = urlsplit(site).port
        probe = f"http://localhost:{port}/trust-probe.html?target={quote(other_loopback(site))}"
        ok(await client.call_tool("browser_open", {"url": probe, "snapshot": "none"}))
        fetched = ok(await client.call_tool("browser_click", {"target": "#fetch"}))
        assert "(blocked-origin)" in text_of(fetched)


async def test_allowed_origins_limit_local_sessions(home: BrowserdHome, site: str) -> None:
    home.env["BROWSERD_SECURITY_ALLOWED_ORIGINS"] = site
    async with mcp_client(home, args=TOOLS) as client:
        ok(await client.call_tool("browser_open", {"url": f"{site}/index.html", "snapshot": "none"}))
        other = f"http://localhost:{urlsplit(site).port}/index.html"
        refused(await client.call_tool("browser_open", {"url": other}), "not-in-allowed-origins")
        hop = f"{site}/redirect?to={quote(other)}"
        refused(await client.call_tool("browser_open", {"url": hop}), "not-in-allowed-origins")


async def test_remote_session_cannot_attach_over_cdp(home: BrowserdHome) -> None:
    """D-33: CDP attach is refused to remote sessions before any connection is tried.

    browser_evaluate and browser_upload refuse remote sessions the same way (TRUST_LEVEL_NOT_ALLOWED).
    """
    async with remote_client(home) as client:
        error = failed(
            await client.call_tool("browser_connect_cdp", {"endpoint": "http://127.0.0.1:9222"}),
            "TRUST_LEVEL_NOT_ALLOWED",
        )
        assert error["details"] == {"trustLevel": "remote", "tool": "browser_connect_cdp", "rule": "remote-cdp"}


async def test_runs_of_a_remote_session_load_under_its_policy(home: BrowserdHome, site: str) -> None:
    """S1-80, D-33: a template's page loads cannot bypass the caller's trust level (batch, crawl, compare)."""
    async with mcp_client(home, args=(*REMOTE, "--tools", "scrape,runs")) as client:
        batch = ok(
            await client.call_tool(
                "run_task_template",
                {
                    "templateId": "batch_extract_pages",
                    "inputs": {"urls": [f"{site}/index.html"]},
                    "options": {"mode": "sync"},
                },
            )
        ).structured_content
        assert batch["status"] == "failed"
        item = batch["result"]["items"][0]
        assert item["success"] is False and item["errorCode"] == "URL_NOT_ALLOWED", item

        crawl = ok(await client.call_tool("crawl", {"url": f"{site}/crawl/index.html", "mode": "sync"}))
        run = crawl.structured_content
        assert run["status"] == "failed", text_of(crawl)
        assert all(not page["success"] for page in run["result"]["items"]), run["result"]["items"]
        assert "Welcome" not in text_of(crawl)

        # Tabs of the remote session itself: refused per item with the rule, not a guard page's HTTP 403.
        urls = [f"{site}/index.html", other_loopback(site)]
        inputs = {"urls": urls}
        compare = ok(
            await client.call_tool(
                "run_task_template",
                {"templateId": "multi_tab_compare", "inputs": inputs, "options": {"mode": "sync"}},
            )
        ).structured_content
        assert compare["status"] == "failed", compare
        for item in compare["result"]["items"]:
            assert item["errorCode"] == "URL_NOT_ALLOWED" and item["details"]["rule"] == "loopback", item


async def test_a_remote_caller_reaches_only_the_runs_its_session_started(home: BrowserdHome, site: str) -> None:
    """Issue 4 item 8, D-11: another session's run and artifacts answer RUN_NOT_FOUND / ARTIFACT_NOT_FOUND."""
    tools = ("--tools", "runs")
    async with mcp_client(home, args=tools) as local, mcp_client(home, args=(*REMOTE, *tools)) as remote:
        urls = [f"{site}/crawl/a.html", f"{site}/crawl/b.html"]
        compare = {"templateId": "multi_tab_compare", "inputs": {"urls": urls}, "options": {"mode": "sync"}}
        theirs = ok(await local.call_tool("run_task_template", compare)).structured_content
        artifact = theirs["result"]["items"][0]["contentArtifactId"]
        batch = {"templateId": "batch_extract_pages", "inputs": {"urls": urls[:1]}, "options": {"mode": "async"}}
        mine = ok(await remote.call_tool("run_task_template", batch)).structured_content["runId"]

        failed(await remote.call_tool("get_task_run", {"runId": theirs["runId"]}), "RUN_NOT_FOUND")
        failed(await remote.call_tool("cancel_task_run", {"runId": theirs["runId"]}), "RUN_NOT_FOUND")
        failed(await remote.call_tool("get_artifact", {"artifactId": artifact}), "ARTIFACT_NOT_FOUND")
        listed = ok(await remote.call_tool("list_task_runs", {})).structured_content["runs"]
        assert [run["runId"] for run in listed] == [mine]
        assert ok(await remote.call_tool("get_task_run", {"runId": mine})).structured_content["runId"] == mine
        # A local caller sees every run.
        everything = ok(await local.call_tool("list_task_runs", {})).structured_content["runs"]
        assert {theirs["runId"], mine} <= {run["runId"] for run in everything}
        ok(await local.call_tool("get_task_run", {"runId": mine}))
