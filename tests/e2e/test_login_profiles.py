"""Login profiles end to end: `browserd login`, the snapshot folder, and the daemons that read and publish it.

Covers issue 5's profile half against reference/000's test cases (REQUIREMENTS.md §1.18): TC-06 and
TC-16 (first use, permissions), TC-07 (login publishes), TC-08 (one login per profile), TC-09 (a
second daemon sharing the snapshot folder sees the login), TC-10 (no browser restart), TC-11
(debounce), TC-12 (isolation), TC-14 (anti-rollback), TC-15 (bad ids), TC-18 (config precedence), and
the race of issue 5: scrapes publishing while a login publishes never roll the login back.

`browserd login --headless` is the same code path as the headed login without a window (issue 5 item
4). tests/site's /set-cookie?session=NAME stands for a site's login form, /members for its members-only
page (401 "Please log in" without the session cookie). Every login process is ended by its pid.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import stat
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.conftest import BROWSERD, BrowserdHome, isolated_env, mcp_client, short_temp_dir, until, wait_for
from tests.e2e.results import ok, text_of

pytestmark = pytest.mark.anyio

SCRAPE_TOOLS = ("--tools", "scrape")
ALL_TOOLS = ("--tools", "all")
LOGIN_START_S = 90  # a headless Chromium launch on a loaded machine, plus the first publish
EXIT_S = 60


# the snapshot folder


def snapshot_root(home: BrowserdHome) -> Path:
    """`$XDG_DATA_HOME/browserd/browser-snapshots` (D-19)."""
    return Path(home.env["XDG_DATA_HOME"]) / "browserd" / "browser-snapshots"


def meta_of(home: BrowserdHome, profile: str) -> dict[str, Any] | None:
    try:
        meta: dict[str, Any] = json.loads((snapshot_root(home) / profile / "meta.json").read_text())
    except (OSError, ValueError):
        return None
    return meta


def version_of(home: BrowserdHome, profile: str) -> int:
    """The profile's version on disk, -1 before its first use."""
    meta = meta_of(home, profile)
    return int(meta["version"]) if meta else -1


def cookies_of(home: BrowserdHome, profile: str) -> dict[str, str]:
    """name -> value of the cookies in the profile's state.json (never printed whole: it holds secrets)."""
    state = json.loads((snapshot_root(home) / profile / "state.json").read_text())
    return {cookie["name"]: cookie["value"] for cookie in state["cookies"]}


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def assert_private(folder: Path) -> None:
    """TC-16, S0-101, S0-102: the profile's folders are 0700 and its files 0600."""
    for sub in (folder, folder / "tmp"):
        assert mode_of(sub) == 0o700, f"{sub} is {oct(mode_of(sub))}, expected 0o700"
    for name in ("state.json", "meta.json", "login.lock", "publish.lock"):
        assert mode_of(folder / name) == 0o600, f"{folder / name} is {oct(mode_of(folder / name))}, expected 0o600"


def reaches(home: BrowserdHome, profile: str, version: int) -> Callable[[], bool]:
    return lambda: version_of(home, profile) >= version


# browserd login


class Login:
    """A running `browserd login --headless`: its stderr goes to a file the test can read at any time."""

    def __init__(self, home: BrowserdHome, profile: str, url: str | None, *extra: str) -> None:
        self.profile = profile
        self.stderr_path = home.root / f"login-{profile}-{os.urandom(3).hex()}.err"
        args = [BROWSERD, "login", "--profile", profile, "--headless", *(["--url", url] if url else []), *extra]
        with open(self.stderr_path, "w") as stderr:
            # Its own process group, so that a login that ignores SIGINT goes with its Chromium.
            self.process = subprocess.Popen(
                args,
                env=home.env,
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                text=True,
                start_new_session=True,
            )

    @property
    def stderr(self) -> str:
        return self.stderr_path.read_text()

    def running(self) -> bool:
        return self.process.poll() is None

    def published(self, home: BrowserdHome, above: int = 0) -> bool:
        """Wait until the profile is past version `above` while this login runs (False if it ended first)."""
        wait_for(lambda: version_of(home, self.profile) > above or not self.running(), LOGIN_START_S)
        return self.running() and version_of(home, self.profile) > above

    def press_enter(self) -> int:
        """The person says they are done (D-15); the login's exit status."""
        assert self.process.stdin is not None
        self.process.stdin.write("\n")
        self.process.stdin.flush()
        return self.process.wait(EXIT_S)

    def stop(self) -> None:
        """SIGINT (a clean end, D-15), then SIGKILL to its process group if it lingers."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)
        if self.process.stdin is not None:
            self.process.stdin.close()


@contextmanager
def login(home: BrowserdHome, profile: str, url: str | None = None, *extra: str) -> Iterator[Login]:
    running = Login(home, profile, url, *extra)
    try:
        yield running
    finally:
        running.stop()


def log_in(home: BrowserdHome, site: str, profile: str, session: str) -> int:
    """A whole login of `profile` as `session` (its cookie); the version it left on disk."""
    before = max(version_of(home, profile), 0)
    with login(home, profile, f"{site}/set-cookie?session={session}") as running:
        assert running.published(home, before), f"the login of {profile} published nothing:\n{running.stderr}"
        code = running.press_enter()
        assert code == 0, f"login of {profile} exited {code}:\n{running.stderr}"
    assert cookies_of(home, profile).get("session") == session
    return version_of(home, profile)


def run_cli(home: BrowserdHome, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`browserd ARGS` with an empty stdin (a login reading it sees EOF, which never ends it)."""
    return subprocess.run(
        [BROWSERD, *args], env=home.env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout
    )


# MCP answers


def invalid_profile_id(result: Any) -> None:
    assert result.is_error, f"expected INVALID_PARAMETER, got success:\n{text_of(result)}"
    error = result.structured_content
    assert error["errorCode"] == "INVALID_PARAMETER", error
    details = error.get("details") or {}
    assert "profileId" in (details.get("field"), details.get("parameter")), f"the error names profileId: {error}"


async def members_page(client: Any, site: str, profile: str | None) -> Any:
    args: dict[str, Any] = {"url": f"{site}/members"}
    if profile is not None:
        args["profileId"] = profile
    return ok(await client.call_tool("scrape", args))


async def window_rows(client: Any) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = ok(await client.call_tool("browser_windows", {})).structured_content["windows"]
    return rows


async def profile_status(client: Any, window_id: str) -> dict[str, Any]:
    row = next(row for row in await window_rows(client) if row["windowId"] == window_id)
    status: dict[str, Any] = row["profile"]
    return status


async def profile_status_when(client: Any, window_id: str, key: str, value: str | None = None) -> dict[str, Any] | None:
    """The window's profile status once its `key` is set (to `value`, if given); None before."""
    status = await profile_status(client, window_id)
    found = status.get(key)
    return status if found is not None and value in (None, found) else None


def browser_of(home: BrowserdHome) -> dict[str, Any]:
    status = run_cli(home, "status", "--json", timeout=30)
    assert status.returncode == 0, status.stderr
    browser: dict[str, Any] = json.loads(status.stdout)["browser"]
    return browser


# TC-06, TC-16: first use


async def test_tc06_tc16_first_use_creates_the_profile_at_version_0_privately(home: BrowserdHome, site: str) -> None:
    """TC-06, TC-16, S0-13, S0-44..S0-47, S0-49, S0-101, S0-102, D-17: a scrape without a profileId creates
    `master` on first use: state.json `{"cookies":[],"origins":[]}`, meta.json version 0 with its checksum,
    the lock files and tmp/, folders 0700 and files 0600. Several first uses at once make one version 0."""
    root = snapshot_root(home)
    assert not (root / "master").exists()
    async with mcp_client(home, args=SCRAPE_TOOLS) as client:
        data = ok(await client.call_tool("scrape", {"url": f"{site}/index.html"})).structured_content
        assert data["profileId"] == "master" and data["profileVersion"] == 0

        folder = root / "master"
        meta = meta_of(home, "master")
        assert meta is not None, "meta.json exists after the first scrape"
        assert meta["profileId"] == "master" and meta["version"] == 0
        assert meta["writerId"].startswith("daemon@"), meta["writerId"]
        state = (folder / "state.json").read_bytes()
        assert json.loads(state) == {"cookies": [], "origins": []}
        assert meta["checksum"] == "sha256:" + hashlib.sha256(state).hexdigest()
        assert_private(folder)
        assert mode_of(root) == 0o700, f"the snapshot root is {oct(mode_of(root))}"

        # Five first uses of another profile at once: one folder, one version 0, nothing overwritten.
        async with anyio.create_task_group() as group:
            for _ in range(5):
                group.start_soon(client.call_tool, "scrape", {"url": f"{site}/index.html", "profileId": "fresh"})
        assert version_of(home, "fresh") == 0
        assert_private(root / "fresh")
        assert list((root / "fresh" / "tmp").iterdir()) == [], "no temp files left behind"
        # index.html sets no cookie: nothing to publish, master stays at version 0.
        assert version_of(home, "master") == 0


# TC-15: bad ids


async def test_tc15_bad_profile_ids_are_refused_before_any_folder_exists(home: BrowserdHome, site: str) -> None:
    """TC-15, S0-35, S0-66..S0-68: a profileId with a separator or `..`, dot-only, too long, empty or with a
    space is INVALID_PARAMETER naming profileId, for scrape, browser_open, browser_windows and `browserd
    login`/`scrape`; none of them creates a folder anywhere."""
    bad_ids = ["../escape", "..", ".", "a/b", "..\\escape", "a..b", "x" * 65, "", "bad id", "alice\n"]
    async with mcp_client(home, args=ALL_TOOLS) as client:
        for bad in bad_ids:
            invalid_profile_id(await client.call_tool("scrape", {"url": f"{site}/index.html", "profileId": bad}))
        invalid_profile_id(
            await client.call_tool("browser_open", {"url": f"{site}/index.html", "profileId": "../escape"})
        )
        invalid_profile_id(
            await client.call_tool("browser_windows", {"action": "new", "options": {"profileId": "a..b"}})
        )
    cli_login = run_cli(home, "login", "--profile", "../escape", "--headless", "--timeout", "1")
    assert cli_login.returncode == 2 and "INVALID_PARAMETER" in cli_login.stderr, cli_login.stderr
    cli_scrape = run_cli(home, "scrape", f"{site}/index.html", "--profile", "..")
    assert cli_scrape.returncode == 1 and "INVALID_PARAMETER" in cli_scrape.stderr, cli_scrape.stderr

    root = snapshot_root(home)
    assert not root.exists() or list(root.iterdir()) == [], f"folders were created: {list(root.iterdir())}"
    created = [path for path in home.root.rglob("*") if "escape" in path.name or path.name in ("a", "b", "a..b")]
    assert created == [], f"a rejected id touched the filesystem: {created}"


# TC-07, TC-08: the login command


def test_tc07_login_publishes_the_session_and_ends_on_enter(home: BrowserdHome, site: str) -> None:
    """TC-07, S0-36..S0-41, D-15, D-17: `browserd login --profile alice --url ...` initialises the profile,
    publishes the session soon after the page loaded (version >= 1, written by the login), ends with exit
    0 when the person presses Enter, publishing once more; the files stay 0600 in 0700 folders."""
    with login(home, "alice", f"{site}/set-cookie?session=alice") as running:
        assert running.published(home), f"no publish while the login runs:\n{running.stderr}"
        during = meta_of(home, "alice")
        assert during is not None and during["writerId"].startswith("login@"), during
        assert cookies_of(home, "alice") == {"session": "alice"}
        code = running.press_enter()
        stderr = running.stderr
    assert code == 0, stderr
    assert f"Published the login of profile alice as version {version_of(home, 'alice')}" in stderr, stderr
    assert version_of(home, "alice") >= during["version"]
    assert cookies_of(home, "alice") == {"session": "alice"}
    folder = snapshot_root(home) / "alice"
    assert_private(folder)
    assert list((folder / "tmp").iterdir()) == []
    user_data = Path(home.env["XDG_DATA_HOME"]) / "browserd" / "browser-data" / "alice"
    assert user_data.is_dir(), "the login's persistent profile lives under browser-data (S0-39, D-19)"


def test_tc08_a_second_login_of_the_same_profile_fails_fast(home: BrowserdHome, site: str) -> None:
    """TC-08, S0-38, S0-41, S0-43, S0-105: while a login of alice runs, another login of alice exits 2 at
    once with PROFILE_LOCKED and says what to do; a login of bob runs meanwhile and ends at its --timeout
    with exit 3 after publishing; once alice's login ended, its lock is free again."""
    with login(home, "alice", f"{site}/set-cookie?session=alice") as first:
        assert wait_for(lambda: "Log in to the site" in first.stderr or not first.running(), LOGIN_START_S), (
            first.stderr
        )
        assert first.running(), first.stderr
        second = run_cli(home, "login", "--profile", "alice", "--headless", "--timeout", "5")
        assert second.returncode == 2, f"expected exit 2, got {second.returncode}:\n{second.stderr}"
        assert "PROFILE_LOCKED" in second.stderr, second.stderr
        assert "browserd login --profile alice" in second.stderr, "the refusal says which login holds it"

        other = run_cli(home, "login", "--profile", "bob", "--headless", "--timeout", "2")
        assert other.returncode == 3, f"a login timing out exits 3, got {other.returncode}:\n{other.stderr}"
        assert "timed out" in other.stderr
        assert version_of(home, "bob") >= 1, "a login that times out still publishes on its way out"
        assert first.press_enter() == 0, first.stderr

    again = run_cli(home, "login", "--profile", "alice", "--headless", "--timeout", "1")
    assert again.returncode == 3, f"login.lock was released on exit (S0-41):\n{again.stderr}"


# TC-09: the login reaches every process and a second daemon


async def test_tc09_a_login_reaches_this_daemon_and_a_second_one_sharing_the_folder(
    home: BrowserdHome, site: str
) -> None:
    """TC-09, S0-08, S0-25, S0-26, S0-61, D-01: after `browserd login` published alice's session, a scrape of
    the members-only page as alice is logged in, through MCP and through `browserd scrape`; a second daemon
    with its own socket and folders that shares only the snapshot folder (a second host) is too."""
    log_in(home, site, "alice", "alice")
    async with mcp_client(home, args=SCRAPE_TOOLS) as client:
        members = await members_page(client, site, "alice")
        assert members.structured_content["statusCode"] == 200
        assert "Welcome back, alice." in text_of(members)
        assert "loginHint" not in members.structured_content
    cli = run_cli(home, "scrape", f"{site}/members", "--profile", "alice")
    assert cli.returncode == 0 and "Welcome back, alice." in cli.stdout, cli.stderr

    other_root = short_temp_dir()
    other = BrowserdHome(
        other_root,
        isolated_env(
            other_root, BROWSERD_DAEMON_IDLE_EXIT_S="30", BROWSERD_PROFILES_SNAPSHOT_ROOT=str(snapshot_root(home))
        ),
    )
    try:
        remote = run_cli(other, "scrape", f"{site}/members", "--profile", "alice", "--json")
        assert remote.returncode == 0, remote.stderr
        assert "Welcome back, alice." in remote.stdout, remote.stdout
        first_pid, second_pid = home.daemon_pid(), other.daemon_pid()
        assert second_pid is not None and second_pid != first_pid, "two daemons, one snapshot folder"
    finally:
        other.stop_daemon()
        shutil.rmtree(other_root, ignore_errors=True)


# TC-12: isolation


async def test_tc12_profiles_never_see_each_others_cookies(home: BrowserdHome, site: str) -> None:
    """TC-12, S0-21, S0-44, S0-68, D-24: alice and bob logged in at the same time each see only their own
    session, in scrapes and in browser windows; master and a never-used profile see the login page and a
    hint naming their own `browserd login --profile`."""
    with (
        login(home, "alice", f"{site}/set-cookie?session=alice") as alice,
        login(home, "bob", f"{site}/set-cookie?session=bob") as bob,
    ):
        for running in (alice, bob):
            assert running.published(home), running.stderr
            assert running.press_enter() == 0, running.stderr
    assert cookies_of(home, "alice") == {"session": "alice"}
    assert cookies_of(home, "bob") == {"session": "bob"}

    async with mcp_client(home, args=ALL_TOOLS) as client:
        as_alice = text_of(await members_page(client, site, "alice"))
        as_bob = text_of(await members_page(client, site, "bob"))
        assert "Welcome back, alice." in as_alice and "bob" not in as_alice
        assert "Welcome back, bob." in as_bob and "alice" not in as_bob
        cookies = text_of(ok(await client.call_tool("scrape", {"url": f"{site}/cookies", "profileId": "alice"})))
        assert "session=alice" in cookies and "bob" not in cookies

        for profile in ("master", "carol"):
            refused = await members_page(client, site, None if profile == "master" else profile)
            data = refused.structured_content
            assert data["statusCode"] == 401 and "Please log in" in text_of(refused)
            assert data["profileId"] == profile and data["profileVersion"] == 0
            assert data["loginHint"] == f"run: browserd login --profile {profile}", data

        for profile in ("alice", "bob"):
            opened = ok(
                await client.call_tool(
                    "browser_open", {"url": f"{site}/members", "profileId": profile, "publish": False}
                )
            )
            assert f"Welcome back, {profile}." in text_of(opened), text_of(opened)
        rows = await window_rows(client)
        assert sorted(row["profile"]["profileId"] for row in rows) == ["alice", "bob"], "one window per profile"
    assert cookies_of(home, "alice") == {"session": "alice"}, "nothing crossed into alice's state"
    assert cookies_of(home, "bob") == {"session": "bob"}


# TC-14: anti-rollback


async def test_tc14_a_window_from_an_older_version_never_overwrites_a_newer_login(
    home: BrowserdHome, site: str
) -> None:
    """TC-14, S0-52..S0-56, S0-106, D-16: a window bound to alice publishes and its base advances; a login
    in another process then publishes a newer version; the window's next change is dropped as stale
    (shown in browser_windows), also on close, and meta.json keeps the login's version and cookie. A
    publish=false window never writes."""
    log_in(home, site, "alice", "alice")
    async with mcp_client(home, args=ALL_TOOLS) as client:
        ok(await client.call_tool("browser_open", {"url": f"{site}/index.html", "profileId": "alice"}))
        window = (await window_rows(client))[0]["windowId"]
        # The window publishes 500 ms (debounced) after the call.
        published = await until(lambda: profile_status_when(client, window, "lastPublish"), "the window's publish", 30)
        assert published["lastPublish"] == "published", published
        base = published["baseVersion"]
        assert version_of(home, "alice") == base, "the window's publish advanced its base to the new version"

        newer = await anyio.to_thread.run_sync(lambda: log_in(home, site, "alice", "alice-new"))
        assert newer > base

        ok(await client.call_tool("browser_open", {"url": f"{site}/set-cookie?other=1", "profileId": "alice"}))
        status = await until(
            lambda: profile_status_when(client, window, "lastPublish", "stale"),
            "the window's publish dropped as stale",
            30,
        )
        assert status["stale"] is True and status["baseVersion"] == base, status
        assert version_of(home, "alice") == newer
        assert cookies_of(home, "alice") == {"session": "alice-new"}, "the login's state is still there"

        ok(await client.call_tool("browser_windows", {"action": "close", "windowId": window}))
        assert version_of(home, "alice") == newer, "the publish on close is dropped too"

        # publish=false: starts from the newest login, never writes back.
        made = ok(
            await client.call_tool(
                "browser_windows", {"action": "new", "options": {"profileId": "alice", "publish": False}}
            )
        )
        quiet = next(row for row in made.structured_content["windows"] if row["active"])
        assert quiet["profile"]["publish"] is False and quiet["profile"]["baseVersion"] == newer
        ok(await client.call_tool("browser_open", {"url": f"{site}/set-cookie?third=1"}))
        assert (await profile_status(client, quiet["windowId"]))["lastPublish"] is None
        # A publishing window publishes as it closes, before the close answers (no debounce): the version
        # on disk after the close is the daemon's own word that this window wrote nothing.
        ok(await client.call_tool("browser_windows", {"action": "close", "windowId": quiet["windowId"]}))
        assert version_of(home, "alice") == newer
        assert cookies_of(home, "alice") == {"session": "alice-new"}

        members = await members_page(client, site, "alice")
        assert "Welcome back, alice-new." in text_of(members)


# TC-10, TC-11: publishing costs


async def test_tc10_publishing_restarts_no_browser(home: BrowserdHome, site: str) -> None:
    """TC-10, S0-64: scrapes and a profile-bound window publish new versions while the daemon's Chromium
    keeps its pid and launch count."""
    async with mcp_client(home, args=ALL_TOOLS) as client:
        # render always: the fast path would answer without starting the browser this test watches.
        ok(await client.call_tool("scrape", {"url": f"{site}/index.html", "profileId": "dave", "render": "always"}))
        before = await anyio.to_thread.run_sync(browser_of, home)
        assert before["running"] and before["pid"]
        for step in range(3):
            target = version_of(home, "dave") + 1
            ok(await client.call_tool("scrape", {"url": f"{site}/set-cookie?step{step}=1", "profileId": "dave"}))
            await until(reaches(home, "dave", target), f"step {step}'s publish", 30)
        target = version_of(home, "dave") + 1
        ok(await client.call_tool("browser_open", {"url": f"{site}/set-cookie?window=1", "profileId": "dave"}))
        await until(reaches(home, "dave", target), "the window's publish", 30)
        assert {"step0", "step1", "step2", "window"} <= set(cookies_of(home, "dave"))
        after = await anyio.to_thread.run_sync(browser_of, home)
    assert (after["pid"], after["launches"]) == (before["pid"], before["launches"]), (before, after)


async def test_tc11_a_burst_of_scrapes_publishes_far_fewer_versions(home: BrowserdHome, site: str) -> None:
    """TC-11, S0-51, S0-53, S0-95: ten scrapes at once, each setting a new cookie, each ask for a publish;
    debounced, single flight and CAS-checked they make one or two versions, not ten."""
    async with mcp_client(home, args=SCRAPE_TOOLS) as client:
        ok(await client.call_tool("scrape", {"url": f"{site}/index.html", "profileId": "burst"}))
        results: list[Any] = []

        async def one(index: int) -> None:
            url = f"{site}/set-cookie?n{index}=1"
            results.append(await client.call_tool("scrape", {"url": url, "profileId": "burst"}))

        async with anyio.create_task_group() as group:
            for index in range(10):
                group.start_soon(one, index)
        assert all(not result.is_error for result in results), [text_of(r) for r in results if r.is_error]
        await until(lambda: version_of(home, "burst") >= 1, "a publish of the burst", 30)
    # The daemon publishes every round still requested before it exits (D-16): once it is gone, the count is final.
    await anyio.to_thread.run_sync(home.stop_daemon)
    versions = version_of(home, "burst")
    assert 1 <= versions <= 3, f"10 scrapes made {versions} versions"
    assert set(cookies_of(home, "burst")) <= {f"n{index}" for index in range(10)}


# TC-18: configuration


async def test_tc18_the_browser_table_wins_over_the_legacy_scrape_key(home: BrowserdHome) -> None:
    """TC-18, S0-103, S0-104, D-19: [browser] workers beats the legacy [scrape] worker-pool-size-per-process;
    the legacy key alone still applies; a BROWSERD_BROWSER_WORKERS variable beats both."""
    config = home.root / "config.toml"
    home.env["BROWSERD_CONFIG"] = str(config)

    async def workers() -> int:
        async with mcp_client(home) as client:
            profile = ok(await client.call_tool("get_runtime_profile", {})).structured_content
        await anyio.to_thread.run_sync(home.stop_daemon)
        return int(profile["limits"]["browserWorkers"])

    both = "[scrape]\nworker-pool-size-per-process = 2\n\n[browser]\nworkers = 3\n"
    config.write_text(both)
    assert await workers() == 3, "[browser] wins over the legacy [scrape] copy"
    config.write_text("[scrape]\nworker-pool-size-per-process = 2\n")
    assert await workers() == 2, "the legacy key alone still sets the worker pool"
    config.write_text(both)
    home.env["BROWSERD_BROWSER_WORKERS"] = "5"
    assert await workers() == 5, "the environment wins over the file"


# the race of issue 5


async def test_race_scrapes_publishing_during_a_login_never_roll_it_back(home: BrowserdHome, site: str) -> None:
    """Issue 5's race, S0-53, S0-106, D-15: six clients keep scraping pages that set cookies on profile carol
    (each scrape publishing back) while `browserd login` publishes carol's session every 300 ms. The
    version on disk only grows, and once the login's cookie is there no publish ever removes it."""
    home.env["BROWSERD_PROFILES_LOGIN_REFRESH_INTERVAL_MS"] = "300"
    seen: list[tuple[int, str, bool]] = []  # (version, writer component, session=carol in state.json)
    stop_watching = threading.Event()

    def watch() -> None:
        while not stop_watching.is_set():
            meta = meta_of(home, "carol")
            try:
                logged_in = cookies_of(home, "carol").get("session") == "carol"
            except (OSError, ValueError):
                logged_in = False
            if meta is not None:
                seen.append((meta["version"], meta["writerId"].split("@")[0], logged_in))
            stop_watching.wait(0.01)

    watcher = threading.Thread(target=watch, daemon=True)
    scrapes = 0
    async with mcp_client(home, args=SCRAPE_TOOLS) as client:
        ok(await client.call_tool("scrape", {"url": f"{site}/index.html", "profileId": "carol"}))
        watcher.start()
        stop_scraping = anyio.Event()

        async def scraper(worker: int) -> None:
            # The scrapes go on until the race has been seen (a slow login start must not find them all done);
            # the bound only keeps a broken login from scraping for ever.
            nonlocal scrapes
            for step in range(500):
                if stop_scraping.is_set():
                    return
                url = f"{site}/set-cookie?w{worker}=s{step}"
                ok(await client.call_tool("scrape", {"url": url, "profileId": "carol"}))
                scrapes += 1

        try:
            async with anyio.create_task_group() as group:
                for worker in range(6):
                    group.start_soon(scraper, worker)
                await until(lambda: version_of(home, "carol") >= 1, "a publish of the scrapes", 60)
                with login(home, "carol", f"{site}/set-cookie?session=carol") as running:
                    await until(
                        lambda: any(writer == "login" for _v, writer, _c in seen) or not running.running(),
                        "the login's first publish",
                        LOGIN_START_S,
                    )
                    assert running.running(), f"the login exited:\n{running.stderr}"
                    # The race: the scrapes go on while the login publishes on its 300 ms period, at least twice more.
                    raced_from, scrapes_before = len(seen), scrapes
                    await until(
                        lambda: (
                            len({v for v, writer, _c in seen[raced_from:] if writer == "login"}) >= 2
                            and scrapes >= scrapes_before + 6
                        ),
                        "two more login publishes while the scrapes went on",
                        60,
                    )
                    stop_scraping.set()
                    code = await anyio.to_thread.run_sync(running.press_enter)
                    assert code == 0, running.stderr
            final = await members_page(client, site, "carol")
            # The daemon publishes every round still requested before it exits (D-16): the watcher sees the
            # last debounced publishes land (or be dropped) before it stops.
            await anyio.to_thread.run_sync(home.stop_daemon)
        finally:
            stop_watching.set()
            watcher.join(5)

    versions = [version for version, _writer, _carol in seen]
    assert versions == sorted(versions), f"the version went back: {versions}"
    writers = {writer for _version, writer, _carol in seen}
    assert writers >= {"daemon", "login"}, f"both the scrapes and the login published: {writers}"
    first_login = next(i for i, (_version, _writer, carol) in enumerate(seen) if carol)
    rolled_back = [entry for entry in seen[first_login:] if not entry[2]]
    assert rolled_back == [], f"carol's session vanished after the login published it: {rolled_back[:5]}"
    assert cookies_of(home, "carol")["session"] == "carol"
    assert "Welcome back, carol." in text_of(final)
    assert scrapes >= 6
