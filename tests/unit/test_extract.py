"""The scrape page pipeline (daemon/scrape/): main content, markdown shape, links and metadata."""

from __future__ import annotations

import re

import lxml.html  # type: ignore[import-untyped]
import pytest

from browserd.daemon.scrape import cleaner, restore
from browserd.daemon.scrape.boilerplate import drop_boilerplate
from browserd.daemon.scrape.extract import Link, extract, extract_links, page_metadata

URL = "https://news.example.org/2024/05/story.html"

ARTICLE_TEXT = " ".join(
    f"Paragraph {n} of the story explains in plain words what happened at the harbour that morning, "
    "who saw it and why the town council met again in the evening to decide what to do next."
    for n in range(1, 5)
)

PAGE = f"""<!doctype html>
<html lang="en-GB"><head>
<title>Harbour story | Example News</title>
<meta name="description" content="What happened at the harbour.">
<link rel="canonical" href="/2024/05/story">
<script>var tracking = "SCRIPT-TEXT";</script><style>.x {{ color: red }}</style>
</head><body>
<div id="cookie-banner">We use cookies to improve your experience. Accept all cookies</div>
<header><nav><a href="/">Home</a> <a href="/world">World</a> <a href="/sport">Sport</a></nav></header>
<main><article>
<h1>Harbour story</h1>
<p>{ARTICLE_TEXT}</p>
<h2>What the council said</h2>
<p>The council said that the <a href="/council#minutes">minutes</a> will be published, and that the
<a href="https://harbour.example.com/plan">harbour plan</a> stays as it is for now, as before.</p>
<ul><li>First point the council made about the boats</li><li>Second point the council made about the quay</li></ul>
<table><tr><th>Boat</th><th>Length</th></tr>
<tr><td>Ariel</td><td>12 m</td></tr><tr><td>Brisa</td><td>9 m</td></tr></table>
<p><img src="/img/harbour.jpg" alt="The harbour"> The harbour at dawn, as the fishermen left for the day.</p>
<img src="https://t.example.net/pixel.gif" width="1" height="1">
<p>{ARTICLE_TEXT}</p>
</article></main>
<footer><p>Footer: About us · Contact · Privacy policy · Terms of use</p></footer>
</body></html>"""


def test_main_content_keeps_the_article_and_drops_nav_footer_and_cookie_banner() -> None:
    result = extract(PAGE, URL)
    assert result.main_content_found
    assert "Paragraph 1 of the story" in result.markdown
    for boilerplate in ("Sport", "Footer: About us", "Accept all cookies", "SCRIPT-TEXT", "color: red"):
        assert boilerplate not in result.markdown, f"{boilerplate!r} leaked into {result.markdown!r}"


def test_headings_lists_and_tables_keep_their_markdown_shape() -> None:
    markdown = extract(PAGE, URL).markdown
    assert re.search(r"^#{1,3} What the council said$", markdown, re.M), markdown
    assert "- First point the council made about the boats" in markdown
    assert "\n- Second point the council made about the quay" in markdown
    table = [line for line in markdown.splitlines() if "|" in line]
    assert len(table) == 4, markdown  # header, separator, two rows
    assert re.match(r"^\|?\s*-{3,}\s*\|\s*-{3,}\s*\|?$", table[1]), table
    assert "Ariel" in table[2] and "12 m" in table[2]


def test_links_resolve_against_the_page_url() -> None:
    markdown = extract(PAGE, URL).markdown
    assert "[minutes](https://news.example.org/council)" in markdown
    assert "[harbour plan](https://harbour.example.com/plan)" in markdown


def test_whole_page_keeps_navigation_and_images_absolute_and_drops_banners_and_tracking_pixels() -> None:
    """S0-70: onlyMainContent=false is the whole page, navigation included; banners and pixels still go."""
    result = extract(PAGE, URL, only_main_content=False)
    assert not result.main_content_found
    assert "![The harbour](https://news.example.org/img/harbour.jpg)" in result.markdown
    assert "pixel.gif" not in result.markdown
    assert "Footer: About us" in result.markdown  # whole page: the footer is content too
    assert "Accept all cookies" not in result.markdown and "SCRIPT-TEXT" not in result.markdown
    assert "Sport" in result.markdown  # the page's navigation is part of the whole page
    assert "<footer>" in result.html


def test_nested_lists_are_flush_left_with_indented_children() -> None:
    page = (
        "<html><body><ul><li>One<ul><li>One.a</li></ul></li><li>Two</li></ul><pre>  code\n    more</pre></body></html>"
    )
    markdown = extract(page, URL, only_main_content=False).markdown
    assert markdown.startswith("- One\n  - One.a\n- Two\n"), repr(markdown)
    assert "```\n  code\n    more\n```" in markdown, repr(markdown)


def test_markdown_whitespace_is_tidy() -> None:
    page = (
        "<html><body><div><p>One   line.<br><br><br></p>\n\n\n\n<p>  </p><p>Two.</p>"
        "<div><br></div><p>Three.</p></div></body></html>"
    )
    markdown = extract(page, URL, only_main_content=False).markdown
    assert "\n\n\n" not in markdown
    assert all(line == line.rstrip() for line in markdown.splitlines()), repr(markdown)
    assert markdown.endswith("\n") and not markdown.startswith("\n")


def test_empty_links_and_links_to_nowhere_disappear() -> None:
    page = '<html><body><p>Read <a href="javascript:void(0)">this</a> and <a href="/x"></a>that.</p></body></html>'
    markdown = extract(page, URL, only_main_content=False).markdown
    assert "[](" not in markdown and "javascript" not in markdown
    assert "Read this and that." in markdown


def test_empty_main_content_falls_back_to_the_whole_page() -> None:
    """TC-04: a page trafilatura finds no article in still gives its content."""
    page = "<html><body><header><h1>Dashboard</h1></header><div><img src='/chart.png' alt='Sales chart'></div></body>"
    result = extract(page, URL)
    assert not result.main_content_found
    assert result.markdown == "# Dashboard\n\n![Sales chart](https://news.example.org/chart.png)\n"


def test_an_empty_page_gives_empty_markdown() -> None:
    result = extract("", URL)
    assert result.markdown == ""
    assert not result.main_content_found


def test_content_after_a_stray_early_body_end_tag_is_extracted() -> None:
    page = f"<html><head><title>Old page</title></head><body></body><div><p>{ARTICLE_TEXT}</p></div></html>"
    for only_main_content in (True, False):
        assert "Paragraph 4 of the story" in extract(page, URL, only_main_content=only_main_content).markdown


def test_a_tag_left_open_inside_noscript_does_not_swallow_the_page() -> None:
    # Old pages open a layout <div> in a <noscript> for readers without scripts; a browser reads the
    # noscript as text up to </noscript>, so what follows is the page, not script fallback.
    page = (
        '<html><body><script>document.write("<div id=layout>")</script><noscript><div id="layout"></noscript>'
        '<script>document.write("<noscript>")</script>'
        f"<h1>Harbour</h1><p>{ARTICLE_TEXT}</p><noscript><p>Please enable JavaScript</p></noscript></body></html>"
    )
    for only_main_content in (True, False):
        markdown = extract(page, URL, only_main_content=only_main_content).markdown
        assert "Paragraph 4 of the story" in markdown, markdown
        assert "enable JavaScript" not in markdown, markdown


# Every C0 control but tab, line feed and carriage return, raw and as character references, with a lone
# surrogate and the two non-characters XML refuses: old pages hold them and lxml refuses them later.
CONTROLS = "".join(chr(c) for c in range(0x20) if chr(c) not in "\t\n\r") + "\ud800\udfff\ufffe\uffff"
CONTROL_REFS = "&#0;&#8;&#x0b;&#12;&#26;&#x1F;&#xD800;&#65535;&#1114112;"


@pytest.mark.parametrize("only_main_content", [True, False])
def test_a_page_with_control_characters_in_text_and_attributes_extracts(only_main_content: bool) -> None:
    page = (
        f'<html lang="en{CONTROLS}"><head><title>Old{CONTROLS} page</title>'
        f'<meta name="description" content="About{CONTROL_REFS} boats"></head><body>'
        f'<p class="x{CONTROLS}" title="t{CONTROL_REFS}">{ARTICLE_TEXT}{CONTROLS} and {CONTROL_REFS}after the controls'
        f' <a href="/boats{CONTROLS}" title="{CONTROLS}">the boats{CONTROL_REFS}</a> &#151; still here.</p>'
        f"<p>{ARTICLE_TEXT} The last{CONTROLS}words{CONTROL_REFS}of the page.</p>"
        "<footer>Footer text</footer></body></html>"
    )
    result = extract(page, URL, only_main_content=only_main_content)
    assert "after the controls" in result.markdown and "— still here" in result.markdown, result.markdown
    assert "The last words of the page." in result.markdown  # form feeds part words; nothing after cut off
    assert not re.search("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]", result.markdown + result.html)
    assert result.metadata.title == "Old page" and result.metadata.description == "About boats"
    assert [link.text for link in extract_links(page, URL) if "boats" in link.url] == ["the boats"]


def test_exclude_tags_remove_and_include_tags_keep_only_matches() -> None:
    excluded = extract(PAGE, URL, only_main_content=False, exclude_tags=["table", ".nothing", "ul > li"])
    assert "Ariel" not in excluded.markdown and "First point" not in excluded.markdown
    assert "Paragraph 1" in excluded.markdown
    included = extract(PAGE, URL, only_main_content=False, include_tags=["h2", "table"])
    assert "What the council said" in included.markdown and "Ariel" in included.markdown
    assert "Paragraph 1" not in included.markdown


def test_an_unsupported_selector_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="unsupported CSS selector"):
        extract(PAGE, URL, include_tags=["a:hover"])


def test_html_format_is_the_cleaned_main_content() -> None:
    result = extract(PAGE, URL)
    assert "Paragraph 1" in result.html and "<script" not in result.html
    assert "Footer: About us" not in result.html and 'href="https://news.example.org/council"' in result.html


def test_links_are_absolute_deduplicated_without_fragments_and_web_only() -> None:
    page = """<html><head><base href="https://cdn.example.org/base/"></head><body>
    <a href="a.html#top">A</a> <a href="a.html#bottom">A again</a> <a href="/b"><img alt="B icon"></a>
    <a href="mailto:x@example.org">mail</a> <a href="javascript:go()">js</a> <a href="#local">here</a>
    <a href="ftp://example.org/f">ftp</a> <a href="HTTPS://Other.example.com/c?q=1">C</a> <a href="/b">B text</a>
    </body></html>"""
    assert extract_links(page, URL) == [
        Link("https://cdn.example.org/base/a.html", "A"),
        Link("https://cdn.example.org/b", "B icon"),
        Link("https://cdn.example.org/base/", "here"),
        Link("https://other.example.com/c?q=1", "C"),
    ]


def test_metadata_has_title_description_language_and_canonical_url() -> None:
    meta = page_metadata(PAGE, URL)
    assert meta.title == "Harbour story | Example News"
    assert meta.description == "What happened at the harbour."
    assert meta.language == "en-GB"
    assert meta.canonical_url == "https://news.example.org/2024/05/story"
    assert extract(PAGE, URL).metadata == meta


def test_metadata_falls_back_to_open_graph_and_is_empty_when_absent() -> None:
    page = '<html><head><meta property="og:title" content="OG title"><meta property="og:locale" content="fr_FR"></head>'
    meta = page_metadata(page, URL)
    assert (meta.title, meta.language, meta.description, meta.canonical_url) == ("OG title", "fr-FR", "", None)


def _story(n: int, prefix: str) -> str:
    return (
        f"<p>{prefix} paragraph {n} tells in plain words what the harbour master saw that morning "
        "and why the town council met again in the evening to decide what to do next.</p>"
    )


def test_an_article_split_over_identical_containers_comes_back_whole() -> None:
    first = "".join(_story(n, "Early") for n in range(1, 6))
    later = "".join(_story(n, "Later") for n in range(1, 4))
    page = f"""<html><body><nav><a href="/">Home</a></nav><main><article><h1>Harbour</h1>
    <div class="chunks"><div class="grid"><div class="body article__body">{first}</div></div>
    <aside class="ad"><p>Advertisement</p></aside>
    <div class="grid"><div class="body article__body">{later}</div></div></div>
    </article></main><footer><p>Footer text</p></footer></body></html>"""
    markdown = extract(page, URL).markdown
    assert "Early paragraph 1 tells" in markdown, markdown
    assert "Later paragraph 3 tells" in markdown, markdown
    assert markdown.index("Early paragraph 5") < markdown.index("Later paragraph 1"), markdown


def test_text_loose_between_headings_of_an_old_page_is_extracted_under_its_headings() -> None:
    # No <p> around the text: it sits between headings and <br>s, as old pages write it
    sections = "".join(
        f"<h3>Section {n}</h3>{_story(n, 'Loose')[3:-4]}<br><br>{_story(n, 'Second loose')[3:-4]}" for n in range(1, 4)
    )
    page = f"""<html><body><div id="menu"><a href="/">Home</a> <a href="/a">About</a></div>
    <h1>Harbour notes</h1><p>Notes kept by the harbour master.</p>{sections}</body></html>"""
    markdown = extract(page, URL).markdown
    for n in range(1, 4):
        assert f"Loose paragraph {n} tells" in markdown and f"Second loose paragraph {n} tells" in markdown, markdown
    assert markdown.index("### Section 2") < markdown.index("Loose paragraph 2 tells"), markdown


def test_loose_text_becomes_paragraphs_but_loose_links_microdata_and_short_lines_stay_loose() -> None:
    words = "in plain words what the harbour master saw that morning and why it mattered to the town"
    page = lxml.html.document_fromstring(
        f"<html><body>Intro <b>in bold</b> {words}<h3>Head</h3>Loose line<br> {words}<p>A paragraph</p> <br> "
        f'<div>inner <i>{words}</i><p>q</p>Short line <a href="/x">and a link here and there {words}</a></div>'
        f'<!-- note --><span itemprop="name">Ann</span> <span class="hidden"><span itemprop="url">/a</span>'
        f'<span itemprop="x">{words}</span></span><p>z</p>Thank you<h4>Foot</h4></body></html>'
    )
    text = page.text_content()
    cleaner.wrap_loose_text(page)
    assert page.text_content() == text
    paragraphs = [" ".join(p.text_content().split()) for p in page.iter("p")]
    assert paragraphs == [f"Intro in bold {words}", f"Loose line {words}", "A paragraph", f"inner {words}", "q", "z"]


def _post(n: int, words: str) -> str:
    runs = "<br><br>".join(
        f"Post {n} run {r} says in plain words {words} the harbour master saw that morning and why it mattered"
        for r in range(1, 4 if n != 2 else 12)
    )
    return f"""<div class="post"><h3 class="post-title">Post {n} title</h3><div class="post-body">{runs}</div>
    <p class="post-footer">posted by Ann at 8:{n}0 PM</p></div>"""


def test_every_post_of_a_page_listing_several_in_full_comes_back_in_order() -> None:
    posts = "".join(_post(n, "what") for n in range(1, 5))
    widgets = "".join(
        f'<div class="widget"><h2>Links {n}</h2><a href="/a{n}">Another blog about boats and the sea</a></div>'
        for n in range(3)
    )
    page = f"""<html><body><div id="header"><h1>Ann's harbour blog</h1></div>
    <div id="main">{posts}</div><div id="sidebar">{widgets}</div></body></html>"""
    markdown = extract(page, URL).markdown
    places = [markdown.find(f"Post {n} run 3 says") for n in range(1, 5)]
    assert all(place >= 0 for place in places) and places == sorted(places), markdown
    assert "Another blog about boats" not in markdown, markdown


@pytest.mark.parametrize("kind", ["teasers", "tab panes"])
def test_look_alike_teasers_and_tab_panes_beside_an_article_stay_out(kind: str) -> None:
    article = "".join(_story(n, "Main") for n in range(1, 6))
    if kind == "teasers":  # as long as posts, but links to other stories
        boxes = [f'<a href="/s{n}">{_story(n, "Other")[3:-4]}</a>' for n in range(3)]
    else:  # panes of text among more panes of a few words
        boxes = [_story(1, "Pane"), _story(2, "Pane"), "Map", "Photos", "Reviews"]
    others = "".join(f'<div class="box">{box}</div>' for box in boxes)
    page = lxml.html.document_fromstring(
        f'<html><body><div id="main"><div class="box">{article}</div>{others}</div></body></html>'
    )
    extracted = lxml.html.document_fromstring(f"<html><body>{article}</body></html>")
    restore.recover_posts(extracted, page, restore.block_index(page))
    text = " ".join(extracted.text_content().split())
    assert "Main paragraph 5" in text and "Other" not in text and "Pane" not in text, text


def test_trailing_link_blocks_are_dropped_whatever_their_language() -> None:
    body = "".join(_story(n, "Story") for n in range(1, 4))
    teasers = '<p><a href="/a">Outra notícia sobre o porto</a></p><p><a href="/b">Mais uma sobre barcos</a></p>'
    root = lxml.html.document_fromstring(f"<html><body>{body}<h3>Você pode gostar</h3>{teasers}</body></html>")
    drop_boilerplate(root)
    text = root.text_content()
    assert "Story paragraph 3 tells" in text
    assert "Outra notícia" not in text and "Mais uma" not in text and "Você pode gostar" not in text, text
    root = lxml.html.document_fromstring(f"<html><body>{body}{teasers}<p>© Jornal 2024</p></body></html>")
    drop_boilerplate(root)
    text = root.text_content()
    assert "© Jornal 2024" in text and "Outra notícia" not in text, text  # a short line does not stop the search


def test_paragraphs_in_named_anchors_and_text_in_heading_tags_end_an_article_unharmed() -> None:
    """Old pages wrap paragraphs in `<a name>` targets (trafilatura makes them `href=""`) and set whole
    paragraphs in heading tags: neither is a link block nor an empty heading."""
    speech = "".join(f'<p><a name="s{n}" href="">{_story(n, "Speech")[3:-4]}</a></p>' for n in range(1, 4))
    blurb = f"<h4>{_story(9, 'Blurb')[3:-4]} It goes on for a while in bold type.</h4>"
    root = lxml.html.document_fromstring(f"<html><body>{_story(0, 'Intro')}{speech}{blurb}</body></html>")
    drop_boilerplate(root)
    text = root.text_content()
    assert "Speech paragraph 3 tells" in text and "Blurb paragraph 9" in text, text


def test_embedded_tweets_inside_the_article_are_put_back_in_place() -> None:
    before = "".join(_story(n, "Before") for n in range(1, 3))
    after = "".join(_story(n, "After") for n in range(1, 3))
    tweet = (
        '<blockquote class="twitter-tweet"><p>The quay is closed until further notice, says the harbour master.</p>'
        '— Harbour (@harbour) <a href="https://twitter.com/harbour/status/1">May 1, 2024</a></blockquote>'
    )
    page = lxml.html.document_fromstring(
        f"<html><body><aside>{tweet.replace('quay', 'pier')}</aside>{before}{tweet}{after}</body></html>"
    )
    extracted = lxml.html.document_fromstring(f"<html><body>{before}{after}</body></html>")
    restore.recover_embeds(extracted, page, restore.block_index(page))
    text = " ".join(extracted.text_content().split())
    assert "The pier is closed" not in text  # outside the article's span
    assert text.index("Before paragraph 2") < text.index("The quay is closed") < text.index("After paragraph 1"), text


def test_headings_dropped_between_kept_blocks_come_back_before_the_block_they_introduce() -> None:
    intro = _story(1, "Intro")
    section = _story(1, "Section")
    page = lxml.html.document_fromstring(
        "<html><body><aside><h3>Most popular</h3><p>Teaser.</p></aside><div class='post'>"
        f'{intro}<h3><a href="https://shop.example/charger">Car Charger 72W</a></h3>{section}'
        f"<div class='box'><h4>Subscribe to our newsletter</h4></div>{_story(2, 'Section')}"
        "<div class='promo'><h4>Other story in a box</h4></div><div>" + _story(3, "Section") + "</div>"
        "</div><h3>After the article</h3><p>Footer.</p></body></html>"
    )
    extracted = lxml.html.document_fromstring(
        f"<html><body>{intro}{section}{_story(2, 'Section')}{_story(3, 'Section')}</body></html>"
    )
    restore.restore_dropped(extracted, page, restore.block_index(page))
    html = lxml.html.tostring(extracted, encoding="unicode")
    assert '<h3><a href="https://shop.example/charger">Car Charger 72W</a></h3><p>Section paragraph 1' in html, html
    assert "Subscribe" not in html  # a call to action
    assert "Other story in a box" not in html  # in a box of its own, not the next block's section
    assert "Most popular" not in html and "After the article" not in html  # outside the article's span


def test_lists_dropped_between_kept_blocks_come_back_unless_they_lead_away() -> None:
    first = '<p>The controller is cheaper today, <a href="https://shop.example/pad">as the shop shows</a>.</p>'
    buy = '<ul><li><a href="https://shop.example/pad">Get it on the shop for $39</a></li></ul>'
    steps = "<ol><li>Unplug the charger first</li><li>Then press the reset button</li></ol>"
    related = (
        '<ul><li><a href="/other-1">Another story entirely</a></li><li><a href="/other-2">And one more</a></li></ul>'
    )
    gallery = '<ul><li><img src="a.jpg"> A picture caption here</li></ul>'
    page = lxml.html.document_fromstring(
        f"<html><body>{first}{buy}{_story(1, 'A')}{steps}{_story(2, 'A')}{related}{_story(3, 'A')}"
        f"{gallery}{_story(4, 'A')}</body></html>"
    )
    extracted = lxml.html.document_fromstring(
        f"<html><body>{first}{''.join(_story(n, 'A') for n in range(1, 5))}</body></html>"
    )
    restore.restore_dropped(extracted, page, restore.block_index(page))
    html = lxml.html.tostring(extracted, encoding="unicode")
    text = " ".join(extracted.text_content().split())
    assert text.index("as the shop shows") < text.index("Get it on the shop") < text.index("A paragraph 1"), text
    assert text.index("A paragraph 1") < text.index("Unplug the charger") < text.index("A paragraph 2"), text
    assert "<ol><li>Unplug the charger first</li><li>Then press" in html, html
    assert "Another story entirely" not in text  # links elsewhere
    assert "A picture caption" not in text  # a gallery


def _layout_page(article: str) -> str:
    """An old page laid out in a table: a banner row, a menu (itself a table) in the left cell, the
    article in the right cell."""
    menu = "".join(
        f'<tr><td><a href="/{n}.php"><img src="bubble.gif" alt="{n}"></a></td><td><a href="/{n}.php">{n}</a></td></tr>'
        for n in ("Home", "About", "Products", "Delivery", "Discounts", "Contact")
    )
    return f"""<html><body><table width="750" border="0">
    <tr><td colspan="2"><a href="/"><img src="top.gif" alt="Boxes and bubbles"></a></td></tr>
    <tr><td width="115"><table class="nav">{menu}</table></td><td>{article}</td></tr>
    <tr><td colspan="2">Copyright 2006 <a href="/">Boxes</a></td></tr></table></body></html>"""


def test_an_article_in_the_cell_of_a_layout_table_is_extracted_without_the_menu_or_table_markup() -> None:
    article = "".join(
        f'<p><b>Delivery note {n}.</b> {_story(n, "Boxed")[3:-4]} See <a href="/d{n}.php">the rates</a>.</p>'
        for n in range(1, 9)
    )
    markdown = extract(_layout_page(article), URL).markdown
    for n in range(1, 9):
        assert f"Boxed paragraph {n} tells" in markdown, markdown
    assert "Discounts" not in markdown and "Contact" not in markdown, markdown
    assert "|" not in markdown and "---" not in markdown, markdown  # the layout is not rendered as a table


def test_a_table_of_rows_whose_cells_hold_paragraphs_stays_a_table() -> None:
    rows = "".join(
        f'<tr><td><a href="/scale{n}.htm">Scale {n}</a><p>A platform scale that weighs parcels of up to'
        f" {n * 50} pounds, with a dial that is easy to read.</p></td><td>{n * 50} lbs</td><td>${n * 99}.95</td></tr>"
        for n in range(1, 6)
    )
    page = f"<html><body><h1>Parcel scales</h1><p>{_story(1, 'Scales')[3:-4]}</p><table>{rows}</table></body></html>"
    table = [line for line in extract(page, URL).markdown.splitlines() if "|" in line]
    assert len(table) == 6, table  # five rows and the separator under the first
    assert "Scale 3" in table[3] and "150 lbs" in table[3] and "$297.95" in table[3], table
