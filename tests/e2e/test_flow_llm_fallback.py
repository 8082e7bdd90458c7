"""`[flows] llm_fallback` (issue 23 part 1): when a replay step's elements stay weak or ambiguous, the model
chooses among the scored ones, and its choice is acted on only if nothing on the page is against it.

The model is a scripted OpenAI-compatible server on loopback (tests/llm_server.py), or the SDK client's own
through MCP sampling; the pages are the replay mutation pages (tests/site/replay/), whose log says which
element received the click or the input. The console's run view names the model's choice.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from mcp import types

from tests.conftest import BrowserdHome, mcp_client, own_home
from tests.e2e.console_browser import chromium, console_home, opened_console
from tests.e2e.llm_fixtures import KEY_VARIABLE
from tests.e2e.replay_cases import CASES, Case, Target, html, remove
from tests.e2e.replay_flows import record, replay_run
from tests.e2e.replay_models import REASON, answering, question, same_name, where_it_was
from tests.llm_server import ScriptedModel, Turn, model_env, say

pytestmark = pytest.mark.anyio
TOOLS = ("--tools", "all")
CHOICE_TIMEOUT_S = 5

# Refused by the scorer: `Sign up` became `Create account` while a promo box shows a `Sign up` of its own. With the
# model, the page's own signup button is the one to click.
REFUSED = "signup.html:signup:negative:synonym while the recorded name is elsewhere"
SYNONYM = replace(next(case for case in CASES if case.label == REFUSED), expect="signup")
# A person's password typed into its field, after the field became `Old password`: weak, and sensitive.
PASSWORD = Target("signup.html", "#password", "password", "fill")
OLD_FIELD = '<input type="password" aria-label="Old password" data-who="decoy">'
OLD_PASSWORD = Case(
    PASSWORD,
    "negative",
    "replaced by an old-password field",
    (remove("#password"), html("label[for=password]", "afterend", OLD_FIELD)),
    None,
)


@pytest.fixture(scope="module")
def fallback_home(llm_home: BrowserdHome) -> Iterator[BrowserdHome]:
    """The scripted model's daemon with the fallback on: its own daemon, the same [llm] settings."""
    with own_home() as home:
        home.env.update({k: v for k, v in llm_home.env.items() if k.startswith("BROWSERD_LLM") or k == KEY_VARIABLE})
        home.env.update(BROWSERD_FLOWS_LLM_FALLBACK="true", BROWSERD_FLOWS_LLM_FALLBACK_TIMEOUT_S=str(CHOICE_TIMEOUT_S))
        yield home


@pytest.fixture(scope="module")
def no_endpoint_home() -> Iterator[BrowserdHome]:
    """The fallback on, and no [llm] endpoint: only a client's sampling can answer."""
    with own_home() as home:
        home.env.update(BROWSERD_FLOWS_LLM_FALLBACK="true")
        yield home


@pytest.fixture(scope="module")
def console_fallback_home(llm: ScriptedModel) -> Iterator[BrowserdHome]:
    """The fallback on, the scripted model, and the console served."""
    with console_home(**model_env(llm), BROWSERD_FLOWS_LLM_FALLBACK="true") as home:
        yield home


async def replayed(home: BrowserdHome, site: str, case: Case = SYNONYM, **options: Any) -> tuple[str, dict[str, Any]]:
    """The case's target recorded, then replayed on its mutated page by a client of its own (`options` go to
    it): the outcome and the step's report."""
    async with mcp_client(home, args=TOOLS, **options) as client:
        flow = await record(client, site, case.target)
        got, run = await replay_run(client, site, flow, case)
    step: dict[str, Any] = run["steps"][-1]
    return got, step


async def test_the_models_choice_replays_a_synonym_the_scorer_refuses(
    fallback_home: BrowserdHome, model: ScriptedModel, site: str
) -> None:
    model.script = answering(where_it_was)
    got, step = await replayed(fallback_home, site)
    assert got == "correct", f"the model's choice was not acted on: {json.dumps(step)[:2000]}"
    assert step["fallback"] == "llm" and step["llm"]["reason"] == REASON
    assert step["llm"]["model"] == model.model and step["matchedBy"].startswith(f"llm: element {step['llm']['index']}")
    assert len(model.turns) == 1
    asked = question(model.turns[0].messages[-1]["content"])
    assert asked["found"][step["llm"]["index"]]["name"] == "Create account"
    # Only the scored elements' own words: none of the page's other text.
    sent = model.requests_text()
    for elsewhere in ("Already have an account?", "Stay in touch", "Acme", "Pricing"):
        assert elsewhere not in sent, f"the model was shown page text beyond the elements: {elsewhere}"


async def test_a_look_alike_the_model_picks_is_refused_and_nothing_is_clicked(
    fallback_home: BrowserdHome, model: ScriptedModel, site: str
) -> None:
    model.script = answering(same_name)
    got, step = await replayed(fallback_home, site)
    assert got == "refused", f"acted on the model's look-alike: {json.dumps(step)[:2000]}"
    assert step["errorCode"] == "ELEMENT_AMBIGUOUS", step
    refused = step["details"]["llm"]
    assert step["details"]["elements"][refused["index"]]["name"] == "Sign up"
    assert "container" in refused["refused"] and "refused" in step["message"]


async def test_a_sensitive_step_never_asks_the_model(
    fallback_home: BrowserdHome, model: ScriptedModel, site: str
) -> None:
    model.script = answering(lambda asked: 0)
    got, step = await replayed(fallback_home, site, OLD_PASSWORD)
    assert got == "refused" and step["errorCode"] == "TARGET_NOT_VERIFIED", step
    assert model.turns == [], "a password step was put to the model"
    assert step["details"]["fallbackSkipped"] == "sensitive step"


async def test_with_the_fallback_off_the_model_is_never_asked(
    llm_home: BrowserdHome, model: ScriptedModel, site: str
) -> None:
    model.script = answering(where_it_was)
    got, step = await replayed(llm_home, site)
    assert got == "refused" and step["errorCode"] == "ELEMENT_AMBIGUOUS"
    assert model.turns == [] and "llm" not in step["details"] and "fallbackSkipped" not in step["details"]


def broken(turn: Turn) -> dict[str, Any]:
    raise RuntimeError("model crashed")


@pytest.mark.parametrize(
    ("script", "delay_s", "says", "code"),
    [
        (broken, 0, "answered HTTP 500", "LLM_ERROR"),
        (lambda turn: say("The second button, probably."), 0, "does not match the schema", "SCHEMA_VALIDATION_FAILED"),
        (answering(where_it_was), CHOICE_TIMEOUT_S * 2, f"did not choose within {CHOICE_TIMEOUT_S} s", "LLM_ERROR"),
    ],
    ids=["error", "garbage", "timeout"],
)
async def test_a_failing_model_fails_the_step_naming_its_error(
    fallback_home: BrowserdHome, model: ScriptedModel, site: str, script: Any, delay_s: float, says: str, code: str
) -> None:
    model.script, model.delay_s = script, delay_s
    got, step = await replayed(fallback_home, site)
    model.script, model.delay_s = answering(where_it_was), 0
    again, _ = await replayed(fallback_home, site)  # the daemon keeps serving, and the model works again
    assert got == "refused" and step["errorCode"] == "ELEMENT_AMBIGUOUS", step
    assert says in step["message"] and says in step["details"]["llm"]["error"]
    assert step["details"]["llm"]["errorCode"] == code and f"({code}:" in step["recoverHint"]
    assert again == "correct"


def sampled(choose: Any) -> Any:
    async def sampling(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        text = "\n".join(m.content.text for m in params.messages if isinstance(m.content, types.TextContent))
        answer = json.dumps({"index": choose(question(text)), "reason": "it kept its form"})
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text=answer), model="client-model-7"
        )

    return sampling


async def test_the_clients_model_chooses_through_sampling(no_endpoint_home: BrowserdHome, site: str) -> None:
    got, step = await replayed(no_endpoint_home, site, sampling_callback=sampled(where_it_was))
    assert got == "correct", step
    assert step["fallback"] == "llm" and step["llm"]["model"] == "client-model-7"


async def test_without_a_model_the_fallback_is_skipped(no_endpoint_home: BrowserdHome, site: str) -> None:
    got, step = await replayed(no_endpoint_home, site)
    assert got == "refused" and step["errorCode"] == "ELEMENT_AMBIGUOUS"
    assert step["details"]["fallbackSkipped"] == "no model"


async def test_the_consoles_run_view_names_the_models_choice(
    console_fallback_home: BrowserdHome, model: ScriptedModel, site: str
) -> None:
    model.script = answering(where_it_was)
    async with mcp_client(console_fallback_home, args=TOOLS) as client:
        flow = await record(client, site, SYNONYM.target)
        got, run = await replay_run(client, site, flow, SYNONYM)
    assert got == "correct"
    async with chromium() as browser, opened_console(browser, console_fallback_home) as console:
        await console.goto(f"#/runs/{run['runId']}")
        tag = console.page.locator(".report.success .tag")
        await tag.wait_for(timeout=30_000)
        assert await tag.inner_text() == f"chosen by {model.model}"
        assert await tag.get_attribute("title") == REASON
