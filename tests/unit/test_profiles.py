"""Login profiles on disk: first use, isolation, CAS publishing, locks, checksums and permissions.

Pure filesystem and asyncio, no browser: the exporter a daemon would give (`context.storage_state()`)
is a plain coroutine here. Cross-process cases run small Python snippets in subprocesses, since the
profile files are the only thing processes and hosts share (D-01).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import subprocess
import textwrap
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest

from browserd.daemon.config import ProfilesConfig, load
from browserd.daemon.errors import ExecutionError, InvalidParameter, ProfileLocked
from browserd.daemon.profiles import (
    INITIAL_STATE,
    ProfilePublisher,
    Profiles,
    ProfileStore,
    StateSource,
    checksum_of,
    login_lock,
    publish_authoritative,
    publish_cas,
    publish_lock,
    validate_profile_id,
)
from browserd.daemon.profiles import profile_folder as store_module
from tests.conftest import REPO, VENV_BIN

pytestmark = pytest.mark.anyio

PYTHON = str(VENV_BIN / "python")
LOCK_MS = 5_000


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "browser-snapshots"


def state_with(**marks: Any) -> bytes:
    return json.dumps({"cookies": [], "origins": [], **marks}).encode()


def cookie_state(value: str) -> dict[str, Any]:
    cookie = {"name": "sid", "value": value, "domain": "127.0.0.1", "path": "/", "expires": -1}
    return {"cookies": [cookie], "origins": []}


def on_disk(store: ProfileStore) -> dict[str, Any]:
    return dict(json.loads(store.read_latest().state))


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def spawn(code: str, *args: object) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [PYTHON, "-c", textwrap.dedent(code), *map(str, args)],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def start_together(processes: list[subprocess.Popen[str]], go: Path, deadline_s: float = 60) -> None:
    """Touch `go` once every process has announced itself at the starting line (ready-<pid> beside it)."""
    ready = {go.parent / f"ready-{process.pid}" for process in processes}
    give_up = time.monotonic() + deadline_s
    while not all(path.exists() for path in ready):
        assert time.monotonic() < give_up, "the processes never reached the starting line"
        assert all(process.poll() is None for process in processes), "a process died before the start"
        time.sleep(0.005)
    go.touch()


def finish(process: subprocess.Popen[str], timeout: float = 60) -> list[dict[str, Any]]:
    out, err = process.communicate(timeout=timeout)
    assert process.returncode == 0, f"snippet failed ({process.returncode}): {err}"
    return [json.loads(line) for line in out.splitlines() if line.strip()]


@pytest.fixture
def umask_zero() -> Iterator[None]:
    """The most permissive umask: whatever is private is private because the code made it so."""
    previous = os.umask(0)
    try:
        yield
    finally:
        os.umask(previous)


# -- TC-06: first use ---------------------------------------------------------------------------


def test_TC06_first_use_initialises_version_0_with_the_layout(root: Path) -> None:
    store = ProfileStore(root, "master")
    assert not root.exists(), "constructing a store touches nothing"
    snapshot = store.load()

    assert snapshot.version == 0
    assert snapshot.state == INITIAL_STATE
    assert json.loads(snapshot.state) == {"cookies": [], "origins": []}
    assert sorted(p.name for p in store.dir.iterdir()) == [
        "login.lock",
        "meta.json",
        "publish.lock",
        "state.json",
        "tmp",
    ]
    assert store.dir == (root / "master").resolve()

    meta = json.loads(store.meta_path.read_bytes())
    assert set(meta) == {"profileId", "version", "updatedAt", "writerId", "checksum"}
    assert meta["profileId"] == "master"
    assert meta["version"] == 0
    assert meta["checksum"] == "sha256:" + hashlib.sha256(INITIAL_STATE).hexdigest()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", meta["updatedAt"]), meta["updatedAt"]
    assert re.fullmatch(rf"daemon@[^:]+:{os.getpid()}", meta["writerId"]), meta["writerId"]


def test_TC06_initialising_again_keeps_the_published_version(root: Path) -> None:
    store = ProfileStore(root, "master")
    store.ensure_initialized()
    assert publish_cas(store, state_with(mark="v1"), 0, lock_timeout_ms=LOCK_MS).version == 1

    for again in (store, ProfileStore(root, "master", component="other")):
        again.ensure_initialized()
        assert again.read_latest().version == 1
        assert on_disk(again)["mark"] == "v1"


INIT_THEN_PUBLISH = """
import json, os, sys, time
from pathlib import Path
from browserd.daemon.profiles import ProfileStore, publish_cas
root, go, name = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
(go.parent / f"ready-{os.getpid()}").touch()  # at the starting line
while not go.exists():
    time.sleep(0.001)
store = ProfileStore(root, "master", component=name)
store.ensure_initialized()
state = json.dumps({"cookies": [], "origins": [], "writer": name}).encode()
result = publish_cas(store, state, 0, lock_timeout_ms=10_000)
print(json.dumps({"name": name, "status": result.status, "version": result.version}))
"""


@pytest.mark.slow
@pytest.mark.parametrize("attempt", range(2))
def test_TC06_concurrent_initialisation_by_many_processes_never_overwrites_a_version(
    tmp_path: Path, attempt: int
) -> None:
    """S0-49: each process initialises, then publishes from version 0. Were a late initialisation to
    reset meta.json to version 0 after a publish, a second publish from 0 would succeed."""
    root, go = tmp_path / "snapshots", tmp_path / "go"
    processes = [spawn(INIT_THEN_PUBLISH, root, go, f"p{i}") for i in range(8)]
    start_together(processes, go)
    results = [line for process in processes for line in finish(process)]

    published = [r for r in results if r["status"] == "published"]
    assert len(published) == 1, f"exactly one publish from version 0 may win: {results}"
    assert {r["status"] for r in results} <= {"published", "stale"}, results
    store = ProfileStore(root, "master")
    assert store.read_latest().version == 1
    assert on_disk(store)["writer"] == published[0]["name"]


# -- TC-12: isolation ---------------------------------------------------------------------------


def test_TC12_two_profiles_are_isolated(root: Path) -> None:
    alice, bob = ProfileStore(root, "alice"), ProfileStore(root, "bob")
    alice.load()
    bob.load()
    bob_files = {p.name: p.read_bytes() for p in (bob.state_path, bob.meta_path)}

    result = publish_cas(alice, json.dumps(cookie_state("alice-session")).encode(), 0, lock_timeout_ms=LOCK_MS)
    assert result.status == "published"
    publish_authoritative(alice, json.dumps(cookie_state("alice-login")).encode(), lock_timeout_ms=LOCK_MS)

    assert alice.dir != bob.dir and alice.dir.parent == bob.dir.parent == root.resolve()
    assert {p.name: p.read_bytes() for p in (bob.state_path, bob.meta_path)} == bob_files, "bob's files changed"
    assert bob.read_latest().version == 0 and on_disk(bob)["cookies"] == []
    assert alice.read_latest().version == 2 and on_disk(alice)["cookies"][0]["value"] == "alice-login"
    # A login of one profile does not lock the other.
    with login_lock(alice.login_lock_path, "alice"), login_lock(bob.login_lock_path, "bob"):
        pass


async def test_TC12_each_profile_has_its_own_publisher(root: Path) -> None:
    config = ProfilesConfig(snapshot_root=str(root), user_data_root=str(root.parent / "data"), refresh_debounce_ms=20)
    async with Profiles(config) as profiles:
        alice, bob = await profiles.load("alice"), await profiles.load("bob")
        assert profiles.publisher("alice") is profiles.publisher("alice")
        assert profiles.publisher("alice") is not profiles.publisher("bob")

        async def alice_state() -> Mapping[str, Any]:
            return cookie_state("alice")

        result = await profiles.publisher("alice").publish(StateSource(alice_state, alice.version))
        assert result.status == "published"
    assert on_disk(profiles.store("alice"))["cookies"][0]["value"] == "alice"
    assert profiles.store("bob").read_latest() == bob


# -- TC-14: anti-rollback -----------------------------------------------------------------------


def test_TC14_a_stale_publish_is_dropped_and_the_newer_login_stays(root: Path) -> None:
    store = ProfileStore(root, "master")
    task_base = store.load().version  # an old task starts from version 0 ...
    login = publish_authoritative(store, state_with(login="fresh"), lock_timeout_ms=LOCK_MS)
    assert (login.status, login.version) == ("published", 1)

    late = publish_cas(store, state_with(task="stale"), task_base, lock_timeout_ms=LOCK_MS)  # ... and ends late

    assert late.status == "stale"
    assert (late.base_version, late.current_version, late.version) == (0, 1, None)
    assert store.read_latest().version == 1
    assert on_disk(store) == {"cookies": [], "origins": [], "login": "fresh"}


def test_TC14_the_login_publish_ignores_the_base_version(root: Path) -> None:
    """D-15: the login writes current+1 whatever version its browser started from."""
    store = ProfileStore(root, "master")
    store.load()
    for n in range(3):
        publish_cas(store, state_with(n=n), n, lock_timeout_ms=LOCK_MS)
    result = publish_authoritative(store, state_with(login=1), lock_timeout_ms=LOCK_MS)
    assert (result.status, result.version, result.base_version) == ("published", 4, None)


async def test_TC14_a_source_whose_publish_went_stale_stops_publishing(root: Path) -> None:
    store = ProfileStore(root, "master")
    base = store.load().version
    exports = {"early": 0, "late": 0}

    def exporter(name: str) -> Any:
        async def export() -> Mapping[str, Any]:
            exports[name] += 1
            return cookie_state(name)

        return export

    early, late = StateSource(exporter("early"), base), StateSource(exporter("late"), base)
    async with ProfilePublisher(store, debounce_ms=0) as publisher:
        first = await publisher.publish(early)
        second = await publisher.publish(late)
        third = await publisher.publish(late)
        again = await publisher.publish(early)

    assert (first.status, first.version) == ("published", 1)
    assert early.base_version == 2, "a successful publish advances the source's base version (S0-56)"
    assert (second.status, second.current_version) == ("stale", 1)
    assert late.stale and late.base_version == 0
    assert third.status == "stale" and exports["late"] == 1, "a stale source is not exported again"
    assert (again.status, again.version) == ("published", 2)
    assert on_disk(store)["cookies"][0]["value"] == "early"


# -- TC-15: profileId checks ----------------------------------------------------------------------

BAD_IDS = ["../x", "a/b", "..", ".", "", "a" * 65, "a b", "x\\y", "...", "a..b", "master\n", "/abs", "é", "~"]


@pytest.mark.parametrize("bad", BAD_IDS, ids=repr)
def test_TC15_a_bad_profile_id_is_rejected_without_touching_the_filesystem(
    root: Path, bad: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_filesystem(*args: object, **kwargs: object) -> Any:
        raise AssertionError(f"filesystem touched for rejected id {bad!r}: {args}")

    config = ProfilesConfig(snapshot_root=str(root), user_data_root=str(root))
    profiles = Profiles(config)
    with monkeypatch.context() as patched:
        for name in ("stat", "lstat", "open", "mkdir", "makedirs", "listdir", "scandir", "readlink", "access"):
            patched.setattr(os, name, no_filesystem)
        for attempt in (
            lambda: validate_profile_id(bad),
            lambda: ProfileStore(root, bad),
            lambda: profiles.store(bad),
            lambda: profiles.user_data_dir(bad),
        ):
            with pytest.raises(InvalidParameter) as caught:
                attempt()
            assert caught.value.code == "INVALID_PARAMETER"
            assert caught.value.details == {"parameter": "profileId"}
            assert "profileId" in caught.value.message
    assert not root.exists()


@pytest.mark.parametrize("good", ["master", "work.account", "A-1_b", "x" * 64])
def test_TC15_good_profile_ids_are_accepted(root: Path, good: str) -> None:
    assert validate_profile_id(good) == good
    assert ProfileStore(root, good).dir == root.resolve() / good


def test_TC15_a_profile_folder_that_resolves_outside_the_root_is_refused(root: Path, tmp_path: Path) -> None:
    root.mkdir()
    (tmp_path / "elsewhere").mkdir()
    (root / "evil").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(InvalidParameter, match="outside the snapshot root"):
        ProfileStore(root, "evil")


def test_TC15_the_default_profile_is_master(root: Path) -> None:
    profiles = Profiles(ProfilesConfig(snapshot_root=str(root)))
    assert profiles.store(None).profile_id == "master"
    assert profiles.user_data_dir(None) == Path(profiles.config.user_data_root) / "master"


# -- TC-16: permissions -------------------------------------------------------------------------


@pytest.mark.usefixtures("umask_zero")
def test_TC16_folders_are_0700_and_files_0600(root: Path) -> None:
    store = ProfileStore(root, "master")
    store.load()
    publish_cas(store, json.dumps(cookie_state("secret")).encode(), 0, lock_timeout_ms=LOCK_MS)
    with login_lock(store.login_lock_path, "master"):
        pass

    for folder in (root, store.dir, store.tmp_dir):
        assert mode(folder) == 0o700, f"{folder} is {oct(mode(folder))}"
    for name in ("state.json", "meta.json", "login.lock", "publish.lock"):
        assert mode(store.dir / name) == 0o600, f"{name} is {oct(mode(store.dir / name))}"
    assert list(store.tmp_dir.iterdir()) == [], "no temp file is left behind"


@pytest.mark.usefixtures("umask_zero")
def test_TC16_a_loose_existing_profile_folder_is_tightened(root: Path) -> None:
    (root / "master" / "tmp").mkdir(parents=True, mode=0o777)
    store = ProfileStore(root, "master")
    store.load()
    assert (mode(store.dir), mode(store.tmp_dir)) == (0o700, 0o700)


# -- TC-11: debounce and single flight ------------------------------------------------------------


async def test_TC11_fifty_rapid_requests_cost_few_exports_and_the_last_state_wins(root: Path) -> None:
    store = ProfileStore(root, "master")
    snapshot = store.load()
    latest = {"n": 0}

    async def export() -> Mapping[str, Any]:
        return cookie_state(str(latest["n"]))

    source = StateSource(export, snapshot.version)
    async with ProfilePublisher(store, debounce_ms=200) as publisher:
        for n in range(1, 51):
            latest["n"] = n
            publisher.request(source)
            await anyio.sleep(0.001)
        result = await publisher.publish(source)

    assert 1 <= publisher.exports <= 3, f"{publisher.exports} exports for 50 requests"
    assert result.status == "published"
    assert store.read_latest().version == publisher.exports == source.base_version
    assert on_disk(store)["cookies"][0]["value"] == "50"


async def test_TC11_concurrent_publishers_of_one_profile_coalesce_and_the_newest_wins(root: Path) -> None:
    store = ProfileStore(root, "master")
    base = store.load().version
    exported: list[int] = []

    def source(n: int) -> StateSource:
        async def export() -> Mapping[str, Any]:
            exported.append(n)
            await anyio.sleep(0.01)
            return cookie_state(str(n))

        return StateSource(export, base, name=f"scrape-{n}")

    sources = [source(n) for n in range(50)]
    results: dict[int, str] = {}
    async with ProfilePublisher(store, debounce_ms=100) as publisher:

        async def publish(n: int) -> None:
            results[n] = (await publisher.publish(sources[n])).status

        with anyio.fail_after(10):
            async with anyio.create_task_group() as tasks:
                for n in range(50):
                    tasks.start_soon(publish, n)

    assert exported == [49], f"one export, of the newest request: {exported}"
    assert results[49] == "published"
    assert {results[n] for n in range(49)} == {"superseded"}
    assert on_disk(store)["cookies"][0]["value"] == "49"


async def test_a_pending_request_is_published_when_the_publisher_closes(root: Path) -> None:
    store = ProfileStore(root, "master")

    async def export() -> Mapping[str, Any]:
        return cookie_state("on-close")

    source = StateSource(export, store.load().version)
    async with ProfilePublisher(store, debounce_ms=60_000) as publisher:
        publisher.request(source)
    assert source.last_result is not None and source.last_result.status == "published"
    assert on_disk(store)["cookies"][0]["value"] == "on-close"


async def test_publish_every_publishes_periodically_and_advances_the_base(root: Path) -> None:
    store = ProfileStore(root, "master")
    ticks = {"n": 0}

    async def export() -> Mapping[str, Any]:
        ticks["n"] += 1
        return cookie_state(str(ticks["n"]))

    source = StateSource(export, store.load().version, authoritative=True, name="login")
    async with ProfilePublisher(store, debounce_ms=500) as publisher:
        with anyio.move_on_after(0.4):
            await publisher.publish_every(source, interval_ms=50)
    assert ticks["n"] >= 3
    assert store.read_latest().version == ticks["n"] == source.base_version


async def test_a_failed_export_is_reported_and_the_source_may_publish_later(root: Path) -> None:
    store = ProfileStore(root, "master")
    closed = {"yes": True}

    async def export() -> Mapping[str, Any]:
        if closed["yes"]:
            raise RuntimeError("Target page, context or browser has been closed")
        return cookie_state("ok")

    source = StateSource(export, store.load().version)
    async with ProfilePublisher(store, debounce_ms=0) as publisher:
        failed = await publisher.publish(source)
        closed["yes"] = False
        later = await publisher.publish(source)
    assert failed.status == "failed" and "has been closed" in (failed.error or "")
    assert not source.stale
    assert (later.status, later.version) == ("published", 1)


def test_the_publisher_must_run_before_it_takes_requests(root: Path) -> None:
    async def export() -> Mapping[str, Any]:
        return cookie_state("x")

    with pytest.raises(RuntimeError, match="not running"):
        ProfilePublisher(ProfileStore(root, "master")).request(StateSource(export, 0))


# -- login.lock and publish.lock ------------------------------------------------------------------


def test_TC08_a_second_login_lock_fails_fast_with_PROFILE_LOCKED(root: Path) -> None:
    store = ProfileStore(root, "master")
    store.ensure_initialized()
    # Fails fast: were the second login to wait for the lock this process holds, it would wait forever.
    with (
        login_lock(store.login_lock_path, "master"),
        pytest.raises(ProfileLocked) as caught,
        login_lock(store.login_lock_path, "master"),
    ):
        pass
    assert caught.value.code == "PROFILE_LOCKED"
    assert caught.value.info().error_code == "PROFILE_LOCKED"
    assert f"login@{os.uname().nodename}:{os.getpid()}" in caught.value.message, caught.value.message
    assert "browserd login --profile master" in caught.value.recover_hint
    with login_lock(store.login_lock_path, "master"):
        pass  # released on exit, so it can be taken again


HOLD_LOGIN_LOCK = """
import sys
from pathlib import Path
from browserd.daemon.profiles import ProfileStore, login_lock
store = ProfileStore(Path(sys.argv[1]), "master")
store.ensure_initialized()
with login_lock(store.login_lock_path, "master"):
    print('{"locked": true}', flush=True)
    sys.stdin.readline()
"""

TRY_LOGIN_LOCK = """
import json, sys
from pathlib import Path
from browserd.daemon.errors import ProfileLocked
from browserd.daemon.profiles import ProfileStore, login_lock
store = ProfileStore(Path(sys.argv[1]), "master")
try:
    with login_lock(store.login_lock_path, "master"):
        print(json.dumps({"code": "OK"}))
except ProfileLocked as exc:
    print(json.dumps({"code": exc.code, "message": exc.message}))
"""


def test_TC08_the_login_lock_excludes_other_processes(root: Path) -> None:
    holder = spawn(HOLD_LOGIN_LOCK, root)
    try:
        assert holder.stdout is not None and json.loads(holder.stdout.readline()) == {"locked": True}
        store = ProfileStore(root, "master")
        with pytest.raises(ProfileLocked, match=rf"login@.*:{holder.pid}"), login_lock(store.login_lock_path, "master"):
            pass
        # The holder waits for our newline: a second login that waited for the lock would never answer.
        (other,) = finish(spawn(TRY_LOGIN_LOCK, root))
        assert other["code"] == "PROFILE_LOCKED", other
    finally:
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.flush()
        holder.wait(timeout=30)
    assert finish(spawn(TRY_LOGIN_LOCK, root)) == [{"code": "OK"}], "the lock is free once its holder exits"


def test_a_publish_skips_when_publish_lock_stays_held(root: Path) -> None:
    store = ProfileStore(root, "master")
    store.load()
    with publish_lock(store.publish_lock_path, 0):
        # The lock is held for the whole call: returning at all shows the publish gave up on its own.
        result = publish_cas(store, state_with(x=1), 0, lock_timeout_ms=150)
    assert result.status == "lock_timeout" and result.version is None
    assert store.read_latest().version == 0, "nothing was written"
    assert publish_cas(store, state_with(x=1), 0, lock_timeout_ms=150).status == "published"


async def test_a_publisher_reports_a_lock_timeout_and_retries_on_the_next_request(root: Path) -> None:
    store = ProfileStore(root, "master")

    async def export() -> Mapping[str, Any]:
        return cookie_state("x")

    source = StateSource(export, store.load().version)
    async with ProfilePublisher(store, debounce_ms=0, lock_timeout_ms=50) as publisher:
        with publish_lock(store.publish_lock_path, 0):
            skipped = await publisher.publish(source)
        done = await publisher.publish(source)
    assert skipped.status == "lock_timeout" and not source.stale
    assert (done.status, done.version) == ("published", 1)


# -- checksums and reads --------------------------------------------------------------------------


def test_a_corrupt_state_is_detected_retried_and_reported_without_its_content(
    root: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    ProfileStore(root, "master").load()
    (root / "master" / "state.json").write_text(json.dumps(cookie_state("SECRET-TOKEN-123")))
    sleeps: list[float] = []
    monkeypatch.setattr(time, "sleep", sleeps.append)

    with pytest.raises(ExecutionError) as caught:
        ProfileStore(root, "master").read_latest()

    assert len(sleeps) == store_module.READ_RETRIES == 3
    assert "checksum" in caught.value.message and "version 0" in caught.value.message, caught.value.message
    assert "browserd login --profile master" in caught.value.recover_hint
    assert "SECRET-TOKEN-123" not in str(caught.value.info()) + caplog.text


def test_after_retries_the_reader_falls_back_to_its_last_good_snapshot(
    root: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    store = ProfileStore(root, "master")
    good = store.load()
    store.state_path.write_text(json.dumps(cookie_state("SECRET-TOKEN-123")))
    monkeypatch.setattr(time, "sleep", lambda seconds: None)

    assert store.read_latest() == good
    assert "last good version 0" in caplog.text
    assert "SECRET-TOKEN-123" not in caplog.text + repr(good) + repr(store.read_latest())


def test_a_read_during_a_half_done_publish_retries_and_gets_the_new_version(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = ProfileStore(root, "master")
    store.load()
    new_state = json.dumps(cookie_state("new")).encode()
    store.state_path.write_bytes(new_state)  # the writer replaced state.json; meta.json comes next

    def writer_finishes(seconds: float) -> None:
        store.write_version(new_state, 1)

    monkeypatch.setattr(time, "sleep", writer_finishes)
    snapshot = ProfileStore(root, "master").read_latest()
    assert (snapshot.version, snapshot.state) == (1, new_state)


def test_a_meta_file_without_checksum_from_another_writer_is_accepted(root: Path) -> None:
    store = ProfileStore(root, "master")
    store.load()
    store.state_path.write_bytes(state_with(seed=True))
    meta = {"profileId": "master", "version": 7, "updatedAt": "2025-01-01T00:00:00.000Z", "writerId": "java@h:1"}
    store.meta_path.write_text(json.dumps(meta))
    snapshot = store.read_latest()
    assert snapshot.version == 7 and snapshot.meta.checksum is None
    assert snapshot.storage_state()["cookies"] == []
    assert checksum_of(snapshot.state) == checksum_of(state_with(seed=True))


def test_a_deleted_state_file_comes_back_empty_as_the_next_version(root: Path) -> None:
    store = ProfileStore(root, "master")
    store.load()
    publish_cas(store, state_with(x=1), 0, lock_timeout_ms=LOCK_MS)
    store.state_path.unlink()
    snapshot = ProfileStore(root, "master").load()
    assert (snapshot.version, snapshot.state) == (2, INITIAL_STATE)


def test_a_profile_folder_removed_while_in_use_is_initialised_again(root: Path) -> None:
    store = ProfileStore(root, "master")
    store.load()
    for path in sorted(store.dir.rglob("*"), reverse=True):
        path.rmdir() if path.is_dir() else path.unlink()
    store.dir.rmdir()
    snapshot = store.load()
    assert (snapshot.version, snapshot.state) == (0, INITIAL_STATE)
    assert publish_cas(store, state_with(x=1), 0, lock_timeout_ms=LOCK_MS).status == "published"


# -- the race: many CAS publishers and a login ------------------------------------------------------

WORKER = """
import json, os, sys, time
from pathlib import Path
from browserd.daemon.profiles import ProfileStore, publish_cas
root, go, done, name = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4]
(go.parent / f"ready-{os.getpid()}").touch()  # at the starting line
while not go.exists():
    time.sleep(0.001)
store = ProfileStore(root, "master", component=name)
n, after_login = 0, 0
while after_login < 3:  # until three tasks have run after the login's last publish
    after_login += done.exists()
    snapshot = store.load()
    state = json.loads(snapshot.state)  # the task runs on the login it loaded, and adds its own mark
    state["worker"] = f"{name}-{n}"
    time.sleep(0.001)
    result = publish_cas(store, json.dumps(state).encode(), snapshot.version, lock_timeout_ms=10_000)
    print(json.dumps({"status": result.status, "version": result.version}), flush=True)
    n += 1
"""

LOGIN = """
import json, os, sys, time
from pathlib import Path
from browserd.daemon.profiles import ProfileStore, publish_authoritative
root, go, done, count = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), int(sys.argv[4])
(go.parent / f"ready-{os.getpid()}").touch()  # at the starting line
while not go.exists():
    time.sleep(0.001)
store = ProfileStore(root, "master", component="login")
for k in range(1, count + 1):
    time.sleep(0.04)
    state = json.dumps({"cookies": [], "origins": [], "login": k}).encode()
    result = publish_authoritative(store, state, lock_timeout_ms=10_000)
    print(json.dumps({"status": result.status, "version": result.version, "login": k}), flush=True)
done.touch()
"""

READER = """
import json, os, sys, time
from pathlib import Path
from browserd.daemon.profiles import ProfileStore
root, go, done = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
(go.parent / f"ready-{os.getpid()}").touch()  # at the starting line
while not go.exists():
    time.sleep(0.001)
store = ProfileStore(root, "master", component="reader")
after_login = 0
while after_login < 20:
    after_login += done.exists()
    snapshot = store.read_latest()
    print(json.dumps({"version": snapshot.version, "login": json.loads(snapshot.state).get("login", 0)}), flush=True)
    time.sleep(0.002)
"""


@pytest.mark.slow
def test_race_many_cas_publishers_and_a_login_versions_only_grow_and_the_newest_login_stays(
    tmp_path: Path,
) -> None:
    root, go, done = tmp_path / "snapshots", tmp_path / "go", tmp_path / "login-done"
    ProfileStore(root, "master").ensure_initialized()
    logins = 20
    workers = [spawn(WORKER, root, go, done, f"w{i}") for i in range(6)]
    login = spawn(LOGIN, root, go, done, logins)
    readers = [spawn(READER, root, go, done) for _ in range(2)]
    start_together([*workers, login, *readers], go)
    worker_results = [line for process in workers for line in finish(process)]
    login_results = finish(login)
    reads = [finish(process) for process in readers]

    assert [r["status"] for r in login_results] == ["published"] * logins, "every login publish lands (D-15)"
    published = sorted(r["version"] for r in worker_results + login_results if r["status"] == "published")
    final = ProfileStore(root, "master").read_latest()
    assert published == list(range(1, final.version + 1)), "each version is written once, none is skipped"
    assert any(r["status"] == "stale" for r in worker_results), "the race never happened: no publish was stale"
    assert json.loads(final.state)["login"] == logins, "a stale worker rolled back the newest login"
    last_login_version = login_results[-1]["version"]
    assert final.version > last_login_version, "workers kept publishing on top of the login"
    for sequence in reads:
        versions = [read["version"] for read in sequence]
        marks = [read["login"] for read in sequence]
        assert len(versions) > 10
        assert versions == sorted(versions), f"a reader saw the version go back: {versions}"
        assert marks == sorted(marks), f"a reader saw an older login after a newer one: {marks}"


# -- configuration ------------------------------------------------------------------------------------


def test_profiles_config_defaults_follow_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    config = load(tmp_path / "absent.toml", {}).profiles
    assert config.snapshot_root == str(tmp_path / "data" / "browserd" / "browser-snapshots")
    assert config.user_data_root == str(tmp_path / "data" / "browserd" / "browser-data")
    assert config.default_profile_id == "master"
    assert (config.publish_lock_timeout_ms, config.refresh_debounce_ms) == (500, 500)
    assert (config.refresh_interval_ms, config.login_refresh_interval_ms, config.login_timeout_ms) == (30_000, 5_000, 0)
    assert config.include_indexed_db is False


def test_profiles_config_from_file_and_environment(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[profiles]\nsnapshot-root = "/srv/shared/snapshots"\nrefresh-debounce-ms = 100\n')
    config = load(path, {"BROWSERD_PROFILES_INCLUDE_INDEXED_DB": "true"}).profiles
    assert config.snapshot_root == "/srv/shared/snapshots"
    assert config.refresh_debounce_ms == 100
    assert config.include_indexed_db is True


async def test_item5_a_periodic_publish_ends_once_its_context_is_gone(root: Path) -> None:
    """Issue 11 item 5: a window's every-30-s publish stops on a dead context instead of looping forever."""
    store = ProfileStore(root, "master")

    async def export() -> Mapping[str, Any]:
        raise RuntimeError("Target page, context or browser has been closed")

    source = StateSource(export, store.load().version)
    async with ProfilePublisher(store, debounce_ms=0) as publisher:
        with anyio.fail_after(10):
            await publisher.publish_every(source, 1)
    assert source.gone and publisher.exports == 0
