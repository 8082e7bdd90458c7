"""The trust policy object every tool and run asks (daemon/policy/trust.py), without a browser."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from browserd.daemon.config import SecurityConfig, load
from browserd.daemon.errors import BrowserdError, InvalidParameter, TrustLevelNotAllowed
from browserd.daemon.policy.trust import TrustPolicy, stricter
from browserd.daemon.policy.urls import UrlPolicy
from browserd.protocol.messages import TrustLevel


def policy(level: TrustLevel, **security: Any) -> TrustPolicy:
    return TrustPolicy(level, UrlPolicy(SecurityConfig(**security)))


def rule_of(error: BrowserdError) -> object:
    return error.details["rule"]


def test_a_level_is_lowered_never_raised() -> None:
    assert stricter("local", "local") == "local"
    assert stricter("local", "remote") == stricter("remote", "local") == "remote"


def test_remote_sessions_use_only_the_listed_profiles() -> None:
    remote = policy("remote", remote_profiles=["shared"])
    remote.check_profile("shared", "open")
    with pytest.raises(TrustLevelNotAllowed) as refused:
        remote.check_profile("master", "open a window on")
    assert rule_of(refused.value) == "remote-profile" and refused.value.details["profileId"] == "master"
    assert "remote_profiles" in refused.value.recover_hint
    policy("local").check_profile("master", "open")
    with pytest.raises(InvalidParameter):  # a bad id is refused as such, before any list is looked at
        remote.check_profile("../etc", "open")


def test_no_profile_means_master_locally_and_an_anonymous_context_remotely() -> None:
    assert policy("local").default_profile(None, "master", "scrape with") == "master"
    assert policy("remote").default_profile(None, "master", "scrape with") is None
    assert policy("remote", remote_profiles=["shared"]).default_profile("shared", "master", "scrape with") == "shared"
    with pytest.raises(TrustLevelNotAllowed):
        policy("remote").default_profile("master", "master", "scrape with")


@pytest.mark.parametrize(
    ("check", "rule"),
    [
        (lambda p: p.check_scripts("evaluate scripts"), "remote-script"),
        (lambda p: p.check_cdp("browser_connect_cdp"), "remote-cdp"),
        (lambda p: p.check_template("login_keep_session", ("local",)), "template-trust"),
        (lambda p: p.check_session("sess_a", "sess_b"), "remote-session"),
    ],
)
def test_every_refusal_names_its_rule_and_local_sessions_pass(check: Callable[[TrustPolicy], None], rule: str) -> None:
    with pytest.raises(BrowserdError) as refused:
        check(policy("remote"))
    assert rule_of(refused.value) == rule
    check(policy("local"))


def test_uploads_and_runs_are_scoped_for_remote_sessions_only() -> None:
    remote = policy("remote", allowed_file_roots=["/srv/files"])
    assert remote.upload_roots() == ["/srv/files"] and policy("local").upload_roots() is None
    assert remote.run_owner("sess_a") == "sess_a" and policy("local").run_owner("sess_a") is None


def test_remote_profiles_is_a_security_key(tmp_path: Path) -> None:
    absent = tmp_path / "absent.toml"
    config = load(absent, {"BROWSERD_SECURITY_REMOTE_PROFILES": "shared,team"})
    assert config.security.remote_profiles == ["shared", "team"]
    assert load(absent, {}).security.remote_profiles == []


def test_remote_sessions_reach_only_remote_made_things_unless_security_grants_local_flows() -> None:
    remote = policy("remote")
    remote.check_owner("remote", "flow f")
    with pytest.raises(TrustLevelNotAllowed) as refused:
        remote.check_owner("local", "flow f", flowId="f")
    assert rule_of(refused.value) == "remote-owner" and refused.value.details["flowId"] == "f"
    assert "remote_flows" in refused.value.recover_hint
    policy("remote", remote_flows=["local-flows"]).check_owner("local", "flow f")
    policy("local").check_owner("remote", "flow f")


@pytest.mark.parametrize("right", ["publish", "schedule"])
def test_remote_sessions_neither_publish_nor_schedule_unless_security_names_it(right: Any) -> None:
    with pytest.raises(TrustLevelNotAllowed) as refused:
        policy("remote").check_flow_right(right, "do it")
    assert rule_of(refused.value) == f"remote-{right}"
    policy("remote", remote_flows=[right]).check_flow_right(right, "do it")
    policy("local").check_flow_right(right, "do it")


def test_work_runs_at_the_lower_of_the_owners_and_the_callers_level() -> None:
    local = policy("local")
    assert local.lowered("remote").level == "remote" and local.lowered("local") is local
    assert policy("remote").lowered("local").level == "remote"


def test_a_remote_window_needs_the_guard_and_the_extension_needs_allow_remote() -> None:
    remote = policy("remote")
    remote.check_backend("playwright", {"guard_proxy"}, remote_extension=False)
    with pytest.raises(TrustLevelNotAllowed) as refused:
        remote.check_backend("cdp", set(), remote_extension=False)
    assert rule_of(refused.value) == "remote-guard"
    with pytest.raises(TrustLevelNotAllowed) as refused:
        remote.check_backend("extension", set(), remote_extension=False)
    assert rule_of(refused.value) == "remote-extension" and "allow_remote" in refused.value.recover_hint
    remote.check_backend("extension", set(), remote_extension=True)
    policy("local").check_backend("cdp", set(), remote_extension=False)


def test_remote_flows_is_a_security_key(tmp_path: Path) -> None:
    absent = tmp_path / "absent.toml"
    config = load(absent, {"BROWSERD_SECURITY_REMOTE_FLOWS": "schedule,publish"})
    assert config.security.remote_flows == ["schedule", "publish"]
    assert load(absent, {}).security.remote_flows == []
    with pytest.raises(Exception, match="remote_flows"):
        load(absent, {"BROWSERD_SECURITY_REMOTE_FLOWS": "everything"})
