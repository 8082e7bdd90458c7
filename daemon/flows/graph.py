"""A flow as a graph (reference/004 §2, V2): its nodes, the edges between them, checked when it is saved.

Linear `steps` are the graph whose every step's `next` is the step after it. In a V2 flow the entry
is the first of `nodes`, and every node must be reached from it; each node has at most one edge per
label. Loops are explicit: a
`while` or `foreach` node's `body` edge starts its body, which ends where it leads back to the loop
node (or at a node with no `next`); the loop then goes on along its own `next`. Any other cycle is
refused, as are edges to unknown nodes, labels a node kind does not take, and nodes missing what
their kind needs, each with the field to fix (INVALID_PARAMETER).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from browserd.daemon.errors import InvalidParameter
from browserd.daemon.flows import conditions
from browserd.daemon.flows.flow_model import Flow, Step

LOOPS = frozenset({"while", "foreach"})
# What each kind needs besides its id, by field name (snake_case as on Step; camelCase in messages).
_NEEDS: dict[str, tuple[str, ...]] = {
    "if": ("condition",),
    "while": ("condition",),
    "foreach": ("items",),
    "subflow": ("flow_id",),
    "delay": ("ms",),
    "http": ("url",),
    "datasetWrite": ("fields",),
    "navigate": ("url",),
    "openTab": (),
    "switchTab": (),
    "closeTab": (),
}
_TARGETED = frozenset({"click", "dblclick", "fill", "select", "check", "uncheck", "hover", "drag"})
# The labels each kind may leave by; `onError` is open to every kind that can fail on its own.
_LABELS = {
    "if": {"true", "false", "onError"},
    "while": {"body", "next", "onError"},
    "foreach": {"body", "next", "onError"},
}
_DEFAULT_LABELS = {"next", "onError"}
GRAPH_HINT = (
    "List the entry node first; give every node a unique id and a known type; let edges {from, to, on} join "
    "existing nodes (on: next, true/false after if, body after while/foreach, onError); loop only through a "
    "while or foreach."
)


def _bad(message: str, field: str = "nodes", **details: object) -> InvalidParameter:
    return InvalidParameter(message, hint=GRAPH_HINT, field=field, **details)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


@dataclass(frozen=True)
class Graph:
    nodes: dict[str, Step]
    edges: dict[tuple[str, str], str]
    entry: str | None

    def after(self, node_id: str, label: str = "next") -> str | None:
        return self.edges.get((node_id, label))


def graph_of(flow: Flow) -> Graph:
    """The flow's graph: its V2 nodes and edges, or its steps as a chain."""
    if not flow.nodes:
        steps = flow.steps
        chain = {(a.id, "next"): b.id for a, b in itertools.pairwise(steps)}
        return Graph({s.id: s for s in steps}, chain, steps[0].id if steps else None)
    nodes = {node.id: node for node in flow.nodes}
    edges: dict[tuple[str, str], str] = {(edge.from_, edge.on): edge.to for edge in flow.edges}
    return Graph(nodes, edges, flow.nodes[0].id)


def check_graph(flow: Flow) -> None:
    """Refuse a flow that could not run as written (at save and import time)."""
    if flow.nodes and flow.steps:
        raise _bad("a flow has either `steps` (a chain) or `nodes` and `edges`, not both", field="steps")
    if not flow.nodes and flow.edges:
        raise _bad("edges need nodes: the flow has none", field="edges")
    items = flow.nodes or flow.steps
    seen: set[str] = set()
    for node in items:
        if node.id in seen:
            raise _bad(f"two nodes have the id `{node.id}`", nodeId=node.id)
        seen.add(node.id)
        _check_node(node)
    if not flow.nodes:
        return
    nodes = {node.id: node for node in flow.nodes}
    _check_edges(flow, nodes)
    _check_entry_and_cycles(flow, nodes)


def _check_node(node: Step) -> None:
    for needed in _NEEDS.get(node.type, ()):
        if getattr(node, needed) is None:
            raise _bad(f"node `{node.id}` ({node.type}) needs `{_camel(needed)}`", field=_camel(needed), nodeId=node.id)
    if node.type in _TARGETED and node.target is None:
        raise _bad(f"node `{node.id}` ({node.type}) needs a `target`", field="target", nodeId=node.id)
    if node.type in ("if", "while") and node.condition is not None:
        conditions.check(node.condition)
    if node.type == "extract" and (node.value or "").startswith("snapshot") and node.target is not None:
        raise _bad(f"node `{node.id}`: a snapshot extract reads the whole page; drop its target", field="target")


def _check_edges(flow: Flow, nodes: dict[str, Step]) -> None:
    taken: set[tuple[str, str]] = set()
    for edge in flow.edges:
        for end, name in ((edge.from_, "from"), (edge.to, "to")):
            if end not in nodes:
                raise _bad(f"an edge's `{name}` names no node: `{end}`", field="edges", missing=end)
        kind = nodes[edge.from_].type
        allowed = _LABELS.get(kind, _DEFAULT_LABELS)
        if edge.on not in allowed:
            raise _bad(
                f"a {kind} node (`{edge.from_}`) has no `{edge.on}` edge; it takes {', '.join(sorted(allowed))}",
                field="edges",
                nodeId=edge.from_,
            )
        if (edge.from_, edge.on) in taken:
            raise _bad(f"node `{edge.from_}` has two `{edge.on}` edges", field="edges", nodeId=edge.from_)
        taken.add((edge.from_, edge.on))
    for node in flow.nodes:
        if node.type in LOOPS and (node.id, "body") not in taken:
            raise _bad(f"the {node.type} node `{node.id}` has no `body` edge", field="edges", nodeId=node.id)
        if node.type == "if" and not {(node.id, "true"), (node.id, "false")} & taken:
            raise _bad(f"the if node `{node.id}` has neither a `true` nor a `false` edge", field="edges")


def _check_entry_and_cycles(flow: Flow, nodes: dict[str, Step]) -> None:
    entry = flow.nodes[0].id
    reached, todo = {entry}, [entry]
    out: dict[str, list[str]] = {}
    for edge in flow.edges:
        out.setdefault(edge.from_, []).append(edge.to)
    while todo:
        for following in out.get(todo.pop(), []):
            if following not in reached:
                reached.add(following)
                todo.append(following)
    unreached = [node.id for node in flow.nodes if node.id not in reached]
    if unreached:
        raise _bad(
            f"node(s) {', '.join(unreached)} are never reached from `{entry}`, the first node",
            field="edges",
        )
    # A cycle must pass through a loop node: without them, the rest must be acyclic.
    plain = {a: [b for b in bs if nodes[b].type not in LOOPS] for a, bs in out.items() if nodes[a].type not in LOOPS}
    state: dict[str, int] = {}

    def visit(node_id: str) -> None:
        state[node_id] = 1
        for following in plain.get(node_id, []):
            if state.get(following) == 1:
                raise _bad(
                    f"the edges from `{node_id}` back to `{following}` make a cycle without a while or foreach",
                    field="edges",
                    nodeId=following,
                )
            if following not in state:
                visit(following)
        state[node_id] = 2

    for node_id in plain:
        if node_id not in state:
            visit(node_id)
