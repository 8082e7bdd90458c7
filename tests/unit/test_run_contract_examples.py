"""The task-run contract examples of reference/001 validate against the schemas our tools publish (S1-88).

Every request and response example of reference/001 §2-§5 is transcribed below as a Python literal
(placeholders such as "...base64..." kept as written) and checked with jsonschema against the
inputSchema / outputSchema that tools/list announces, and each request also against the daemon's own
parameter validation. The answers may carry more fields than the examples (additive, reference/001
§11), but the schemas must not require them. The §7.2 error example is checked against the one error
shape. Also S1-15: which templateVersion strings find which template version.
"""

from __future__ import annotations

from typing import Any

import jsonschema
import msgspec
import pytest

from browserd.daemon.errors import TemplateVersionUnsupported
from browserd.daemon.runs.templates.batch_extract import BatchExtractPages
from browserd.daemon.runs.templates.template_interface import Template
from browserd.daemon.runs.templates.template_registry import TemplateRegistry
from browserd.daemon.tools import core, runs
from browserd.daemon.tools.scrape import crawl
from browserd.daemon.tools.task_runs import RunMetrics, RunProgress, TaskRun
from browserd.daemon.tools.tool_registry import Tool, input_schema
from browserd.protocol.messages import ErrorInfo

TOOLS: dict[str, Tool[Any]] = {t.name: t for t in [*runs.TOOLS, *core.TOOLS]}

# (tool, section of reference/001, arguments)
REQUESTS: list[tuple[str, str, dict[str, Any]]] = [
    # §2 get_runtime_profile, request
    ("get_runtime_profile", "§2", {}),
    # §3 list_task_templates, request
    ("list_task_templates", "§3", {}),
    # §4.1 run_task_template, request
    (
        "run_task_template",
        "§4.1",
        {
            "templateId": "batch_extract_pages",
            "templateVersion": "1.0.0",
            "sessionId": "sess_xxx",
            "inputs": {"urls": ["https://example.com/a"]},
            "options": {"timeoutMs": 120000, "mode": "auto"},
        },
    ),
    # §4.2 get_task_run, request
    ("get_task_run", "§4.2", {"runId": "run_123"}),
    # §4.3 list_task_runs, request
    ("list_task_runs", "§4.3", {"status": "running", "templateId": "batch_extract_pages", "limit": 20, "offset": 0}),
    # §4.4 cancel_task_run, request
    ("cancel_task_run", "§4.4", {"runId": "run_123"}),
    # §5 get_artifact, request
    ("get_artifact", "§5", {"artifactId": "art_1", "offset": 0, "limit": 262144}),
    # §5 get_artifact, large file: the first request and the next one
    ("get_artifact", "§5 first chunk", {"artifactId": "art_2"}),
    ("get_artifact", "§5 next chunk", {"artifactId": "art_2", "offset": 262144}),
]

# (tool, section of reference/001, answer's structuredContent)
RESPONSES: list[tuple[str, str, dict[str, Any]]] = [
    # §2 get_runtime_profile, response
    (
        "get_runtime_profile",
        "§2",
        {
            "runtimeVersion": "0.2.0",
            "limits": {"maxConcurrentRuns": 5, "maxRunTimeoutMs": 900000, "maxArtifactInlineBytes": 262144},
        },
    ),
    # §3 list_task_templates, response
    (
        "list_task_templates",
        "§3",
        {
            "templates": [
                {
                    "templateId": "batch_extract_pages",
                    "version": "1.0.0",
                    "name": "批量页面结构化采集",
                    "trustLevelSupport": ["local", "remote"],
                    "limits": {"maxUrls": 1000, "maxConcurrency": 5},
                    "inputsSchema": {"type": "object"},
                    "outputsSchema": {"type": "object"},
                }
            ]
        },
    ),
    # §4.1 run_task_template, response (async mode)
    ("run_task_template", "§4.1 async", {"runId": "run_123", "status": "queued", "createdAt": 1739145600000}),
    # §4.1 run_task_template, response (sync mode)
    (
        "run_task_template",
        "§4.1 sync",
        {
            "runId": "run_123",
            "templateId": "batch_extract_pages",
            "status": "succeeded",
            "progress": {"totalSteps": 2, "doneSteps": 2},
            "metrics": {"elapsedMs": 3200},
            "result": {
                "summary": {"total": 2, "succeeded": 2, "failed": 0},
                "items": [{"url": "https://example.com/a", "title": "Page A", "success": True}],
            },
        },
    ),
    # §4.2 get_task_run, response (running)
    (
        "get_task_run",
        "§4.2 running",
        {
            "runId": "run_123",
            "templateId": "batch_extract_pages",
            "status": "running",
            "progress": {"totalSteps": 20, "doneSteps": 8},
            "metrics": {"elapsedMs": 5230},
        },
    ),
    # §4.2 get_task_run, response (terminal)
    (
        "get_task_run",
        "§4.2 terminal",
        {
            "runId": "run_123",
            "templateId": "batch_extract_pages",
            "status": "partial_success",
            "progress": {"totalSteps": 20, "doneSteps": 20},
            "metrics": {"elapsedMs": 18022},
            "result": {"summary": {"total": 10, "succeeded": 9, "failed": 1}, "items": []},
            "artifacts": [{"artifactId": "art_1", "type": "json", "size": 12043}],
        },
    ),
    # §4.3 list_task_runs, response
    (
        "list_task_runs",
        "§4.3",
        {
            "runs": [
                {
                    "runId": "run_123",
                    "templateId": "batch_extract_pages",
                    "status": "running",
                    "createdAt": 1739145600000,
                    "updatedAt": 1739145605230,
                }
            ]
        },
    ),
    # §4.4 cancel_task_run, response
    ("cancel_task_run", "§4.4", {"cancelRequested": True, "currentStatus": "running"}),
    # §5 get_artifact, response (small file, one chunk)
    (
        "get_artifact",
        "§5 one chunk",
        {"artifactId": "art_1", "mimeType": "application/json", "size": 1024, "data": "...base64...", "complete": True},
    ),
    # §5 get_artifact, response (large file, in chunks)
    (
        "get_artifact",
        "§5 first of many chunks",
        {
            "artifactId": "art_2",
            "mimeType": "text/csv",
            "size": 5242880,
            "data": "...base64...(前 256KB)...",
            "offset": 0,
            "bytesReturned": 262144,
            "complete": False,
        },
    ),
]

# §7.2 the one error response shape
ERROR_EXAMPLE: dict[str, Any] = {
    "error": "step failed",
    "errorCode": "STEP_EXECUTION_FAILED",
    "recoverHint": "retry with smaller batch size",
    "details": {"runId": "run_123", "failedStep": "navigate", "stepErrorCode": "NAVIGATION_TIMEOUT"},
}


def test_every_tool_of_reference_001_has_a_request_and_a_response_example() -> None:
    """S1-88: the transcription covers all seven tools of reference/001 §1.1."""
    assert {name for name, _, _ in REQUESTS} == set(TOOLS)
    assert {name for name, _, _ in RESPONSES} == set(TOOLS)


@pytest.mark.parametrize(
    ("name", "section", "arguments"), REQUESTS, ids=[f"{n} {s}".replace("§", "s") for n, s, _ in REQUESTS]
)
def test_the_request_examples_validate_against_the_input_schema(
    name: str, section: str, arguments: dict[str, Any]
) -> None:
    """S1-88, S1-14: each request example fits the announced inputSchema and the daemon accepts it."""
    tool = TOOLS[name]
    schema = tool.spec().input_schema
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(arguments, schema)
    tool.parse(arguments)


def test_the_run_request_example_inputs_fit_batch_extract_pages() -> None:
    """S1-14, reference/001 §4.1: the example's inputs are valid batch_extract_pages inputs."""
    arguments = REQUESTS[2][2]
    template = BatchExtractPages()
    jsonschema.validate(arguments["inputs"], input_schema(template.inputs))
    template.parse(arguments["inputs"])


@pytest.mark.parametrize(
    ("name", "section", "answer"), RESPONSES, ids=[f"{n} {s}".replace("§", "s") for n, s, _ in RESPONSES]
)
def test_the_response_examples_validate_against_the_output_schema(
    name: str, section: str, answer: dict[str, Any]
) -> None:
    """S1-88, S1-03, S1-08, S1-11: each response example fits the announced outputSchema."""
    schema = TOOLS[name].spec().output_schema
    assert schema is not None
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(answer, schema)


def test_the_sync_and_async_run_examples_also_fit_crawl() -> None:
    """crawl answers with a run (output TaskRun), so the §4.1 examples fit its schema as well."""
    assert crawl.output is TaskRun
    for _, _, answer in RESPONSES[2:4]:
        schema = crawl.spec().output_schema
        assert schema is not None
        jsonschema.validate(answer, schema)


def test_the_error_example_is_the_error_shape() -> None:
    """reference/001 §7.2, D-32: the example decodes as the one error shape with nothing left over."""
    info = msgspec.convert(ERROR_EXAMPLE, ErrorInfo)
    assert msgspec.to_builtins(info) == ERROR_EXAMPLE


def test_fields_beyond_the_examples_stay_in_our_answers() -> None:
    """Optional in the schema is not dropped on the wire: a run's false or zero fields are still sent."""
    run = TaskRun(
        run_id="run_1",
        status="queued",
        created_at=1,
        template_id="batch_extract_pages",
        template_version="1.0.0",
        mode="async",
        updated_at=1,
        session_id="s1",
        session_kept=False,
        progress=RunProgress(total_steps=0, done_steps=0),
        metrics=RunMetrics(elapsed_ms=0),
    )
    sent = msgspec.to_builtins(run)
    assert sent["sessionKept"] is False and sent["progress"] == {"totalSteps": 0, "doneSteps": 0}
    assert set(sent) == {
        "runId",
        "status",
        "createdAt",
        "templateId",
        "templateVersion",
        "mode",
        "updatedAt",
        "sessionId",
        "sessionKept",
        "progress",
        "metrics",
    }
    schema = runs.run_task_template.spec().output_schema
    assert schema is not None
    jsonschema.validate(sent, schema)


def _versions(*versions: str) -> TemplateRegistry:
    templates: list[Template[Any]] = [type(f"Batch{v}", (BatchExtractPages,), {"version": v})() for v in versions]
    return TemplateRegistry(templates)


@pytest.mark.parametrize(
    ("have", "asked", "served"),
    [
        (("1.0.0",), "1.0.0", "1.0.0"),
        (("1.0.0",), "1.0", "1.0.0"),
        (("1.0.0",), "1", "1.0.0"),
        # An exact version is kept even when a newer compatible one exists.
        (("1.0.0", "1.10.0"), "1.0.0", "1.0.0"),
        (("1.0.0", "1.10.0"), "1.10", "1.10.0"),
        # A version we lack is served by the newest newer one of its major version.
        (("1.0.0", "1.2.0", "1.10.0"), "1.1", "1.10.0"),
        (("1.0.0", "1.10.0"), "1.0.1", "1.10.0"),
        # Below 1.0 a minor version breaks.
        (("0.2.0", "0.2.5", "0.3.0"), "0.2.1", "0.2.5"),
    ],
)
def test_a_template_version_is_matched_by_semver_compatibility(have: tuple[str, ...], asked: str, served: str) -> None:
    """S1-15, reference/001 §7.1: only an incompatible templateVersion is TEMPLATE_VERSION_UNSUPPORTED."""
    assert _versions(*have).get("batch_extract_pages", asked).version == served


@pytest.mark.parametrize(
    ("have", "asked"),
    [
        (("1.0.0",), "2.0.0"),
        (("1.0.0",), "0.9"),
        (("1.0.0",), "1.1"),
        (("1.0.0", "1.10.0"), "1.11.0"),
        (("0.2.0",), "0.3"),
        (("0.3.0",), "0.2"),
        (("1.0.0",), "latest"),
        (("1.0.0",), "1.0.0.0"),
        (("1.0.0",), ""),
    ],
)
def test_an_incompatible_template_version_is_refused(have: tuple[str, ...], asked: str) -> None:
    """S1-15, S1-52: the error lists the versions there are and the hint names the latest."""
    with pytest.raises(TemplateVersionUnsupported) as refused:
        _versions(*have).get("batch_extract_pages", asked)
    assert refused.value.details["supportedVersions"] == list(have)
    assert have[-1] in refused.value.info().recover_hint
