"""The network of a session: each tab's request log (browser_network) and each window's routes (browser_route)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from browserd.daemon.errors import InvalidParameter, RequestNotFound, RouteNotFound
from browserd.daemon.sessions.network import Body, NetworkRecord, RequestFilter, ResourceType, post_data, response_body
from browserd.daemon.sessions.routes import AbortReason, MockResponse, RouteKind, RouteRule
from browserd.daemon.sessions.session import Session
from browserd.daemon.sessions.tab import Tab
from browserd.daemon.sessions.window import Window
from browserd.daemon.snapshots.tab_call import TabCall
from browserd.daemon.tools.context import ToolContext
from browserd.daemon.tools.response import Response
from browserd.daemon.tools.tabtool import TabParams, tab_tool
from browserd.daemon.tools.tool_registry import Params, Tool, tool

_URL_SHOWN = 200  # characters of a URL in a listing line; the structured data has it whole


class NetworkParams(TabParams, kw_only=True):
    url: (
        Annotated[
            str,
            msgspec.Meta(
                description="Only URLs containing this text; with * or {a,b} a glob on the whole URL, as in "
                "browser_route (**/api/*)."
            ),
        ]
        | None
    ) = None
    method: Annotated[str, msgspec.Meta(description="GET, POST ... (any case).")] | None = None
    status: Annotated[str, msgspec.Meta(description='"404", a class "4xx", or ">=400", "<300".')] | None = None
    resource_type: ResourceType | None = None
    failed: Annotated[bool, msgspec.Meta(description="Only failed requests and HTTP errors (>= 400).")] = False
    limit: Annotated[int, msgspec.Meta(ge=1, le=500, description="Newest requests shown.")] = 50
    clear: Annotated[bool, msgspec.Meta(description="Empty the tab's whole log after reading it.")] = False
    request_id: Annotated[str, msgspec.Meta(description="One request's details (n3).")] | None = None
    body: Annotated[bool, msgspec.Meta(description="With requestId: its response body (text or JSON).")] = False
    post_data: Annotated[bool, msgspec.Meta(description="With requestId: the body it sent.")] = False
    max_chars: Annotated[int, msgspec.Meta(ge=100, le=1_000_000, description="Cut a body after this.")] | None = None


class RouteParams(Params, kw_only=True):
    action: Literal["add", "list", "remove", "clear"] = "list"
    window_id: Annotated[str, msgspec.Meta(description="Default: the active window (add), all (list, clear).")] | (
        None
    ) = None
    route_id: Annotated[str, msgspec.Meta(description="For remove (route_N).")] | None = None
    url: (
        Annotated[str, msgspec.Meta(description="For add: glob on the whole URL (**/api/*), or a regex with regex.")]
        | None
    ) = None
    regex: bool = False
    method: Annotated[str, msgspec.Meta(description="Only requests with this method.")] | None = None
    resource_type: ResourceType | None = None
    block: Annotated[bool, msgspec.Meta(description="Fail matching requests with errorReason.")] = False
    error_reason: AbortReason = "blockedbyclient"
    set_headers: Annotated[dict[str, str], msgspec.Meta(description="Request headers to add or replace.")] | None = None
    remove_headers: Annotated[list[str], msgspec.Meta(description="Request headers to drop.")] | None = None
    mock: MockResponse | None = None


def _row(tab: Tab, record: NetworkRecord) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": record.id,
        "method": record.method,
        "url": record.url,
        "resourceType": record.resource_type,
        "state": record.state,
        "status": record.status,
        "statusText": record.status_text,
        "durationMs": record.duration_ms,
        "size": record.size,
    }
    request = record.handle()
    rule = tab.window.routes.acted.get(request) if request is not None else None
    if rule is not None:
        row["route"] = f"{rule.id} ({rule.kind})"
    row["fromCache"] = record.no_network_timing and rule is None and record.status is not None
    if record.from_service_worker:
        row["fromServiceWorker"] = True
    if record.failure is not None:
        row["failure"] = record.failure
    if record.redirected_from is not None:
        row["redirectedFrom"] = record.redirected_from
    return row


def _line(row: dict[str, Any]) -> str:
    status = row["failure"] if "failure" in row else (row["status"] if row["status"] is not None else "pending")
    url = row["url"] if len(row["url"]) <= _URL_SHOWN else row["url"][:_URL_SHOWN] + "…"
    extras = [
        f"{row['durationMs']:.0f}ms" if row["durationMs"] is not None else None,
        f"{row['size']}B" if row["size"] is not None else None,
        "cache" if row["fromCache"] else None,
        f"route {row['route']}" if "route" in row else None,
        f"redirected from {row['redirectedFrom']}" if "redirectedFrom" in row else None,
    ]
    return f"- {row['id']} {row['method']} {status} {row['resourceType']} {url} " + " ".join(e for e in extras if e)


def _body_data(body: Body) -> dict[str, Any]:
    data: dict[str, Any] = {"contentType": body.content_type, "size": body.size, "text": body.text}
    if body.truncated:
        data["truncated"] = True
    if body.note:
        data["note"] = body.note
    return data


def _body_text(title: str, body: Body) -> str:
    head = f"{title} ({body.content_type or 'no content type'}, {body.size if body.size is not None else '?'} bytes)"
    if body.text is None:
        return f"{head}: {body.note}"
    return f"{head}:\n{body.text}" + (f"\n… {body.note}" if body.note else "")


@tab_tool(
    "browser_network",
    "devtools",
    "The tab's requests, newest last, with filters; with requestId one request, its response body or post data.",
    NetworkParams,
    read_only=True,
)
async def browser_network(ctx: ToolContext, call: TabCall, params: NetworkParams, response: Response) -> None:
    tab = call.tab
    log = tab.network
    if log.size == 0:
        response.text("The network log is off (browser.network_log_size = 0 in the daemon's configuration).")
    if params.request_id is not None:
        await _one_request(ctx, tab, params.request_id, params, response)
        return
    if params.body or params.post_data:
        raise InvalidParameter(
            "body and postData need a requestId", hint="Call browser_network for the ids, then pass requestId."
        )
    wanted = RequestFilter(params.url, params.method, params.status, params.resource_type, params.failed)
    found = wanted.select(log.records)
    shown = [_row(tab, r) for r in found[-params.limit :]]
    if params.clear:
        log.clear()
    response.data({"requests": shown, "total": len(found), "tabId": tab.id})
    more = f"\n… {len(found) - len(shown)} older request(s) not shown; raise limit" if len(found) > len(shown) else ""
    response.text(
        f"{len(found)} request(s) in {tab.id}"
        + (" (log cleared)" if params.clear else "")
        + ":\n"
        + "\n".join(_line(row) for row in shown)
        + more
        if found
        else f"No request in {tab.id} matches." + (" (log cleared)" if params.clear else "")
    )


async def _one_request(ctx: ToolContext, tab: Tab, request_id: str, params: NetworkParams, response: Response) -> None:
    record = tab.network.find(request_id)
    if record is None:
        raise RequestNotFound(
            f"no request {request_id} in {tab.id}'s network log (it may have been cleared or pushed out)",
            requestId=request_id,
            tabId=tab.id,
        )
    row = _row(tab, record)
    max_chars = params.max_chars or ctx.services.config.browser.network_body_max_chars
    texts = [_line(row)]
    request = record.handle()
    if request is not None:
        row["requestHeaders"] = request.headers
        existing = request.existing_response
        if existing is not None:
            row["responseHeaders"] = existing.headers
    if params.body:
        body = await response_body(record, max_chars)
        row["body"] = _body_data(body)
        texts.append(_body_text("Response body", body))
    if params.post_data:
        sent = post_data(record, max_chars)
        row["postData"] = _body_data(sent)
        texts.append(_body_text("Post data", sent))
    if not params.body and not params.post_data:
        texts.append("body=true shows its response body, postData=true what it sent.")
    response.data({"request": row, "tabId": tab.id})
    response.text("\n".join(texts))


def _rule(params: RouteParams) -> RouteRule:
    if not params.url:
        raise InvalidParameter("action add needs url", hint="Pass url, a glob such as **/api/*.", field="url")
    headers = params.set_headers is not None or params.remove_headers is not None
    kinds: dict[RouteKind, bool] = {"block": params.block, "mock": params.mock is not None, "headers": headers}
    chosen = [kind for kind, on in kinds.items() if on]
    if len(chosen) != 1:
        raise InvalidParameter(
            "a route does one thing: " + ("choose one of " + ", ".join(chosen) if chosen else "nothing given"),
            hint="Pass exactly one of block=true, mock={...}, or setHeaders/removeHeaders.",
            field="action",
        )
    mock = params.mock
    if mock is not None and mock.body is not None and mock.json is not None:
        raise InvalidParameter("mock takes body or json, not both", field="mock")
    return RouteRule(
        id="",
        pattern=params.url,
        regex=params.regex,
        kind=chosen[0],
        method=params.method.upper() if params.method else None,
        resource_type=params.resource_type,
        error_reason=params.error_reason,
        set_headers=dict(params.set_headers or {}),
        remove_headers=frozenset(name.lower() for name in params.remove_headers or ()),
        mock=mock,
    )


async def _windows(session: Session, window_id: str | None) -> list[Window]:
    if window_id is not None:
        return [await session.window(window_id)]
    return list(session.windows.values())


@tool(
    "browser_route",
    "devtools",
    "Per window: block requests, set or remove request headers, or mock responses (url glob or regex); "
    "list routes with hit counts, remove one or all. Routes apply to every tab of the window.",
    RouteParams,
)
async def browser_route(ctx: ToolContext, params: RouteParams, response: Response) -> None:
    session = ctx.session
    if params.action == "add":
        rule = _rule(params)
        window = await session.window(params.window_id)
        await window.routes.add(rule)
        response.text(f"Added {rule.id} in {window.id}: {rule.pattern} -> {rule.describe()}")
    elif params.action == "remove":
        if params.route_id is None:
            raise InvalidParameter("action remove needs routeId", hint=RouteNotFound.hint, field="routeId")
        holder = next((w for w in await _windows(session, params.window_id) if params.route_id in w.routes.rules), None)
        if holder is None:
            raise RouteNotFound(f"no route {params.route_id} in this session", routeId=params.route_id)
        removed = await holder.routes.remove(params.route_id)
        response.text(f"Removed {removed.id} from {holder.id} ({removed.hits} hit(s))")
    elif params.action == "clear":
        windows = await _windows(session, params.window_id)
        count = sum([len(await w.routes.clear()) for w in windows])
        response.text(f"Removed {count} route(s)")
    shown = session.windows.values() if params.action != "list" else await _windows(session, params.window_id)
    rows = [{**rule.row(), "windowId": w.id} for w in shown for rule in w.routes.rules.values()]
    response.data({"routes": rows})
    listing = "\n".join(
        f"- {r['routeId']} [{r['windowId']}] {r['pattern']}{' (regex)' if r['regex'] else ''} -> "
        f"{r['description']}; {r['hits']} hit(s)"
        for r in rows
    )
    response.text(f"Routes:\n{listing}" if rows else "No routes.")


TOOLS: list[Tool[Any]] = [browser_network, browser_route]
