"""browserd against @playwright/mcp on the same tests/site pages, in one run (issue 10, items 7 and 8).

    .venv/bin/python tests/bench/peers.py [--runs 20] [--only browserd|peer] [--peer-dir /tmp/peers] [--answers]
        [--cycles-only] [--chromium shell|full|both]

Not part of `make test`. Installs the pinned @playwright/mcp with npm into --peer-dir when it is not
there yet and drives both servers with the official MCP SDK client over stdio, both on the same Chromium
executable: the headless shell browserd's headless pages run in by default (`shell`), then the full
browser (`full`), one after the other (`both`, the default); the peer runs headless, isolated, no sandbox.
Prints, for each executable and server, the median and p95 of (samples taken in turns, one server then
the other, so that both meet the same load on a busy machine):

1. navigate to an article page and read its snapshot (browserd: browser_open, whose answer holds it; the
   peer writes the snapshot of a navigation to a file, so its agent calls browser_navigate + browser_snapshot);
2. fill a textbox (browserd: browser_fill; the peer: browser_type, which fills);
3. click a button that re-renders part of the page;
4. a new client's first call (open a page) while another client keeps the daemon warm; the peer has no
   daemon, so its figure includes launching its browser;
5. 4 clients x 10 navigate+snapshot cycles at once, as pages/s (the mean of 2 rounds each, in turns);
6. the characters of the default tools/list, and the characters of every answer of a scripted agent
   that walks the fixture pages with the same steps on both servers (an agent that needs an element no
   answer has shown yet reads the page with browser_snapshot first, on either server).

Then the ratio browserd/peer of each figure, the targets, the load average when each executable's
measurements began and ended, and one line of JSON.

Beside the two servers, navigate and fill are also timed in turns with plain Playwright on the same
executable and flags as browserd's browser, no server at all (`floor`): `goto` + `aria_snapshot(mode="ai")`,
and `locator.fill`. That is what any server built on Playwright pays at least, so floor / peer is the best
ratio such a server could reach on this machine.

`--answers` measures characters only (no timings): it prints every answer of the scripted agent on both
servers to stderr, to read side by side, and the characters of a snapshot of each realistic fixture page.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from browserd.daemon.config import BrowserConfig  # noqa: E402
from browserd.daemon.runtime.chromium import find_chromium, launch_args  # noqa: E402
from tests.bench.common import fmt_ms, serve_site, stop_site, summary  # noqa: E402
from tests.conftest import BROWSERD, BrowserdHome, make_home  # noqa: E402

PEER_PACKAGE = "@playwright/mcp"
PEER_VERSION = "0.0.83"
PEER_ARGS = ["--browser", "chromium", "--headless", "--isolated", "--no-sandbox"]
CLIENTS = 4
CYCLES = 10
CYCLE_ROUNDS = 2  # 4-client rounds of each server, in turns: their mean is the figure
CALL_TIMEOUT_S = 60
# How each server says a ref's element is gone (re-rendered): browserd's REF_NOT_FOUND, the peer's own words.
_STALE = re.compile(r"REF_NOT_FOUND|ELEMENT_NOT_FOUND|not found in the current page snapshot")
TARGETS = {  # issue 10: (figure, target, True when higher is better)
    "navigate": 90.0,
    "fill": 40.0,
    "click": 120.0,
    "first_call": 150.0,
}
PAGES_PER_S_TARGET = 14.0
# Issue 23: beside the peer on the same executable, browserd's median at most this share of the peer's...
RATIO_TARGETS = {"navigate": 0.8, "fill": 1.0}
PAGES_PER_S_RATIO = 2.0  # ...and at least twice its pages/s
ANSWER_RATIO_TARGET = 0.6
TOOLS_LIST_TARGET = 15_000
SNAPSHOT_PAGES = (
    "shop.html",
    "article.html",
    "widgets.html",
    "form.html",
    "index.html",
    "inputs.html",
    "states.html",
    "tree.html",
)
CYCLE_PAGES = ("article.html", "form.html", "states.html", "tree.html", "index.html")


@dataclass
class Flavor:
    """How one server names the calls the bench makes."""

    name: str
    params: StdioServerParameters
    navigate: Callable[[str], tuple[str, dict[str, Any]]]
    fill: Callable[[str, str, str, bool], tuple[str, dict[str, Any]]]  # (element, ref, text, submit)
    type_slowly: Callable[[str, str, str], tuple[str, dict[str, Any]]]
    click: Callable[[str, str], tuple[str, dict[str, Any]]]
    # The peer's answers link their snapshot as a file: its agent reads the page with an explicit snapshot.
    read_after_navigate: bool = False
    errlog: Any = field(default=sys.stderr)


def browserd_flavor(home: BrowserdHome) -> Flavor:
    return Flavor(
        "browserd",
        StdioServerParameters(command=BROWSERD, args=["mcp"], env=home.env),
        navigate=lambda url: ("browser_open", {"url": url}),
        fill=lambda _element, ref, text, submit: ("browser_fill", {"target": ref, "value": text, "submit": submit}),
        type_slowly=lambda _element, ref, text: ("browser_type", {"target": ref, "text": text, "slowly": True}),
        click=lambda _element, ref: ("browser_click", {"target": ref}),
    )


def peer_flavor(command: list[str], workspace: Path) -> Flavor:
    workspace.mkdir(parents=True, exist_ok=True)  # where it writes its snapshot files
    return Flavor(
        "playwright-mcp",
        StdioServerParameters(command=command[0], args=command[1:], cwd=str(workspace)),
        navigate=lambda url: ("browser_navigate", {"url": url}),
        fill=lambda element, ref, text, submit: (
            "browser_type",
            {"element": element, "target": ref, "text": text, "submit": submit},
        ),
        type_slowly=lambda element, ref, text: (
            "browser_type",
            {"element": element, "target": ref, "text": text, "slowly": True},
        ),
        click=lambda element, ref: ("browser_click", {"element": element, "target": ref}),
        read_after_navigate=True,
    )


def peer_command(folder: Path, chromium: str) -> list[str]:
    """The pinned @playwright/mcp, installed with npm into `folder` on first use."""
    binary = folder / "node_modules" / ".bin" / "playwright-mcp"
    package = folder / "node_modules" / "@playwright" / "mcp" / "package.json"
    installed = json.loads(package.read_text()).get("version") if package.exists() else None
    if installed != PEER_VERSION:
        npm = shutil.which("npm")
        if npm is None:
            raise SystemExit("npm is needed to install the peer (@playwright/mcp)")
        print(f"installing {PEER_PACKAGE}@{PEER_VERSION} into {folder}", file=sys.stderr)
        subprocess.run([npm, "install", "--prefix", str(folder), f"{PEER_PACKAGE}@{PEER_VERSION}"], check=True)
    return [str(binary), *PEER_ARGS, "--executable-path", chromium]


# -- one client ----------------------------------------------------------------------------------


class Agent:
    """One MCP client: calls tools, keeps what the page showed so far to find refs, counts characters."""

    def __init__(self, flavor: Flavor, client: Any) -> None:
        self.flavor = flavor
        self.client = client
        self.seen = ""
        self.chars = 0
        self.calls = 0
        self.snapshots_read = 0  # browser_snapshot calls made to find an element not seen in any answer
        self.stale_refs = 0  # actions refused because the ref's element was re-rendered since it was seen
        self.answers: list[str] = []  # every call and its answer, for --answers

    async def call(self, tool: tuple[str, dict[str, Any]], stale_ok: bool = False) -> str | None:
        """The answer's text; None when `stale_ok` and the server said the ref is no longer on the page."""
        name, arguments = tool
        self.calls += 1
        result = await asyncio.wait_for(self.client.call_tool(name, arguments), CALL_TIMEOUT_S)
        text = "\n".join(block.text for block in result.content if block.type == "text")
        self.chars += len(text)
        self.answers.append(f"> {name} {json.dumps(arguments)}  ({len(text)} chars)\n{text}")
        if result.is_error:
            if stale_ok and _STALE.search(text):
                self.stale_refs += 1
                return None
            raise RuntimeError(f"{self.flavor.name} {name} {arguments} failed: {text[:400]}")
        self.seen += "\n" + text
        return text

    async def snapshot(self) -> str:
        self.snapshots_read += 1
        return await self.call(("browser_snapshot", {})) or ""

    async def ref(self, role: str, name: str, fresh: bool = False) -> str:
        """The ref of the latest line showing this role and name (answers may be deltas); an agent that has
        not seen the element yet (or whose ref went stale) reads the page with browser_snapshot first."""
        pattern = re.compile(rf'- {role} "{re.escape(name)}"[^\n]*?\[ref=([A-Za-z0-9]+)\]')
        found = [] if fresh else pattern.findall(self.seen)
        if not found:
            found = pattern.findall(await self.snapshot())
        if not found:
            raise RuntimeError(f"{self.flavor.name}: no {role} {name!r} on the page")
        return str(found[-1])

    async def act(
        self, role: str, name: str, tool: Callable[[str], tuple[str, dict[str, Any]]], leaves: bool = False
    ) -> str:
        """Act on the element; a ref the page re-rendered away since it was seen is looked up afresh, once,
        as an agent does when told its ref is stale. `leaves`: the action loads another page, so the refs
        seen so far belong to the page left behind."""
        for fresh in (False, True):
            call = tool(await self.ref(role, name, fresh))
            if leaves:
                self.seen = ""
            answer = await self.call(call, stale_ok=not fresh)
            if answer is not None:
                return answer
        raise AssertionError("unreachable: the fresh attempt raises or answers")

    async def open(self, url: str) -> str:
        self.seen = ""
        text = await self.call(self.flavor.navigate(url)) or ""
        if self.flavor.read_after_navigate:
            text = await self.snapshot()
        return text

    async def fill(self, role: str, name: str, text: str, submit: bool = False) -> str:
        return await self.act(role, name, lambda ref: self.flavor.fill(f"{role} {name}", ref, text, submit))

    async def type_slowly(self, role: str, name: str, text: str) -> str:
        return await self.act(role, name, lambda ref: self.flavor.type_slowly(f"{role} {name}", ref, text))

    async def click(self, role: str, name: str) -> str:
        return await self.act(role, name, lambda ref: self.flavor.click(f"{role} {name}", ref))

    async def follow(self, role: str, name: str) -> str:
        return await self.act(role, name, lambda ref: self.flavor.click(f"{role} {name}", ref), leaves=True)


class Floor:
    """Plain Playwright on browserd's executable and flags, no server: what navigate and fill cost at least."""

    name = "floor"

    def __init__(self, page: Any) -> None:
        self.page = page

    async def open(self, url: str) -> str:
        await self.page.goto(url)
        return str(await self.page.aria_snapshot(mode="ai"))

    async def fill(self, role: str, name: str, text: str) -> None:
        await self.page.get_by_role(role, name=name, exact=True).fill(text)


@contextlib.asynccontextmanager
async def plain_playwright(executable: str) -> Any:
    from playwright.async_api import async_playwright

    found = find_chromium(executable)
    assert found is not None, executable
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=found.path, args=launch_args(BrowserConfig().args, found)
        )
        try:
            yield Floor(await (await browser.new_context()).new_page())
        finally:
            await browser.close()


@contextlib.asynccontextmanager
async def connect(flavor: Flavor) -> Any:
    async with Client(stdio_client(flavor.params, errlog=flavor.errlog), mode="legacy") as client:
        yield Agent(flavor, client)


async def timed(step: Callable[[], Awaitable[Any]]) -> float:
    started = time.perf_counter()
    await step()
    return (time.perf_counter() - started) * 1000


# -- the measurements -----------------------------------------------------------------------------


async def measure(
    flavors: list[Flavor],
    site: str,
    runs: int,
    show: bool = False,
    cycles_only: bool = False,
    floor_on: str | None = None,
) -> dict[str, dict[str, Any]]:
    """Every figure of each server. Timings take their samples in turns, one server then the other (the
    first one alternating), so that both meet the same load on a busy machine; `floor_on`: navigate and
    fill also take turns with plain Playwright on that executable (Floor)."""
    figures: dict[str, dict[str, Any]] = {flavor.name: {} for flavor in flavors}

    def turns(sample: int) -> list[Flavor]:
        return flavors if sample % 2 == 0 else flavors[::-1]

    if not cycles_only:
        async with contextlib.AsyncExitStack() as stack:
            agents = {flavor.name: await stack.enter_async_context(connect(flavor)) for flavor in flavors}
            for flavor in flavors:
                listed = await agents[flavor.name].client.list_tools()
                figures[flavor.name]["tools"] = len(listed.tools)
                figures[flavor.name]["tools_list_chars"] = len(
                    json.dumps([tool.model_dump(by_alias=True, exclude_none=True) for tool in listed.tools])
                )
            if show:  # characters only: no timings
                for flavor in flavors:
                    figures[flavor.name]["scripted"] = await scripted_agent(flavor, site, show)
                    figures[flavor.name]["answer_chars"] = figures[flavor.name]["scripted"]["chars"]
                    figures[flavor.name]["snapshot_chars"] = await page_snapshots(flavor, site)
                return figures

            floor = await stack.enter_async_context(plain_playwright(floor_on)) if floor_on else None

            async def sampled(key: str, page: str, step: Callable[[Any, int], Awaitable[Any]], floored: bool) -> None:
                taking: dict[str, Any] = dict(agents)
                if floored and floor is not None:
                    taking[floor.name] = floor
                samples: dict[str, list[float]] = {name: [] for name in taking}
                for agent in taking.values():
                    await agent.open(f"{site}/{page}")  # warm: the browser, the page, the server's cache
                for sample in range(runs):
                    order = list(taking.items())
                    for name, agent in order if sample % 2 == 0 else order[::-1]:
                        samples[name].append(await timed(lambda a=agent, i=sample: step(a, i)))
                for name, values in samples.items():
                    figures.setdefault(name, {})[key] = summary(values)

            await sampled("navigate", "article.html", lambda agent, _i: agent.open(f"{site}/article.html"), True)
            await sampled("fill", "form.html", lambda agent, i: agent.fill("textbox", "Full name", f"Ada {i}"), True)
            await sampled("click", "article.html", lambda agent, _i: agent.click("button", "Show comments"), False)

            # A new client's first call while the first one keeps the daemon (and its browser) warm; the
            # peer has no daemon, so its figure includes launching its browser.
            async def first_call(flavor: Flavor) -> float:
                async with connect(flavor) as newcomer:
                    return await timed(lambda: newcomer.open(f"{site}/index.html"))

            calls: dict[str, list[float]] = {flavor.name: [] for flavor in flavors}
            for sample in range(max(3, runs // 2)):
                for flavor in turns(sample):
                    calls[flavor.name].append(await first_call(flavor))
            for name, values in calls.items():
                figures[name]["first_call"] = summary(values)
    rates: dict[str, list[float]] = {flavor.name: [] for flavor in flavors}
    for sample in range(CYCLE_ROUNDS):
        for flavor in turns(sample):
            rates[flavor.name].append(await parallel_cycles(flavor, site))
    for name, values in rates.items():
        figures[name]["pages_per_s"] = round(statistics.mean(values), 2)
    if not cycles_only:
        for flavor in flavors:
            figures[flavor.name]["scripted"] = await scripted_agent(flavor, site, show)
            figures[flavor.name]["answer_chars"] = figures[flavor.name]["scripted"]["chars"]
    return figures


async def parallel_cycles(flavor: Flavor, site: str) -> float:
    async with contextlib.AsyncExitStack() as stack:
        agents = [await stack.enter_async_context(connect(flavor)) for _ in range(CLIENTS)]
        for agent in agents:
            await agent.open(f"{site}/index.html")

        async def cycles(agent: Agent, offset: int) -> None:
            for cycle in range(CYCLES):
                await agent.open(f"{site}/{CYCLE_PAGES[(cycle + offset) % len(CYCLE_PAGES)]}")

        started = time.perf_counter()
        async with asyncio.TaskGroup() as group:
            for number, agent in enumerate(agents):
                group.create_task(cycles(agent, number))
        return round(CLIENTS * CYCLES / (time.perf_counter() - started), 2)


async def page_snapshots(flavor: Flavor, site: str) -> dict[str, int]:
    """The characters of a browser_snapshot of each realistic fixture page, read right after opening it."""
    sizes: dict[str, int] = {}
    async with connect(flavor) as agent:
        for page in SNAPSHOT_PAGES:
            await agent.open(f"{site}/{page}")
            sizes[page] = len(await agent.call(("browser_snapshot", {})) or "")
    return sizes


async def scripted_agent(flavor: Flavor, site: str, show: bool = False) -> dict[str, int]:
    """The same calls on both servers over the fixture pages; answers the characters of every answer."""
    async with connect(flavor) as agent:
        await agent.open(f"{site}/article.html")
        await agent.click("button", "Show comments")
        await agent.open(f"{site}/form.html")
        await agent.fill("textbox", "Full name", "Ada Lovelace")
        await agent.fill("textbox", "Email", "ada@example.com")
        await agent.fill("textbox", "Message", "Hello there")
        await agent.click("checkbox", "Accept terms")
        await agent.click("button", "Send")
        await agent.open(f"{site}/autocomplete.html")
        await agent.type_slowly("combobox", "Search fruit", "ap")
        await agent.click("option", "Apricot")
        await agent.open(f"{site}/tree.html")
        await agent.click("treeitem", "Documents")
        await agent.click("treeitem", "Work")
        await agent.open(f"{site}/spa.html")
        await agent.click("link", "Products")
        await agent.click("button", "Add to cart")
        await agent.open(f"{site}/states.html")
        await agent.click("tab", "Details")
        await agent.click("button", "Bold")
        # A shop shaped like a real one: tracking parameters on every link, whole-card click handlers, a grid
        # re-rendered afresh on every change, a cookie banner, product pages reached by links. Find a Pro
        # product in stock and buy two; then browse the second page of the catalogue to a product there and buy it.
        await agent.open(f"{site}/shop.html")
        await agent.click("button", "Accept all")
        await agent.fill("searchbox", "Search products", "pro", submit=True)
        await agent.click("checkbox", "In stock")
        await agent.follow("link", "Acme Kettle Pro")
        await agent.fill("spinbutton", "Quantity", "2")
        await agent.click("tab", "Reviews")
        await agent.click("button", "Add to basket")
        await agent.open(f"{site}/shop.html")
        await agent.click("button", "Accept all")
        await agent.click("link", "Page 2")
        await agent.follow("link", "Acme Kettle Mini")
        await agent.click("button", "Add to basket")
        if show:  # side by side with the peer's: where ours are longer
            print(f"\n==== {flavor.name}: every answer of the scripted agent ====", file=sys.stderr)
            print("\n\n".join(agent.answers), file=sys.stderr)
        return {
            "chars": agent.chars,
            "calls": agent.calls,
            "snapshotsRead": agent.snapshots_read,
            "staleRefs": agent.stale_refs,
        }


# -- output ----------------------------------------------------------------------------------------


def ratio(ours: float | None, theirs: float | None) -> str:
    return "-" if not ours or not theirs else f"{ours / theirs:.2f}x"


def report(executable: str, results: dict[str, dict[str, Any]], loads: tuple[float, float]) -> None:
    ours, peer = results.get("browserd", {}), results.get("playwright-mcp", {})
    print(f"\n== both servers on {executable} (load average {loads[0]:.1f} at the start, {loads[1]:.1f} at the end)")
    print(f"{'figure':<28}{'browserd':>14}{'playwright-mcp':>18}{'ratio':>9}   target")
    for key, target in TARGETS.items():
        a = (ours.get(key) or {}).get("median")
        b = (peer.get(key) or {}).get("median")
        met = "" if a is None else ("met" if a <= target else "MISSED")
        wanted = f"<= {target:.0f} ms {met}"
        if key in RATIO_TARGETS and a and b:
            wanted += f"; <= {RATIO_TARGETS[key]}x {'met' if a / b <= RATIO_TARGETS[key] else 'MISSED'}"
        print(f"{key + ' median':<28}{fmt_ms(a):>14}{fmt_ms(b):>18}{ratio(a, b):>9}   {wanted}")
        a95 = (ours.get(key) or {}).get("p95")
        b95 = (peer.get(key) or {}).get("p95")
        print(f"{key + ' p95':<28}{fmt_ms(a95):>14}{fmt_ms(b95):>18}")
    floor = results.get("floor", {})
    for key in RATIO_TARGETS:
        f = (floor.get(key) or {}).get("median")
        b = (peer.get(key) or {}).get("median")
        if f is not None:
            print(f"{key + ' floor median':<28}{fmt_ms(f):>14}{'':>18}{ratio(f, b):>9}   plain Playwright, no server")
    a, b = ours.get("pages_per_s"), peer.get("pages_per_s")
    met = "" if a is None else ("met" if a >= PAGES_PER_S_TARGET else "MISSED")
    wanted = f">= {PAGES_PER_S_TARGET} {met}"
    if a and b:
        wanted += f"; >= {PAGES_PER_S_RATIO}x {'met' if a / b >= PAGES_PER_S_RATIO else 'MISSED'}"
    print(f"{'4 clients pages/s':<28}{a or '-':>14}{b or '-':>18}{ratio(a, b):>9}   {wanted}")
    a, b = ours.get("answer_chars"), peer.get("answer_chars")
    met = "" if not a or not b else ("met" if a / b <= ANSWER_RATIO_TARGET else "MISSED")
    print(f"{'scripted answers chars':<28}{a or '-':>14}{b or '-':>18}{ratio(a, b):>9}   <= 0.6x {met}")
    a, b = ours.get("tools_list_chars"), peer.get("tools_list_chars")
    met = "" if a is None else ("met" if a <= TOOLS_LIST_TARGET else "MISSED")
    print(f"{'default tools/list chars':<28}{a or '-':>14}{b or '-':>18}{ratio(a, b):>9}   <= 15000 {met}")
    for page, size in (ours.get("snapshot_chars") or {}).items():
        theirs = (peer.get("snapshot_chars") or {}).get(page)
        print(f"{'snapshot ' + page:<28}{size:>14}{theirs or '-':>18}{ratio(size, theirs):>9}")
    print(f"{'default tools':<28}{ours.get('tools', '-'):>14}{peer.get('tools', '-'):>18}")
    a, b = (ours.get("scripted") or {}).get("calls", "-"), (peer.get("scripted") or {}).get("calls", "-")
    print(f"{'scripted agent calls':<28}{a:>14}{b:>18}")


def executables(choice: str) -> list[str]:
    """The executables both servers run on: the headless shell browserd's headless pages use by default,
    and the full browser (what a headed launch uses)."""
    found = [find_chromium(headless=True), find_chromium(headless=False)]
    paths = [chromium.path for chromium in found if chromium is not None]
    if not paths:
        raise SystemExit("no Chromium found; run `browserd doctor`")
    if choice == "shell":
        return paths[:1]
    if choice == "full":
        return paths[-1:]
    return list(dict.fromkeys(paths))


async def measure_on(executable: str, args: argparse.Namespace, site: str) -> dict[str, dict[str, Any]]:
    """Both servers on one executable: browserd in a fresh home (its own daemon), then the peer."""
    home = make_home(idle_exit_s=30)
    home.env["BROWSERD_CHROMIUM"] = executable
    errlog = open(home.root / "servers.err", "w")  # noqa: SIM115 - closed below
    results: dict[str, dict[str, Any]] = {}
    try:
        flavors = []
        if args.only in (None, "browserd"):
            flavors.append(browserd_flavor(home))
        if args.only in (None, "peer"):
            flavors.append(peer_flavor(peer_command(args.peer_dir, executable), home.root / "peer"))
        for flavor in flavors:
            flavor.errlog = errlog
        print(f"measuring {', '.join(f.name for f in flavors)} on {executable} ({args.runs} runs)...", file=sys.stderr)
        results = await measure(flavors, site, args.runs, args.answers, args.cycles_only, executable)
    finally:
        home.stop_daemon()
        errlog.close()
    return results


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--only", choices=["browserd", "peer"], default=None)
    parser.add_argument("--peer-dir", type=Path, default=Path("/tmp/peers"))
    parser.add_argument(
        "--chromium", choices=["shell", "full", "both"], default="both", help="the executable both servers run on"
    )
    parser.add_argument(
        "--answers",
        action="store_true",
        help="only the characters: print every answer of the scripted agent (stderr), no timings",
    )
    parser.add_argument(
        "--cycles-only", action="store_true", help="only the 4 clients x 10 navigate+snapshot cycles (pages/s)"
    )
    args = parser.parse_args()
    chosen = executables("shell" if args.answers and args.chromium == "both" else args.chromium)
    server, site = serve_site()
    runs: dict[str, Any] = {}
    try:
        for executable in chosen:
            started = os.getloadavg()[0]
            results = await measure_on(executable, args, site)
            loads = (started, os.getloadavg()[0])
            report(executable, results, loads)
            runs[executable] = {"load": loads, "results": results}
    finally:
        stop_site(server)
    print(json.dumps({"runs": args.runs, "peer": f"{PEER_PACKAGE}@{PEER_VERSION}", "executables": runs}))


if __name__ == "__main__":
    asyncio.run(main())
