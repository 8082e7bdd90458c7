"""`scrape` and `map` end to end: the official MCP client, a real `browserd mcp` shim, the daemon and
Chromium, on the tests/site pages; and `browserd scrape` on the command line.

Covers issue 5's scrape half against reference/000's test cases (REQUIREMENTS.md §1.18): TC-01 (every
format), TC-02 (waitFor), TC-03 (smartWait), TC-04 (main-content fallback), TC-05 (invalid parameters),
plus includeTags/excludeTags, HTTP error pages, `map` and the CLI. TC-17 (runtime reuse) is a property
of the code's layering and has no end-to-end test. Login profiles are in test_login_profiles.py.

Most tests share one daemon (module fixture `module_home`); a test that needs its own configuration
gets the per-test `home`.
"""

from __future__ import annotations

import base64
import struct
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.conftest import BrowserdHome, mcp_client
from tests.e2e.results import failed, ok, text_of

pytestmark = pytest.mark.anyio

SCRAPE_TOOLS = ("--tools", "scrape")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
# The daemon's default viewport ([browser] viewport_height) and scroll.html's height (tests/site/README.md).
VIEWPORT_HEIGHT = 800
SCROLL_PAGE_HEIGHT = 4000
INDEX_LINK_TEXTS = [
    "A form", "An iframe", "Shadow DOM", "Late content", "Single-page app", "Autocomplete", "Folder tree",
    "New tabs and popups", "Never loads", "Large page", "Clickables without roles", "Element states",
    "JavaScript dialogs", "Console messages", "Drag and drop", "Scrolling", "Hover menu", "Keyboard",
]  # fmt: skip


def field_of(error: dict[str, Any]) -> str | None:
    """The parameter an INVALID_PARAMETER error names (`field`, or `parameter` for profile ids)."""
    details = error.get("details") or {}
    return details.get("field") or details.get("parameter")


def png_of(result: Any) -> bytes:
    """The one PNG image of an answer, decoded."""
    images = [block for block in result.content if block.type == "image"]
    assert len(images) == 1, f"expected one image, got {[block.type for block in result.content]}"
    assert images[0].mime_type == "image/png"
    data = base64.b64decode(images[0].data)
    assert data.startswith(PNG_MAGIC), "the image is not a PNG"
    return data


def png_size(data: bytes) -> tuple[int, int]:
    """(width, height) from the PNG's IHDR chunk."""
    width, height = struct.unpack(">II", data[16:24])
    return width, height


async def scrape(client: Any, **args: Any) -> Any:
    return await client.call_tool("scrape", args)


# TC-01: every format


async def test_tc01_every_format_returns_its_payload(module_home: BrowserdHome, site: str) -> None:
    """TC-01, S0-02, S0-04, S0-32, S0-73..S0-76, D-23: one call, one format; markdown is the default and
    keeps the page's heading; html is HTML; links are absolute, de-duplicated and carry their text;
    screenshot and fullscreenshot are PNG image content, the full one taller than the viewport."""
    index = f"{site}/index.html"
    async with mcp_client(module_home, args=SCRAPE_TOOLS) as client:
        markdown = ok(await scrape(client, url=index))
        assert markdown.structured_content["format"] == "markdown", "markdown is the default format (S0-32)"
        assert "# Welcome to the browserd test site" in text_of(markdown)
        assert "Pages here exercise what an agent does in a browser." in text_of(markdown)
        assert not [block for block in markdown.content if block.type == "image"], "one format per answer (S0-04)"

        html = ok(await scrape(client, url=index, format="html"))
        assert html.structured_content["format"] == "html"
        assert "<h1>Welcome to the browserd test site</h1>" in text_of(html)

        links = ok(await scrape(client, url=index, format="links"))
        rows = links.structured_content["links"]
        urls = [row["url"] for row in rows]
        assert [row["text"] for row in rows] == INDEX_LINK_TEXTS, "every link of the page, in order, with its text"
        assert all(url.startswith(f"{site}/") for url in urls), f"links are absolute: {urls}"
        assert len(urls) == len(set(urls)), f"links are de-duplicated: {urls}"
        assert {"url": f"{site}/form.html", "text": "A form"} in rows
        assert f"[A form]({site}/form.html)" in text_of(links), "the text answer lists the links too"

        # clickables.html links to its own #more: the fragment goes, the page stays (D-23).
        fragment = ok(await scrape(client, url=f"{site}/clickables.html", format="links"))
        assert [row["url"] for row in fragment.structured_content["links"]] == [f"{site}/clickables.html"]

        shot = ok(await scrape(client, url=f"{site}/scroll.html", format="screenshot"))
        assert shot.structured_content["format"] == "screenshot"
        viewport_png = png_of(shot)
        assert not text_of(shot).startswith("#"), "a screenshot answer carries no markdown"
        full = ok(await scrape(client, url=f"{site}/scroll.html", format="fullscreenshot"))
        full_png = png_of(full)
        (_width, viewport_height), (_full_width, full_height) = png_size(viewport_png), png_size(full_png)
        assert viewport_height <= VIEWPORT_HEIGHT, f"a screenshot is the viewport, got {viewport_height} px"
        assert full_height > viewport_height, (
            f"fullscreenshot of a {SCROLL_PAGE_HEIGHT} px page is {full_height} px tall, the viewport {viewport_height}"
        )


async def test_tc01_every_result_carries_the_page_metadata(module_home: BrowserdHome, site: str) -> None:
    """Issue 5 item 1, D-23: url, statusCode, title, description, language and canonicalUrl in
    structuredContent, for the text formats and the links format alike."""
    async with mcp_client(module_home, args=SCRAPE_TOOLS) as client:
        for fmt in ("markdown", "html", "links"):
            data = ok(await scrape(client, url=f"{site}/late.html", format=fmt)).structured_content
            assert data["url"] == f"{site}/late.html", fmt
            assert data["statusCode"] == 200, fmt
            assert data["title"] == "Late content", fmt
            assert data["language"] == "en", f"{fmt}: <html lang=en>"
            assert data["description"] == "", f"{fmt}: the page has no meta description"
            assert "canonicalUrl" in data and data["canonicalUrl"] is None, f"{fmt}: the page has no canonical link"
        shot = ok(await scrape(client, url=f"{site}/scroll.html", format="screenshot")).structured_content
        assert shot["url"] == f"{site}/scroll.html"
        assert shot["statusCode"] == 200
        assert shot["title"] == "Scrolling"


async def test_screenshot_results_give_the_image_size(module_home: BrowserdHome, site: str) -> None:
    """D-23: `screenshot` and `fullscreenshot` = PNG as ImageContent plus {url, width, height}."""
    async with mcp_client(module_home, args=SCRAPE_TOOLS) as client:
        full = ok(await scrape(client, url=f"{site}/scroll.html", format="fullscreenshot"))
        width, height = png_size(png_of(full))
        assert (full.structured_content.get("width"), full.structured_content.get("height")) == (width, height)


async def test_markdown_keeps_the_heading_of_pages_without_an_article(module_home: BrowserdHome, site: str) -> None:
    """Issue 5 item 2 (headings and lists kept), S0-72: the page's <h1> is a markdown heading even when
    the page is mostly form controls (form.html) or a bare error page (<title> and <h1> only)."""
    pages = {"form.html": "# Form with every input kind\n", "status?code=404": "# Status 404\n"}
    async with mcp_client(module_home, args=SCRAPE_TOOLS) as client:
        for page, heading in pages.items():
            markdown = text_of(ok(await scrape(client, url=f"{site}/{page}")))
            assert markdown.startswith(heading), f"{page}: expected {heading!r} first, got:\n{markdown[:300]}"


# TC-02: waitFor


async def test_tc02_wait_for_waits_that_long_within_its_bounds(module_home: BrowserdHome, site: str) -> None:
    """TC-02, S0-34, S0-69: waitFor=1500 reads late.html after its 800 ms content appeared; waitFor
    outside 0..60000 is INVALID_PARAMETER naming waitFor; the bounds themselves are accepted."""
    async with mcp_client(module_home, args=SCRAPE_TOOLS) as client:
        late = ok(await scrape(client, url=f"{site}/late.html", waitFor=1500))
        assert "Loaded late" in text_of(late)
        for bad in (60_001, -1):
            error = failed(await scrape(client, url=f"{site}/late.html", waitFor=bad), "INVALID_PARAMETER")
            assert field_of(error) == "waitFor", error
        ok(await scrape(client, url=f"{site}/index.html", waitFor=0))


async def test_tc02_wait_for_skips_smart_wait(home: BrowserdHome, site: str) -> None:
    """TC-02, S0-69: an explicit waitFor means exactly that wait and no smartWait. never-loads.html never
    finishes loading, so a smartWait capped at 120 s would hold the call for two minutes; with waitFor
    it answers within the test's 60 s deadline, the page read as far as it got."""
    home.env["BROWSERD_SCRAPE_SMART_WAIT_MAX_MS"] = "120000"
    async with mcp_client(home, args=SCRAPE_TOOLS) as client:
        with anyio.fail_after(60):
            result = ok(await scrape(client, url=f"{site}/never-loads.html", waitFor=200))
        assert "Partial content" in text_of(result)


# TC-03: smartWait


async def test_tc03_smart_wait_reads_a_page_that_never_finishes_loading(home: BrowserdHome, site: str) -> None:
    """TC-03, D-21: smartWait never fails the scrape. never-loads.html holds an image request open forever:
    the answer is what loaded ("Partial content"), status 200, not an error."""
    home.env["BROWSERD_SCRAPE_SMART_WAIT_MAX_MS"] = "2000"
    async with mcp_client(home, args=SCRAPE_TOOLS) as client:
        result = ok(await scrape(client, url=f"{site}/never-loads.html"))
        assert "Partial content" in text_of(result)
        assert result.structured_content["statusCode"] == 200
        assert result.structured_content["title"] == "Never loads"


async def test_tc03_a_page_whose_content_never_settles_comes_with_a_warning(home: BrowserdHome, site: str) -> None:
    """TC-03, D-21: a page read at smartWait's cap is still an answer, but the agent is told it is partial
    (the tool's own warning text). ticking.html's main content grows every 100 ms for ever."""
    home.env["BROWSERD_SCRAPE_SMART_WAIT_MAX_MS"] = "2000"
    async with mcp_client(home, args=SCRAPE_TOOLS) as client:
        result = ok(await scrape(client, url=f"{site}/ticking.html"))
        assert "Steady content" in text_of(result)
        assert result.structured_content.get("warning"), result.structured_content
        assert result.structured_content["via"] == "browser"


async def test_tc03_smart_wait_gives_a_stable_result_with_late_content(module_home: BrowserdHome, site: str) -> None:
    """TC-03, S0-69, D-21: without waitFor, smartWait (the page's pending 800 ms timer, then its main content
    standing still) waits for late.html's paragraph every time."""
    async with mcp_client(module_home, args=SCRAPE_TOOLS) as client:
        seen = [
            "Loaded late" in text_of(ok(await scrape(client, url=f"{site}/late.html", format="html")))
            for _attempt in range(4)
        ]
    assert all(seen), f"late content seen in {sum(seen)} of {len(seen)} default scrapes"


async def test_smart_wait_does_not_hold_an_article_for_a_deferred_extra(module_home: BrowserdHome, site: str) -> None:
    """D-21, issue 12: beside an article's worth of text, a pending 1.2 s timer (a deferred sponsorship badge)
    is not waited out: the article comes back whole and without the badge, while late.html (an empty main
    filled by an 800 ms timer) is still waited for (test above)."""
    async with mcp_client(module_home, args=SCRAPE_TOOLS) as client:
        result = ok(await scrape(client, url=f"{site}/deferred-extras.html", render="always"))
    text = text_of(result)
    assert "Harbour ferries return to the winter timetable" in text
    assert "subject to the annual inspection" in text, "the whole article"
    assert "Sponsored by the ferry kiosk" not in text, "read before the deferred extra, not once it came"
    assert not result.structured_content.get("warning"), result.structured_content


async def test_tc03_smart_wait_waits_for_a_script_still_loading(module_home: BrowserdHome, site: str) -> None:
    """D-21: an async script that arrives 700 ms after the page and only then writes the content (the page
    is quiet and has no request or timer of its own pending until then) is waited for."""
    async with mcp_client(module_home, args=SCRAPE_TOOLS) as client:
        result = ok(await scrape(client, url=f"{site}/late-script.html", render="always"))
    assert "Written by a late script" in text_of(result)


# TC-04: main content and its fallback


async def test_tc04_empty_main_content_falls_back_to_the_whole_page(module_home: BrowserdHome, site: str) -> None:
    """TC-04, S0-33, S0-70, S0-71: onlyMainContent (null/absent = true) finds the main content where there
    is one and drops the navigation; where the main content is empty (the menu list of states.html on its
    own has no article in it) the whole (filtered) page is returned instead, mainContentFound false."""
    async with mcp_client(module_home, args=SCRAPE_TOOLS) as client:
        main = ok(await scrape(client, url=f"{site}/index.html", onlyMainContent=None))
        assert main.structured_content["mainContentFound"] is True
        assert "# Welcome to the browserd test site" in text_of(main)
        assert "A form" not in text_of(main), "main content leaves the page's navigation out (S0-70)"

        fallback = ok(await scrape(client, url=f"{site}/states.html", includeTags=["#menu-list"]))
        assert fallback.structured_content["mainContentFound"] is False, text_of(fallback)
        assert "First menu entry" in text_of(fallback), "the fallback keeps the content (S0-71)"

        whole = ok(await scrape(client, url=f"{site}/tree.html", onlyMainContent=False))
        assert whole.structured_content["mainContentFound"] is False
        assert "# Folder tree" in text_of(whole)


async def test_only_main_content_false_keeps_the_navigation(module_home: BrowserdHome, site: str) -> None:
    """S0-70, D-23: only onlyMainContent=true removes nav, header, footer and aside; with false the
    markdown keeps index.html's navigation links and `html` is the page's HTML (`page.content()`)."""
    async with mcp_client(module_home, args=SCRAPE_TOOLS) as client:
        markdown = text_of(ok(await scrape(client, url=f"{site}/index.html", onlyMainContent=False)))
        assert f"[A form]({site}/form.html)" in markdown, markdown
        html = text_of(ok(await scrape(client, url=f"{site}/index.html", format="html", onlyMainContent=False)))
        assert '<nav aria-label="Test pages">' in html, html


# TC-05: invalid parameters


async def test_tc05_invalid_parameters_name_the_field_and_the_daemon_keeps_serving(
    module_home: BrowserdHome, site: str
) -> None:
    """TC-05, S0-31..S0-35, D-32: a non-http(s) URL, an unknown format, waitFor out of range, a bad
    profileId, an unknown or missing field and an unsupported selector are each INVALID_PARAMETER naming
    the field; the same daemon answers the next good call."""
    index = f"{site}/index.html"
    cases: list[tuple[dict[str, Any], str]] = [
        ({"url": "ftp://127.0.0.1/file.txt"}, "url"),
        ({"url": "file:///etc/passwd"}, "url"),
        ({"url": "not a url"}, "url"),
        ({}, "url"),
        ({"url": index, "format": "pdf"}, "format"),
        ({"url": index, "waitFor": 60_001}, "waitFor"),
        ({"url": index, "waitFor": -1}, "waitFor"),
        ({"url": index, "profileId": "../x"}, "profileId"),
        ({"url": index, "profileId": "a..b"}, "profileId"),
        ({"url": index, "profileId": "x" * 65}, "profileId"),
        ({"url": index, "unknownField": 1}, "unknownField"),
        ({"url": index, "includeTags": ["a:hover"]}, "includeTags"),
        ({"url": index, "timeout": 0}, "timeout"),
    ]
    async with mcp_client(module_home, args=SCRAPE_TOOLS) as client:
        before = ok(await client.call_tool("get_runtime_profile", {})).structured_content["daemonPid"]
        for args, field in cases:
            error = failed(await client.call_tool("scrape", args), "INVALID_PARAMETER")
            assert field_of(error) == field, f"{args}: expected the error to name {field}, got {error}"
        good = ok(await scrape(client, url=index))
        assert "# Welcome to the browserd test site" in text_of(good)
        after = ok(await client.call_tool("get_runtime_profile", {})).structured_content["daemonPid"]
    assert after == before, "the daemon that refused the calls is the one still serving"


# includeTags / excludeTags, HTTP errors


async def test_include_and_exclude_tags_pick_the_parts_of_the_page(module_home: BrowserdHome, site: str) -> None:
    """Issue 5 item 1: excludeTags removes what its CSS selectors match, includeTags keeps only that."""
    async with mcp_client(module_home, args=SCRAPE_TOOLS) as client:
        without = text_of(ok(await scrape(client, url=f"{site}/tree.html", excludeTags=["#g-photos"])))
        assert "# Folder tree" in without
        assert "report.txt" in without
        assert "beach.jpg" not in without and "2024" not in without, "the excluded subtree is gone"
        only = text_of(ok(await scrape(client, url=f"{site}/scroll.html", includeTags=["#inner"])))
        assert "Inner item 1" in only and "Inner item 10" in only
        assert "Scrolling" not in only, "includeTags leaves the heading outside #inner out"


async def test_include_tags_keep_the_links_and_list_of_the_part(module_home: BrowserdHome, site: str) -> None:
    """Issue 5 item 2 (links absolute, lists kept): the part includeTags keeps is rendered like any
    content, its list items as a list and its links as markdown links."""
    async with mcp_client(module_home, args=SCRAPE_TOOLS) as client:
        nav = text_of(ok(await scrape(client, url=f"{site}/index.html", includeTags=["nav"])))
    assert f"[A form]({site}/form.html)" in nav, nav
    assert f"[Keyboard]({site}/keys.html)" in nav, nav


async def test_http_error_pages_are_results_with_their_status(module_home: BrowserdHome, site: str) -> None:
    """S0-01, D-23: a 404 or 500 page is content, not a tool error: its statusCode and text come back."""
    async with mcp_client(module_home, args=SCRAPE_TOOLS) as client:
        for code in (404, 500):
            result = ok(await scrape(client, url=f"{site}/status?code={code}"))
            assert result.structured_content["statusCode"] == code
            assert result.structured_content["title"] == f"Status {code}"
            assert f"Status {code}" in text_of(result)


# map


async def test_map_lists_ranks_and_limits_the_site_urls(module_home: BrowserdHome, site: str) -> None:
    """Issue 5 item 3: map finds the page's links (absolute, same site, with their text); `search` keeps
    the matching ones best first; `limit` cuts the list and `total` still counts them all; a site without
    a sitemap answers an empty list for sitemap=only, not an error."""
    index = f"{site}/index.html"
    async with mcp_client(module_home, args=SCRAPE_TOOLS) as client:
        everything = ok(await client.call_tool("map", {"url": index})).structured_content
        urls = [row["url"] for row in everything["urls"]]
        assert len(urls) == len(INDEX_LINK_TEXTS) == everything["total"]
        assert len(set(urls)) == len(urls)
        assert f"{site}/form.html" in urls and f"{site}/keys.html" in urls
        assert {"url": f"{site}/tree.html", "text": "Folder tree", "source": "page"} in everything["urls"]

        tree = ok(await client.call_tool("map", {"url": index, "search": "folder tree"})).structured_content
        assert tree["urls"], "the search matches tree.html"
        assert tree["urls"][0]["url"] == f"{site}/tree.html", tree["urls"]
        form = ok(await client.call_tool("map", {"url": index, "search": "form"})).structured_content
        assert [row["url"] for row in form["urls"]] == [f"{site}/form.html"]

        limited = ok(await client.call_tool("map", {"url": index, "limit": 3})).structured_content
        assert [row["url"] for row in limited["urls"]] == urls[:3]
        assert limited["total"] == len(urls)

        only = ok(await client.call_tool("map", {"url": index, "sitemap": "only"})).structured_content
        assert only["urls"] == [] and only["total"] == 0
        skipped = ok(await client.call_tool("map", {"url": index, "sitemap": "skip"})).structured_content
        assert skipped["sitemaps"] == [] and len(skipped["urls"]) == len(urls)

        error = failed(await client.call_tool("map", {"url": "ftp://127.0.0.1/"}), "INVALID_PARAMETER")
        assert field_of(error) == "url"
        error = failed(await client.call_tool("map", {"url": index, "sitemap": "sometimes"}), "INVALID_PARAMETER")
        assert field_of(error) == "sitemap"


# the command line


def test_cli_scrape_prints_or_writes_each_format(module_home: BrowserdHome, site: str) -> None:
    """Issue 5 item 6: `browserd scrape URL [--format F] [-o FILE]`: markdown on stdout or into a file,
    a screenshot into a PNG file (and a clear usage error without -o), a refused URL with its error code."""
    out_dir = module_home.root / "out"
    out_dir.mkdir(exist_ok=True)
    printed = module_home.browserd("scrape", f"{site}/index.html")
    assert printed.returncode == 0, printed.stderr
    assert "# Welcome to the browserd test site" in printed.stdout

    markdown_file = out_dir / "index.md"
    written = module_home.browserd("scrape", f"{site}/index.html", "-o", str(markdown_file), "--json")
    assert written.returncode == 0, written.stderr
    assert "# Welcome to the browserd test site" in markdown_file.read_text()
    assert '"statusCode": 200' in written.stderr, "--json puts the metadata on stderr"

    png = out_dir / "shot.png"
    shot = module_home.browserd("scrape", f"{site}/scroll.html", "--format", "screenshot", "-o", str(png))
    assert shot.returncode == 0, shot.stderr
    assert Path(png).read_bytes().startswith(PNG_MAGIC)

    no_file = module_home.browserd("scrape", f"{site}/scroll.html", "--format", "screenshot")
    assert no_file.returncode == 2 and "-o" in no_file.stderr, no_file.stderr

    refused = module_home.browserd("scrape", "ftp://127.0.0.1/file.txt")
    assert refused.returncode == 1
    assert "INVALID_PARAMETER" in refused.stderr
