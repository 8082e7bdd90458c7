"""How a run that ran to its end is judged: succeeded, partial_success or failed (reference/001 §6).

Cancellation and timeouts are decided before this (they take precedence, D-36, D-37); here only
the steps and items count: all succeeded -> succeeded (S1-47); some failed -> partial_success when
the template allows it and the success ratio reaches the threshold, else failed (S1-43, S1-48).
The ratio counts items when the run has any, else the steps that ran (D-37); zero successes is
always failed.
"""

from __future__ import annotations

from typing import Any

from browserd.daemon.errors import StepExecutionFailed
from browserd.daemon.runs.run_context import RunContext
from browserd.daemon.runs.run_records import RunStatus
from browserd.protocol.messages import ErrorInfo


def outcome(ctx: RunContext, supports_partial_success: bool, threshold: float) -> tuple[RunStatus, ErrorInfo | None]:
    failed_steps = [step for step in ctx.steps if step.status == "failed"]
    if not failed_steps and ctx.items_total == ctx.items_succeeded:
        return "succeeded", None
    first = failed_steps[0] if failed_steps else None
    details: dict[str, Any] = {"runId": ctx.run_id}
    if first is not None:
        details["failedStep"] = first.name
        if first.error is not None:
            details["stepErrorCode"] = first.error.error_code
            details["stepError"] = first.error.error
    if ctx.items_total:
        succeeded, counted = ctx.items_succeeded, ctx.items_total
    else:
        executed = [step for step in ctx.steps if step.status in ("succeeded", "failed")]
        succeeded, counted = sum(step.status == "succeeded" for step in executed), len(executed)
    cause = f"; first: `{first.name}`: {first.error.error}" if first and first.error else ""
    failure = StepExecutionFailed(f"{counted - succeeded} of {counted} failed{cause}", **details).info()
    if supports_partial_success and succeeded > 0 and succeeded / counted >= threshold:
        return "partial_success", failure
    return "failed", failure
