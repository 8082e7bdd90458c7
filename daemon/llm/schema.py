"""JSON Schemas a caller gives: checked once when the call comes in, then used to validate the model's answers.

jsonschema is imported lazily: only calls that pass a schema pay for it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from browserd.daemon.errors import InvalidParameter

MAX_ERRORS = 10
_FENCE = re.compile(r"^```[a-zA-Z]*\s*\n?(.*?)\n?```\s*$", re.DOTALL)


def check_schema(schema: dict[str, Any] | None, field: str = "schema") -> None:
    """INVALID_PARAMETER when `schema` is no valid JSON Schema (draft 2020-12)."""
    if schema is None:
        return
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        raise InvalidParameter(
            f"{field} is no valid JSON Schema: {exc.message}",
            hint='Pass a JSON Schema object, e.g. {"type": "object", "properties": {"price": {"type": '
            '"number"}}, "required": ["price"]}.',
            field=field,
        ) from exc


def validation_errors(schema: dict[str, Any] | None, value: Any) -> list[str]:
    """What is wrong with `value` under `schema`, one line per error with its JSON path; [] when it is valid."""
    if schema is None:
        return []
    from jsonschema import Draft202012Validator

    errors = sorted(Draft202012Validator(schema).iter_errors(value), key=lambda error: list(error.absolute_path))
    return [f"{error.json_path}: {error.message}" for error in errors[:MAX_ERRORS]]


class NotJson(ValueError):
    pass


def parse_answer(text: str) -> Any:
    """The JSON value a model answered, also when it wrapped it in a ``` fence or a sentence around it."""
    stripped = text.strip()
    fenced = _FENCE.match(stripped)
    if fenced:
        stripped = fenced.group(1).strip()
    try:
        return json.loads(stripped)
    except ValueError:
        pass
    # A sentence before or after: the outermost object or array.
    for opening, closing in (("{", "}"), ("[", "]")):
        start, end = stripped.find(opening), stripped.rfind(closing)
        if 0 <= start < end:
            try:
                return json.loads(stripped[start : end + 1])
            except ValueError:
                continue
    raise NotJson("the answer is no JSON value")
