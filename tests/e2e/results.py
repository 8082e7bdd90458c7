"""Reading MCP tool results in end-to-end tests: their text, and asserting success or a given error."""

from __future__ import annotations

from typing import Any


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def ok(result: Any) -> Any:
    assert not result.is_error, f"expected success, got:\n{text_of(result)}"
    return result


def failed(result: Any, code: str) -> dict[str, Any]:
    assert result.is_error, f"expected {code}, got success:\n{text_of(result)}"
    error: dict[str, Any] = result.structured_content
    assert error["errorCode"] == code, f"expected {code}, got:\n{text_of(result)}"
    assert error["recoverHint"], "every error names a next step"
    return error
