"""Conditions of `if` and `while` nodes: the flows' templating plus simple comparisons, never evaluation.

    ${outputs.n2.status} == 200 && {country} != "FR"
    !${outputs.check.text} || ${vars.count} >= 3
    ${outputs.list.text} contains 'Bob'

Operands are `${path}` (a value of the run: vars, outputs, loop), `{var}`, a quoted string (in which
`{var}` and `${path}` are substituted), a number, true, false or null. Operators: == != < <= > >=
contains, && (and), || (or), ! (not), parentheses. A path that names nothing is null, so a condition
may ask whether an output exists. A lone operand is true unless it is null, false, 0, "", "false",
"0" or empty. The expression is parsed into a small tree once at save time (check) and walked.
"""

from __future__ import annotations

import re
from typing import Any

from browserd.daemon.errors import InvalidParameter
from browserd.daemon.flows.placeholders import MISSING, lookup, render

_TOKEN = re.compile(
    r"""\s*(?:
      (?P<path>\$\{[A-Za-z0-9_.\-]+\})
    | (?P<var>\{[A-Za-z][A-Za-z0-9_]*\})
    | (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
    | (?P<number>-?\d+(?:\.\d+)?)
    | (?P<op>==|!=|<=|>=|<|>|&&|\|\||!|\(|\))
    | (?P<word>[A-Za-z_]+)
    )""",
    re.VERBOSE,
)
_COMPARISONS = ("==", "!=", "<", "<=", ">", ">=", "contains")
_WORDS = {"and": "&&", "or": "||", "not": "!", "contains": "contains"}
_LITERALS: dict[str, Any] = {"true": True, "false": False, "null": None}
HINT = (
    'Write operands as ${outputs.<nodeId>.<field>}, {var}, "text", numbers, true/false/null; compare with '
    "== != < <= > >= contains; combine with && || ! and parentheses."
)

Node = tuple[Any, ...]


def _tokens(expression: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    position = 0
    rest = expression.rstrip()
    while position < len(rest):
        match = _TOKEN.match(rest, position)
        if match is None or match.end() == position:
            raise _bad(expression, f"cannot read it from `{rest[position:][:20]}`")
        kind = match.lastgroup or ""
        text = match.group(kind)
        if kind == "word":
            lowered = text.lower()
            if lowered in _WORDS:
                kind, text = "op", _WORDS[lowered]
            elif lowered not in _LITERALS:
                raise _bad(expression, f"`{text}` is not an operand: quote text, or write {{{text}}} for a variable")
        tokens.append((kind, text))
        position = match.end()
    return tokens


def _bad(expression: str, why: str) -> InvalidParameter:
    return InvalidParameter(f"condition `{expression}`: {why}", hint=HINT, field="condition")


class _Parser:
    def __init__(self, expression: str) -> None:
        self.expression = expression
        self.tokens = _tokens(expression)
        self.at = 0

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        token = self.peek()
        if token is None:
            raise _bad(self.expression, "it ends too early")
        self.at += 1
        return token

    def parse(self) -> Node:
        if not self.tokens:
            raise _bad(self.expression, "it is empty")
        tree = self.either()
        if self.peek() is not None:
            raise _bad(self.expression, f"unexpected `{self.peek()[1]}`")  # type: ignore[index]
        return tree

    def either(self) -> Node:
        tree = self.both()
        while self.peek() == ("op", "||"):
            self.take()
            tree = ("or", tree, self.both())
        return tree

    def both(self) -> Node:
        tree = self.negation()
        while self.peek() == ("op", "&&"):
            self.take()
            tree = ("and", tree, self.negation())
        return tree

    def negation(self) -> Node:
        if self.peek() == ("op", "!"):
            self.take()
            return ("not", self.negation())
        return self.comparison()

    def comparison(self) -> Node:
        left = self.operand()
        token = self.peek()
        if token is not None and token[0] == "op" and token[1] in _COMPARISONS:
            self.take()
            return ("cmp", token[1], left, self.operand())
        return left

    def operand(self) -> Node:
        kind, text = self.take()
        if kind == "op" and text == "(":
            tree = self.either()
            if self.take() != ("op", ")"):
                raise _bad(self.expression, "a parenthesis is not closed")
            return tree
        if kind == "path":
            return ("path", text[2:-1])
        if kind == "var":
            return ("var", text[1:-1])
        if kind == "string":
            return ("text", re.sub(r"\\(.)", r"\1", text[1:-1]))
        if kind == "number":
            return ("value", float(text) if "." in text else int(text))
        if kind == "word":
            return ("value", _LITERALS[text.lower()])
        raise _bad(self.expression, f"expected an operand, not `{text}`")


def check(expression: str) -> Node:
    """The condition's tree; INVALID_PARAMETER naming what is wrong (at save time)."""
    return _Parser(expression).parse()


def _truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() not in ("", "false", "0")
    return bool(value)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _compare(op: str, left: Any, right: Any) -> bool:
    if op == "contains":
        if isinstance(left, (list, tuple)):
            return right in left or str(right) in [str(item) for item in left]
        return left is not None and str(right) in str(left)
    x, y = _number(left), _number(right)
    if x is None or y is None:
        # Not both numbers: compare as text, booleans as JSON writes them.
        x, y = (_text(left), _text(right))
    if op == "==":
        return x == y
    if op == "!=":
        return x != y
    if x is None or y is None:
        return False
    return {"<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y}[op]


def _text(value: Any) -> Any:
    if value is None:
        return None
    return str(value).lower() if isinstance(value, bool) else str(value)


def _value(tree: Node, variables: dict[str, Any], outputs: dict[str, Any]) -> Any:
    kind = tree[0]
    if kind == "value":
        return tree[1]
    if kind == "text":
        return render(tree[1], variables, outputs)
    if kind == "var":
        return variables.get(tree[1])
    if kind == "path":
        found = lookup(tree[1], {"vars": variables, "outputs": outputs})
        return None if found is MISSING else found
    return holds(tree, variables, outputs)


def holds(tree: Node, variables: dict[str, Any], outputs: dict[str, Any]) -> bool:
    kind = tree[0]
    if kind == "or":
        return holds(tree[1], variables, outputs) or holds(tree[2], variables, outputs)
    if kind == "and":
        return holds(tree[1], variables, outputs) and holds(tree[2], variables, outputs)
    if kind == "not":
        return not holds(tree[1], variables, outputs)
    if kind == "cmp":
        return _compare(tree[1], _value(tree[2], variables, outputs), _value(tree[3], variables, outputs))
    return _truthy(_value(tree, variables, outputs))
