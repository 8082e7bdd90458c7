"""Fixtures of the model tests: one scripted model server per module (each test gives it its script), and a
daemon home whose [llm] points at it, with the API key in an environment variable the daemon reads."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.conftest import BrowserdHome, own_home
from tests.llm_server import ScriptedModel, model_env, say, scripted_model

# Sent by the daemon as the bearer token; never in its log or in what the model is told.
API_KEY = "sk-test-4f1d9c0e7a"
KEY_VARIABLE = "BROWSERD_TEST_LLM_KEY"


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedModel]:
    with scripted_model(lambda turn: say("{}")) as model:
        yield model


@pytest.fixture(scope="module")
def llm_home(llm: ScriptedModel) -> Iterator[BrowserdHome]:
    with own_home() as home:
        home.env.update(model_env(llm))
        home.env.update({"BROWSERD_LLM_API_KEY_ENV": KEY_VARIABLE, KEY_VARIABLE: API_KEY})
        yield home


@pytest.fixture
def model(llm: ScriptedModel) -> ScriptedModel:
    """The module's model with no turns yet and no delay; the test sets `model.script`."""
    llm.turns.clear()
    llm.delay_s = 0.0
    return llm
