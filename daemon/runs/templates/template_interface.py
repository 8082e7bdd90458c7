"""The template interface: what a template declares and the one coroutine it implements.

How to add a template:

1. Write `daemon/runs/templates/<name>.py` with a msgspec Struct of inputs (subclass `Inputs`:
   camelCase on the wire, unknown fields refused; its JSON Schema becomes `inputsSchema`), a Struct
   describing `result` (its schema becomes `outputsSchema`), and a subclass of `Template[YourInputs]`
   setting the class attributes below and implementing `run`.
2. Add an instance to `builtin_templates()` in `daemon/runs/templates/template_registry.py`.
3. Test it end to end through `run_task_template` (tests/e2e/test_runs.py shows how).

`run(ctx, inputs)` gets a RunContext (daemon/runs/run_context.py documents it: steps, items, artifacts,
output, progress, cancellation, the run's session and the services). It returns nothing: the
manager decides the run's status from its steps and items (reference/001 §6, D-36, D-37), applies
the timeout and the concurrency limit, and writes the result. Raise a BrowserdError (daemon/errors.py)
for what fails: inside a step it marks the step failed; escaping `run` it fails the whole run with
STEP_EXECUTION_FAILED and `details.stepErrorCode` = the error's code (S1-61).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

import msgspec

from browserd.daemon.config import Config, RunsConfig
from browserd.daemon.errors import InvalidParameter
from browserd.daemon.policy.trust import TrustPolicy
from browserd.protocol.messages import TrustLevel

if TYPE_CHECKING:
    from browserd.daemon.runs.run_context import RunContext
    from browserd.daemon.services import ToolCaller


class Inputs(msgspec.Struct, forbid_unknown_fields=True, rename="camel", kw_only=True):
    """Base of every template's inputs."""


InputsT = TypeVar("InputsT", bound=Inputs)


class Template(ABC, Generic[InputsT]):
    template_id: str
    version: str
    name: str
    description: str = ""
    inputs: type[InputsT]
    # The Struct whose schema is `outputsSchema` (the shape of `result`).
    outputs: type[msgspec.Struct]
    trust_level_support: tuple[TrustLevel, ...] = ("local", "remote")
    # Shown in list_task_templates, e.g. {"maxUrls": 1000, "maxConcurrency": 5}.
    limits: dict[str, int] = {}  # noqa: RUF012 - read-only metadata
    supports_partial_success: bool = False
    # None: the global runs.partial_success_threshold (S1-44).
    partial_success_threshold: float | None = None
    max_timeout_ms: int = 900_000
    # Keep the session the run created after it ends (login_keep_session, S1-18).
    keep_session: bool = False

    def parse(self, raw: dict[str, Any]) -> InputsT:
        try:
            return msgspec.convert(raw, self.inputs)
        except msgspec.ValidationError as exc:
            message = str(exc)
            where = message.rsplit("at `$.", 1)[-1].rstrip("`") if "at `$." in message else None
            raise InvalidParameter(
                f"{self.template_id} inputs: {message}",
                hint="list_task_templates shows this template's inputsSchema.",
                field=f"inputs.{where}" if where else "inputs",
            ) from exc

    def limits_under(self, config: Config) -> dict[str, int]:
        """The limits list_task_templates shows: those this configuration enforces."""
        return dict(self.limits)

    def check(self, inputs: InputsT, config: Config) -> None:
        """Checks the schema and the configured limits cannot express; raise InvalidParameter naming the input."""

    def check_trust(self, inputs: InputsT, trust: TrustPolicy) -> None:
        """What the caller's trust policy must allow (a login profile the inputs name), before the run exists."""

    def check_tools(self, inputs: InputsT, tools: ToolCaller) -> None:
        """For a template whose steps are browser tools: each step's arguments, checked by its tool."""

    def default_mode(self, inputs: InputsT, config: RunsConfig, timeout_ms: int | None) -> Literal["sync", "async"]:
        """What mode=auto means for these inputs and the caller's options.timeoutMs (None: not given), D-38."""
        return "async"

    def plan(self, inputs: InputsT) -> list[str]:
        """The names of the steps known before the run starts; they begin `pending`."""
        return []

    def stored_inputs(self, inputs: InputsT) -> dict[str, Any]:
        """The inputs as kept in the run record; override to keep secrets out of the file."""
        return dict(msgspec.to_builtins(inputs))

    @abstractmethod
    async def run(self, ctx: RunContext, inputs: InputsT) -> None: ...
