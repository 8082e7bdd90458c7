"""`{var}` and `${path}` in step values (S4-65..S4-67): substitution only, never evaluation.

`{key}` is a variable; `${vars.key}` the same, `${outputs.<stepId>.<field>...}` a field of an earlier
step's output. Anything else in braces stays as written, so literal braces in text survive.
"""

from __future__ import annotations

import re
from typing import Any

from browserd.daemon.errors import InvalidParameter

PLACEHOLDER = re.compile(r"\$\{([A-Za-z0-9_.\-]+)\}|\{([A-Za-z][A-Za-z0-9_]*)\}")


def variables_in(template: str) -> list[str]:
    """The variable keys a template names by `{key}`."""
    return [m.group(2) for m in PLACEHOLDER.finditer(template) if m.group(2)]


MISSING = object()


def lookup(path: str, scope: dict[str, Any]) -> Any:
    """The value at a dotted path (dict keys, list indexes), or MISSING."""
    node: Any = scope
    for part in path.split("."):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return MISSING
    return node


def render(template: str, variables: dict[str, Any], outputs: dict[str, Any]) -> str:
    scope = {"vars": variables, "outputs": outputs}

    def substitute(match: re.Match[str]) -> str:
        path, key = match.group(1), match.group(2)
        if path is not None:
            value = lookup(path, scope)
            if value is MISSING:
                raise InvalidParameter(
                    f"${{{path}}} names nothing",
                    hint="Use ${vars.<key>} or ${outputs.<stepId>.<field>} of a step that ran before.",
                    field="args",
                )
        elif key in variables:
            value = variables[key]
        else:
            return match.group(0)  # not a variable of this flow: literal text
        return value if isinstance(value, str) else str(value).lower() if isinstance(value, bool) else str(value)

    return PLACEHOLDER.sub(substitute, template)


def value(template: str, variables: dict[str, Any], outputs: dict[str, Any]) -> Any:
    """What a template that is one placeholder names, as it is (a list stays a list); else its text."""
    match = PLACEHOLDER.fullmatch(template.strip())
    if match is not None and match.group(1) is not None:
        found = lookup(match.group(1), {"vars": variables, "outputs": outputs})
        if found is not MISSING:
            return found
    elif match is not None and match.group(2) in variables:
        return variables[match.group(2)]
    return render(template, variables, outputs)
