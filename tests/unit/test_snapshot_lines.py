"""The one parser of snapshot lines (daemon/snapshots/aria_parser.py), without a browser.

Playwright writes each line as YAML: a key (`role "name" [attrs]`, single-quoted when it holds `: `,
` #`, a leading quote...) and an optional value (double-quoted when needed). Every line must give
back its role, name and ref whatever quoting was chosen; the lines below are Playwright's own output
for tests/site/widgets.html.
"""

from __future__ import annotations

import json

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from browserd.daemon.snapshots import aria_capture, aria_filters, aria_parser
from browserd.daemon.snapshots.delta import delta
from browserd.daemon.snapshots.field_edit import with_value
from browserd.daemon.snapshots.link_urls import shown_url
from browserd.daemon.snapshots.reader import _refs
from browserd.daemon.snapshots.secret_fields import _framed_fields, hide_value

WIDGETS = """\
- main [ref=e2]:
  - tablist [ref=e5]:
    - tab [selected] [ref=e6] [cursor=pointer]:
      - 'link "Tab #1" [ref=e7]':
        - /url: "#tabs-1"
    - tab [ref=e8] [cursor=pointer]:
      - 'link "Tab #2: \\"Details\\"" [ref=e9]':
        - /url: "#tabs-2"
    - tab [ref=e10] [cursor=pointer]:
      - 'link "Tab #3 it''s a ''quote'' \\\\ back" [ref=e11]':
        - /url: "#tabs-3"
  - tablist [ref=e14]:
    - 'tab "Section #40" [ref=f1e5] [collapsed]'
    - 'tab "Note: read me" [ref=e19] [cursor=pointer]'
    - paragraph [ref=e20]: "Note: a value with \\"quotes\\" and \\\\"
  - 'button "Say \\"hi\\": now" [ref=e21]'"""

# Letters and the characters YAML quoting is about; no digits, which YAML 1.1 would read as numbers/dates.
TEXT = st.text(alphabet=st.sampled_from("ab Z#:'\"\\-[]{}&*!|>%@`,?\t\n"), max_size=30)
# Keys hold the name as a JSON string, so never a raw tab or line break.
KEY = st.text(alphabet=st.sampled_from("ab Z#:'\"\\-[]{}&*!|>%@`,?"), min_size=1, max_size=30)


@pytest.mark.parametrize(
    ("ref", "role", "name"),
    [
        ("e7", "link", "Tab #1"),
        ("e9", "link", 'Tab #2: "Details"'),
        ("e11", "link", "Tab #3 it's a 'quote' \\ back"),
        ("f1e5", "tab", "Section #40"),
        ("e19", "tab", "Note: read me"),
        ("e21", "button", 'Say "hi": now'),
    ],
)
def test_quoted_lines_give_their_ref_role_and_name(ref: str, role: str, name: str) -> None:
    nodes = {node.ref: node for node in aria_parser.walk(aria_parser.parse(WIDGETS)) if node.ref}
    assert ref in nodes, f"ref {ref} was not read from its line; refs read: {sorted(nodes)}"
    assert (nodes[ref].role, nodes[ref].name) == (role, name)


def test_quoted_lines_keep_their_attributes_children_and_values() -> None:
    nodes = {node.ref: node for node in aria_parser.walk(aria_parser.parse(WIDGETS)) if node.ref}
    assert nodes["f1e5"].attrs == {"ref": "f1e5", "collapsed": "true"}
    assert nodes["e19"].interactive and nodes["e19"].attrs["cursor"] == "pointer"
    assert [child.plain for child in nodes["e7"].children] == ["/url: #tabs-1"]
    assert nodes["e20"].value == 'Note: a value with "quotes" and \\'


def test_interactive_listing_keeps_links_inside_tabs() -> None:
    listing = "\n".join(aria_parser.render(aria_filters.interactive_only(aria_parser.parse(WIDGETS))))
    for ref in ("e6", "e7", "e8", "e9", "e10", "e11", "f1e5", "e19", "e21"):
        assert f"[ref={ref}]" in listing, f"{ref} missing from the interactive listing:\n{listing}"
    assert "/url" not in listing and "[cursor=pointer]" not in listing


def test_a_label_that_needs_quoting_is_written_so_it_reads_back() -> None:
    key = f"clickable {json.dumps('Delete: item #2')} [ref=c1]"
    node = aria_parser.parse_line(aria_parser.render_line(key))
    assert (node.role, node.name, node.ref) == ("clickable", "Delete: item #2", "c1")


@given(name=TEXT, value=st.none() | TEXT)
def test_any_name_and_value_round_trip_through_quoting(name: str, value: str | None) -> None:
    key = f"button {json.dumps(name, ensure_ascii=False)} [ref=e5]"
    written = aria_parser.render_line(key, value)
    node = aria_parser.parse_line(written)
    assert (node.role, node.name, node.ref, node.value) == ("button", name, "e5", value), written


@given(key=KEY, value=st.none() | TEXT)
def test_quoting_means_to_a_yaml_reader_what_the_parser_reads(key: str, value: str | None) -> None:
    """A maintained YAML library as the judge: the line is a YAML list item with the same key and value."""
    written = aria_parser.render_line(key, value)
    loaded = yaml.load(f"- {written}", Loader=yaml.CSafeLoader)
    expected = [key] if value is None else [{key: value}]
    assert loaded == expected, written
    node = aria_parser.parse_line(written)
    assert (node.key, node.value) == (key, value)


# -- the lean form a model reads (aria_filters.lean) and deltas without context (delta.delta) ----------

ARTICLE = """\
- generic [active] [ref=e1]:
  - navigation "Site" [ref=e3]:
    - link "Home" [ref=e4] [cursor=pointer]:
      - /url: http://127.0.0.1:8000/index.html
    - link "Elsewhere" [ref=e5] [cursor=pointer]:
      - /url: https://example.org/page
  - main [ref=e7]:
    - heading "An article" [level=1] [ref=e9]
    - paragraph [ref=e10]: Some text.
    - img "A chart" [ref=e11]
    - generic [ref=e12] [cursor=pointer]: Open menu
    - generic [ref=e13]:
      - text: Full name
      - textbox "Full name" [ref=e14] [required]
    - generic [ref=e15]:
      - checkbox "Subscribe" [ref=e16]
      - text: Subscribe
    - generic [ref=e17]:
      - heading "Teapot" [level=3] [ref=e18]
      - button "Buy" [ref=e19] [cursor=pointer]"""


def lean(text: str) -> str:
    return "\n".join(aria_parser.render(aria_filters.lean(aria_parser.parse(text), "http://127.0.0.1:8000")))


def test_lean_lines_leave_out_what_the_role_implies_and_refs_no_tool_needs() -> None:
    shown = lean(ARTICLE)
    assert "[cursor=pointer]" not in shown.replace("generic [ref=e12] [cursor=pointer]", ""), shown
    assert "generic [ref=e12] [cursor=pointer]: Open menu" in shown, "a pointer is all that says a div is clickable"
    assert "- paragraph: Some text." in shown, shown
    paragraph = next(
        node for node in aria_parser.walk(aria_filters.lean(aria_parser.parse(ARTICLE))) if node.role == "paragraph"
    )
    assert paragraph.ref == "e10", "the node keeps its ref for browser_find; only the line leaves it out"
    for kept in ("e1", "e3", "e4", "e7", "e9", "e11", "e12", "e14", "e16", "e17", "e19"):
        assert f"[ref={kept}]" in shown, f"{kept} is actionable, a container or a heading: it keeps its ref\n{shown}"


def test_a_prose_line_holding_something_that_acts_keeps_its_ref() -> None:
    """A draggable list item, or a paragraph around a focusable tooltip trigger, is what an agent drags or
    hovers: the annotations name their lines as actionable and lean() leaves their refs shown."""
    nodes = aria_parser.parse("- list:\n  - listitem [ref=e3]: Alpha task\n  - listitem [ref=e4]: Bravo task")
    shown = "\n".join(aria_parser.render(aria_filters.lean(nodes, "", {"e3"})))
    assert "listitem [ref=e3]: Alpha task" in shown and "- listitem: Bravo task" in shown, shown


def test_an_inline_actionable_element_marks_the_line_it_was_folded_into() -> None:
    text = "- paragraph [ref=e5] [box=0,0,400,20]: Pricing\n- paragraph [ref=e6] [box=0,30,400,20]: Plain"
    # [x, y, w, h, attributes, selector, label, tag, actionable]: a span with tabindex inside the first paragraph.
    captured = aria_capture._annotate(text, [[10, 2, 60, 16, [], None, None, "SPAN", True]])
    assert captured.actionable == {"e5"}, captured
    assert "[box=" not in captured.text


def test_a_hidden_control_a_widget_mirrors_shows_once_as_the_widget() -> None:
    """Select2 keeps the <select> it replaces, hidden with aria-hidden, right before its own combobox: the
    combobox is the line to act on (both refs still resolve); a hidden control nothing mirrors stays."""
    shown = lean(
        "- generic [ref=e4]:\n  - text: Country\n  - combobox [aria-hidden] [ref=e5]\n"
        '  - generic:\n    - combobox "Pick one" [ref=e7] [cursor=pointer]: Pick one\n'
        '- checkbox [aria-hidden] [ref=e9]\n- button "Go" [ref=e10]'
    )
    assert "e5" not in shown and 'combobox "Pick one" [ref=e7]: Pick one' in shown, shown
    assert "checkbox [aria-hidden] [ref=e9]" in shown, shown


def test_a_label_repeating_its_field_goes_and_its_wrapper_with_it() -> None:
    shown = lean(ARTICLE)
    assert '    - textbox "Full name" [ref=e14] [required]\n' in shown, shown
    assert '    - checkbox "Subscribe" [ref=e16]\n' in shown, shown
    assert "text: Full name" not in shown and "text: Subscribe" not in shown and "e13" not in shown
    # A wrapper around more than one line groups them (which button is whose): it stays.
    assert (
        '    - generic [ref=e17]:\n      - heading "Teapot" [level=3] [ref=e18]\n      - button "Buy" [ref=e19]'
        in shown
    )


def test_a_link_on_the_same_origin_shows_its_path_only() -> None:
    shown = lean(ARTICLE)
    assert "- /url: /index.html" in shown and "- /url: https://example.org/page" in shown, shown


def test_every_ref_a_lean_line_shows_reads_back_from_it() -> None:
    shown = lean(WIDGETS)
    nodes = {node.ref: node for node in aria_parser.walk(aria_parser.parse(shown)) if node.ref}
    for ref in ("e7", "e9", "e11", "f1e5", "e19", "e21"):
        assert ref in nodes, f"{ref} lost:\n{shown}"
    assert nodes["e19"].name == "Note: read me" and "[cursor=pointer]" not in shown
    assert nodes["e6"].children[0].ref == "e7", "the link keeps its place under its tab"


@given(name=KEY)
def test_a_quoted_line_stays_quoted_once_its_pointer_is_gone(name: str) -> None:
    line = aria_parser.render_line(f"link {json.dumps(name, ensure_ascii=False)} [ref=e5] [cursor=pointer]")
    shown = lean(f"- {line}")
    node = aria_parser.parse(shown)[0]
    assert (node.role, node.name, node.ref) == ("link", name, "e5"), shown
    assert yaml.load(shown, Loader=yaml.CSafeLoader) is not None


def test_a_delta_shows_a_changed_line_once_and_a_gone_line_with_a_minus() -> None:
    before = """\
- main [ref=e2]:
  - tablist [ref=e3]:
    - tab "Overview" [selected] [ref=e4]
    - tab "Details" [ref=e5]
  - tabpanel "Overview" [ref=e6]:
    - paragraph: Overview panel
  - status: 12:00:01"""
    after = """\
- main [ref=e2]:
  - tablist [ref=e3]:
    - tab "Overview" [ref=e4]
    - tab "Details" [active] [selected] [ref=e5]
  - tabpanel "Details" [ref=e7]:
    - paragraph: Details panel
  - status: 12:00:02"""
    changed = delta(aria_parser.parse(before), aria_parser.parse(after), ("12:00:01", "12:00:02")).text
    assert changed.splitlines() == [
        '- - tabpanel "Overview" [ref=e6]:',
        '+   - tab "Overview" [ref=e4]',
        '+   - tab "Details" [selected] [ref=e5]',
        '+ - tabpanel "Details" [ref=e7]:',
        "+   - paragraph: Details panel",
    ], changed
    focused = aria_parser.parse(before.replace("[ref=e5]", "[active] [ref=e5]"))
    assert delta(aria_parser.parse(before), focused).text == "", "focus alone is no change"


def test_a_part_rendered_anew_the_same_is_no_change_and_its_old_refs_stand_for_the_new() -> None:
    before = """\
- main [ref=e2]:
  - heading "Results" [level=1] [ref=e3]
  - generic [ref=e4]:
    - generic [ref=e5] [cursor=pointer]:
      - link "Teapot" [ref=e6]:
        - /url: /p/1
      - button "Add to cart" [ref=e7]
    - generic [ref=e8] [cursor=pointer]:
      - link "Mug" [ref=e9]:
        - /url: /p/2
      - button "Add to cart" [ref=e10]
  - paragraph: 2 products"""
    # A framework re-renders the list: the teapot card is the same (new refs), the mug card went, a kettle came.
    after = """\
- main [ref=e2]:
  - heading "Results" [level=1] [ref=e13]
  - generic [ref=e14]:
    - generic [ref=e15] [cursor=pointer]:
      - link "Teapot" [ref=e16]:
        - /url: /p/1
      - button "Add to cart" [ref=e17]
    - generic [ref=e18] [cursor=pointer]:
      - link "Kettle" [ref=e19]:
        - /url: /p/3
      - button "Add to cart" [ref=e20]
  - paragraph: 2 products, 1 new"""
    changed = delta(aria_parser.parse(before), aria_parser.parse(after))
    assert changed.text.splitlines() == [
        "-   - generic [ref=e8] [cursor=pointer]:",
        "+   - generic [ref=e18] [cursor=pointer]:",
        '+     - link "Kettle" [ref=e19]:',
        "+       - /url: /p/3",
        '+     - button "Add to cart" [ref=e20]',
        "+ - paragraph: 2 products, 1 new",
    ], changed.text
    # Only what was the same element in the same place: the mug card's refs stand for nothing.
    assert changed.aliases == {"e3": "e13", "e4": "e14", "e5": "e15", "e6": "e16", "e7": "e17"}
    # Another element with the same role and name in the same place reads the same: it stands for the old one.
    same = delta(
        aria_parser.parse(before),
        aria_parser.parse(before.replace('"Add to cart" [ref=e10]', '"Add to cart" [ref=e21]')),
    )
    assert (same.text, same.aliases) == ("", {"e10": "e21"})


def test_a_name_that_looks_like_an_attribute_keeps_it() -> None:
    shown = lean('- button "Sort [cursor=pointer]" [ref=e5] [cursor=pointer]\n- paragraph [ref=e6]: " [ref=e6]"')
    assert shown == '- button "Sort [cursor=pointer]" [ref=e5]\n- paragraph: " [ref=e6]"', shown


def test_only_refs_of_a_child_frame_count_as_in_a_frame() -> None:
    """After a navigation the page's own refs carry a frame prefix too (`f2e2`); only another prefix is a
    child frame's, whose actions settle that frame first (and pay for finding it)."""
    text = (
        '- generic [active] [ref=f2e1]:\n  - button "Pay" [ref=f2e2]\n  - iframe [ref=f2e3]:\n'
        '    - button "Confirm" [ref=f3e2]'
    )
    refs = _refs(aria_parser.parse(text), {})
    assert {ref: info.in_frame for ref, info in refs.items()} == {
        "f2e1": False,
        "f2e2": False,
        "f2e3": False,
        "f3e2": True,
    }
    first = _refs(aria_parser.parse('- button "A" [ref=e2]\n- iframe [ref=e3]:\n  - button "C" [ref=f1e2]'), {})
    assert [info.in_frame for info in first.values()] == [False, False, True]


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://127.0.0.1:8000/shop?q=kettle&utm_source=news&utm_medium=mail", "/shop?q=kettle"),
        ("https://example.org/p?id=7&gclid=abc&fbclid=def#reviews", "https://example.org/p?id=7#reviews"),
        ("/p?UTM_Campaign=x", "/p"),
        ("/search?ref=nav&utm=kept&q=", "/search?ref=nav&utm=kept&q="),  # only what is known to track goes
        ("/a?" + "x" * 200, "/a?" + "x" * 96 + "…"),
    ],
)
def test_a_link_shows_where_it_goes_without_what_only_tracks(url: str, shown: str) -> None:
    assert shown_url(url, "http://127.0.0.1:8000") == shown


# -- a fill's field rewritten in the last snapshot (snapshots/field_edit.py) -----------------------

FORM = """\
- generic [active] [ref=e1]:
  - textbox "Name" [ref=e3] [required]: Ada
  - textbox "City" [ref=e4]:
    - /placeholder: Your city
  - 'textbox "Note: #1" [ref=e5]'
  - textbox "Tags" [ref=e6]:
    - list [ref=e7]:
      - listitem: one
  - text: "see [ref=e8]"
  - button "Go [ref=e8]" [ref=e8]"""


def test_a_field_line_is_rewritten_as_playwright_writes_it() -> None:
    name = with_value(FORM, "e3", "Grace: #2")
    assert name is not None
    assert '  - textbox "Name" [active] [ref=e3] [required]: "Grace: #2"' in name.splitlines()
    assert name.splitlines()[0] == "- generic [ref=e1]:", "the focus mark moves to the field"
    city = with_value(FORM, "e4", "London")
    assert city is not None and city.splitlines()[2:5] == [
        '  - textbox "City" [active] [ref=e4]:',
        "    - /placeholder: Your city",
        "    - text: London",
    ]
    cleared = with_value(city, "e4", "")
    assert cleared is not None and cleared.splitlines()[2:5] == [
        '  - textbox "City" [active] [ref=e4]:',
        "    - /placeholder: Your city",
        "  - 'textbox \"Note: #1\" [ref=e5]'",
    ]
    quoted = with_value(FORM, "e5", "x")
    assert quoted is not None and "  - 'textbox \"Note: #1\" [active] [ref=e5]': x" in quoted.splitlines()
    assert aria_parser.parse(quoted)[0].children[2].value == "x"


def test_a_field_line_that_cannot_be_rewritten_for_sure_is_left_to_a_fresh_read() -> None:
    assert with_value(FORM, "e9", "x") is None, "no such ref"
    assert with_value(FORM, "e8", "x") is None, "a ref that two lines name"
    assert with_value(FORM, "e6", "x") is None, "a field holding elements"
    assert with_value(FORM, "e3", "two  spaces") is None, "spaces Playwright folds"
    assert with_value(FORM, "e3", " padded") is None


def test_a_password_fields_value_turns_to_bullets_on_its_line_or_its_text_line() -> None:
    lines = [
        "- form [ref=e2]:",
        '  - textbox "Password" [ref=e3] [type=password]: "correct: horse"',
        '  - textbox "Repeat" [ref=e4] [type=password]:',
        "    - /placeholder: The same again",
        "    - text: hunter2",
        '  - group "Hint" [ref=e5]:',
        "    - text: not the field's",
    ]
    hide_value(lines, 1)
    hide_value(lines, 2)
    assert lines[1] == '  - textbox "Password" [ref=e3] [type=password]: ' + "\u2022" * 14
    assert lines[3:5] == ["    - /placeholder: The same again", "    - text: " + "\u2022" * 7]
    assert lines[6] == "    - text: not the field's", "a line outside the field keeps its text"
    assert [node.value for node in aria_parser.walk(aria_parser.parse("\n".join(lines[:2])))] == [None, "\u2022" * 14]


def test_only_textboxes_inside_a_child_frame_that_hold_a_value_are_asked_about() -> None:
    lines = [
        '- textbox "Search" [ref=e2]: teapots',
        '- iframe "Card check" [ref=e3]:',
        '  - textbox "Cardholder" [ref=f1e2]',
        '  - textbox "Security code" [ref=f1e3]: "987"',
        '  - textbox "Note" [ref=f1e4]:',
        "    - /placeholder: Anything else",
        "    - text: ring twice",
        '- textbox "After the frame" [ref=e4]: shown',
    ]
    assert _framed_fields(lines) == [(3, "f1e3"), (4, "f1e4")]
