"""The flows service: stored flows, the recordings in progress, publication as tools (issue 14).

One per daemon (Services.flows). Published flows are kept in memory too, so every client's
tools/list can show them without touching the disk; `on_tools_changed` (set by the daemon) tells
every connected client when that list changes.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, nullcontext
from pathlib import Path
from typing import Any, Protocol

import msgspec
from playwright.async_api import Error as PlaywrightError

from browserd.daemon.config import Config
from browserd.daemon.errors import ExecutionError, FlowNotFound, InvalidParameter, NotSupported
from browserd.daemon.flows.catalogue.flow_store import FlowStore, IndexRow
from browserd.daemon.flows.catalogue.schedules import CRON_HINT, Schedule, Scheduler, check_cron, new_schedule_id
from browserd.daemon.flows.flow_model import FLOW_ID, SLUG, Flow, StepType, ToolMeta, decode, new_flow_id
from browserd.daemon.flows.graph import GRAPH_HINT, check_graph
from browserd.daemon.flows.owners import Actor, keeper
from browserd.daemon.flows.recording.devtools_import import from_recorder
from browserd.daemon.flows.recording.person_input import PersonInput
from browserd.daemon.flows.recording.recorded_action import RecordedAction
from browserd.daemon.flows.recording.tool_recorder import Recorder
from browserd.daemon.flows.variables import ArgsBase, check_variables, parse_args
from browserd.daemon.runs.run_records import now_ms
from browserd.daemon.sessions.tab import Tab
from browserd.daemon.snapshots.tab_call import TabCall

log = logging.getLogger(__name__)

# Earlier versions of a published flow kept as tools: each costs every client a tools/list entry.
PINNED_VERSIONS = 2


class Redactable(Protocol):
    def redact(self, secret: str) -> None: ...


class FlowService:
    def __init__(self, config: Config) -> None:
        self.config = config
        self.store = FlowStore(Path(config.flows.root))
        self.recorders: dict[str, Recorder] = {}
        # Per recording session: the tabs in which a person's own input is recorded too, by tab id.
        self.people: dict[str, dict[str, PersonInput]] = {}
        # Tool name (flow_<slug>, flow_<slug>_v<N>) -> the flow version it runs.
        self.published: dict[str, Flow] = {}
        self.on_tools_changed: Callable[[], Awaitable[None]] | None = None
        # The daemon's cron loop (set by the daemon, which knows how to start a run).
        self.scheduler: Scheduler | None = None

    async def open(self) -> None:
        """Load the published flows, so the first client's tools/list already has them."""
        for row in await self.store.index(published_only=True):
            flow = await self.store.get(row.flow_id)
            if flow is not None:
                self.published.update(await self._tools_of(flow))

    # -- recording -------------------------------------------------------------------------------

    async def start_recording(self, session_id: str, name: str, tab_id: str | None, tab: Tab | None) -> None:
        """Record the session's tool actions and, in `tab` (and any other tab it records), a person's input."""
        if session_id in self.recorders:
            raise InvalidParameter(
                "this session is already recording", hint="Call flow_record_stop first.", field="name"
            )
        self.recorders[session_id] = Recorder(name, tab_id, self.config.flows.keep_non_sensitive_values)
        self.people[session_id] = {}
        if tab is not None:
            await self._listen(session_id, tab)

    async def _listen(self, session_id: str, tab: Tab) -> PersonInput | None:
        """Record a person's input in `tab` too, from now until the recording stops (person.py)."""
        listeners, recorder = self.people.get(session_id), self.recorders.get(session_id)
        if listeners is None or recorder is None or not recorder.watches(tab):
            return None
        if tab.id in listeners:
            return listeners[tab.id]
        listener = listeners[tab.id] = PersonInput(tab.page, recorder, tab.id, tab.held)
        try:
            await listener.attach(lambda work: tab.window.tasks.start_soon(work, name=f"person input in {tab.id}"))
        except PlaywrightError:
            # Tool actions are still recorded; a page that cannot take the listener is usually gone already.
            log.warning("recording: %s cannot report a person's input", tab.id, exc_info=True)
        return listener

    async def stop_recording(self, session_id: str, save: bool, by: Actor) -> tuple[Flow, list[str]]:
        """The recorded flow, and what the recording could not capture."""
        for listener in self.people.pop(session_id, {}).values():
            await listener.detach()  # what a person did until now is in the recording before it ends
        recorder = self.recorders.pop(session_id, None)
        if recorder is None:
            raise InvalidParameter("this session is not recording", hint="Call flow_record_start first.")
        flow = recorder.flow()
        flow.meta.owner = by.owner
        if save:
            await self.store.save(flow)
        return flow, recorder.warnings

    def record_tab(self, session_id: str, kind: StepType, url: str | None) -> None:
        """browser_tabs new/select/close while the session records: an openTab/switchTab/closeTab step."""
        recorder = self.recorders.get(session_id)
        if recorder is not None:
            recorder.tab_step(kind, url)

    def stop_all(self, session_id: str) -> None:
        self.recorders.pop(session_id, None)
        for listener in self.people.pop(session_id, {}).values():
            listener.detach_soon()

    @asynccontextmanager
    async def recording(
        self, session_id: str, tab: Tab, action: RecordedAction | None, call: TabCall, response: Redactable
    ) -> AsyncIterator[None]:
        """Around one tab call: while the session records, the call's action becomes a step if it succeeds
        (through the element helper the tool reports on `call`), and what the page reports of it is not taken
        for a person's input."""
        recorder = self.recorders.get(session_id)
        listener = await self._listen(session_id, tab) if recorder is not None else None
        async with listener.acting() if listener is not None else nullcontext():
            if recorder is None or action is None or not recorder.watches(tab):
                yield
                return
            url_before = tab.page.url
            pending = await recorder.before(tab, action)
            yield
            if pending is None:
                return
            recorder.commit(pending, url_before, call.setter)
            if pending.secret:
                response.redact(pending.secret)

    # -- stored flows ----------------------------------------------------------------------------

    async def dataset(self, ref: str, by: Actor, clear: bool = False) -> list[dict[str, Any]]:
        """The rows the flow's datasetWrite nodes wrote, in order, each with its runId; `clear` empties it."""
        flow = await self.get(ref, by=by)
        return await self.store.rows(flow.id, clear)

    async def get(self, ref: str, version: int | None = None, by: Actor | None = None) -> Flow:
        """A flow by id or by its published slug: its latest version, or `version`; `by` must reach it (None: the
        daemon's own use, such as a run the caller was already allowed to start)."""
        flow = await self.store.get(ref) if FLOW_ID.match(ref) else None
        if flow is None:
            flow_id = await self.store.by_slug(ref)
            flow = await self.store.get(flow_id) if flow_id else None
        if flow is None:
            raise FlowNotFound(f"no flow {ref}", flowId=ref)
        if by is not None:
            by.check(flow.meta.owner, f"flow {flow.id}", flowId=flow.id)
        if version is not None and version != flow.version:
            older = await self.store.version(flow.id, version)
            if older is None:
                raise FlowNotFound(
                    f"flow {flow.id} has no version {version}",
                    hint=f"flow_get {flow.id} shows the latest version ({flow.version}).",
                    flowId=flow.id,
                )
            return older
        return flow

    async def listed(self, by: Actor) -> list[IndexRow]:
        """The stored flows `by` may see, newest first."""
        return [row for row in await self.store.index() if by.reaches(row.owner)]

    async def save(self, flow: Flow, by: Actor, *, new_version: bool = True) -> Flow:
        """`flow` as its next version (or its first), owned by `by` unless a lower owner made the one it replaces."""
        _check_id(flow.id)
        check_variables(flow)
        check_graph(flow)
        previous = await self.store.get(flow.id)
        if previous is not None:
            by.check(previous.meta.owner, f"flow {flow.id}", flowId=flow.id)
        flow.meta.owner = keeper(previous.meta.owner if previous is not None else None, by.owner)
        if previous is not None and new_version:
            flow.version = previous.version + 1
            if previous.meta.tool.published and flow.meta.tool.published and _contract(previous) != _contract(flow):
                kept = [v for v in previous.meta.tool.versions if v != previous.version] + [previous.version]
                flow.meta.tool.versions = kept[-PINNED_VERSIONS:]
        flow.meta.updated_at = now_ms()
        flow.meta.created_at = flow.meta.created_at or flow.meta.updated_at
        try:
            await self.store.save(flow)
        except sqlite3.IntegrityError as exc:
            raise InvalidParameter(f"slug {flow.meta.tool.slug} is taken by another flow", field="slug") from exc
        await self._published_changed(flow)
        return flow

    async def import_flow(self, raw: dict[str, Any], overwrite: bool, by: Actor, source: str = "browserd") -> Flow:
        if source == "chrome_recorder":
            return await self.save(from_recorder(raw), by, new_version=False)
        try:
            flow = decode(raw)
        except (ValueError, msgspec.ValidationError) as exc:
            graph = "nodes" in str(exc) or "edges" in str(exc)
            raise InvalidParameter(
                f"not a browserd flow: {exc}", hint=GRAPH_HINT if graph else None, field="flow"
            ) from exc
        _check_id(flow.id)
        if any(v.sensitive and v.default is not None for v in flow.variables):
            raise InvalidParameter("an imported flow may not carry a sensitive value", field="flow")
        stored = await self.store.get(flow.id)
        if overwrite and stored is not None:
            by.check(stored.meta.owner, f"flow {flow.id}", flowId=flow.id)
        if not overwrite and stored is not None:
            flow.id = new_flow_id()  # S4-76: a copy unless the caller asked to overwrite
        # Publishing is a decision on this machine: a flow replacing a stored one keeps its publication.
        flow.meta.tool = stored.meta.tool if overwrite and stored is not None else ToolMeta()
        return await self.save(flow, by, new_version=overwrite)

    async def delete(self, ref: str, by: Actor) -> Flow:
        flow = await self.get(ref, by=by)
        await self.store.delete(flow.id)
        flow.meta.tool.published = False
        await self._published_changed(flow)
        return flow

    async def publish(self, ref: str, slug: str | None, description: str | None, by: Actor) -> Flow:
        # Every client's tools/list shows a published flow, with a description its maker wrote.
        by.trust.check_flow_right("publish", "publish a flow as a tool", flowId=ref)
        flow = await self.get(ref, by=by)
        slug = slug or flow.meta.tool.slug or _slug(flow.name)
        if not SLUG.match(slug):
            raise InvalidParameter(f"slug `{slug}` must match {SLUG.pattern}", field="slug")
        tool = flow.meta.tool
        versions = tool.versions if tool.published and tool.slug == slug else []
        flow.meta.tool = ToolMeta(
            published=True,
            slug=slug,
            description=description or tool.description,
            versions=versions,
            owner=by.owner,
        )
        return await self.save(flow, by)

    async def unpublish(self, ref: str, by: Actor) -> Flow:
        flow = await self.get(ref, by=by)
        flow.meta.tool.published = False
        flow.meta.tool.versions = []
        return await self.save(flow, by)

    # -- schedules (cron triggers) -------------------------------------------------------------------

    async def add_schedule(
        self,
        ref: str,
        trigger: tuple[str | None, str | None],
        args: dict[str, Any],
        start_url: str | None,
        systemd: bool,
        by: Actor,
    ) -> Schedule:
        """A trigger, (cron, None) or (None, onPage URL glob), for the flow `ref` with `args`."""
        cron, on_page = trigger
        if (cron is None) == (on_page is None):
            raise InvalidParameter("give cron or onPage (one of them)", hint=CRON_HINT, field="cron")
        if systemd and cron is None:
            raise InvalidParameter("only a cron schedule can be a systemd timer", field="systemd")
        by.trust.check_flow_right("schedule", "add a schedule or trigger", flowId=ref)
        flow = await self.get(ref, by=by)
        if cron is not None:
            check_cron(cron)
        if flow.sensitive_keys:
            raise InvalidParameter(
                f"flow {flow.id} has sensitive variables ({', '.join(sorted(flow.sensitive_keys))}): a schedule "
                "would have to store their values, and browserd never stores one",
                hint="Run it with flow_run, giving the sensitive values in the call.",
                field="flowId",
            )
        parse_args(flow, args, ArgsBase)  # every run must be a complete call: refused now, not at 3 a.m.
        schedule = Schedule(
            schedule_id=new_schedule_id(),
            flow_id=flow.id,
            cron=cron,
            on_page=on_page,
            args=args,
            start_url=start_url,
            systemd=systemd,
            created_at=now_ms(),
            owner=by.owner,
        )
        await self.store.put_schedule(schedule)
        self._schedules_changed()
        return schedule

    async def schedules(self, by: Actor) -> list[Schedule]:
        """The schedules `by` may see."""
        return [s for s in await self.store.schedules() if by.reaches(s.owner)]

    async def schedule(self, schedule_id: str, by: Actor) -> Schedule:
        found = next((s for s in await self.store.schedules() if s.schedule_id == schedule_id), None)
        if found is None:
            raise InvalidParameter(
                f"no schedule {schedule_id}", hint="flow_schedule {action: list} lists them.", field="scheduleId"
            )
        by.check(found.owner, f"schedule {schedule_id}", scheduleId=schedule_id)
        return found

    async def run_schedule(self, schedule_id: str, by: Actor) -> str:
        """Fire a schedule now, for `by` (whose trust the run gets if lower than the owner's); the run's id."""
        schedule = await self.schedule(schedule_id, by)
        if self.scheduler is None:
            raise NotSupported("this daemon keeps no schedules", hint="Run the flow with flow_run.")
        run_id = await self.scheduler.fire(schedule, by.trust.level)
        if run_id is None:
            raise ExecutionError(
                f"schedule {schedule_id} did not start (the daemon's log says why)",
                hint=f"flow_get {schedule.flow_id}: check that the flow still exists and its args still fit.",
            )
        return run_id

    async def remove_schedule(self, schedule_id: str, by: Actor) -> Schedule:
        schedule = await self.schedule(schedule_id, by)
        await self.store.remove_schedule(schedule_id)
        self._schedules_changed()
        return schedule

    async def schedule_ran(self, schedule_id: str, run_id: str, at: int) -> None:
        schedule = next((s for s in await self.store.schedules() if s.schedule_id == schedule_id), None)
        if schedule is not None:
            schedule.last_run_id, schedule.last_at = run_id, at
            await self.store.put_schedule(schedule)

    def _schedules_changed(self) -> None:
        if self.scheduler is not None:
            self.scheduler.changed()

    async def for_export(self, ref: str, by: Actor) -> Flow:
        """A flow as it leaves this install (flow_export): without the candidate orders its runs here suggested,
        which only this install's update_targets applies."""
        flow = await self.get(ref, by=by)
        flow.meta.suggested_order = {}
        return flow

    async def update_targets(self, ref: str, by: Actor) -> tuple[Flow, int]:
        """Apply the candidate orders the last runs suggested, as a new version."""
        flow = await self.get(ref, by=by)
        changed = 0
        for step in flow.steps + flow.nodes:
            order = flow.meta.suggested_order.get(step.id)
            if order is None or step.target is None or sorted(order) != list(range(len(step.target.candidates))):
                continue
            step.target.candidates = [step.target.candidates[i] for i in order]
            for position, candidate in enumerate(step.target.candidates):
                candidate.weight = float(len(order) - position)
            changed += 1
        flow.meta.suggested_order = {}
        return await self.save(flow, by), changed

    async def suggest(self, flow_id: str, suggestions: dict[str, list[int]]) -> None:
        """Remember better candidate orders a run found; the flow itself changes only by update_targets."""
        flow = await self.store.get(flow_id)
        if flow is None or not suggestions:
            return
        flow.meta.suggested_order.update(suggestions)
        await self.store.save(flow)

    async def _tools_of(self, flow: Flow) -> dict[str, Flow]:
        """The tools a published flow offers: flow_<slug> (latest) and flow_<slug>_v<N> per kept version."""
        tool = flow.meta.tool
        if not tool.published or not tool.slug:
            return {}
        offered = {f"flow_{tool.slug}": flow}
        for number in tool.versions:
            older = await self.store.version(flow.id, number)
            if older is not None:
                offered[f"flow_{tool.slug}_v{number}"] = older
        return offered

    async def _published_changed(self, flow: Flow) -> None:
        before = {name: (f.id, f.version) for name, f in self.published.items()}
        kept = {name: f for name, f in self.published.items() if f.id != flow.id}
        self.published = {**kept, **await self._tools_of(flow)}
        after = {name: (f.id, f.version) for name, f in self.published.items()}
        if before != after and self.on_tools_changed is not None:
            await self.on_tools_changed()


def _contract(flow: Flow) -> bytes:
    """What a caller of the flow's tool depends on: its variables and what it does."""
    return msgspec.json.encode((flow.variables, flow.steps, flow.nodes, flow.edges))


def _check_id(flow_id: str) -> None:
    if not FLOW_ID.match(flow_id):
        raise InvalidParameter(f"flow id {flow_id!r} must match {FLOW_ID.pattern}", field="flow")


def _slug(name: str) -> str:
    slug = "".join(ch if ch.isalnum() else "_" for ch in name.lower()).strip("_")[:40]
    return slug or "flow"
