"""The pure parts of browser_network and browser_route: status and URL filters, body rendering, patterns."""

from __future__ import annotations

import re

import pytest

from browserd.daemon.errors import InvalidParameter
from browserd.daemon.sessions.network import render_body, status_filter, status_matches, url_matches
from browserd.daemon.sessions.routes import matcher_of


@pytest.mark.parametrize(
    ("expression", "matching", "other"),
    [
        ("404", [404], [400, 200]),
        ("4xx", [400, 404, 499], [399, 500]),
        ("4XX", [404], [304]),
        (">=400", [400, 503], [399]),
        ("<300", [200, 204], [300, 404]),
        ("> 200", [201], [200]),
        ("=201", [201], [200]),
    ],
)
def teststatus_filters_take_codes_classes_and_comparisons(
    expression: str, matching: list[int], other: list[int]
) -> None:
    wanted = status_filter(expression)
    assert all(status_matches(status, wanted) for status in matching)
    assert not any(status_matches(status, wanted) for status in other)
    assert not status_matches(None, wanted), "a pending or failed request has no status to match"


@pytest.mark.parametrize("expression", ["teapot", "4x", "40", "=>400", "6xx", ""])
def test_a_badstatus_filter_is_refused_naming_the_field(expression: str) -> None:
    with pytest.raises(InvalidParameter) as refused:
        status_filter(expression)
    assert refused.value.details["field"] == "status"


def test_url_filters_are_substrings_unless_they_hold_a_wildcard() -> None:
    url = "http://127.0.0.1:8000/api/items?page=2"
    assert url_matches(url, "/api/")
    assert not url_matches(url, "api/*.json")
    assert url_matches(url, "**/api/*")
    assert url_matches(url, "page=2"), "`?` is no wildcard: a filter holding only it is a substring"
    assert not url_matches(url, "/API/")


@pytest.mark.parametrize(
    ("glob", "matching", "other"),
    [
        ("**/api/*", ["http://h/api/items", "http://h/v1/api/x?q=1"], ["http://h/api/items/1", "http://h/apix"]),
        ("*/api/*", [], ["http://h/api/items"]),  # `*` never crosses a `/`
        ("http://h/**/x.js", ["http://h/x.js", "http://h/a/b/x.js"], ["http://h/a/y.js"]),
        ("**/{a,b}.css", ["http://h/a.css", "http://h/s/b.css"], ["http://h/c.css"]),
        ("**/x?y=1", ["http://h/x?y=1"], ["http://h/xzy=1"]),  # `?` is itself
        ("http://h/a\\*b", ["http://h/a*b"], ["http://h/axb"]),
    ],
)
def test_item10_network_filter_and_route_share_playwrights_glob(
    glob: str, matching: list[str], other: list[str]
) -> None:
    """Issue 11 item 10: browser_network's filter and browser_route's rule read a glob the same way."""
    route = matcher_of(glob, regex=False)
    for url in matching:
        assert url_matches(url, glob) and route.match(url), url
    for url in other:
        assert not url_matches(url, glob) and not route.match(url), url


def test_item10_an_unbalanced_brace_is_an_invalid_url() -> None:
    with pytest.raises(InvalidParameter) as caught:
        matcher_of("**/{a,b", regex=False)
    assert caught.value.details["field"] == "url"


def test_json_bodies_are_pretty_printed_and_cut_with_a_note() -> None:
    body = render_body(b'{"a": [1, 2], "b": "\xc3\xa9"}', "application/json; charset=utf-8", 1000)
    assert body.text == '{\n  "a": [\n    1,\n    2\n  ],\n  "b": "\xe9"\n}'
    assert not body.truncated and body.size == 24
    cut = render_body(b"x" * 500, "text/plain", 100)
    assert cut.text == "x" * 100 and cut.truncated and cut.note is not None and "of 500" in cut.note
    broken = render_body(b'{"a": ', "application/json", 100)
    assert broken.text == '{"a": ', "invalid JSON is shown as sent"


def test_binary_bodies_are_described_not_shown() -> None:
    png = render_body(b"\x89PNG\r\n\x1a\n\x00\x00", "image/png", 100)
    assert png.text is None and png.size == 10 and png.note is not None and "image/png" in png.note
    untyped = render_body(b"\xff\xfe\x00\x01", "", 100)
    assert untyped.text is None
    svg = render_body(b"<svg/>", "image/svg+xml", 100)
    assert svg.text == "<svg/>", "SVG is text"
    plain = render_body(b"hello", "", 100)
    assert plain.text == "hello", "an untyped body that decodes as UTF-8 is text"


def test_route_patterns_are_globs_or_regular_expressions() -> None:
    assert matcher_of("**/api/*", regex=False).match("https://example.com/api/x")
    exact = matcher_of("https://example.com/exact", regex=False)
    assert exact.match("https://example.com/exact") and not exact.match("https://example.com/exact/more")
    assert isinstance(matcher_of(r"/api/\d+$", regex=True), re.Pattern)
    for pattern, regex in (("([", True), ("api/items", False)):
        with pytest.raises(InvalidParameter) as refused:
            matcher_of(pattern, regex)
        assert refused.value.details["field"] == "url"
