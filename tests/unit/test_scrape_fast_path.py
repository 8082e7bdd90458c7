"""The fast path's decisions (daemon/scrape/fetch.py) and the resource policy's (daemon/scrape/resources.py)."""

from __future__ import annotations

import time

import httpx
import pytest

from browserd.daemon.scrape.fetch import (
    BROWSER_STREAK,
    RETRY_EVERY,
    HostMemory,
    _jar_of,
    _state_with,
    browser_reason,
    with_body,
)
from browserd.daemon.scrape.resources import ResourcePolicy, _build_engine, _Engine

ARTICLE = "<html><body><main><h1>Title</h1><p>" + "Words of an article. " * 40 + "</p></main></body></html>"
STATE = {
    "cookies": [
        {
            "name": "session",
            "value": "ann",
            "domain": "127.0.0.1",
            "path": "/",
            "expires": -1,
            "httpOnly": True,
            "secure": False,
            "sameSite": "Strict",
        }
    ],
    "origins": [],
}


@pytest.mark.parametrize(
    ("html", "chars", "reason"),
    [
        (ARTICLE, 800, None),
        ('<html><body><div id="root"></div><script src="app.js"></script></body></html>', 0, "no-text"),
        (
            '<html><body><nav>Home</nav><div id="__next"> </div><script src="a.js"></script></body></html>',
            4,
            "app-shell",
        ),
        ("<html><body><noscript>Please enable JavaScript.</noscript><p>Hi</p></body></html>", 2, "noscript"),
        ("<html><body><h1>Late</h1><script>setTimeout(f, 800)</script></body></html>", 4, "little-text"),
        ("<html><body><h1>Short static page</h1></body></html>", 17, None),
    ],
)
def test_browser_reason_names_what_the_fetched_html_lacks(html: str, chars: int, reason: str | None) -> None:
    assert browser_reason(html, chars, 200) == reason


def test_a_host_that_needs_the_browser_skips_the_fetch_but_is_tried_again_now_and_then() -> None:
    memory = HostMemory()
    url = "https://app.example/page"
    for _ in range(BROWSER_STREAK):
        assert not memory.prefers_browser(url)
        memory.record(url, needed_browser=True)
    skipped = [memory.prefers_browser(url) for _ in range(RETRY_EVERY)]
    assert skipped.count(False) == 1, "one page in RETRY_EVERY probes the fast path again"
    memory.record(url, needed_browser=False)
    assert not memory.prefers_browser(url)
    assert not memory.prefers_browser("https://other.example/"), "hosts are remembered apart"


def test_with_body_opens_the_body_where_a_browser_would() -> None:
    bare = "<!doctype html><title>Members</title><main><h1>Members</h1></main>"
    assert with_body(bare) == "<!doctype html><title>Members</title><body><main><h1>Members</h1></main>"
    whole = "<html><head><title>x</title></head><main>y</main>"
    assert with_body(whole) == whole


def test_cookies_round_trip_between_storage_state_and_the_jar() -> None:
    jar = _jar_of(STATE)
    request = httpx.Request("GET", "http://127.0.0.1:8000/members")
    httpx.Cookies(jar).set_cookie_header(request)
    assert request.headers["cookie"] == "session=ann"
    response = httpx.Response(
        200, headers=[("set-cookie", "theme=dark; Path=/; Max-Age=60; SameSite=None; Secure")], request=request
    )
    httpx.Cookies(jar).extract_cookies(response)
    state = _state_with(STATE, jar)
    cookies = {cookie["name"]: cookie for cookie in state["cookies"]}
    assert cookies["session"] == STATE["cookies"][0], "an untouched cookie stays exactly as it was"
    theme = cookies["theme"]
    assert theme["value"] == "dark" and theme["domain"] == "127.0.0.1" and theme["secure"] is True
    assert theme["sameSite"] == "None"
    assert time.time() < theme["expires"] <= time.time() + 61


def test_a_cookie_the_server_deletes_leaves_the_state() -> None:
    jar = _jar_of(STATE)
    request = httpx.Request("GET", "http://127.0.0.1:8000/logout")
    response = httpx.Response(200, headers=[("set-cookie", "session=; Path=/; Max-Age=0")], request=request)
    httpx.Cookies(jar).extract_cookies(response)
    assert _state_with(STATE, jar)["cookies"] == []


@pytest.fixture(scope="module")
def engine() -> _Engine:
    return _build_engine(())


@pytest.mark.parametrize(
    ("url", "kind", "visual", "blocked"),
    [
        ("https://news.example/photo.jpg", "image", False, True),
        ("https://news.example/photo.jpg", "image", True, False),
        ("https://news.example/font.woff2", "font", False, True),
        ("https://www.google-analytics.com/analytics.js", "script", True, True),
        ("https://news.example/app.js", "script", False, False),
        ("https://news.example/api/story", "fetch", False, False),
    ],
)
def test_the_resource_policy_drops_what_markdown_does_not_need(
    engine: _Engine, url: str, kind: str, visual: bool, blocked: bool
) -> None:
    policy = ResourcePolicy()
    assert policy.blocks(engine, url, "https://news.example/story", kind, visual=visual) is blocked
