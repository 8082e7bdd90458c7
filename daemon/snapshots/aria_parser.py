"""The lines of Playwright's AI-mode ARIA snapshot (`aria_snapshot(mode="ai")`): parsed into a tree of
Nodes with YAML's quoting undone, and rendered back as Playwright writes them."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

INTERACTIVE_ROLES = frozenset({
    "clickable", "button", "link", "textbox", "checkbox", "radio", "combobox", "listbox", "menuitem",
    "menuitemcheckbox", "menuitemradio", "option", "searchbox", "slider", "spinbutton", "switch", "tab", "treeitem",
})  # fmt: skip

_LINE = re.compile(r"^(?P<indent> *)- (?P<body>.*)$")
# A line's key once YAML's quoting is undone: a role, the name as a JSON string, then [attributes].
_KEY = re.compile(r'^(?P<role>[a-z]+)(?: (?P<name>"(?:[^"\\]|\\.)*"))?(?P<attrs>(?: \[[^\]]*\])*)$')
_ATTR = re.compile(r"\[([a-z-]+)(?:=([^\]]*))?\]")
# Escapes of YAML's double-quoted scalars that Playwright writes (yamlEscapeValueIfNeeded).
_YAML_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)")
_YAML_ESCAPES = {"0": "\0", "a": "\a", "b": "\b", "t": "\t", "\t": "\t", "n": "\n", "v": "\v", "f": "\f", "r": "\r",
                 "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\", "N": "\x85", "_": "\xa0", "L": "\u2028",
                 "P": "\u2029"}  # fmt: skip
_SPECIAL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]|[\n:](\s|$)|\s#|[\n\r{}`]|^[-+]?\.(inf|nan)$", re.I)
_YAML_WORDS = frozenset({"y", "n", "yes", "no", "true", "false", "on", "off", "null", "~"})
_VALUE_ESCAPES = re.compile(r'[\\"\x00-\x1f\x7f-\x9f]')
_ESCAPED = {"\\": "\\\\", '"': '\\"', "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


@dataclass
class Node:
    text: str  # the line as shown, without its indentation and leading "- "
    role: str = ""  # "" for text and property lines
    name: str = ""
    ref: str | None = None
    attrs: dict[str, str] = field(default_factory=dict)
    children: list[Node] = field(default_factory=list)
    # The line with YAML's quoting undone: `role "name" [attrs]` (or `text`, `/url`) and what follows ": ".
    key: str = ""
    value: str | None = None

    @property
    def interactive(self) -> bool:
        return self.role in INTERACTIVE_ROLES or self.attrs.get("cursor") == "pointer"

    @property
    def plain(self) -> str:
        """The line as a person reads it: no YAML quoting."""
        return self.key if self.value is None else f"{self.key}: {self.value}"


def parse(snapshot: str) -> list[Node]:
    roots: list[Node] = []
    stack: list[tuple[int, Node]] = []
    for raw in snapshot.splitlines():
        match = _LINE.match(raw)
        if match is None:
            # A continuation of a multi-line text value: it belongs to the line above.
            if stack:
                stack[-1][1].text += "\n" + raw
            continue
        depth = len(match["indent"])
        node = parse_line(match["body"])
        while stack and stack[-1][0] >= depth:
            stack.pop()
        (stack[-1][1].children if stack else roots).append(node)
        stack.append((depth, node))
    return roots


def parse_line(body: str) -> Node:
    """One snapshot line (without indentation and "- "), whatever quoting Playwright chose for it.

    Playwright writes `key` or `key: value`; the key is single-quoted when it holds what YAML would
    misread (`: `, ` #`, a leading quote...), the value double-quoted, and the name inside the key is
    a JSON string.
    """
    key_scalar, value_scalar = split_line(body)
    key = unquote(key_scalar)
    value = None if value_scalar is None else unquote(value_scalar)
    match = _KEY.match(key)
    if match is None or match["role"] == "text":
        return Node(body, key=key, value=value)
    quoted_name = match["name"] or '""'
    try:
        # Most names hold no escape: slicing them is much cheaper than decoding, on 25,000-line pages.
        name = quoted_name[1:-1] if "\\" not in quoted_name else json.loads(quoted_name)
    except json.JSONDecodeError:  # not a name Playwright wrote: keep the line as text
        return Node(body, key=key, value=value)
    attrs = {attr: setting or "true" for attr, setting in _ATTR.findall(match["attrs"] or "")}
    return Node(body, match["role"], name, attrs.get("ref"), attrs, key=key, value=value)


_TEXT_LINE = "- text: "  # the line a field's value is on when the field has properties


def split_line(body: str) -> tuple[str, str | None]:
    """The key and value scalars of a line; the value is None when there is none (`key` or `key:`)."""
    if body.startswith("'"):
        end = 1
        while True:
            end = body.find("'", end)
            if end < 0:
                return body, None  # not a quoted key after all
            if body.startswith("''", end):
                end += 2
                continue
            break
        key, rest = body[: end + 1], body[end + 1 :]
    else:
        # An unquoted key never holds ": " nor ends with ":" (Playwright quotes those).
        cut = body.find(": ")
        key, rest = (body, "") if cut < 0 else (body[:cut], body[cut:])
        if cut < 0 and body.endswith(":"):
            key, rest = body[:-1], ":"
    return key, rest[2:] if rest.startswith(": ") else None


def value_line(lines: list[str], at: int) -> int | None:
    """The line holding field `at`'s value: its own (`key: value`), or the `- text:` line Playwright writes
    right under a field that has properties (`- /placeholder: ...`); None when it shows no value."""
    line = lines[at]
    indent = len(line) - len(line.lstrip(" "))
    if split_line(line[indent + 2 :])[1] is not None:
        return at
    for index in range(at + 1, len(lines)):
        child = lines[index]
        child_indent = len(child) - len(child.lstrip(" "))
        if child_indent <= indent:
            return None
        if child_indent == indent + 2 and child.startswith(_TEXT_LINE, child_indent):
            return index
    return None


def unquote(scalar: str) -> str:
    """A YAML scalar as Playwright writes it: plain, 'single-quoted' or "double-quoted"."""
    if len(scalar) >= 2 and scalar[0] == scalar[-1] == "'":
        return scalar[1:-1].replace("''", "'")
    if len(scalar) >= 2 and scalar[0] == scalar[-1] == '"':
        return _YAML_ESCAPE.sub(_unescape, scalar[1:-1])
    return scalar


def _unescape(match: re.Match[str]) -> str:
    code = match.group(1)
    if len(code) > 1:
        return chr(int(code[1:], 16))
    return _YAML_ESCAPES.get(code, match.group(0))


def _needs_quotes(text: str) -> bool:
    """Playwright's rule (yamlStringNeedsQuotes): what a YAML reader would take for something else."""
    lowered = text.lower()
    return (
        not text
        or text != text.strip()
        or _SPECIAL.search(text) is not None
        or text[0] in "&*],?!>|@\"'#%[-"
        or lowered in _YAML_WORDS
        or _is_number(text)
    )


def _is_number(text: str) -> bool:
    # JavaScript's !isNaN(Number(text)), which the rule uses, for the forms a snapshot line can hold.
    try:
        float(text.replace("_", "!"))
    except ValueError:
        return text.lower().startswith(("0x", "0o", "0b")) and text[2:].isalnum()
    return True


def quote_key(key: str) -> str:
    return "'" + key.replace("'", "''") + "'" if _needs_quotes(key) else key


def quote_value(value: str) -> str:
    if not _needs_quotes(value):
        return value
    return '"' + _VALUE_ESCAPES.sub(lambda m: _ESCAPED.get(m.group(0), f"\\x{ord(m.group(0)):02x}"), value) + '"'


def render_line(key: str, value: str | None = None) -> str:
    """A snapshot line (without indentation) quoted as Playwright quotes it, so parse_line reads it back."""
    return quote_key(key) if value is None else f"{quote_key(key)}: {quote_value(value)}"


def marked(key: str, mark: str) -> str:
    """`key` with an attribute `mark` (" [active]") right after its role and name, where Playwright writes the
    first attributes of a field."""
    match = _KEY.match(key)
    if match is None:
        return key
    at = match.end("name") if match["name"] else match.end("role")
    return key[:at] + mark + key[at:]


def render(nodes: list[Node], depth: int = 0) -> list[str]:
    lines: list[str] = []
    for node in nodes:
        lines.append(f"{'  ' * depth}- {node.text}")
        lines.extend(render(node.children, depth + 1))
    return lines


def walk(nodes: list[Node]) -> list[Node]:
    found: list[Node] = []
    for node in nodes:
        found.append(node)
        found.extend(walk(node.children))
    return found


def without_ref(node: Node) -> str:
    """The node's line without its ref (a name that reads like one keeps it)."""
    return without_last(node.text, f" [ref={node.ref}]") if node.ref is not None else node.text


def without_last(text: str, part: str) -> str:
    # Attributes follow the name, which may hold the same characters: the last occurrence is the attribute.
    at = text.rfind(part) if part else -1
    return text if at < 0 else text[:at] + text[at + len(part) :]
