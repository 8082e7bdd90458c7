"""How replay grades a name that changed (daemon/flows/match_js.py), run in real Chromium as replay runs it.

The end-to-end behaviour is tests/e2e/test_flow_mutations.py; this pins down the table a person would agree
with, so a change to the grading shows which pair it moved.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from playwright.async_api import Page

from browserd.daemon.config import BrowserConfig
from browserd.daemon.flows.match_js import MATCH_JS
from browserd.daemon.runtime.browser import BrowserRuntime

pytestmark = pytest.mark.anyio

# The typography sites use (dashes, the multiplication sign as a close glyph) is what is graded.
# ruff: noqa: RUF001

GRADES = [
    ("Archive", "Archive", "same"),
    ("Sign up", "Sign-up", "normalized"),
    ("Sign up", "SIGN UP!", "normalized"),
    ("Log in", "Login", "normalized"),
    ("Archive", "Archive (12)", "count"),
    ("Inbox (3)", "Inbox (4)", "count"),
    ("Cart", "Cart (2 items)", "count"),
    ("Place order", "Place order · $71.00", "count"),
    ("Invite member", "Invite members", "count"),
    ("Save", "Save changes", "contains"),
    ("Place order", "Place your order", "contains"),
    ("Export CSV", "Export as CSV", "contains"),
    ("Apply filters", "Apply", "contains"),
    ("M", "M — only 2 left", "contains"),
    ("Basic", "Basic – most popular", "contains"),
    ("Star 340", "Star 341", "number"),
    ("Submit", "Send", "synonym"),
    ("Sign up", "Create account", "synonym"),
    ("Log in", "Sign in", "synonym"),
    ("Delete", "Remove", "synonym"),
    ("Add to cart", "Add to bag", "synonym"),
    ("Quantity", "Qty", "synonym"),
    ("Create issue", "Add issue", "synonym"),
    ("Close", "×", "synonym"),
    ("✕", "Dismiss", "synonym"),
    ("Delete", "🗑", "synonym"),
    ("Next", "›", "synonym"),
    ("Previous", "«", "synonym"),
    # What a person would not click in the recorded one's place.
    ("Archive", "Unarchive", "differs"),
    ("Subscribe", "Unsubscribe", "differs"),
    ("Sign in", "Sign out", "differs"),
    ("Save", "Save as draft", "differs"),
    ("Export", "Export as PDF", "differs"),
    ("New project", "New folder", "differs"),
    ("Sign in with Google", "Sign in", "differs"),
    ("Sign in", "Sign in — with Google", "differs"),
    ("Delete all", "Delete", "differs"),
    ("Archive", "Archive all", "differs"),
    ("Step 5", "Step 6 of 9", "differs"),
    ("Add", "Remove", "differs"),
    ("Next", "Previous", "differs"),
    ("Close", "☰", "differs"),
    ("Next", "‹", "differs"),
    ("Email", "", "empty"),
]


@pytest.fixture
async def page() -> AsyncIterator[Page]:
    runtime = BrowserRuntime(BrowserConfig())
    try:
        browser = await runtime.browser()
        context = await browser.new_context()
        yield await context.new_page()
        await context.close()
    finally:
        await runtime.aclose()


async def test_a_changed_name_is_graded_as_a_person_reads_it(page: Page) -> None:
    pairs = [[recorded, now] for recorded, now, _ in GRADES]
    got = await page.evaluate("(pairs) => {" + MATCH_JS + "return pairs.map(([a, b]) => nameTier(a, b)); }", pairs)
    wrong = [(r, n, want, was) for (r, n, want), was in zip(GRADES, got, strict=True) if was != want]
    assert not wrong, "recorded, now, expected grade, got: " + repr(wrong)


async def test_surroundings_agree_on_words_not_on_digits_that_changed(page: Page) -> None:
    pairs = [
        ["Ann Lee Quarterly report", "Ann Lee Quarterly report"],
        ["Inbox Sent Drafts", "Inbox (3) Sent Drafts"],
        ["Create your account", "Create an account"],
        ["Order 1234", "Order 1235"],
        ["Cleo Park", "Cleo Parker"],
        ["Bob", "Bobby"],
    ]
    got = await page.evaluate("(pairs) => {" + MATCH_JS + "return pairs.map(([a, b]) => near(a, b) >= 0.8); }", pairs)
    assert got == [True, True, False, False, False, False], list(zip(pairs, got, strict=True))
