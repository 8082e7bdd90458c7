"""Flow replay benchmark for issue 14: how fast does a verified replay go, and what does verification cost?

    .venv/bin/python tests/bench/flows.py [--runs 5] [--published 50]

Prints figures, never asserts them (DESIGN.md §6):

1. Replay speed on an unchanged page: a 30-click flow recorded on tests/site/flow-steps.html, replayed
   --runs times; steps/s = 30 / the sum of the steps' tookMs (daemon side), plus the client's wall time
   per run (target >= 10 steps/s).
2. Resolution + verification per step: each step's resolveMs (every candidate found and every element
   scored against the fingerprint, in one evaluate), median and p95 (target <= 15 ms).
3. From a broken first candidate to a verified alternative: the flow-form flow replayed on ?v=ids, whose
   recorded `#signin` no longer exists; the Sign in step's resolveMs (target <= 300 ms). The same runs'
   two fill steps give a fill step's tookMs (resolution, the fill through elements/filling.py, settling).
4. tools/list cost of --published published flows (two variables each): characters added, compact JSON
   (target <= 6,000).
5. What recording costs a tool call: browser_click (no snapshot) on flow-steps.html, in --runs rounds of
   10 clicks without recording, then 10 while recording (a person's input listened to in the tab: one
   more page round trip per call), medians of each and their ratio in the same run; and flow_record_start
   itself (it injects the listener into the tab).
Then one line of JSON with every figure. Runs in an isolated browserd home on 127.0.0.1.

    .venv/bin/python tests/bench/flows.py --calls [--runs 5] [--show]

instead counts the driver round trips of a replayed step (deterministic, unlike the times above): the Playwright
calls the daemon makes (`DEBUG=pw:api` in daemon.out, as tests/bench/widgets.py reads them) during a flow_run of
flow-form.html's recorded [fill], [fill, fill] and [fill, fill, click]; the differences are a fill step's and a
click step's calls, settle included (medians of --runs replays).

    .venv/bin/python tests/bench/flows.py --mutations [--show] [--only TEXT] [--set tuned|held-out]

instead replays each target of tests/e2e/replay_cases.py, recorded on its page in tests/site/replay/, on
every mutated page of its cases (issue 23 part 1), and prints per class (name, testid, lookalike) the share
replayed correctly and the wrong-element actions, and the share of negative cases refused (targets:
>= 97% correct, 0 wrong, 100% refused), plus how long a refusal took (median and p95 of the refused steps'
tookMs, at the default 10 s step limit: a still page stops a step after [flows] still_page_ms). The counts are
deterministic; --show lists every case's result.
--set held-out replays the held-out set of tests/e2e/replay_heldout.py instead (one more class, structure),
printed under "held-out (new)".
With --llm-fallback POLICY the daemon runs with `[flows] llm_fallback` on and a scripted model on loopback
(tests/e2e/replay_models.py) answering every step the scorer leaves weak or ambiguous: `place` picks the
element in the recorded container and row, `name` the one still showing the recorded name, `first` always the
best-scored one (only the checks before acting stand between it and a wrong element); the figures then
count the model's questions and the steps acted on its choice too.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.bench.common import ready_shim, serve_site, stop_site, summary
from tests.bench.widgets import CommandLog
from tests.conftest import make_home
from tests.e2e.replay_cases import CASES, Case, Target, outcome
from tests.e2e.replay_heldout import HELD_OUT
from tests.e2e.replay_models import POLICIES, answering
from tests.llm_server import ScriptedModel, model_env, scripted_model

STEPS = 30


def data(result: dict[str, Any]) -> Any:
    return result.get("structuredContent") or {}


def record(shim: Any, url: str, actions: list[tuple[str, dict[str, Any]]]) -> str:
    shim.call_tool("browser_open", {"url": url, "snapshot": "none"})
    shim.call_tool("flow_record_start", {"name": "bench"})
    for tool, args in actions:
        shim.call_tool(tool, {**args, "snapshot": "none"})
    return str(data(shim.call_tool("flow_record_stop", {}))["flowId"])


def tools_chars(shim: Any) -> int:
    """tools/list as sent (compact JSON, as the shim writes it and the SDK client's test counts it)."""
    return len(json.dumps(shim.request("tools/list", {}, 30)["tools"], separators=(",", ":")))


def recording_cost(shim: Any, site: str, rounds: int) -> dict[str, Any]:
    shim.call_tool("browser_open", {"url": f"{site}/flow-steps.html", "snapshot": "none"})

    def clicks() -> list[float]:
        took = []
        for i in range(1, 11):
            started = time.perf_counter()
            shim.call_tool("browser_click", {"target": f"section:nth-of-type({i}) button", "snapshot": "none"})
            took.append((time.perf_counter() - started) * 1000)
        return took

    plain, recorded, starts = [], [], []
    for _ in range(rounds):
        plain += clicks()
        started = time.perf_counter()
        shim.call_tool("flow_record_start", {"name": "cost"})
        starts.append((time.perf_counter() - started) * 1000)
        recorded += clicks()
        shim.call_tool("flow_record_stop", {"save": False})
    ratio = round(summary(recorded)["median"] / summary(plain)["median"], 2)
    return {
        "click_ms": summary(plain),
        "click_recording_ms": summary(recorded),
        "recording_ratio": ratio,
        "record_start_ms": summary(starts),
    }


def record_target(shim: Any, site: str, target: Target) -> tuple[str, dict[str, str]]:
    """One target's one-step flow, and the arguments a replay gives its variables."""
    action = {
        "click": ("browser_click", {"target": target.css}),
        "fill": ("browser_fill", {"target": target.css, "value": "x"}),
        "check": ("browser_check", {"target": target.css}),
    }[target.action]
    flow_id = record(shim, f"{site}/replay/{target.page}", [action])
    variables = data(shim.call_tool("flow_get", {"flowId": flow_id})).get("variables", [])
    return flow_id, {v["key"]: "x" for v in variables}


def replay_case(shim: Any, site: str, flow: tuple[str, dict[str, str]], case: Case) -> tuple[str, dict[str, Any]]:
    """What the case got (with the step's message when it was not correct), and the step's report."""
    run = data(shim.call_tool("flow_run", {"flowId": flow[0], "args": flow[1], "startUrl": case.url(site)}))
    log = shim.call_tool("browser_get", {"what": "text", "target": "#log"})
    lines = " ".join(block.get("text", "") for block in log.get("content", [])).split()
    got = outcome(case, run["status"] == "succeeded", lines)
    step = (run.get("steps") or [{}])[0]
    if got != "correct" and case.expect is not None:
        return f"{got} ({step.get('message') or step.get('matchedBy')})", step
    if got == "wrong":
        acted = sorted({line.split(":", 1)[1] for line in lines if line.startswith(("click:", "input:"))})
        return f"{got} (acted on {', '.join(acted) or 'nothing'})", step
    return got, step


SETS = {"tuned": CASES, "held-out": HELD_OUT}


def mutations(show: bool, only: str, policy: str | None, which: str = "tuned") -> None:
    server, site = serve_site()
    home = make_home()
    results: dict[str, list[str]] = {}
    chosen = own = 0
    refusals: list[float] = []  # how long each refused step took (the step limit is the default 10 s)
    model: ScriptedModel | None = None
    try:
        with contextlib.ExitStack() as stack:
            if policy is not None:
                model = stack.enter_context(scripted_model(answering(POLICIES[policy])))
                home.env.update(model_env(model), BROWSERD_FLOWS_LLM_FALLBACK="true")
            shim = stack.enter_context(ready_shim(home, ["--tools", "all"]))
            cases = [case for case in SETS[which] if only in case.label]
            flows = {target: record_target(shim, site, target) for target in dict.fromkeys(c.target for c in cases)}
            for case in cases:
                said, step = replay_case(shim, site, flows[case.target], case)
                got = said.split(" ", 1)[0]
                results.setdefault(case.kind, []).append(got)
                if case.kind == "negative" and got == "refused":
                    refusals.append(float(step.get("tookMs", 0)))
                chosen += step.get("fallback") == "llm"
                # A negative acted on: the recorded element itself (a synonym the scorer refuses by rule while the
                # recorded name shows elsewhere), or another one.
                own += case.kind == "negative" and said == f"wrong (acted on {case.target.who})"
                if show:
                    print(f"  {got:8} {case.label}{said[len(got) :]}{' [model]' if step.get('llm') else ''}")
    finally:
        home.stop_daemon()
        shutil.rmtree(home.root, ignore_errors=True)
        stop_site(server)
    figures: dict[str, Any] = {"loadavg": [round(x, 2) for x in os.getloadavg()]}
    if model is not None:
        figures["llm_fallback"] = {
            "policy": policy,
            "questions": len(model.turns),
            "acted_on_choice": chosen,
            "negatives_acted_on_the_recorded_element": own,
        }
    for kind, got in results.items():
        share = "refused" if kind == "negative" else "correct"
        figures[kind] = {
            "cases": len(got),
            share: got.count(share),
            f"{share}_pct": round(100 * got.count(share) / len(got), 1),
            "wrong": got.count("wrong"),
        }
    if refusals:
        figures["negative"]["refusal_ms"] = summary(refusals)
    positive = [g for kind, got in results.items() if kind != "negative" for g in got]
    if positive:
        figures["positive"] = {
            "cases": len(positive),
            "correct": positive.count("correct"),
            "correct_pct": round(100 * positive.count("correct") / len(positive), 1),
            "wrong": positive.count("wrong"),
        }
    print("held-out (new):" if which == "held-out" else "tuned:")
    for kind in ("name", "testid", "lookalike", "structure", "positive", "negative"):
        f = figures.get(kind)
        if f is None:
            continue
        shown = f"{f['refused_pct']}% refused" if kind == "negative" else f"{f['correct_pct']}% replayed correctly"
        print(f"{kind:9}: {shown} ({f['cases']} cases), {f['wrong']} wrong element(s)")
    if "refusal_ms" in figures.get("negative", {}):
        took = figures["negative"]["refusal_ms"]
        print(f"a refusal took {took['median']} ms median, p95 {took['p95']} ms (step limit 10 s)")
    if model is not None:
        print(f"model ({policy}): asked {len(model.turns)} time(s), its choice acted on in {chosen} step(s)")
        print(f"of the negatives acted on, {own} on the recorded element itself, the others on another element")
    print(f"load average {figures['loadavg']}")
    print(json.dumps(figures))


def step_calls(runs: int, show: bool) -> None:
    """The Playwright calls a replayed fill step and click step make (module docstring, --calls)."""
    server, site = serve_site()
    home = make_home()
    home.env["DEBUG"] = "pw:api"  # the daemon the shim starts inherits it; its driver logs every call
    form = [
        ("browser_fill", {"target": "#email-field", "value": "a@b.c"}),
        ("browser_fill", {"target": "#pw-field", "value": "pw"}),
        ("browser_click", {"target": "#signin"}),
    ]
    counts: dict[int, list[int]] = {1: [], 2: [], 3: []}
    shown: dict[int, list[str]] = {}
    try:
        with ready_shim(home, ["--tools", "all"]) as shim:
            log = CommandLog(home)
            flows = {n: record(shim, f"{site}/flow-form.html", form[:n]) for n in counts}
            for _ in range(runs):
                for n, flow_id in flows.items():
                    log.take()
                    values = {"email": "a@b.c", "password": "pw"} if n > 1 else {"email": "a@b.c"}
                    args = {"flowId": flow_id, "args": values}
                    run = data(shim.call_tool("flow_run", {**args, "startUrl": f"{site}/flow-form.html"}))
                    if run["status"] != "succeeded":
                        raise SystemExit(f"replay failed: {run}")
                    shown[n] = log.take()[0]
                    counts[n].append(len(shown[n]))
    finally:
        home.stop_daemon()
        shutil.rmtree(home.root, ignore_errors=True)
        stop_site(server)
    median = {n: sorted(c)[len(c) // 2] for n, c in counts.items()}
    figures = {
        "flow_calls": median,
        "fill_step_calls": median[2] - median[1],
        "click_step_calls": median[3] - median[2],
        "loadavg": [round(x, 2) for x in os.getloadavg()],
    }
    print(
        f"a replayed fill step: {figures['fill_step_calls']} Playwright calls; a click step: "
        f"{figures['click_step_calls']} (flows of 1, 2, 3 steps: {median})"
    )
    if show:
        for n, calls in shown.items():
            print(f"  {n} step(s): {' '.join(calls)}")
    print(f"load average {figures['loadavg']}")
    print(json.dumps(figures))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--published", type=int, default=50)
    parser.add_argument("--mutations", action="store_true", help="the mutated-pages replay figures instead")
    parser.add_argument("--calls", action="store_true", help="a replayed step's driver calls instead")
    parser.add_argument("--show", action="store_true", help="with --mutations: every case's result; --calls: the calls")
    parser.add_argument("--only", default="", help="with --mutations: the cases whose label holds this text")
    parser.add_argument("--set", choices=list(SETS), default="tuned", help="with --mutations: which set of cases")
    parser.add_argument(
        "--llm-fallback",
        choices=sorted(POLICIES),
        help="with --mutations: llm_fallback on, this scripted model",
    )
    options = parser.parse_args()
    if options.calls:
        step_calls(options.runs, options.show)
        return
    if options.mutations:
        mutations(options.show, options.only, options.llm_fallback, options.set)
        return
    server, site = serve_site()
    home = make_home()
    figures: dict[str, Any] = {}
    try:
        with ready_shim(home, ["--tools", "all"]) as shim:
            clicks = [("browser_click", {"target": f"section:nth-of-type({i}) button"}) for i in range(1, STEPS + 1)]
            flow_id = record(shim, f"{site}/flow-steps.html", clicks)
            rates, walls, resolves = [], [], []
            for _ in range(options.runs):
                started = time.perf_counter()
                run = data(shim.call_tool("flow_run", {"flowId": flow_id, "startUrl": f"{site}/flow-steps.html"}))
                walls.append((time.perf_counter() - started) * 1000)
                if run["status"] != "succeeded":
                    raise SystemExit(f"replay failed: {run}")
                steps = run["steps"]
                rates.append(len(steps) / (sum(s["tookMs"] for s in steps) / 1000))
                resolves += [s["resolveMs"] for s in steps]
            figures["steps_per_s"] = summary(rates)
            figures["run_wall_ms"] = summary(walls)
            figures["resolve_ms_per_step"] = summary(resolves)

            form = [
                ("browser_fill", {"target": "#email-field", "value": "a@b.c"}),
                ("browser_fill", {"target": "#pw-field", "value": "pw"}),
                ("browser_click", {"target": "#signin"}),
            ]
            form_id = record(shim, f"{site}/flow-form.html", form)
            fallbacks, fills = [], []
            for _ in range(options.runs):
                run = data(
                    shim.call_tool(
                        "flow_run",
                        {"flowId": form_id, "args": {"email": "a@b.c", "password": "pw"},
                         "startUrl": f"{site}/flow-form.html?v=ids"},
                    )
                )  # fmt: skip
                step = run["steps"][2]
                if not step.get("fallback"):
                    raise SystemExit(f"expected a fallback: {step}")
                fallbacks.append(step["resolveMs"])
                fills += [s["tookMs"] for s in run["steps"][:2]]
            figures["broken_first_candidate_ms"] = summary(fallbacks)
            figures["fill_step_ms"] = summary(fills)

            figures.update(recording_cost(shim, site, options.runs))

            before = tools_chars(shim)
            for _ in range(options.published):
                shim.call_tool("flow_import", {"flow": {**data(shim.call_tool("flow_get", {"flowId": form_id}))}})
            imported = [f["flowId"] for f in data(shim.call_tool("flow_list", {}))["flows"] if f["flowId"] != form_id]
            published = [f for f in imported if f != flow_id][: options.published]
            for n, fid in enumerate(published):
                shim.call_tool("flow_publish", {"flowId": fid, "slug": f"bench_{n}", "description": "Sign in."})
            figures["published_flows"] = len(published)
            figures["tools_list_chars_added"] = tools_chars(shim) - before
    finally:
        home.stop_daemon()
        shutil.rmtree(home.root, ignore_errors=True)
        stop_site(server)
    rate = figures["steps_per_s"].get("median")
    print(f"replay of a {STEPS}-step flow: {rate} steps/s median (target >= 10)")
    print(f"  client wall per run: {figures['run_wall_ms']}")
    res = figures["resolve_ms_per_step"]
    print(f"resolution + verification per step: median {res.get('median')} ms, p95 {res.get('p95')} ms (target <= 15)")
    broken = figures["broken_first_candidate_ms"]
    print(f"broken first candidate -> verified alternative: median {broken.get('median')} ms (target <= 300)")
    fill = figures["fill_step_ms"]
    print(f"a fill step (resolve, act through elements/filling.py, settle): median {fill.get('median')} ms")
    added = figures["tools_list_chars_added"]
    print(f"{figures['published_flows']} published flows add {added} chars to tools/list (target <= 6000)")
    plain, recorded = figures["click_ms"], figures["click_recording_ms"]
    print(
        f"browser_click: median {plain.get('median')} ms, while recording {recorded.get('median')} ms "
        f"({figures['recording_ratio']}x); flow_record_start median {figures['record_start_ms'].get('median')} ms"
    )
    figures["loadavg"] = [round(x, 2) for x in os.getloadavg()]
    print(f"load average {figures['loadavg']}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
