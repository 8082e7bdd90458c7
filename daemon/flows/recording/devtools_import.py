"""Chrome DevTools Recorder JSON (its "Export as JSON") to a browserd flow (issue 14 item 8).

A Recorder step names its element by several selectors (aria/, css, xpath/, text/, pierce/), but has
no identity fingerprint; its target is verified on replay by those selectors agreeing on one element
(flows/js/resolve.js). Typed values become variables without defaults: a Recorder file may hold a
password, and browserd never stores one. Steps in iframes, and selectors that cross shadow roots, are
not imported: they are named in the error.
"""

from __future__ import annotations

import re
from typing import Any

from browserd.daemon.errors import InvalidParameter
from browserd.daemon.flows.flow_model import (
    Candidate,
    Fingerprint,
    Flow,
    Meta,
    Step,
    StepType,
    TargetLocator,
    VariableDef,
    new_flow_id,
)
from browserd.daemon.runs.run_records import now_ms

_SENSITIVE = re.compile(r"pass|otp|one-time|card|cvc|cc-|secret|pin\b", re.I)
_ARIA_ROLE = re.compile(r'^(.*)\[role="([a-z]+)"\]$')
_SIMPLE: dict[str, StepType] = {"click": "click", "doubleClick": "dblclick", "hover": "hover"}


def _candidate(selector: str) -> Candidate | None:
    if selector.startswith("aria/"):
        name = selector.removeprefix("aria/")
        with_role = _ARIA_ROLE.match(name)
        if with_role:
            return Candidate(type="role", value=f"{with_role.group(2)}|{with_role.group(1)}")
        return Candidate(type="aria", value=name)
    if selector.startswith("xpath/"):
        return Candidate(type="xpath", value=selector.removeprefix("xpath/"))
    if selector.startswith("text/"):
        return Candidate(type="text", value=selector.removeprefix("text/"))
    if selector.startswith("pierce/"):
        return None  # crosses shadow roots: not a selector browserd resolves
    return Candidate(type="css", value=selector)


def _target(step: dict[str, Any], where: str) -> TargetLocator:
    if step.get("frame"):
        raise InvalidParameter(f"{where} acts inside an iframe, which Recorder import does not support", field="flow")
    candidates = [
        found
        for chain in step.get("selectors", [])
        if isinstance(chain, list) and len(chain) == 1 and isinstance(chain[0], str)
        for found in [_candidate(chain[0])]
        if found is not None
    ]
    if not candidates:
        raise InvalidParameter(f"{where} has no selector browserd can use (aria/, css, xpath/, text/)", field="flow")
    for position, candidate in enumerate(candidates):
        candidate.weight = float(len(candidates) - position)
    return TargetLocator(candidates=candidates, fingerprint=Fingerprint())


def _key(step: dict[str, Any], taken: set[str]) -> str:
    names = [s[0] for s in step.get("selectors", []) if isinstance(s, list) and s and isinstance(s[0], str)]
    hint = next((n.removeprefix("aria/") for n in names if n.startswith("aria/")), None) or next(
        (n for n in names if n.startswith("#")), "value"
    )
    base = re.sub(r"[^a-zA-Z0-9]+", "_", hint).strip("_").lower()[:30] or "value"
    base = base if base[0].isalpha() else "v_" + base
    key, n = base, 2
    while key in taken:
        key, n = f"{base}_{n}", n + 1
    return key


def from_recorder(raw: dict[str, Any]) -> Flow:
    if not isinstance(raw.get("steps"), list):
        raise InvalidParameter("a Chrome Recorder file has `title` and a `steps` list", field="flow")
    steps: list[Step] = []
    variables: list[VariableDef] = []
    for number, item in enumerate(raw["steps"], 1):
        if not isinstance(item, dict):
            continue
        kind, step_id, where = item.get("type"), f"s{len(steps) + 1}", f"Recorder step {number} ({item.get('type')})"
        if kind == "navigate":
            steps.append(Step(id=step_id, type="navigate", url=str(item["url"])))
        elif kind in _SIMPLE:
            steps.append(Step(id=step_id, type=_SIMPLE[kind], target=_target(item, where)))
        elif kind == "change":
            key = _key(item, {v.key for v in variables})
            sensitive = any(_SENSITIVE.search(str(s)) for s in item.get("selectors", []))
            variables.append(VariableDef(key=key, sensitive=sensitive))
            steps.append(Step(id=step_id, type="fill", target=_target(item, where), value="{" + key + "}"))
        elif kind == "keyDown":
            steps.append(Step(id=step_id, type="key", keys=str(item["key"])))
        elif kind == "scroll" and not item.get("selectors"):
            steps.append(Step(id=step_id, type="scroll", delta=[int(item.get("x", 0)), int(item.get("y", 0))]))
        elif kind == "waitForElement":
            # Scrolling it into view first waits until the element is there and verified.
            steps.append(Step(id=step_id, type="scroll", target=_target(item, where)))
        # setViewport, keyUp, close and the assertion steps change nothing a replay needs.
    title = str(raw.get("title") or "Imported from Chrome Recorder")
    return Flow(id=new_flow_id(), name=title, meta=Meta(created_at=now_ms()), variables=variables, steps=steps)
