"""`crawl` (tool and template) and `multi_tab_compare` end to end: the official MCP client, a real
`browserd mcp` shim, the daemon, its run manager and Chromium, on tests/site/crawl/ and /gen/.

Issue 6 item 4: crawl sync and async, a page's markdown read back with get_artifact, cancel mid-crawl
(the pages before the cancel stay readable), bad inputs; multi_tab_compare sync and async with
explicit tabIds, the per-field same/different table and partial_success. The engine's own rules
(depth, limit, include/exclude, robots.txt, de-duplication) are pinned in
tests/integration/test_crawl_engine.py.
"""

from __future__ import annotations

import base64
from typing import Any

import anyio
import pytest

from tests.conftest import BrowserdHome, mcp_client
from tests.e2e.results import failed, ok

pytestmark = pytest.mark.anyio

TOOLS = ("--tools", "scrape,runs")
TERMINAL = ("succeeded", "failed", "partial_success", "canceled")
POLL_S = 0.3
FOLLOW_TIMEOUT_S = 120


async def follow(client: Any, run_id: str) -> dict[str, Any]:
    """get_task_run until the run is terminal."""
    with anyio.fail_after(FOLLOW_TIMEOUT_S):
        while True:
            run: dict[str, Any] = ok(await client.call_tool("get_task_run", {"runId": run_id})).structured_content
            if run["status"] in TERMINAL:
                return run
            await anyio.sleep(POLL_S)


async def artifact_text(client: Any, artifact_id: str) -> str:
    chunks = []
    offset = 0
    while True:
        chunk = ok(
            await client.call_tool("get_artifact", {"artifactId": artifact_id, "offset": offset})
        ).structured_content
        chunks.append(base64.b64decode(chunk["data"]))
        offset += chunk["bytesReturned"]
        if chunk["complete"]:
            return b"".join(chunks).decode()


def by_path(items: list[dict[str, Any]], site: str) -> dict[str, dict[str, Any]]:
    return {item["url"].removeprefix(site): item for item in items}


async def test_crawl_sync_delivers_each_page_once_with_its_markdown_as_an_artifact(
    module_home: BrowserdHome, site: str
) -> None:
    """The 404 page fails and the others succeed: partial_success, with the crawl's figures in result.crawl."""
    async with mcp_client(module_home, args=TOOLS) as client:
        run = ok(
            await client.call_tool("crawl", {"url": f"{site}/crawl/index.html", "mode": "sync"})
        ).structured_content
        assert run["status"] == "partial_success", run.get("error")
        result = run["result"]
        assert result["summary"] == {"total": 10, "succeeded": 9, "failed": 1}
        crawl = result["crawl"]
        assert crawl["stopReason"] == "done" and crawl["duplicates"] == 1 and crawl["skippedByRobots"] == 1
        items = by_path(result["items"], site)
        assert "/crawl/private/secret.html" not in items and "/crawl/private/open.html" in items
        assert items["/crawl/missing.html"]["success"] is False and items["/crawl/missing.html"]["status"] == 404
        page_c = items["/crawl/c.html"]
        assert page_c["success"] and page_c["depth"] == 2 and page_c["title"] == "Page C"
        markdown = await artifact_text(client, page_c["markdownArtifactId"])
        assert "# Page C" in markdown and "two links away" in markdown
        assert len(markdown.encode()) == page_c["markdownBytes"]


async def test_crawl_async_answers_with_a_run_to_follow(module_home: BrowserdHome, site: str) -> None:
    """With the runs group (crawl and the run tools come together): the run crawl answers with can be followed
    to its end."""
    async with mcp_client(module_home, args=("--tools", "runs")) as client:
        started = ok(
            await client.call_tool(
                "crawl", {"url": f"{site}/crawl/index.html", "excludePaths": [r"missing\.html$"], "maxDepth": 1}
            )
        ).structured_content
        assert started["status"] == "queued" and started["runId"]
        run = await follow(client, started["runId"])
        assert run["status"] == "succeeded" and run["templateId"] == "crawl"
        assert run["result"]["summary"]["total"] == 5  # index, a.html or dupe.html, b.html, blog/, open.html
        assert "/crawl/c.html" not in by_path(run["result"]["items"], site)  # depth 2
        index = by_path(run["result"]["items"], site)["/crawl/index.html"]
        assert (await artifact_text(client, index["markdownArtifactId"])).strip()


async def test_crawl_is_a_template_too(module_home: BrowserdHome, site: str) -> None:
    async with mcp_client(module_home, args=TOOLS) as client:
        listed = ok(await client.call_tool("list_task_templates", {})).structured_content
        crawl = next(t for t in listed["templates"] if t["templateId"] == "crawl")
        assert crawl["version"] == "1.0.0" and set(crawl["trustLevelSupport"]) == {"local", "remote"}
        assert crawl["supportsPartialSuccess"] and "includePaths" in crawl["inputsSchema"]["properties"]
        run = ok(
            await client.call_tool(
                "run_task_template",
                {
                    "templateId": "crawl",
                    "inputs": {"url": f"{site}/gen/6/0.html", "limit": 3},
                    "options": {"mode": "sync"},
                },
            )
        ).structured_content
        assert run["status"] == "succeeded" and run["result"]["crawl"]["stopReason"] == "limit"
        assert run["result"]["summary"]["total"] == 3


async def test_cancel_mid_crawl_keeps_the_pages_already_crawled(module_home: BrowserdHome, site: str) -> None:
    async with mcp_client(module_home, args=TOOLS) as client:
        started = ok(
            # Through the browser: the fast path could finish all 200 pages before the cancel arrives.
            await client.call_tool("crawl", {"url": f"{site}/gen/200/0.html", "concurrency": 1, "render": "always"})
        ).structured_content
        run_id = started["runId"]
        with anyio.fail_after(FOLLOW_TIMEOUT_S):
            while True:
                run = ok(await client.call_tool("get_task_run", {"runId": run_id})).structured_content
                if run["progress"]["doneSteps"] >= 2:
                    break
                await anyio.sleep(POLL_S)
        ok(await client.call_tool("cancel_task_run", {"runId": run_id}))
        run = await follow(client, run_id)
        assert run["status"] == "canceled"
        items = run["result"]["items"]
        assert 2 <= len(items) < 200 and all(item["success"] for item in items)
        assert run["result"]["crawl"]["stopReason"] == "stopped"
        first = next(item for item in items if item["url"].endswith("/gen/200/0.html"))
        assert "Generated page 0" in await artifact_text(client, first["markdownArtifactId"])


async def test_crawl_bad_inputs_are_refused_with_the_parameter_named(module_home: BrowserdHome, site: str) -> None:
    async with mcp_client(module_home, args=TOOLS) as client:
        start = f"{site}/crawl/index.html"
        error = failed(await client.call_tool("crawl", {"url": start, "limit": 50_000}), "INVALID_PARAMETER")
        assert error["details"]["field"] == "limit"
        # The configured [crawl] maxima hold for the template too, before any run is made.
        arguments = {"templateId": "crawl", "inputs": {"url": start, "limit": 50_000}}
        error = failed(await client.call_tool("run_task_template", arguments), "INVALID_PARAMETER")
        assert error["details"]["field"] == "limit"
        error = failed(await client.call_tool("crawl", {"url": start, "includePaths": ["("]}), "INVALID_PARAMETER")
        assert error["details"]["field"] == "includePaths"
        error = failed(await client.call_tool("crawl", {"url": "ftp://127.0.0.1/"}), "INVALID_PARAMETER")
        assert error["details"]["field"] == "url"
        failed(await client.call_tool("crawl", {"url": start, "maxDepht": 2}), "INVALID_PARAMETER")
        # robots.txt disallows the start URL: the run fails and says why and how to go on.
        run = ok(
            await client.call_tool("crawl", {"url": f"{site}/crawl/private/secret.html", "mode": "sync"})
        ).structured_content
        assert run["status"] == "failed" and run["error"]["details"]["stepErrorCode"] == "URL_NOT_ALLOWED"


async def test_multi_tab_compare_sync_puts_the_pages_side_by_side(module_home: BrowserdHome, site: str) -> None:
    """a.html and dupe.html share their content; b.html differs; each page is in its own tab."""
    urls = [f"{site}/crawl/a.html", f"{site}/crawl/dupe.html", f"{site}/crawl/b.html"]
    async with mcp_client(module_home, args=TOOLS) as client:
        run = ok(
            await client.call_tool(
                "run_task_template",
                {"templateId": "multi_tab_compare", "inputs": {"urls": urls}, "options": {"mode": "sync"}},
            )
        ).structured_content
        assert run["status"] == "succeeded", run.get("error")
        items = run["result"]["items"]
        assert [item["url"] for item in items] == urls
        tab_ids = [item["tabId"] for item in items]
        assert len(set(tab_ids)) == 3 and all(tab.startswith("tab_") for tab in tab_ids)
        comparison = run["result"]["comparison"]
        assert comparison["tabIds"] == tab_ids
        fields = {row["field"]: row for row in comparison["fields"]}
        assert set(fields) == {"title", "status", "wordCount", "linksCount", "headings"}
        assert fields["title"]["values"] == ["Page A", "Page A", "Page B"] and not fields["title"]["same"]
        assert fields["status"]["same"] and fields["status"]["values"] == [200, 200, 200]
        assert "status" in comparison["same"] and "title" in comparison["different"]
        assert "## Details" in comparison["headingsOnlyIn"][tab_ids[2]]
        assert comparison["table"].startswith("| field |")
        markdown = await artifact_text(client, items[2]["contentArtifactId"])
        assert "# Page B" in markdown


async def test_multi_tab_compare_async_with_a_failing_page_is_partial_and_snapshots(
    module_home: BrowserdHome, site: str
) -> None:
    urls = [f"{site}/crawl/a.html", f"{site}/crawl/c.html", f"{site}/crawl/missing.html"]
    async with mcp_client(module_home, args=TOOLS) as client:
        started = ok(
            await client.call_tool(
                "run_task_template",
                {
                    "templateId": "multi_tab_compare",
                    "inputs": {"urls": urls, "extract": "snapshot"},
                    "options": {"mode": "async"},
                },
            )
        ).structured_content
        run = await follow(client, started["runId"])
        assert run["status"] == "partial_success"
        items = run["result"]["items"]
        assert [item["success"] for item in items] == [True, True, False]
        assert items[2]["status"] == 404 and items[2]["errorCode"] == "EXECUTION_ERROR"
        comparison = run["result"]["comparison"]
        assert comparison["tabIds"] == [items[0]["tabId"], items[1]["tabId"]]
        snapshot = await artifact_text(client, items[0]["contentArtifactId"])
        assert 'heading "Page A"' in snapshot and "[ref=" in snapshot
        error = failed(
            await client.call_tool(
                "run_task_template", {"templateId": "multi_tab_compare", "inputs": {"urls": [urls[0]]}}
            ),
            "INVALID_PARAMETER",
        )
        assert error["details"]["field"].startswith("inputs")
