"""The HTTP endpoint's bearer tokens: shown once, kept only as hashes, refused once revoked or expired."""

from __future__ import annotations

import stat
import time
from pathlib import Path

import pytest

from browserd.daemon.errors import InvalidParameter
from browserd.daemon.server.http.tokens import TokenRefused, TokenStore, parse_duration


def test_a_token_opens_its_record_and_only_its_hash_is_stored(tmp_path: Path) -> None:
    store = TokenStore(tmp_path / "tokens.json")
    bearer, record = store.create("laptop", "remote", ["pages", "scrape"], None)
    assert store.verify(bearer) == record
    secret = bearer.rsplit("_", 1)[1][-20:]
    text = store.path.read_text()
    assert secret not in text and bearer not in text
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    # A second reader (another process: the daemon) sees the same token.
    assert TokenStore(store.path).verify(bearer).name == "laptop"


@pytest.mark.parametrize("bearer", ["", "Bearer x", "bd_000000000000_" + "A" * 43, "bd_zz_short"])
def test_malformed_and_unknown_tokens_are_refused(tmp_path: Path, bearer: str) -> None:
    store = TokenStore(tmp_path / "tokens.json")
    store.create("one", "local", None, None)
    with pytest.raises(TokenRefused):
        store.verify(bearer)


def test_a_wrong_secret_for_a_known_id_is_refused(tmp_path: Path) -> None:
    store = TokenStore(tmp_path / "tokens.json")
    bearer, _ = store.create("one", "local", None, None)
    with pytest.raises(TokenRefused, match="unknown token"):
        store.verify(bearer[:-4] + ("AAAA" if not bearer.endswith("AAAA") else "BBBB"))


def test_revoked_and_expired_tokens_say_so(tmp_path: Path) -> None:
    store = TokenStore(tmp_path / "tokens.json")
    revoked, _ = store.create("old", "remote", None, None)
    daemon_view = TokenStore(store.path)
    daemon_view.verify(revoked)
    store.revoke("old")
    with pytest.raises(TokenRefused, match="'old' is revoked"):
        daemon_view.verify(revoked)
    expiring, record = store.create("brief", "remote", None, 60)
    assert record.expires_at is not None
    assert record.state(time.time() + 61) == "expired"
    assert [r.name for r in store.active(now=time.time() + 61)] == []
    assert daemon_view.verify(expiring).name == "brief"


def test_names_of_active_tokens_are_unique_and_revoke_names_one(tmp_path: Path) -> None:
    store = TokenStore(tmp_path / "tokens.json")
    store.create("ci", "remote", None, None)
    with pytest.raises(InvalidParameter, match="already named"):
        store.create("ci", "remote", None, None)
    store.revoke("ci")
    store.create("ci", "remote", None, None)  # the name is free again
    with pytest.raises(InvalidParameter, match="no active token"):
        store.revoke("nobody")


@pytest.mark.parametrize(
    ("text", "seconds"), [("90s", 90), ("45m", 2700), ("12h", 43200), ("30d", 2592000), ("2w", 1209600)]
)
def test_durations(text: str, seconds: int) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "0d", "10", "1y", "-1h"])
def test_bad_durations_name_the_units(text: str) -> None:
    with pytest.raises(InvalidParameter) as caught:
        parse_duration(text)
    assert "12h" in caught.value.recover_hint
