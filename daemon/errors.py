"""Every error the daemon reports, each one class carrying its errorCode and a default recoverHint.

Raise these anywhere below the tools layer; the response builder turns them into the one error
shape `{error, errorCode, recoverHint, details}` (reference/001 §7, D-32).
"""

from __future__ import annotations

from typing import Any, ClassVar

from browserd.protocol.messages import ErrorInfo


class BrowserdError(Exception):
    code: ClassVar[str] = "EXECUTION_ERROR"
    hint: ClassVar[str] = "Check the arguments and try again."
    # Raised by a run's template: a limit of the whole run (a budget), reported as the run's error as it is,
    # not as STEP_EXECUTION_FAILED of a step.
    ends_run: ClassVar[bool] = False

    def __init__(self, message: str, *, hint: str | None = None, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.recover_hint = hint or self.hint
        self.details = details

    def info(self) -> ErrorInfo:
        return ErrorInfo(
            error=self.message,
            error_code=self.code,
            recover_hint=self.recover_hint,
            details=self.details,
        )


class InvalidParameter(BrowserdError):
    code = "INVALID_PARAMETER"
    hint = "Fix the named parameter; the tool's inputSchema lists the accepted values."


class UnknownTool(BrowserdError):
    code = "INVALID_PARAMETER"
    hint = "Call tools/list for the tools this session offers."


class ExecutionError(BrowserdError):
    code = "EXECUTION_ERROR"


class ElementNotFound(BrowserdError):
    code = "ELEMENT_NOT_FOUND"
    hint = "Call browser_snapshot for fresh refs, then retry with a ref from it."


class NavigationTimeout(BrowserdError):
    code = "NAVIGATION_TIMEOUT"
    hint = "Retry with a larger timeout or waitUntil='domcontentloaded', or check that the site is up."


class SessionNotFound(BrowserdError):
    code = "SESSION_NOT_FOUND"
    hint = "Open a page with browser_open first; it creates the tab this call needs."


class PageCrashed(BrowserdError):
    code = "PAGE_CRASHED"
    hint = "The browser was restarted; call browser_open again to reload the page."


class Busy(BrowserdError):
    code = "BUSY"
    hint = "Too many browser tasks are waiting; retry in a few seconds."


class UrlNotAllowed(BrowserdError):
    code = "URL_NOT_ALLOWED"
    hint = "Use an http or https URL that this session's trust level allows."


class LimitExceeded(BrowserdError):
    code = "LIMIT_EXCEEDED"
    hint = "Close tabs no longer needed (browser_tabs action 'close'), then retry."


class Cancelled(BrowserdError):
    code = "CANCELLED"
    hint = "The call was cancelled by the client; send it again if it is still wanted."


class RequestTimeout(BrowserdError):
    code = "EXECUTION_ERROR"
    hint = (
        "The call ran past the daemon's request deadline: narrow it, run long work as an async run, or raise "
        "[daemon] request_timeout_s (BROWSERD_DAEMON_REQUEST_TIMEOUT_S)."
    )


def request_timeout(action: str, after_s: float, message: str | None = None, **details: Any) -> RequestTimeout:
    """The error of a call cut by its request deadline, naming the limit (not a run's own RUN_TIMEOUT)."""
    return RequestTimeout(
        message or f"{action} ran past the daemon's request deadline of {after_s:.0f} s ([daemon] request_timeout_s)",
        limit="daemon.request_timeout_s",
        deadlineS=round(after_s),
        **details,
    )


class NotAllowed(BrowserdError):
    code = "INVALID_PARAMETER"
    hint = "This action is reserved for the browserd command line."


class RefNotFound(BrowserdError):
    code = "REF_NOT_FOUND"
    hint = "Call browser_snapshot and use a ref from that snapshot."


class ElementAmbiguous(BrowserdError):
    code = "ELEMENT_AMBIGUOUS"
    hint = "Use a ref from browser_snapshot, or a CSS selector that matches one element."


class ElementNotVisible(BrowserdError):
    code = "ELEMENT_NOT_VISIBLE"
    hint = "Scroll it into view (browser_scroll) or open what hides it, then retry."


class ElementNotInteractable(BrowserdError):
    code = "ELEMENT_NOT_INTERACTABLE"
    hint = "Something covers it or it is disabled: call browser_snapshot to find the overlay or dialog to close."


class ProfileLocked(BrowserdError):
    code = "PROFILE_LOCKED"
    hint = "Another 'browserd login' holds this profile; finish or close it, then retry."


class TemplateNotFound(BrowserdError):
    code = "TEMPLATE_NOT_FOUND"
    hint = "Call list_task_templates for the templates this daemon offers."


class TemplateVersionUnsupported(BrowserdError):
    code = "TEMPLATE_VERSION_UNSUPPORTED"
    hint = "Pass one of the versions list_task_templates shows, or leave templateVersion out for the latest."


class TrustLevelNotAllowed(BrowserdError):
    code = "TRUST_LEVEL_NOT_ALLOWED"
    hint = "This session's trust level may not do this; use a local session (browserd mcp without --trust remote)."


class RunNotFound(BrowserdError):
    code = "RUN_NOT_FOUND"
    hint = "Check the runId; list_task_runs shows the runs still kept."


class RunTimeout(BrowserdError):
    code = "RUN_TIMEOUT"
    hint = "Raise options.timeoutMs (up to the template's maxTimeoutMs) or split the task into smaller runs."


class RunCanceled(BrowserdError):
    code = "RUN_CANCELED"
    hint = "The run was canceled; start a new one with run_task_template if it is still wanted."


class StepExecutionFailed(BrowserdError):
    code = "STEP_EXECUTION_FAILED"
    hint = "details.failedStep and details.stepErrorCode say which step failed and why; fix that and run again."


class ArtifactNotFound(BrowserdError):
    code = "ARTIFACT_NOT_FOUND"
    hint = "Check the artifactId; get_task_run lists a run's artifacts."


class ArtifactExpired(BrowserdError):
    code = "ARTIFACT_EXPIRED"
    hint = "Artifacts are kept for a limited time after their run ends; run the task again with run_task_template."


class RobotsDisallowed(BrowserdError):
    code = "URL_NOT_ALLOWED"
    hint = "The site's robots.txt disallows this URL for crawlers; pass ignoreRobotsTxt: true only if you may."

    def __init__(self, message: str, *, hint: str | None = None, **details: Any) -> None:
        super().__init__(message, hint=hint, rule="robots-txt", **details)


class ScriptError(BrowserdError):
    code = "SCRIPT_ERROR"
    hint = "Fix the script (the error names the JS exception), or call browser_snapshot to check the page first."


class NotSupported(BrowserdError):
    code = "NOT_SUPPORTED"
    hint = "This browser setup cannot do this; see the error for what would."


class CapabilityMissing(NotSupported):
    """A window's backend (own Chromium, CDP attach, extension bridge) cannot do what was asked (D-14)."""

    hint = "Do this in a window of the daemon's own browser (browser_windows action 'new')."


class RequestNotFound(BrowserdError):
    code = "INVALID_PARAMETER"
    hint = "Call browser_network without requestId for the ids (n1, n2 ...) of the tab's logged requests."


class RouteNotFound(BrowserdError):
    code = "INVALID_PARAMETER"
    hint = "Call browser_route with action 'list' for this session's routes and their ids."


class CdpConnectFailed(BrowserdError):
    code = "CDP_CONNECT_FAILED"
    hint = (
        "Start Chrome with --remote-debugging-port=9222 (and a --user-data-dir of its own), then call "
        "browser_connect_cdp with endpoint http://127.0.0.1:9222."
    )


class ExtensionNotConnected(BrowserdError):
    code = "EXTENSION_NOT_CONNECTED"
    hint = (
        "Open the browserd side panel in Chrome (it connects by itself once paired; `browserd bridge pair` "
        "pairs it), then retry."
    )


class TabLeftSession(BrowserdError):
    """A tab of an extension window went back to the user during the call (dragged out of the group, closed)."""

    code = "SESSION_NOT_FOUND"
    hint = (
        "The tab is the user's again and nothing more runs in it: call browser_tabs for this session's tabs, "
        "or browser_tabs with action 'new' for a fresh one."
    )


class BridgeDisabled(BrowserdError):
    code = "NOT_SUPPORTED"
    hint = "Set `enabled = true` in the [bridge] section of the config (or BROWSERD_BRIDGE_ENABLED=1) and restart."


class FlowNotFound(BrowserdError):
    code = "FLOW_NOT_FOUND"
    hint = "Call flow_list for the flows this daemon keeps (flowId or slug)."


class TargetNotVerified(BrowserdError):
    """Replay found elements, but none is clearly the recorded one: it stops rather than guess."""

    code = "TARGET_NOT_VERIFIED"
    hint = (
        "The page changed so that no element clearly matches the recorded one (details list the candidates, "
        "what each found and their scores): check the page with browser_snapshot, then re-record the step."
    )


class SiteMismatch(BrowserdError):
    code = "SITE_MISMATCH"
    hint = "Open the flow's start page first, pass startUrl, or run with tabTarget 'new'."


class LlmNotConfigured(BrowserdError):
    code = "LLM_NOT_CONFIGURED"
    hint = (
        "Configure a model in the [llm] section of ~/.config/browserd/config.toml: base_url (an OpenAI-compatible "
        'endpoint, e.g. "http://127.0.0.1:11434/v1" for Ollama or "https://api.openai.com/v1"), model, and '
        "api_key_env (the name of an environment variable holding the key) or api_key_file (a 0600 file); or "
        "use an MCP client that offers sampling, whose own model then answers (docs/llm.md)."
    )


class LlmFailed(BrowserdError):
    """The model's endpoint refused, failed or timed out; details say which, never the key."""

    code = "LLM_ERROR"
    hint = "Check [llm] base_url and model, that the endpoint is up, and the key's variable or file (docs/llm.md)."


class AnswerInvalid(BrowserdError):
    """The model's answer did not match the schema, even after it was shown the validation errors once."""

    code = "SCHEMA_VALIDATION_FAILED"
    # An agent run's refused answer is the run's own error (a page's, in crawl or batch, fails its item only).
    ends_run = True
    hint = (
        "details.lastAnswer is the model's last answer and details.errors what the schema found wrong: simplify "
        "the schema, make the prompt say what each field holds, or use a stronger model."
    )


class SearchFailed(BrowserdError):
    code = "SEARCH_FAILED"
    hint = (
        "Configure [search] searxng_url (a SearXNG instance with the json format enabled) or "
        "results_url_template; results pages of public engines often answer with consent pages or captchas, "
        "so pass urls to the agent instead when they do."
    )
