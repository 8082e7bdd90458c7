"""The model endpoint's API key: from an environment variable or a 0600 file, never the config text (issue 26)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from browserd.daemon.config import LlmConfig
from browserd.daemon.errors import LlmNotConfigured
from browserd.daemon.llm.keys import api_key
from browserd.daemon.llm.llm_service import Llm

KEY = "sk-unit-93b1"


def test_the_key_comes_from_the_named_environment_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UNIT_LLM_KEY", KEY)
    assert api_key(LlmConfig(api_key_env="UNIT_LLM_KEY")) == KEY


def test_an_unset_variable_is_named_in_the_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("UNIT_LLM_KEY", raising=False)
    with pytest.raises(LlmNotConfigured) as raised:
        api_key(LlmConfig(api_key_env="UNIT_LLM_KEY"))
    assert "UNIT_LLM_KEY" in raised.value.message and "api_key_file" in raised.value.recover_hint


def test_a_key_file_must_be_readable_by_its_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "llm.key"
    path.write_text(KEY + "\n")
    os.chmod(path, 0o600)
    assert api_key(LlmConfig(api_key_file=str(path))) == KEY
    os.chmod(path, 0o644)
    with pytest.raises(LlmNotConfigured) as raised:
        api_key(LlmConfig(api_key_file=str(path)))
    assert "chmod 600" in raised.value.recover_hint and KEY not in raised.value.message


def test_a_missing_key_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(LlmNotConfigured):
        api_key(LlmConfig(api_key_file=str(tmp_path / "absent.key")))


def test_no_key_is_needed_for_a_local_endpoint() -> None:
    assert api_key(LlmConfig(base_url="http://127.0.0.1:11434/v1", model="m")) is None


def test_without_base_url_and_model_the_error_says_which_is_missing() -> None:
    with pytest.raises(LlmNotConfigured) as raised:
        Llm(LlmConfig(model="m")).model()
    assert "([llm] base_url unset)" in raised.value.message
