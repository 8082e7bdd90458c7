"""A remote session never touches the user's login profiles unless `[security] remote_profiles` lists them
(issue 11 item 1; DESIGN.md §5; daemon/policy/trust.py).

Every path a profile could be reached by is walked through a real `browserd mcp --trust remote`: opening
a window on a profile (browser_open, browser_windows), browser_storage export / import / clear, scrape
without profileId (which meant `master` and published back), batch_extract_pages, crawl,
multi_tab_compare in the caller's own session, and the login template. A refusal is
TRUST_LEVEL_NOT_ALLOWED with details.rule; a call that names no profile works in a fresh anonymous
context. The daemon lists the profile `shared` in remote_profiles, to show a listed profile stays
usable. `master` holds the cookie session=alice, set by a local scrape; tests/site's /cookies page
shows the Cookie header the browser sent, so any leak of master's login shows up as "alice".
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import BrowserdHome, mcp_client, own_home, wait_for
from tests.e2e.results import failed, ok, text_of
from tests.e2e.test_crawl import artifact_text

pytestmark = pytest.mark.anyio
REMOTE = ("--trust", "remote", "--tools", "pages,devtools,scrape,runs")
SECRET = "alice"
PUBLISH_S = 30


def master_meta(home: BrowserdHome) -> dict[str, Any]:
    folder = Path(home.env["XDG_DATA_HOME"]) / "browserd" / "browser-snapshots" / "master"
    try:
        meta: dict[str, Any] = json.loads((folder / "meta.json").read_text())
    except (OSError, ValueError):
        return {"version": -1}
    return meta


def master_version(home: BrowserdHome) -> int:
    return int(master_meta(home)["version"])


@pytest.fixture(scope="module")
def home(site: str) -> Iterator[BrowserdHome]:
    """One daemon for the module: remote sessions reach the loopback test site and may use profile `shared`."""
    with own_home() as home:
        home.env["BROWSERD_SECURITY_REMOTE_EXEMPT_ORIGINS"] = site
        home.env["BROWSERD_SECURITY_REMOTE_PROFILES"] = "shared"
        # A local scrape logs master in (the site's /set-cookie stands for a login form) and publishes it.
        done = home.browserd("scrape", "--profile", "master", f"{site}/set-cookie?session={SECRET}", timeout=120)
        assert done.returncode == 0, done.stderr
        assert wait_for(lambda: master_version(home) >= 1, PUBLISH_S), "the local scrape did not publish master"
        yield home


def refused(result: Any, rule: str = "remote-profile") -> dict[str, Any]:
    error = failed(result, "TRUST_LEVEL_NOT_ALLOWED")
    assert error["details"]["rule"] == rule, error
    return error


async def test_remote_open_on_a_profile_is_refused(home: BrowserdHome, site: str) -> None:
    """browser_open {profileId} and browser_windows new with a profile: refused, nothing loaded or published."""
    before = master_meta(home)
    async with mcp_client(home, args=REMOTE) as client:
        error = refused(await client.call_tool("browser_open", {"url": f"{site}/cookies", "profileId": "master"}))
        assert error["details"]["profileId"] == "master" and "remote_profiles" in error["recoverHint"]
        options = {"profileId": "master"}
        refused(await client.call_tool("browser_windows", {"action": "new", "options": options}))
        # The session keeps serving, and what it opens without a profile carries no login.
        opened = ok(await client.call_tool("browser_open", {"url": f"{site}/cookies"}))
        assert SECRET not in text_of(opened)
    assert master_meta(home) == before


async def test_remote_storage_never_reads_or_writes_a_profile(home: BrowserdHome, site: str) -> None:
    """browser_storage: export to a profile and import from one are refused; export, import and clear of the
    session's own window touch only that window."""
    before = master_meta(home)
    async with mcp_client(home, args=REMOTE) as client:
        ok(await client.call_tool("browser_open", {"url": f"{site}/set-cookie?mine=1", "snapshot": "none"}))
        refused(await client.call_tool("browser_storage", {"action": "export", "profileId": "master"}))
        refused(await client.call_tool("browser_storage", {"action": "import", "profileId": "master"}))
        exported = ok(await client.call_tool("browser_storage", {"action": "export"})).structured_content
        assert {c["name"] for c in exported["state"]["cookies"]} == {"mine"}
        ok(await client.call_tool("browser_storage", {"action": "clear"}))
        again = ok(await client.call_tool("browser_storage", {"action": "export"})).structured_content
        assert again["state"]["cookies"] == []
    assert master_meta(home) == before


async def test_remote_scrape_without_profile_is_anonymous(home: BrowserdHome, site: str) -> None:
    """scrape without profileId used `master` and published the page's cookies to it; now a fresh context."""
    before = master_meta(home)
    async with mcp_client(home, args=REMOTE) as client:
        page = ok(await client.call_tool("scrape", {"url": f"{site}/cookies", "format": "html"}))
        assert SECRET not in text_of(page)
        assert page.structured_content["profileId"] is None and page.structured_content["profileVersion"] is None
        written = ok(await client.call_tool("scrape", {"url": f"{site}/set-cookie?remote=1"})).structured_content
        assert written["profileId"] is None, "no profile to publish the page's cookie to"
        refused(await client.call_tool("scrape", {"url": f"{site}/cookies", "profileId": "master"}))
    assert master_meta(home) == before


async def run_in(client: Any, session_id: str, template_id: str, inputs: dict[str, Any]) -> dict[str, Any]:
    """A sync run of the template in the caller's own session."""
    arguments = {"templateId": template_id, "sessionId": session_id, "inputs": inputs, "options": {"mode": "sync"}}
    run: dict[str, Any] = ok(await client.call_tool("run_task_template", arguments)).structured_content
    return run


async def test_remote_runs_never_use_a_profile(home: BrowserdHome, site: str) -> None:
    """batch_extract_pages (profileId, or the cookies of the caller's session), crawl and multi_tab_compare."""
    async with mcp_client(home, args=REMOTE) as client:
        batch = {"urls": [f"{site}/cookies"], "format": "html", "onlyMainContent": False}
        error = refused(
            await client.call_tool(
                "run_task_template",
                {"templateId": "batch_extract_pages", "inputs": {**batch, "profileId": "master"}},
            )
        )
        assert error["details"]["profileId"] == "master"
        own = ok(await client.call_tool("get_runtime_profile", {})).structured_content["session"]["sessionId"]
        # The session's own window would lend its cookies to the run: it cannot be master's.
        refused(await client.call_tool("browser_open", {"url": f"{site}/index.html", "profileId": "master"}))
        anonymous = await run_in(client, own, "batch_extract_pages", batch)
        assert anonymous["status"] == "succeeded", anonymous
        assert SECRET not in anonymous["result"]["items"][0]["html"]

        compare = {"urls": [f"{site}/cookies", f"{site}/cookies?again"], "extract": "text", "onlyMainContent": False}
        compared = await run_in(client, own, "multi_tab_compare", compare)
        assert compared["status"] == "succeeded", compared
        for item in compared["result"]["items"]:
            assert SECRET not in await artifact_text(client, item["contentArtifactId"])

        crawled = ok(await client.call_tool("crawl", {"url": f"{site}/cookies", "limit": 1, "mode": "sync"}))
        assert crawled.structured_content["status"] == "succeeded", text_of(crawled)
        assert SECRET not in text_of(crawled)


async def test_remote_login_template_is_refused_with_its_rule(home: BrowserdHome, site: str) -> None:
    """login_keep_session keeps a logged-in session: local connections only, refused naming the rule."""
    steps = [{"action": "open", "url": f"{site}/index.html", "profileId": "master"}]
    async with mcp_client(home, args=REMOTE) as client:
        error = refused(
            await client.call_tool(
                "run_task_template", {"templateId": "login_keep_session", "inputs": {"steps": steps}}
            ),
            "template-trust",
        )
        assert error["details"]["templateId"] == "login_keep_session"


async def test_a_listed_profile_is_usable_by_remote_sessions(home: BrowserdHome, site: str) -> None:
    """[security] remote_profiles = ["shared"]: open, export and scrape with it work, and it publishes."""
    async with mcp_client(home, args=REMOTE) as client:
        ok(await client.call_tool("browser_open", {"url": f"{site}/set-cookie?team=1", "profileId": "shared"}))
        saved = ok(await client.call_tool("browser_storage", {"action": "export", "profileId": "shared"}))
        assert saved.structured_content["profileId"] == "shared"
        page = ok(await client.call_tool("scrape", {"url": f"{site}/cookies", "profileId": "shared", "format": "html"}))
        assert "team=1" in text_of(page) and SECRET not in text_of(page)
