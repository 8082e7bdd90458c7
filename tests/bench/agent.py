"""Agent benchmark (issue 26): per step, the characters the model is sent and the daemon's own time, for
agent_run beside a plain full-snapshot loop on the same tasks.

    .venv/bin/python tests/bench/agent.py [--repeat 3]

The tasks are those of tests/e2e/test_agent.py (tests/agent_scripts.py: sign in and read a value, page
through search results into an array, compare two pages in tabs), played by a scripted model on loopback
(tests/llm_server.py), so every figure but the times is deterministic.

- agent: `agent_run` in sync mode; its step trace gives, per browser action, the characters of page text
  the model was handed (`chars`: the action's answer in the agent's snapshot form, fenced) and the daemon's
  wall time for the action (`daemonMs`: the tool's code, the browser's work and settling; the model's time
  is not in it). Beside it, the daemon process's own CPU time per step (Chromium's not counted).
- full loop: the same script, fed by a loop in this process that calls the browser tools over MCP with
  snapshot=full after every action, as an agent reading plain full snapshots would: characters per step
  and the client's wall time per call.
- forms on pages: the fixture tasks' pages are tiny, so the same is measured on fuller tests/site pages:
  the characters of a page opened with each snapshot form the agent could use (full, interactive), and of
  `read` (its main content as markdown, what an interactive agent asks for when it needs the text).

Prints figures with the load average, never asserts them (DESIGN.md §6); then one line of JSON.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.agent_scripts import compare_in_tabs, search_and_page, sign_in  # noqa: E402
from tests.bench.common import RawShim, cpu_ms, ready_shim, serve_site, stop_site, text_of  # noqa: E402
from tests.conftest import make_home, wait_for  # noqa: E402
from tests.llm_server import ScriptedModel, Turn, model_env, say, scripted_model  # noqa: E402

SHIM_ARGS = ["--tools", "agent,runs,pages,scrape"]
FORM_PAGES = (
    "index.html",
    "article.html",
    "form.html",
    "widgets.html",
    "w-lists.html",
    "crawl/index.html",
    "large.html",
)
RUN_TIMEOUT_S = 180


@dataclass
class Task:
    name: str
    script: Callable[[Turn], dict[str, Any]]
    prompt: str
    start: str
    args: dict[str, str] = field(default_factory=dict)


def tasks(site: str) -> list[Task]:
    return [
        Task(
            "sign in",
            sign_in,
            "Sign in as ada and read the greeting.",
            f"{site}/runs-login.html",
            {"password": "secret"},
        ),
        Task("search pages", search_and_page, "List every teapot with its price.", f"{site}/agent/search.html"),
        Task(
            "tabs compare",
            compare_in_tabs,
            f"Which teapot is cheaper? Also: {site}/agent/product-b.html",
            f"{site}/agent/product.html",
        ),
    ]


@dataclass
class Figures:
    chars: list[float] = field(default_factory=list)
    ms: list[float] = field(default_factory=list)
    cpu_per_step: list[float] = field(default_factory=list)


def agent_steps(shim: RawShim, model: ScriptedModel, task: Task, daemon_pid: int, figures: Figures) -> None:
    model.script = task.script
    before = cpu_ms([daemon_pid])
    inputs = {"prompt": task.prompt, "urls": [task.start], "args": task.args, "mode": "sync"}
    run = shim.call_tool("agent_run", inputs, timeout=RUN_TIMEOUT_S)["structuredContent"]
    spent = cpu_ms([daemon_pid]) - before
    if run["status"] != "succeeded":
        raise SystemExit(f"{task.name}: the agent run ended {run['status']}: {run.get('error')}")
    chunk = shim.call_tool("get_artifact", {"artifactId": run["result"]["traceArtifactId"]})["structuredContent"]
    trace = json.loads(base64.b64decode(chunk["data"]))
    figures.chars += [step["chars"] for step in trace]
    figures.ms += [step["daemonMs"] for step in trace]
    figures.cpu_per_step.append(spent / max(1, len(trace)))


def full_loop_steps(shim: RawShim, task: Task, figures: Figures) -> None:
    """The script fed plain full snapshots by this process, each action a browser tool call over MCP."""

    def tool(name: str, arguments: dict[str, Any]) -> str:
        started = time.perf_counter()
        text = text_of(shim.call_tool(name, arguments, timeout=60))
        figures.ms.append((time.perf_counter() - started) * 1000)
        figures.chars.append(len(text))
        return text

    opened = tool("browser_open", {"url": task.start, "snapshot": "full"})
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": ""},
        {"role": "user", "content": f"Task: {task.prompt}\nStart at: {task.start}\n\n{opened}"},
    ]
    for _ in range(30):
        reply = task.script(Turn({"messages": messages}, {}))
        name, args = reply["tool"], reply["arguments"]
        if name == "done":
            return
        if name == "note":
            text = "Noted."
        elif name == "fill":
            value = task.args[args["arg"]] if args.get("arg") else args["value"]
            call = {"target": args["ref"], "value": value, "submit": bool(args.get("submit")), "snapshot": "full"}
            text = tool("browser_fill", call)
        elif name == "click":
            text = tool("browser_click", {"target": args["ref"], "snapshot": "full"})
        elif name == "tabs":
            text = tool("browser_tabs", {"action": "new", "url": args["url"]})
            text += "\n" + tool("browser_snapshot", {})
            figures.chars[-2:] = [figures.chars[-2] + figures.chars[-1]]
            figures.ms[-2:] = [figures.ms[-2] + figures.ms[-1]]
        else:
            raise SystemExit(f"{task.name}: the full loop has no mapping for {name}")
        messages.append({"role": "tool", "content": text})
    raise SystemExit(f"{task.name}: the script did not finish in the full loop")


def forms_on_pages(shim: RawShim, site: str) -> dict[str, dict[str, int]]:
    figures: dict[str, dict[str, int]] = {}
    for page in FORM_PAGES:
        full = text_of(shim.call_tool("browser_open", {"url": f"{site}/{page}", "snapshot": "full"}))
        interactive = text_of(shim.call_tool("browser_snapshot", {"interactive": True}))
        main = text_of(shim.call_tool("scrape", {"url": f"{site}/{page}", "render": "always"}))
        figures[page] = {"full": len(full), "interactive": len(interactive), "read": len(main)}
    return figures


def stats(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    return {
        "n": len(values),
        "mean": round(statistics.fmean(values), 1),
        "median": round(statistics.median(values), 1),
        "max": round(max(values), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each task in each mode")
    options = parser.parse_args()
    server, site = serve_site()
    home = make_home(idle_exit_s=30)
    report: dict[str, Any] = {"loadavgBefore": os.getloadavg()}
    try:
        with scripted_model(lambda turn: say("{}")) as model:
            home.env.update(model_env(model))
            shim = ready_shim(home, SHIM_ARGS)
            try:
                wait_for(lambda: home.daemon_pid() is not None, 10)
                daemon_pid = home.daemon_pid()
                assert daemon_pid is not None, "the daemon did not start"
                for task in tasks(site):
                    agent, full = Figures(), Figures()
                    for _ in range(options.repeat):
                        agent_steps(shim, model, task, daemon_pid, agent)
                        full_loop_steps(shim, task, full)
                    report[task.name] = {
                        "agentChars": stats(agent.chars),
                        "fullChars": stats(full.chars),
                        "charsRatio": round(statistics.fmean(agent.chars) / statistics.fmean(full.chars), 3),
                        "agentDaemonMs": stats(agent.ms),
                        "agentDaemonCpuMsPerStep": stats(agent.cpu_per_step),
                        "fullClientMs": stats(full.ms),
                    }
                report["forms on pages"] = forms_on_pages(shim, site)
            finally:
                shim.close()
    finally:
        home.stop_daemon()
        stop_site(server)
        shutil.rmtree(home.root, ignore_errors=True)
    report["loadavgAfter"] = os.getloadavg()
    for page, sizes in report["forms on pages"].items():
        ratio = sizes["interactive"] / sizes["full"]
        print(
            f"{page:18} full {sizes['full']:6}  interactive {sizes['interactive']:6} ({ratio:.2f})"
            f"  read {sizes['read']:6}"
        )
    for name, figures in report.items():
        if not isinstance(figures, dict) or name == "forms on pages":
            continue
        agent, full = figures["agentChars"], figures["fullChars"]
        print(
            f"{name:14} chars/step agent {agent['mean']:6.0f} (median {agent['median']:.0f})"
            f"  full {full['mean']:6.0f} (median {full['median']:.0f})  ratio {figures['charsRatio']:.2f}"
            f" | agent daemon ms/step median {figures['agentDaemonMs']['median']:.1f}"
            f", daemon CPU ms/step median {figures['agentDaemonCpuMsPerStep']['median']:.1f}"
            f" | full loop client ms/call median {figures['fullClientMs']['median']:.1f}"
        )
    print(f"load average before {report['loadavgBefore']}, after {report['loadavgAfter']}")
    print(json.dumps(report))


if __name__ == "__main__":
    main()
