"""Issue 11 items 7 and 8: sitemaps as the server sends them (gzip, declared encodings) and CSS selectors
parsed by a real selector parser."""

from __future__ import annotations

import gzip

import pytest

from browserd.daemon.errors import InvalidParameter
from browserd.daemon.scrape.extract import extract
from browserd.daemon.scrape.mapping import parse_sitemap
from browserd.daemon.scrape.selectors import check_selectors

URL = "https://example.org/"
PAGE = """<html><body>
<a title="x,y" href="/comma">Comma in a value</a>
<a title="x" href="/plain">Plain</a>
<p class="note">Note</p><p>Other</p>
</body></html>"""


def test_item8_a_comma_inside_an_attribute_value_is_part_of_the_value() -> None:
    only = extract(PAGE, URL, only_main_content=False, include_tags=['a[title="x,y"]'])
    assert "Comma in a value" in only.markdown
    assert "Plain" not in only.markdown and "Note" not in only.markdown


def test_item8_comma_lists_and_structural_pseudo_classes_still_work() -> None:
    only = extract(PAGE, URL, only_main_content=False, include_tags=["p.note, a[title=x]"])
    assert "Note" in only.markdown and "Plain" in only.markdown and "Comma" not in only.markdown
    first = extract(PAGE, URL, only_main_content=False, include_tags=["p:not(.note)"])
    assert "Other" in first.markdown and "Note" not in first.markdown


@pytest.mark.parametrize("selector", ["a:hover", "p::text", "a[title=", "[foo:bar]", "div >", "  "])
def test_item8_a_bad_selector_is_an_invalid_parameter_naming_it(selector: str) -> None:
    with pytest.raises(InvalidParameter) as caught:
        check_selectors(["p", selector], "excludeTags")
    info = caught.value.info()
    assert info.error_code == "INVALID_PARAMETER"
    assert info.details == {"field": "excludeTags", "selector": selector}
    assert repr(selector) in info.error or "empty" in info.error


SITEMAP = """<?xml version="1.0" encoding="{encoding}"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>https://example.org/caf\u00e9</loc></url>
  <url><loc>https://example.org/na\u00efve</loc></url>
</urlset>
"""
INDEX = """<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sitemap><loc>https://example.org/pages.xml.gz</loc></sitemap>
</sitemapindex>
"""
EXPECTED = ["https://example.org/caf\u00e9", "https://example.org/na\u00efve"]


@pytest.mark.parametrize("encoding", ["ISO-8859-1", "UTF-16", "UTF-8"])
def test_item7_a_sitemap_is_read_in_the_encoding_it_declares(encoding: str) -> None:
    body = SITEMAP.format(encoding=encoding).encode(encoding)
    assert parse_sitemap(body) == (EXPECTED, [])


def test_item7_a_gzipped_sitemap_is_read_whatever_its_name() -> None:
    body = gzip.compress(SITEMAP.format(encoding="ISO-8859-1").encode("ISO-8859-1"))
    assert parse_sitemap(body) == (EXPECTED, [])
    assert parse_sitemap(gzip.compress(INDEX.encode())) == ([], ["https://example.org/pages.xml.gz"])


def test_item7_what_is_not_a_sitemap_gives_nothing() -> None:
    assert parse_sitemap(b"<html><body>not found</body></html>") == ([], [])
    assert parse_sitemap(b"\x1f\x8b broken gzip") == ([], [])
    assert parse_sitemap(b"") == ([], [])
