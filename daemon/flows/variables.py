"""A flow's variables as a msgspec Struct: one source for the JSON Schema of its tool and for checking args.

Variables sit at the root of a call's arguments (S4-112), next to the run options, so a variable may
not take a run option's name (D-50). A sensitive variable has no default and must come with every call
(S4-110, S4-119); its description says so, and nothing else about it reaches the schema.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

import msgspec

from browserd.daemon.errors import InvalidParameter
from browserd.daemon.flows.flow_model import VARIABLE_KEY, Flow, VariableDef

RESERVED = frozenset(
    {"tabTarget", "refresh", "captureNetwork", "returnLogs", "timeoutMs", "stepTimeoutMs", "startUrl", "mode", "flowId"}
)
_BASE_TYPES: dict[str, Any] = {"string": str, "number": float, "boolean": bool, "array": list[str]}


class ArgsBase(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """No run options: the base of args checked outside a tool call (a schedule's, a subflow's)."""


def check_variables(flow: Flow) -> None:
    seen: set[str] = set()
    for variable in flow.variables:
        if not VARIABLE_KEY.match(variable.key) or variable.key in RESERVED or variable.key in seen:
            raise InvalidParameter(
                f"variable key `{variable.key}` is not allowed (letters, digits and _; unique; not a run option: "
                f"{', '.join(sorted(RESERVED))})",
                field="variables",
            )
        seen.add(variable.key)
        if variable.type == "enum" and not variable.options:
            raise InvalidParameter(f"enum variable `{variable.key}` needs options", field="variables")
        if variable.sensitive and variable.default is not None:
            raise InvalidParameter(
                f"sensitive variable `{variable.key}` cannot have a default: its value comes with each call",
                field="variables",
            )
        if variable.pattern is not None:
            try:
                re.compile(variable.pattern)
            except re.error as exc:
                raise InvalidParameter(f"variable `{variable.key}`: bad pattern: {exc}", field="variables") from exc


def _field(variable: VariableDef) -> tuple[str, Any, Any]:
    kind: Any = Literal[tuple(variable.options or [])] if variable.type == "enum" else _BASE_TYPES[variable.type]
    # Each published flow repeats this in every client's tools/list: say only what the key does not.
    label = variable.label or ""
    notes = [label if label.lower().replace(" ", "_") != variable.key.lower() else ""]
    if variable.sensitive:
        notes.append("Sensitive: give it on every call.")
    meta: dict[str, Any] = {"description": " ".join(n for n in notes if n)} if any(notes) else {}
    if variable.pattern is not None and variable.type == "string":
        meta["pattern"] = variable.pattern
    annotated = Annotated[kind, msgspec.Meta(**meta)] if meta else kind
    attribute = f"v_{variable.key}"  # never clashes with the base's attributes; the wire name is the key
    if variable.default is not None:
        return attribute, annotated, msgspec.field(default=variable.default, name=variable.key)
    if variable.required:
        return attribute, annotated, msgspec.field(name=variable.key)
    return attribute, annotated | None, msgspec.field(default=None, name=variable.key)


def tool_schema(flow: Flow) -> dict[str, Any]:
    """The inputSchema of a published flow's tool, terse because every client lists every published flow
    (issue 14: 50 of them within 6,000 characters). A required string variable is only named in `required`
    (string is what a client sends by default); any other variable gets a property with its type, choices,
    pattern or default. The call is still checked against args_struct, which refuses what this allows.
    Which variables are sensitive flow_get says; the schema leaves it out for the same budget."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    for variable in flow.variables:
        needed = variable.required and variable.default is None
        if needed:
            required.append(variable.key)
        entry: dict[str, Any] = {}
        if variable.type == "enum":
            entry["enum"] = list(variable.options or [])
        elif variable.type == "array":
            entry = {"type": "array", "items": {"type": "string"}}
        elif variable.type != "string" or not needed:
            entry["type"] = variable.type
        if variable.pattern is not None and variable.type == "string":
            entry["pattern"] = variable.pattern
        if variable.default is not None:
            entry["default"] = variable.default
        if entry:
            properties[variable.key] = entry
    schema: dict[str, Any] = {"type": "object"}
    if properties:
        schema["properties"] = properties
    if required:
        schema["required"] = required
    return schema


def args_struct(flow: Flow, base: type[msgspec.Struct]) -> type[msgspec.Struct]:
    """`base`'s fields (the run options) plus one field per variable."""
    return msgspec.defstruct(
        f"Flow_{re.sub(r'[^A-Za-z0-9_]', '_', flow.id)}",
        [_field(v) for v in flow.variables],
        bases=(base,),
        kw_only=True,
        forbid_unknown_fields=True,
    )


def values_of(flow: Flow, parsed: msgspec.Struct) -> dict[str, Any]:
    """The variables' values from a parsed call: given, else their defaults."""
    values: dict[str, Any] = {}
    for variable in flow.variables:
        value = getattr(parsed, f"v_{variable.key}")
        if value is None:
            value = variable.default
        if value is not None:
            values[variable.key] = value
    return values


def parse_args(flow: Flow, args: dict[str, Any], base: type[msgspec.Struct]) -> dict[str, Any]:
    """Check `args` (variables only) against the flow's variables; the values to run with."""
    try:
        parsed = msgspec.convert(args, args_struct(flow, base))
    except msgspec.ValidationError as exc:
        # The message names the field, never its value (a sensitive value must not reach an answer).
        raise InvalidParameter(f"flow {flow.id} args: {exc}", field="args") from exc
    return values_of(flow, parsed)


def parse_rows(
    flow: Flow, args: dict[str, Any], rows: list[dict[str, Any]], base: type[msgspec.Struct]
) -> dict[str, Any]:
    """A replay over rows: the values of `args`, once each row with them is known to make a complete call (the
    args alone need not). Rows are stored with the run, so none may hold a sensitive variable."""
    for index, row in enumerate(rows):
        if flow.sensitive_keys & set(row):
            raise InvalidParameter(
                f"row {index} holds a sensitive variable; sensitive values go in args only (never stored)",
                field="rows",
            )
        parse_args(flow, {**args, **row}, base)
    return dict(args)
