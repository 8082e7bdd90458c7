"""A flow as a Playwright Python script (issue 14 items 4 and 8): each step on its first candidate.

Linear flows are a chain of statements; graphs (V2) become Python control flow: `if` an if/else whose
branches end where they meet again, `while` a while loop that stops at maxIterations, `foreach` a for
loop (its lanes run one after another), an `onError` edge a try/except. Conditions are translated from
their parsed tree, never copied as code. Variables come from the environment (FLOW_<KEY>, else their
default), so no value is ever written into the script; outputs land in `outputs` and datasetWrite rows
in `rows`, both printed as JSON at the end. A node a script cannot express (a subflow, which lives in
another flow) refuses the export with NOT_SUPPORTED listing every such node.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any

from browserd.daemon.errors import NotSupported, UrlNotAllowed
from browserd.daemon.flows import conditions, placeholders
from browserd.daemon.flows.flow_model import Candidate, Flow, Step, TargetLocator
from browserd.daemon.flows.graph import Graph, graph_of
from browserd.daemon.flows.owners import level_of
from browserd.daemon.flows.placeholders import variables_in
from browserd.daemon.policy.trust import TrustPolicy
from browserd.protocol.messages import TrustLevel

# What a walk answers when each way of a fork ended, or reached a stop, on its own: nothing follows the fork.
_FORKED = "\0forked"
_UNSUPPORTED = {"subflow": "it runs another stored flow; export that flow on its own and call it here"}

# The script's own small runtime. The flows' lookup and comparison functions are copied in from their
# modules' source, so a condition or template means in the script exactly what it means in a replay.
_SHARED = (placeholders.lookup, conditions._truthy, conditions._number, conditions._compare, conditions._text)
_HELPERS = '''
def get(path):
    """The value at `vars.<key>...` or `outputs.<nodeId>...`, or None."""
    found = lookup(path, {"vars": VARS, "outputs": outputs})
    return None if found is MISSING else found


def text(value):
    return value if isinstance(value, str) else _text(value)


def env(key):
    return text(VARS[key])


def render(template):
    def substitute(match):
        if match.group(1):
            found = get(match.group(1))
            if found is None:
                raise LookupError("${" + match.group(1) + "} names nothing")
            return text(found)
        return text(VARS[match.group(2)]) if match.group(2) in VARS else match.group(0)

    return PLACEHOLDER.sub(substitute, template)


def value(template):
    """What a template that is one placeholder names, as it is (a list stays a list); else its text."""
    match = PLACEHOLDER.fullmatch(template.strip())
    if match and match.group(1) and get(match.group(1)) is not None:
        return get(match.group(1))
    if match and match.group(2) in VARS:
        return VARS[match.group(2)]
    found = render(template)
    try:
        return json.loads(found)
    except ValueError:
        return found


def one(*candidates):
    """The first candidate that finds exactly one element, as a replay acts only on one; waits up to 10 s."""
    deadline = time.monotonic() + 10
    while True:
        for candidate in candidates:
            if candidate.count() == 1:
                return candidate
        if time.monotonic() > deadline:
            raise LookupError("no candidate finds exactly one element: " + ", ".join(map(str, candidates)))
        time.sleep(0.1)


def http(method, url, headers, body):
    request = urllib.request.Request(url, data=body, headers=headers, method=method)
    try:
        response = urllib.request.urlopen(request, timeout=30)
    except urllib.error.HTTPError as error:
        response = error
    raw = response.read(256 * 1024).decode("utf-8", "replace")
    kind = response.headers.get("content-type", "")
    answer = {"status": response.status, "contentType": kind, "text": raw, "url": response.url}
    if "json" in kind:
        try:
            answer["json"] = json.loads(raw)
        except ValueError:
            pass
    return answer
'''
_RUNTIME = (
    f"\nMISSING = object()\nPLACEHOLDER = re.compile({placeholders.PLACEHOLDER.pattern!r})\n"
    "outputs: dict = {}\nrows: list = []\n\n\n" + "".join(inspect.getsource(f) + "\n\n" for f in _SHARED) + _HELPERS
)


def _locator(target: TargetLocator) -> str:
    """The target as `one(...)` over its candidates in order: the first that finds exactly one element."""
    if not target.candidates:
        return "page.locator('body')"
    return "one(" + ", ".join(_candidate(c) for c in target.candidates) + ")"


def _candidate(candidate: Candidate) -> str:
    value = candidate.value
    if candidate.type == "testid":
        return f"page.get_by_test_id({value!r})"
    if candidate.type == "role":
        role, name = value.split("|", 1)
        return f"page.get_by_role({role!r}, name={name!r}, exact=True)"
    if candidate.type in ("label", "aria"):
        return f"page.get_by_label({value!r}, exact=True)"
    if candidate.type == "placeholder":
        return f"page.get_by_placeholder({value!r}, exact=True)"
    if candidate.type == "text":
        return f"page.get_by_text({value!r}, exact=True)"
    if candidate.type == "xpath":
        return f"page.locator({'xpath=' + value!r})"
    return f"page.locator({value!r})"


def _text(template: str) -> str:
    """A template as a Python expression: a literal, env(key) for one variable, else render(...)."""
    keys = variables_in(template)
    if keys and template == "{" + keys[0] + "}":
        return f"env({keys[0]!r})"
    return f"render({template!r})" if "{" in template else repr(template)


def _line(step: Step) -> str:
    """One browser step (or tab step) as one line of statements."""
    target = _locator(step.target) if step.target is not None else ""
    if step.type == "navigate":
        move = (step.url or "").removeprefix("history:")
        if move in ("back", "forward"):
            return f"page.go_{move}()"
        return "page.reload()" if move == "reload" else f"page.goto({_text(step.url or '')})"
    if step.type == "fill":
        return f"{target}.fill({_text(step.value or '')})"
    if step.type == "select":
        return f"{target}.select_option(**{step.value})"
    if step.type == "key":
        presses = [f"press({key!r})" for key in (step.keys or "").split()]
        owner = target or "page.keyboard"
        return "; ".join(f"{owner}.{press}" for press in presses)
    if step.type == "drag" and step.end is not None:
        return f"{target}.drag_to({_locator(step.end)})"
    if step.type == "scroll":
        return f"{target}.scroll_into_view_if_needed()" if target else f"page.mouse.wheel(*{step.delta or [0, 0]})"
    if step.type == "extract":
        what = step.value or "text"
        if not target:
            read = "page.locator('body').aria_snapshot()" if what == "snapshot" else "page.locator('body').inner_text()"
            return f"outputs[{step.id!r}] = {{{'snapshot' if what == 'snapshot' else 'text'!r}: {read}}}"
        if what.startswith("attribute:"):
            return (
                f"outputs[{step.id!r}] = {{'attribute': {target}.get_attribute({what.removeprefix('attribute:')!r})}}"
            )
        method = "input_value" if what == "value" else "inner_text"
        return f"outputs[{step.id!r}] = {{{what!r}: {target}.{method}()}}"
    if step.type == "openTab":
        return "page = page.context.new_page()" + (f"; page.goto({_text(step.url)})" if step.url else "")
    if step.type in ("switchTab", "closeTab"):
        base = (step.url or "").split("?")[0].split("#")[0]
        found = f"next(p for p in reversed(page.context.pages) if p.url.startswith({base!r}))" if base else "page"
        if step.type == "switchTab":
            return f"page = {found}; page.bring_to_front()"
        return f"{found}.close(); page = page.context.pages[-1]"
    if step.type == "wait":
        return f"page.get_by_text({step.wait_text or ''!r}).first.wait_for()"
    if step.type == "delay":
        return f"page.wait_for_timeout({step.ms or 0})"
    if step.type == "http":
        headers = "{" + ", ".join(f"{k!r}: {_text(v)}" for k, v in (step.headers or {}).items()) + "}"
        body = f"{_text(step.body)}.encode()" if step.body is not None else "None"
        return f"outputs[{step.id!r}] = http({step.method or 'GET'!r}, {_text(step.url or '')}, {headers}, {body})"
    if step.type == "datasetWrite":
        row = "{" + ", ".join(f"{k!r}: {_text(v)}" for k, v in (step.fields or {}).items()) + "}"
        return f"rows.append({row}); outputs[{step.id!r}] = {{'row': len(rows) - 1}}"
    return f"{target}.{step.type}()"


def _condition(tree: conditions.Node) -> str:
    """A parsed condition as a Python expression over the script's runtime."""
    kind = tree[0]
    if kind in ("and", "or"):
        return f"({_condition(tree[1])} {kind} {_condition(tree[2])})"
    if kind == "not":
        return f"(not {_condition(tree[1])})"
    if kind == "cmp":
        return f"_compare({tree[1]!r}, {_operand(tree[2])}, {_operand(tree[3])})"
    return f"_truthy({_operand(tree)})"


def _operand(tree: conditions.Node) -> str:
    kind, what = tree[0], tree[1]
    if kind == "path":
        return f"get({what!r})"
    if kind == "var":
        return f"VARS.get({what!r})"
    if kind == "text":
        return _text(what)
    if kind == "value":
        return repr(what)
    return _condition(tree)  # a parenthesised expression


@dataclass
class _Writer:
    graph: Graph
    lines: list[str] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)

    def emit(self, depth: int, line: str) -> None:
        self.lines.append("    " * depth + line)

    def walk(self, start: str | None, stops: frozenset[str], depth: int, in_loop: bool) -> str | None:
        """Statements from `start` until a stop or the end; where the walk stopped: a stop, None (the end: the
        run's, or a loop body's turn) or _FORKED (ways that each ended, or reached a stop, on their own)."""
        current, before = start, len(self.lines)
        while current is not None and current != _FORKED and current not in stops:
            node = self.graph.nodes[current]
            if node.disabled:
                current = self.graph.after(current)
                continue
            handler = self.graph.after(current, "onError")
            if handler is None:
                current = self.node(node, stops, depth, in_loop)
                continue
            # try/except/else: the handler's way and the normal way go on until they meet again.
            join = self.join(handler, self.graph.after(current, self.label_after(node)), stops)
            self.emit(depth, "try:")
            after = self.node(node, stops | ({join} if join else set()), depth + 1, in_loop)
            self.emit(depth, "except Exception as error:  # onError")
            self.emit(depth + 1, f"outputs[{node.id!r}] = {{'error': {{'message': str(error)}}}}")
            self.branch(handler, stops, join, depth + 1, in_loop)
            if after not in (join, _FORKED):
                self.emit(depth, "else:")
                self.branch(after, stops, join, depth + 1, in_loop)
            current = join if join is not None else _FORKED
        if len(self.lines) == before:
            self.emit(depth, "pass")
        return current

    def label_after(self, node: Step) -> str:
        return "true" if node.type == "if" else "next"

    def branch(self, start: str | None, stops: frozenset[str], join: str | None, depth: int, in_loop: bool) -> None:
        """One way of a fork, up to where the ways meet; a way that ends before that ends the run (or the
        loop body's turn), as the replay's walk does."""
        ended = self.walk(start, stops | ({join} if join else set()), depth, in_loop)
        if ended is None:
            self.emit(depth, "continue" if in_loop else "return")

    def join(self, first: str | None, second: str | None, stops: frozenset[str]) -> str | None:
        """Where two ways meet again: the node reachable from both that is nearest to both."""
        near, far = self.distances(first, stops), self.distances(second, stops)
        common = [node for node in near if node in far]
        return min(common, key=lambda node: (max(near[node], far[node]), near[node])) if common else None

    def distances(self, start: str | None, stops: frozenset[str]) -> dict[str, int]:
        found: dict[str, int] = {}
        frontier = [start] if start is not None else []
        steps = 0
        while frontier:
            following = []
            for node in frontier:
                if node in found:
                    continue
                found[node] = steps
                if node in stops:
                    continue
                following += [to for (source, _label), to in self.graph.edges.items() if source == node]
            frontier, steps = following, steps + 1
        return found

    def node(self, node: Step, stops: frozenset[str], depth: int, in_loop: bool) -> str | None:
        """One node's statements; the node the walk goes on with."""
        graph = self.graph
        if node.type in _UNSUPPORTED:
            self.unsupported.append(f"{node.type} `{node.id}`: {_UNSUPPORTED[node.type]}")
            return graph.after(node.id)
        if node.type == "if":
            condition = _condition(conditions.check(node.condition or ""))
            yes, no = graph.after(node.id, "true"), graph.after(node.id, "false")
            join = self.join(yes, no, stops)
            self.emit(depth, f"outputs[{node.id!r}] = {{'result': {condition}}}")
            self.emit(depth, f"if outputs[{node.id!r}]['result']:  # {node.id}")
            self.branch(yes, stops, join, depth + 1, in_loop)
            self.emit(depth, "else:")
            self.branch(no, stops, join, depth + 1, in_loop)
            return join if join is not None else _FORKED
        if node.type == "while":
            limit = node.max_iterations or 100
            self.emit(depth, f"outputs[{node.id!r}] = {{'iteration': 0}}")
            self.emit(depth, f"while {_condition(conditions.check(node.condition or ''))}:  # {node.id}")
            self.emit(depth + 1, f"if outputs[{node.id!r}]['iteration'] >= {limit}:")
            message = f"while `{node.id}`: its condition still held after {limit} iterations"
            self.emit(depth + 2, f"raise RuntimeError({message!r})")
            self.emit(depth + 1, f"outputs[{node.id!r}] = {{'iteration': outputs[{node.id!r}]['iteration'] + 1}}")
            self.walk(graph.after(node.id, "body"), stops | {node.id}, depth + 1, True)
            return graph.after(node.id)
        if node.type == "foreach":
            name = node.as_ or "item"
            lanes = f" (concurrency {node.concurrency}: one after another here)" if (node.concurrency or 1) > 1 else ""
            self.emit(depth, f"for index, item in enumerate(value({node.items or ''!r})):  # {node.id}{lanes}")
            self.emit(depth + 1, f"VARS[{name!r}], VARS[{name + 'Index'!r}] = item, index")
            self.walk(graph.after(node.id, "body"), stops | {node.id}, depth + 1, True)
            return graph.after(node.id)
        self.emit(depth, f"{_line(node)}  # {node.id}")
        return graph.after(node.id)


_POLICY_SAYS = {
    "local": "the user's own session, which may reach this machine",
    "remote": "every URL below was checked against it: public http(s) addresses only, no files",
}


def _variables(flow: Flow) -> str:
    """VARS from the environment: FLOW_<KEY>, else the variable's default (never a sensitive one's)."""
    entries = []
    for variable in flow.variables:
        default: Any = None if variable.sensitive else variable.default
        entries.append(f"    {variable.key!r}: os.environ.get({'FLOW_' + variable.key.upper()!r}, {default!r}),")
    return "VARS = {\n" + "\n".join(entries) + "\n}\n" if entries else "VARS: dict = {}\n"


async def check_urls(flow: Flow, trust: TrustPolicy) -> None:
    """Refuse to export a flow that would leave the URL policy it runs under (the lower of its owner's and the
    caller's): the script has no URL guard of its own, so every URL it loads is checked now, and for a remote
    policy a URL built from variables (which could be anything at run time) is refused too."""
    urls = [("startUrl", flow.meta.start_url)] + [(step.id, step.url) for step in flow.steps + flow.nodes]
    for where, url in urls:
        if url is None or url.startswith("history:"):
            continue
        if trust.remote and "{" in url:
            raise UrlNotAllowed(
                f"`{where}` builds its URL from variables ({url}): a script exported under the {trust.level} URL "
                "policy may load only URLs checked at export",
                hint="Export it from a local session, or write the URL out in the flow.",
                url=url,
                rule="templated-url",
                stepId=where,
            )
        await trust.check_url(url)


async def export_script(flow: Flow, caller: TrustPolicy) -> str:
    """flow_export format playwright: the script, under the lower of the flow owner's and the caller's policy."""
    trust = caller.lowered(level_of(flow.meta.owner))
    await check_urls(flow, trust)
    return playwright_script(flow, trust.level)


def playwright_script(flow: Flow, policy: TrustLevel = "local") -> str:
    graph = graph_of(flow)
    writer = _Writer(graph)
    writer.walk(graph.entry, frozenset(), 1, False)
    if writer.unsupported:
        raise NotSupported(
            f"flow {flow.id} has nodes a Playwright script cannot express: " + "; ".join(writer.unsupported),
            hint="Export it as json, or replace those nodes (e.g. copy the subflow's nodes into this flow).",
            flowId=flow.id,
            nodes=writer.unsupported,
        )
    first = graph.nodes.get(graph.entry) if graph.entry is not None else None
    start = (
        f"    page.goto({flow.meta.start_url!r})\n"
        if flow.meta.start_url and (first is None or first.type != "navigate")
        else ""
    )
    body = "\n".join(writer.lines)
    return (
        f'"""{flow.name} (browserd flow {flow.id} v{flow.version}). Variables: FLOW_<KEY> environment variables.\n\n'
        f"URL policy: {policy} (browserd's, at export: {_POLICY_SAYS[policy]}). The script has no URL guard of its "
        "own.\n\n"
        'Prints {"outputs": ..., "rows": ...} as JSON when it ends."""\n\n'
        "from __future__ import annotations\n\nimport json\nimport os\nimport re\nimport time\n"
        "import urllib.error\nimport urllib.request\nfrom typing import Any\n\n"
        "from playwright.sync_api import sync_playwright\n\n"
        f"{_variables(flow)}{_RUNTIME}\n\n"
        "def run(page):\n"
        f"{start}{body}\n\n\n"
        "def main() -> None:\n    with sync_playwright() as p:\n"
        "        browser = p.chromium.launch(executable_path=os.environ.get('FLOW_BROWSER') or None)\n"
        "        try:\n            run(browser.new_page())\n        finally:\n            browser.close()\n"
        '    print(json.dumps({"outputs": outputs, "rows": rows}))\n\n\n'
        "if __name__ == '__main__':\n    main()\n"
    )
