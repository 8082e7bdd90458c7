"""The console's Flows, Schedules and Datasets pages: the flow tools (list, get, save, export, import, run,
schedule, dataset_export) on the console's session, plus what only a page needs: the scores the last
replay gave each step's candidates, and a dry run on a tab."""

from __future__ import annotations

from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from browserd.daemon.console.client import ConsoleClient, answers_errors, body_of, int_param, json_answer
from browserd.daemon.errors import InvalidParameter, SessionNotFound
from browserd.daemon.flows.catalogue.schedules import next_time
from browserd.daemon.flows.graph import graph_of
from browserd.daemon.flows.replay.dry_run import dry_run
from browserd.daemon.flows.replay.run_template import page_before
from browserd.daemon.runs.run_records import now_ms
from browserd.daemon.sessions.navigation import goto

# Flow runs looked through for a flow's last replay (newest first).
LAST_RUN_LOOKBACK = 100
PAGE_ROWS = 50


def _download(text: str, name: str, media_type: str) -> Response:
    answer = Response(text, media_type=media_type)
    answer.headers["Content-Disposition"] = f'attachment; filename="{name}"'
    return answer


def flows_routes(client: ConsoleClient) -> list[Route]:
    services = client.services

    @answers_errors
    async def listing(request: Request) -> Response:
        return json_answer(await client.call("flow_list", {}))

    @answers_errors
    async def get(request: Request) -> Response:
        arguments: dict[str, Any] = {"flowId": request.path_params["flow_id"]}
        if "version" in request.query_params:
            arguments["version"] = int_param(request, "version", 0)
        return json_answer(await client.call("flow_get", arguments))

    @answers_errors
    async def save(request: Request) -> Response:
        flow = (await body_of(request)).get("flow")
        if not isinstance(flow, dict) or flow.get("id") != request.path_params["flow_id"]:
            raise InvalidParameter("give the flow (as flow_get shows it) whose id is in the address", field="flow")
        return json_answer(await client.call("flow_save", {"flow": flow}))

    @answers_errors
    async def import_flow(request: Request) -> Response:
        return json_answer(await client.call("flow_import", await body_of(request)))

    @answers_errors
    async def export(request: Request) -> Response:
        flow_id, form = request.path_params["flow_id"], request.query_params.get("format", "json")
        answer = await client.call("flow_export", {"flowId": flow_id, "format": form})
        if form == "playwright":
            return _download(answer["script"], f"{flow_id}.py", "text/x-python")
        return _download(
            msgspec.json.format(msgspec.json.encode(answer["flow"])).decode(), f"{flow_id}.json", "application/json"
        )

    @answers_errors
    async def run(request: Request) -> Response:
        body = await body_of(request)
        arguments = {
            "flowId": request.path_params["flow_id"],
            "args": body.get("args") or {},
            "mode": "async",
            **({"fromStep": body["fromStep"]} if body.get("fromStep") else {}),
            **({"startUrl": body["startUrl"]} if body.get("startUrl") else {}),
        }
        return json_answer(await client.call("flow_run", arguments))

    @answers_errors
    async def last_run(request: Request) -> Response:
        """The newest replay of this flow: each step's report (matched by, score, the candidates a stop weighed)."""
        flow = await services.flows.get(request.path_params["flow_id"])
        for record in await services.runs.list(None, "flow", LAST_RUN_LOOKBACK, 0):
            if record.inputs.get("flowId") in (flow.id, flow.meta.tool.slug) and record.inputs.get("rows") is None:
                run = await client.call("get_task_run", {"runId": record.run_id, "includeSteps": True})
                return json_answer(run)
        return json_answer(None)

    @answers_errors
    async def dry(request: Request) -> Response:
        body = await body_of(request)
        flow = await services.flows.get(request.path_params["flow_id"])
        session = client.session()
        if body.get("sessionId"):
            found = services.sessions.sessions.get(body["sessionId"])
            if found is None:
                raise SessionNotFound(f"no session {body['sessionId']}", hint="Pick a tab the Sessions page lists.")
            session = found
        tab = await session.tab(body.get("tabId"), create=True)
        first = graph_of(flow).entry
        start = page_before(flow, first)
        if tab.page.url in ("", "about:blank") and start:
            async with tab.lock:
                await goto(tab, start, session.trust)
        steps = await dry_run(tab, flow, services.config)
        services.events.publish("session", sessionId=session.id)
        return json_answer({"sessionId": session.id, "tabId": tab.id, "url": tab.page.url, "steps": steps})

    @answers_errors
    async def schedules(request: Request) -> Response:
        listed = await client.call("flow_schedule", {"action": "list"})
        now = now_ms() / 1000
        for schedule in listed["schedules"]:
            if schedule.get("cron") and not schedule.get("systemd"):
                schedule["nextAt"] = round(next_time(schedule["cron"], now) * 1000)
        return json_answer(listed)

    @answers_errors
    async def add_schedule(request: Request) -> Response:
        return json_answer(await client.call("flow_schedule", {**await body_of(request), "action": "add"}))

    @answers_errors
    async def remove_schedule(request: Request) -> Response:
        schedule_id = request.path_params["schedule_id"]
        return json_answer(await client.call("flow_schedule", {"action": "remove", "scheduleId": schedule_id}))

    def dataset_source(request: Request) -> dict[str, str]:
        query = request.query_params
        source = {key: query[key] for key in ("flowId", "runId") if query.get(key)}
        if len(source) != 1:
            raise InvalidParameter("give flowId or runId (one of them)", field="runId")
        return source

    @answers_errors
    async def dataset(request: Request) -> Response:
        """A page of the rows dataset_export gives (the same tool, as JSON), so the table and its export agree."""
        answer = await client.call("dataset_export", {**dataset_source(request), "format": "json"})
        rows = msgspec.json.decode(answer["text"])
        offset, limit = int_param(request, "offset", 0), int_param(request, "limit", PAGE_ROWS)
        return json_answer({"total": len(rows), "offset": offset, "rows": rows[offset : offset + limit]})

    @answers_errors
    async def dataset_export(request: Request) -> Response:
        form = request.query_params.get("format", "csv")
        source = dataset_source(request)
        answer = await client.call("dataset_export", {**source, "format": form})
        name = f"{next(iter(source.values()))}.{form}"
        return _download(answer["text"], name, "text/csv" if form == "csv" else "application/json")

    return [
        Route("/api/flows", listing),
        Route("/api/flows/import", import_flow, methods=["POST"]),
        Route("/api/flows/{flow_id}", get),
        Route("/api/flows/{flow_id}", save, methods=["POST"]),
        Route("/api/flows/{flow_id}/export", export),
        Route("/api/flows/{flow_id}/run", run, methods=["POST"]),
        Route("/api/flows/{flow_id}/last-run", last_run),
        Route("/api/flows/{flow_id}/dry-run", dry, methods=["POST"]),
        Route("/api/schedules", schedules),
        Route("/api/schedules", add_schedule, methods=["POST"]),
        Route("/api/schedules/{schedule_id}/remove", remove_schedule, methods=["POST"]),
        Route("/api/datasets", dataset),
        Route("/api/datasets/export", dataset_export),
    ]
