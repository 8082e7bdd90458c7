"""[flows] llm_fallback (issue 23 part 1): which steps may be put to a model, and which of its choices are refused
before anything is done on the page."""

from __future__ import annotations

from typing import Any

from browserd.daemon.config import LlmConfig
from browserd.daemon.flows.flow_model import Fingerprint, Step, TargetLocator
from browserd.daemon.flows.replay.model_choice import refusal, sensitive
from browserd.daemon.llm.llm_service import Llm

SHOWN = {"name": "Create account", "visible": True, "disabled": False, "match": "synonym", "disagrees": []}


def fill(value: str, value_kind: str = "email") -> Step:
    target = TargetLocator(candidates=[], fingerprint=Fingerprint(role="textbox", value_kind=value_kind))
    return Step(id="s1", type="fill", target=target, value=value)


def test_a_step_typing_a_sensitive_variable_or_into_a_password_field_is_never_asked() -> None:
    keys = frozenset({"password"})
    assert sensitive(fill("{password}"), keys)
    assert sensitive(fill("${vars.password}"), keys)
    assert sensitive(fill("{email}", value_kind="password"), frozenset())
    assert not sensitive(fill("{email}"), keys)
    assert not sensitive(fill("password"), keys)  # literal text names no variable


def test_a_choice_is_acted_on_only_when_nothing_is_against_it() -> None:
    assert refusal(dict(SHOWN), SHOWN) is None
    against: list[tuple[dict[str, Any] | None, str]] = [
        (None, "no longer on the page"),
        ({**SHOWN, "name": "Sign up"}, "page changed"),
        ({**SHOWN, "visible": False}, "not visible"),
        ({**SHOWN, "disabled": True}, "disabled"),
        ({**SHOWN, "match": "differs"}, "not the recorded one"),
        ({**SHOWN, "sensitive": True}, "password"),
        ({**SHOWN, "disagrees": ["heading", "container", "row"]}, "container and row disagree"),
    ]
    for picked, why in against:
        said = refusal(picked, SHOWN)
        assert said is not None and why in said, (picked, said)
    # Fields other than where it is (a heading, a neighbour) do not refuse a choice: the threshold is the model's.
    assert refusal({**SHOWN, "disagrees": ["heading", "before"]}, SHOWN) is None


def test_a_model_is_at_hand_through_an_endpoint_or_the_clients_sampling() -> None:
    assert not Llm(LlmConfig()).offers("s1")
    assert Llm(LlmConfig(base_url="http://127.0.0.1:9/v1", model="m")).offers(None)
    sampling = Llm(LlmConfig())
    sampling.samplers["s1"] = object()  # type: ignore[assignment]
    assert sampling.offers("s1") and not sampling.offers("s2")
