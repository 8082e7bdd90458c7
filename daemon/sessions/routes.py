"""A window's request routes (browser_route): block requests, change their headers, or mock responses.

Each rule is one `context.route` of the window's BrowserContext, so it applies to every tab of the
window, including tabs opened later, and to no other window.
"""

from __future__ import annotations

import itertools
import logging
import re
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

import msgspec
from playwright.async_api import BrowserContext, Request, Route
from playwright.async_api import Error as PlaywrightError

from browserd.daemon.errors import InvalidParameter
from browserd.daemon.sessions.urlglob import is_glob, url_glob

log = logging.getLogger(__name__)

AbortReason = Literal[
    "aborted",
    "accessdenied",
    "addressunreachable",
    "blockedbyclient",
    "blockedbyresponse",
    "connectionaborted",
    "connectionclosed",
    "connectionfailed",
    "connectionrefused",
    "connectionreset",
    "internetdisconnected",
    "namenotresolved",
    "timedout",
    "failed",
]
RouteKind = Literal["block", "headers", "mock"]
MAX_MOCK_BODY = 1_000_000


class MockResponse(msgspec.Struct, forbid_unknown_fields=True, rename="camel", kw_only=True, omit_defaults=True):
    """The response a mock route answers with; no request reaches the network."""

    status: Annotated[int, msgspec.Meta(ge=100, le=599)] = 200
    body: Annotated[str, msgspec.Meta(max_length=MAX_MOCK_BODY, description="Text of the response.")] | None = None
    json: Annotated[Any, msgspec.Meta(description="Instead of body: sent as JSON (application/json).")] = None
    content_type: Annotated[str, msgspec.Meta(description="Default: text/plain, or application/json with json.")] | (
        None
    ) = None
    headers: dict[str, str] | None = None


def numbered(prefix: str) -> Callable[[], str]:
    numbers = itertools.count(1)
    return lambda: f"{prefix}{next(numbers)}"


@dataclass
class RouteRule:
    id: str
    pattern: str
    regex: bool
    kind: RouteKind
    method: str | None = None
    resource_type: str | None = None
    error_reason: str = "blockedbyclient"
    set_headers: dict[str, str] = field(default_factory=dict)
    remove_headers: frozenset[str] = frozenset()  # lower-case names
    mock: MockResponse | None = None
    hits: int = 0
    # What context.route was given, kept to unroute exactly this rule.
    matcher: re.Pattern[str] = re.compile("")
    handler: Callable[[Route, Request], Any] | None = None

    def applies(self, request: Request) -> bool:
        return (self.method is None or request.method == self.method) and (
            self.resource_type is None or request.resource_type == self.resource_type
        )

    def describe(self) -> str:
        if self.kind == "block":
            what = f"block ({self.error_reason})"
        elif self.kind == "mock" and self.mock is not None:
            what = f"mock {self.mock.status}"
        else:
            changes = [f"set {name}" for name in self.set_headers] + [
                f"remove {n}" for n in sorted(self.remove_headers)
            ]
            what = "headers: " + ", ".join(changes)
        only = " ".join(x for x in (self.method, self.resource_type) if x)
        return f"{what}{' for ' + only if only else ''}"

    def row(self) -> dict[str, Any]:
        row: dict[str, Any] = {
            "routeId": self.id,
            "pattern": self.pattern,
            "regex": self.regex,
            "action": self.kind,
            "description": self.describe(),
            "hits": self.hits,
        }
        if self.method:
            row["method"] = self.method
        if self.resource_type:
            row["resourceType"] = self.resource_type
        return row


def matcher_of(pattern: str, regex: bool) -> re.Pattern[str]:
    """The expression a rule gives context.route: a regex as is, a glob compiled by urlglob (the same
    matcher browser_network filters with)."""
    if regex:
        try:
            return re.compile(pattern)
        except re.error as exc:
            raise InvalidParameter(
                f"url is not a valid regular expression: {exc}",
                hint="Fix the regular expression, or pass regex=false and a glob such as **/api/*.",
                field="url",
            ) from exc
    if not is_glob(pattern) and not re.match(r"^[a-z][a-z0-9+.-]*://", pattern, re.IGNORECASE):
        # A glob matches the whole URL: "api/items" would silently match nothing.
        raise InvalidParameter(
            f"url glob {pattern!r} matches whole URLs only, so it would match nothing",
            hint=f"Use a glob such as **/{pattern.lstrip('/')}* or a full URL, or regex=true for a regular expression.",
            field="url",
        )
    return glob_matcher(pattern)


def glob_matcher(pattern: str) -> re.Pattern[str]:
    """`pattern` compiled as a URL glob; INVALID_PARAMETER naming `url` when its braces do not balance."""
    try:
        return url_glob(pattern)
    except ValueError as exc:
        raise InvalidParameter(
            str(exc), hint="Balance every '{' with a '}', or escape a literal brace with a backslash.", field="url"
        ) from exc


class Routes:
    def __init__(self, context: BrowserContext, next_id: Callable[[], str]) -> None:
        self._context = context
        self._next_id = next_id
        self.rules: dict[str, RouteRule] = {}
        # Which rule acted on a request, for the network log; weak, so it never keeps a request alive.
        self.acted: weakref.WeakKeyDictionary[Request, RouteRule] = weakref.WeakKeyDictionary()

    async def add(self, rule: RouteRule) -> RouteRule:
        rule.matcher = matcher_of(rule.pattern, rule.regex)

        async def handle(route: Route, request: Request) -> None:
            try:
                await self._handle(rule, route, request)
            except PlaywrightError:  # the page or window closed while the request was paused
                log.debug("route %s could not handle %s", rule.id, request.url, exc_info=True)

        rule.handler = handle
        # Playwright runs the most recently registered matching handler first, and a route.fallback()
        # hands the request on to the next one. A remote session's URL-policy guard is a
        # context.route("**/*") registered when the context was created, so it runs after every rule
        # here: header changes therefore use fallback(headers=...), never continue_(), and requests a
        # rule does not act on are passed on with fallback(), so the guard still checks each of them.
        # A block (abort) or a mock (fulfill) sends nothing to the network, so there is nothing to guard.
        rule.id = self._next_id()  # only now: a refused pattern uses no id
        try:
            await self._context.route(rule.matcher, handle)
        except PlaywrightError as exc:
            raise InvalidParameter(
                f"url pattern {rule.pattern!r} was refused: {exc.message}",
                hint="Use a glob such as **/api/* or regex=true with a regular expression.",
                field="url",
            ) from exc
        self.rules[rule.id] = rule
        return rule

    async def _handle(self, rule: RouteRule, route: Route, request: Request) -> None:
        if rule.id not in self.rules or not rule.applies(request):
            await route.fallback()
            return
        rule.hits += 1
        self.acted[request] = rule
        if rule.kind == "block":
            await route.abort(rule.error_reason)
        elif rule.kind == "mock" and rule.mock is not None:
            mock = rule.mock
            await route.fulfill(
                status=mock.status,
                body=mock.body if mock.json is None else None,
                json=mock.json,
                content_type=mock.content_type,
                headers=mock.headers,
            )
        else:
            headers = {k: v for k, v in request.headers.items() if k.lower() not in rule.remove_headers}
            headers.update(rule.set_headers)
            await route.fallback(headers=headers)

    async def remove(self, rule_id: str) -> RouteRule:
        rule = self.rules.pop(rule_id)
        if rule.handler is not None:
            try:
                await self._context.unroute(rule.matcher, rule.handler)
            except PlaywrightError:  # the window closed meanwhile; its routes went with it
                log.debug("unroute %s failed", rule.id, exc_info=True)
        return rule

    async def clear(self) -> list[RouteRule]:
        return [await self.remove(rule_id) for rule_id in list(self.rules)]
