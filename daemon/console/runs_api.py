"""The console's Runs page: the runs with their progress, one run's steps, result and artifacts, cancel,
and run again with the same inputs (the stored ones: a sensitive value never is one)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from browserd.daemon.console.client import ConsoleClient, answers_errors, body_of, int_param, json_answer
from browserd.daemon.runs.run_records import RunRecord

LIST_LIMIT = 100
# A flow run's stored inputs that flow_run takes again (not its tab, which may be gone, nor a pinned version).
FLOW_RUN_AGAIN = frozenset({"flowId", "args", "startUrl", "tabTarget", "stepTimeoutMs", "rows", "fromStep"})


def _row(record: RunRecord, crawl_limit: int) -> dict[str, Any]:
    """A run as the list shows it; `crawl_limit` is [crawl] default_limit, a crawl's limit when it gave none."""
    # A crawl finds its pages on the way: until it ends, its bar runs against its page limit.
    crawling = record.template_id == "crawl" and not record.terminal
    planned = (record.inputs.get("limit") or crawl_limit) if crawling else None
    return {
        "runId": record.run_id,
        "templateId": record.template_id,
        "status": record.status,
        "createdAt": record.created_at,
        "updatedAt": record.updated_at,
        "doneSteps": record.done_steps,
        "totalSteps": max(record.total_steps, planned or 0),
        "flowId": record.inputs.get("flowId"),
        "sessionId": record.session_id,
    }


def runs_routes(client: ConsoleClient) -> list[Route]:
    services = client.services
    crawl_limit = services.config.crawl.default_limit

    @answers_errors
    async def listing(request: Request) -> Response:
        query = request.query_params
        limit = min(int_param(request, "limit", 50), LIST_LIMIT)
        offset = int_param(request, "offset", 0)
        records = await services.runs.list(query.get("status"), query.get("templateId"), limit, offset)
        return json_answer({"runs": [_row(record, crawl_limit) for record in records]})

    @answers_errors
    async def detail(request: Request) -> Response:
        run_id = request.path_params["run_id"]
        run = await client.call("get_task_run", {"runId": run_id, "includeSteps": True})
        record = (await services.runs.get(run_id)).record
        return json_answer({**run, **_row(record, crawl_limit), "inputs": record.inputs})

    @answers_errors
    async def cancel(request: Request) -> Response:
        return json_answer(await client.call("cancel_task_run", {"runId": request.path_params["run_id"]}))

    @answers_errors
    async def again(request: Request) -> Response:
        record = (await services.runs.get(request.path_params["run_id"])).record
        if record.template_id == "flow":
            # Through flow_run, which checks the arguments: a sensitive value was never stored, so a flow that
            # needs one is refused, naming it, instead of typing its placeholder.
            kept = {key: value for key, value in record.inputs.items() if key in FLOW_RUN_AGAIN}
            return json_answer(await client.call("flow_run", {**kept, "mode": "async"}))
        arguments = {
            "templateId": record.template_id,
            "templateVersion": record.template_version,
            "inputs": record.inputs,
            "options": {"mode": "async"},
        }
        return json_answer(await client.call("run_task_template", arguments))

    @answers_errors
    async def artifact(request: Request) -> Response:
        """The whole artifact, read chunk by chunk as get_artifact reads it; `?download` saves it as a file."""
        artifact_id = request.path_params["artifact_id"]
        chunk = await services.runs.read_artifact(artifact_id)
        parts = [chunk.data]
        while not chunk.complete:
            chunk = await services.runs.read_artifact(artifact_id, chunk.offset + len(chunk.data))
            parts.append(chunk.data)
        answer = Response(b"".join(parts), media_type=chunk.artifact.mime_type)
        if "download" in request.query_params:
            name = (chunk.artifact.name or artifact_id).replace('"', "").replace("/", "_")
            answer.headers["Content-Disposition"] = f'attachment; filename="{name}"'
        return answer

    @answers_errors
    async def start(request: Request) -> Response:
        body = await body_of(request)
        return json_answer(await client.call("run_task_template", {**body, "options": {"mode": "async"}}))

    return [
        Route("/api/runs", listing),
        Route("/api/runs", start, methods=["POST"]),
        Route("/api/runs/{run_id}", detail),
        Route("/api/runs/{run_id}/cancel", cancel, methods=["POST"]),
        Route("/api/runs/{run_id}/again", again, methods=["POST"]),
        Route("/api/artifacts/{artifact_id}", artifact),
    ]
