"""What a flow is on disk and on the wire (reference/004 §2, S4-04..S4-26, D-48): msgspec Structs.

A flow holds no value a person typed: every fill is a variable (`{key}` in the step's value), and a
sensitive variable (password, one-time code, card field) never has a default. `schema` is the
stored format's version; `migrate()` lifts an older file to it when it is read or imported.

A flow is either linear `steps` (run as a chain) or a V2 graph (§2): `nodes` (steps, plus the control
and data kinds) and `edges` between them; graph.py checks a graph when it is saved and walks it.
"""

from __future__ import annotations

import re
import secrets
from typing import Annotated, Any, Literal

import msgspec

from browserd.protocol.messages import TrustLevel

# Bump when the stored shape changes, and teach migrate() the step from the previous one.
SCHEMA = 2

# `aria` is an accessible name alone (Chrome Recorder's aria/ selectors); recordings store role|name.
SelectorType = Literal["testid", "role", "aria", "label", "placeholder", "text", "css", "anchor", "xpath"]
StepType = Literal[
    "click", "dblclick", "fill", "select", "check", "uncheck", "key", "navigate", "drag", "scroll", "wait", "hover",
    "extract",
    # V2 control and data nodes (graph.py): they live in `nodes`, tab switches in recorded `steps` too.
    "if", "foreach", "while", "subflow", "delay", "http", "openTab", "switchTab", "closeTab", "datasetWrite",
]  # fmt: skip
EdgeLabel = Literal["next", "true", "false", "body", "onError"]
VariableType = Literal["string", "number", "boolean", "enum", "array"]
SLUG = re.compile(r"^[a-z0-9_]{1,40}$")
VARIABLE_KEY = re.compile(r"^[a-zA-Z][a-zA-Z0-9_]{0,39}$")
# A dataset's limits (S4-70): rows a run takes or a flow's dataset holds, characters per cell.
MAX_ROWS = 5_000
MAX_CELL_CHARS = 32_768
# A flow id names its file: nothing that could climb out of the flows folder.
FLOW_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class _Struct(msgspec.Struct, rename="camel", omit_defaults=True, kw_only=True, forbid_unknown_fields=True):
    pass


class Candidate(_Struct):
    """One way to find the element again (S4-05); `role` values are `role|name`."""

    type: SelectorType
    value: str
    weight: float = 0.0


class Fingerprint(_Struct):
    """Who the element is, compared with every element the candidates find (issue 14 item 2)."""

    tag: str = ""
    role: str = ""
    name: str = ""
    id: str = ""
    name_attr: str = ""
    testid: str = ""
    aria_label: str = ""
    container: str = ""
    label: str = ""
    value_kind: str = ""
    # Where it is, beside the container (issue 23): the heading above it, the words around it in the smallest
    # element holding more than it (a plain div row's cells), the nearest text before and after it in its
    # container. Empty in flows recorded before these were kept; an empty field is not compared.
    heading: str = ""
    row: str = ""
    before: str = ""
    after: str = ""
    # Its tooltip (the title attribute): what a person reads for an icon button whose text is only a glyph
    # (issue 23); not scored itself, it stands in for such a glyph name.
    tip: str = ""


class TargetLocator(_Struct):
    candidates: list[Candidate]
    fingerprint: Fingerprint
    # iframe selectors from the top document down to the element's frame.
    frame: list[str] = msgspec.field(default_factory=list)
    # Shadow hosts (CSS) from the document down to the element's shadow root.
    shadow: list[str] = msgspec.field(default_factory=list)


class Retry(_Struct):
    count: int = 2
    interval_ms: int = 100
    backoff: Literal["none", "exp"] = "exp"


class Step(_Struct):
    id: str
    type: StepType
    target: TargetLocator | None = None
    # fill: a template such as "{email}"; select: {"labels"|"values": [...]} as JSON;
    # extract: what to read into outputs[<step id>]: text, value, or attribute:<name> of the target;
    # without a target, the page's text or its snapshot.
    value: str | None = None
    keys: str | None = None
    url: str | None = None
    end: TargetLocator | None = None  # drag's drop target
    # drag: the pointer's way as a person dragged, sampled at most every 50 ms: [x, y, ms] in CSS px from the
    # drop target's centre and ms from the press; the first point is the press, the last the release. Absent
    # for the session's own browser_drag (centre to centre).
    path: list[list[int]] | None = None
    delta: list[int] | None = None  # scroll by [dx, dy] when there is no target
    wait_text: str | None = None
    # fill, select, check: the element helper the recorded tool acted through (elements/filling.py,
    # choosing.py, checkables.py): "fill", "keys", "picker", "flatpickr", "datepicker", "select", "mirror",
    # "options", "click", "label". Replay acts through the same helpers; absent in steps recorded before.
    setter: str | None = None
    timeout_ms: int | None = None
    retry: Retry | None = None
    screenshot_on_fail: bool = True
    disabled: bool = False
    # if, while: a condition (conditions.py); foreach: `items` names a list (`${outputs.n1.rows}`, `{var}`)
    # and each item is the variable `as` (default `item`) in the body, `concurrency` lanes at once.
    condition: str | None = None
    items: str | None = None
    as_: str | None = msgspec.field(default=None, name="as")
    concurrency: Annotated[int, msgspec.Meta(ge=1, le=10)] | None = None
    max_iterations: Annotated[int, msgspec.Meta(ge=1, le=10_000)] | None = None
    # subflow: another flow, its variables from templates over this one's.
    flow_id: str | None = None
    args: dict[str, str] | None = None
    # delay.
    ms: Annotated[int, msgspec.Meta(ge=0, le=60_000)] | None = None
    # http (url is the step's `url`), through the session's URL policy.
    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"] | None = None
    headers: dict[str, str] | None = None
    body: str | None = None
    # switchTab, closeTab: the tab on this page (origin and path), else the index-th of the session's tabs.
    index: Annotated[int, msgspec.Meta(ge=0)] | None = None
    # datasetWrite: one row, column -> template.
    fields: dict[str, str] | None = None


class Edge(_Struct):
    """From a node to the next: `next` (default), an if's `true`/`false`, a loop's `body`, or `onError`
    (taken when the node fails, instead of failing the run)."""

    from_: str = msgspec.field(name="from")
    to: str
    on: EdgeLabel = "next"


class VariableDef(_Struct):
    key: str
    label: str | None = None
    type: VariableType = "string"
    sensitive: bool = False
    required: bool = True
    default: Any = None
    pattern: str | None = None
    options: list[str] | None = None  # enum's choices


class Owner(_Struct, omit_defaults=False):
    """Who made a flow version, a schedule or a publication (issue 20): its trust level and client name.
    A record without one was made before owners were recorded, by the user: local (owners.level_of)."""

    trust_level: TrustLevel
    client: str = ""


class ToolMeta(_Struct):
    published: bool = False
    # Who published it (its description is in every client's tools/list).
    owner: Owner | None = None
    slug: str | None = None
    description: str | None = None
    # Earlier versions still offered as flow_<slug>_v<N> (D-50): a published flow's steps or variables
    # changed, and clients built on the version before may keep calling it. flow_<slug> is the latest.
    versions: list[int] = msgspec.field(default_factory=list)


class Binding(_Struct):
    type: Literal["domain", "path", "url"]
    value: str


class Meta(_Struct):
    # Set by the daemon on every save from the caller; what a flow file or an import says is not believed.
    owner: Owner | None = None
    created_at: int = 0
    updated_at: int = 0
    start_url: str | None = None
    bindings: list[Binding] = msgspec.field(default_factory=list)
    tags: list[str] = msgspec.field(default_factory=list)
    tool: ToolMeta = msgspec.field(default_factory=ToolMeta)
    # A candidate order the last run found better, per step id; flow_update_targets applies it.
    suggested_order: dict[str, list[int]] = msgspec.field(default_factory=dict)


class Flow(_Struct, omit_defaults=False):
    id: str
    name: str
    description: str | None = None
    version: int = 1
    schema: int = SCHEMA
    meta: Meta = msgspec.field(default_factory=Meta)
    variables: list[VariableDef] = msgspec.field(default_factory=list)
    steps: list[Step] = msgspec.field(default_factory=list)
    nodes: list[Step] = msgspec.field(default_factory=list)
    edges: list[Edge] = msgspec.field(default_factory=list)

    def variable(self, key: str) -> VariableDef | None:
        return next((v for v in self.variables if v.key == key), None)

    @property
    def sensitive_keys(self) -> set[str]:
        return {v.key for v in self.variables if v.sensitive}


StepStatus = Literal["success", "failed", "skipped"]


class ModelPick(_Struct):
    """The model's choice when replay could not tell which element a step meant ([flows] llm_fallback): the index
    in the step's `details.elements`, or None for none, and its one-line reason."""

    index: int | None
    reason: str
    model: str = ""


class StepReport(_Struct):
    """One entry of a run's log (S4-20, issue 14 item 3)."""

    step_id: str
    type: str
    status: StepStatus
    matched_by: str | None = None
    score: float | None = None
    took_ms: int = 0
    # Of took_ms, the time spent finding and verifying the element(s) (every candidate, one evaluate each).
    resolve_ms: float | None = None
    attempts: int = 1
    # True: a candidate other than the first found the element; "llm": the model chose it (`llm` says how).
    fallback: bool | Literal["llm"] = False
    llm: ModelPick | None = None
    error_code: str | None = None
    message: str | None = None
    recover_hint: str | None = None
    # A STOP's evidence: each candidate with what it found, and the best elements with their scores.
    details: dict[str, Any] | None = None
    screenshot_artifact_id: str | None = None
    # The element helper the replay acted through (Step.setter), for a fill, select or check.
    setter: str | None = None


class RunRecord(_Struct):
    """A flow run's detailed log (S4-21); the RunManager's run record holds it as the run's result."""

    run_id: str
    flow_id: str
    flow_version: int
    started_at: int
    finished_at: int | None = None
    success: bool | None = None
    url: str | None = None
    entries: list[StepReport] = msgspec.field(default_factory=list)


def new_flow_id() -> str:
    return f"flow_{secrets.token_hex(6)}"


def _v1_to_v2(raw: dict[str, Any]) -> dict[str, Any]:
    # V2 added nodes and edges; a V1 flow's steps stay a linear chain, as they ran.
    return {"nodes": [], "edges": [], **raw}


# Schema N -> N+1, applied in turn from the stored version up to SCHEMA.
_MIGRATIONS = {1: _v1_to_v2}


def migrate(raw: dict[str, Any]) -> dict[str, Any]:
    """A stored or imported flow of any known schema, lifted to SCHEMA; unknown newer ones are refused."""
    schema = raw.get("schema", 1)
    if not isinstance(schema, int) or not 1 <= schema <= SCHEMA:
        raise ValueError(f"flow schema {schema!r} is not one this browserd understands (1..{SCHEMA})")
    while schema < SCHEMA:
        raw = {**_MIGRATIONS[schema](raw), "schema": schema + 1}
        schema += 1
    return raw


def decode(data: bytes | dict[str, Any]) -> Flow:
    raw = msgspec.json.decode(data) if isinstance(data, bytes) else data
    if not isinstance(raw, dict):
        raise ValueError("a flow is a JSON object")
    return msgspec.convert(migrate(raw), Flow)


def encode(flow: Flow) -> bytes:
    return msgspec.json.format(msgspec.json.encode(flow))
