"""D-24, now in the scrape service: a scrape with a profile that never logged in says how to log in when the
page refuses it or sends it to a login page, and says nothing otherwise."""

from __future__ import annotations

from browserd.daemon.config import ScrapeConfig
from browserd.daemon.scrape.scrape_service import login_hint
from browserd.daemon.scrape.task import LoadedPage

HINT = "run: browserd login --profile work"


def test_a_never_logged_in_profile_refused_or_sent_to_a_login_page_is_told_to_log_in() -> None:
    config = ScrapeConfig()
    assert login_hint(config, "work", 0, LoadedPage("https://shop.test/orders", 401)) == HINT
    assert login_hint(config, "work", 0, LoadedPage("https://shop.test/orders", 403)) == HINT
    assert login_hint(config, "work", 0, LoadedPage("https://shop.test/Login?next=/orders", 200)) == HINT


def test_a_page_that_answered_or_a_profile_that_has_logged_in_gets_no_hint() -> None:
    config = ScrapeConfig()
    assert login_hint(config, "work", 0, LoadedPage("https://shop.test/orders", 200)) is None
    # Version 1 or later: someone logged in; a refusal then is the site's own business, not a missing login.
    assert login_hint(config, "work", 3, LoadedPage("https://shop.test/login", 401)) is None
