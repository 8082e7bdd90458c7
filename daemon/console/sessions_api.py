"""The console's Sessions page: every client with its windows, tabs (and a thumbnail of each), its last
calls (the call log `browserd status` and the side panel show: never a value), and stop."""

from __future__ import annotations

from typing import Any

from playwright.async_api import Error as PlaywrightError
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from browserd.daemon import summary
from browserd.daemon.console.client import ConsoleClient, answers_errors, json_answer
from browserd.daemon.errors import SessionNotFound
from browserd.daemon.flows.fingerprint_js import SENSITIVE_CSS
from browserd.daemon.sessions.session import Session

# A thumbnail is a viewport at low JPEG quality: tens of KB, drawn small by the page.
THUMBNAIL_QUALITY = 35
THUMBNAIL_TIMEOUT_MS = 3_000


async def _tab_rows(session: Session) -> list[dict[str, Any]]:
    rows = []
    for window in await session.live_windows():
        for tab in window.open_tabs():
            try:
                title = await tab.page.title()
            except PlaywrightError:
                title = ""  # closing under us
            rows.append(
                {
                    "tabId": tab.id,
                    "windowId": window.id,
                    "backend": window.kind,
                    "url": tab.page.url,
                    "title": title,
                    "active": window.active_tab_id == tab.id and session.active_window_id == window.id,
                }
            )
    return rows


def sessions_routes(client: ConsoleClient) -> list[Route]:
    services = client.services

    def session_of(request: Request) -> Session:
        session_id = request.path_params["session_id"]
        session = services.sessions.sessions.get(session_id)
        if session is None:
            raise SessionNotFound(f"no session {session_id}", hint="It has ended; the list shows the live ones.")
        return session

    @answers_errors
    async def listing(request: Request) -> Response:
        rows = []
        for row in summary.sessions(services):
            session = services.sessions.sessions.get(row["sessionId"])
            if session is None:
                continue
            rows.append({**row, "tabs": await _tab_rows(session), "calls": list(session.calls.calls)[::-1]})
        return json_answer({"sessions": rows, "consoleSessionId": client.session().id})

    @answers_errors
    async def thumbnail(request: Request) -> Response:
        tab = session_of(request).find_tab(request.path_params["tab_id"])
        page = tab.page
        try:
            # Password, one-time-code and card fields masked, as in a failure screenshot (never a secret).
            image = await page.screenshot(
                type="jpeg",
                quality=THUMBNAIL_QUALITY,
                mask=[page.locator(SENSITIVE_CSS)],
                timeout=THUMBNAIL_TIMEOUT_MS,
                animations="allow",
                caret="initial",
            )
        except PlaywrightError:
            return Response(status_code=204)  # the tab is busy navigating or closing; the next event asks again
        return Response(image, media_type="image/jpeg")

    @answers_errors
    async def stop(request: Request) -> Response:
        """Its runs are canceled and its windows closed; a connected client keeps its session (its next call
        opens a new window), any other session ends."""
        session = session_of(request)
        canceled = []
        for run_id, run in list(services.runs.active.items()):
            if run.record.session_id == session.id:
                requested, _ = await services.runs.cancel(run_id, force=True)
                canceled += [run_id] if requested else []
        if services.sessions.describe(session.id)["connected"]:
            for window in await session.live_windows():
                await session.close_window(window.id)
        else:
            await services.sessions.close(session.id)
        services.events.publish("session", sessionId=session.id)
        return json_answer({"stopped": session.id, "canceledRuns": canceled})

    return [
        Route("/api/sessions", listing),
        Route("/api/sessions/{session_id}/tabs/{tab_id}/thumbnail", thumbnail),
        Route("/api/sessions/{session_id}/stop", stop, methods=["POST"]),
    ]
