"""The console's door (daemon/console/console_guard.py): the one-time link, the cookie, and the Host, Origin and
client-address checks, on a tiny app behind the real guard (the end-to-end side is tests/e2e/test_console.py)."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route
from starlette.testclient import TestClient

from browserd.daemon.console.auth import ConsoleAuth
from browserd.daemon.console.console_guard import COOKIE, ConsoleGuard

BASE = "http://127.0.0.1:8123"


async def page(request: Request) -> PlainTextResponse:
    return PlainTextResponse("the console")


def client(auth: ConsoleAuth, address: str = "127.0.0.1") -> TestClient:
    inner = Starlette(
        routes=[Route("/", page, methods=["GET", "POST"])], middleware=[Middleware(ConsoleGuard, auth=auth)]
    )
    outer = Starlette(routes=[Mount("/console", app=inner)])
    return TestClient(outer, base_url=BASE, client=(address, 50000), follow_redirects=False)


def opened(auth: ConsoleAuth) -> TestClient:
    browser = client(auth)
    link = auth.new_link(BASE).removeprefix(BASE)
    assert browser.get(link).status_code == 303
    return browser


def test_without_the_cookie_nothing_is_shown() -> None:
    answer = client(ConsoleAuth()).get("/console/")
    assert answer.status_code == 401 and "the console" not in answer.text
    assert "browserd console" in answer.text


def test_the_link_sets_a_strict_http_only_cookie_and_works_once() -> None:
    auth = ConsoleAuth()
    browser = client(auth)
    link = auth.new_link(BASE).removeprefix(BASE)
    first = browser.get(link)
    assert first.status_code == 303 and first.headers["location"] == "/console/"
    cookie = first.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/console" in cookie
    assert browser.get("/console/").text == "the console"
    assert client(auth).get(link).status_code == 401, "a used link opens nothing"


def test_an_mcp_bearer_token_is_no_key() -> None:
    auth = ConsoleAuth()
    answer = client(auth).get("/console/", headers={"Authorization": f"Bearer {auth.new_link_token()}"})
    assert answer.status_code == 401


def test_another_host_origin_or_machine_is_refused_even_with_the_cookie() -> None:
    auth = ConsoleAuth()
    browser = opened(auth)
    assert browser.get("/console/", headers={"Host": "evil.example:8123"}).status_code == 403
    assert browser.get("/console/", headers={"Origin": "http://evil.example"}).status_code == 403
    assert browser.get("/console/", headers={"Sec-Fetch-Site": "cross-site"}).status_code == 403
    assert browser.post("/console/").status_code == 403, "a change without an Origin is refused"
    assert browser.post("/console/", headers={"Origin": BASE}).text == "the console"
    remote = client(auth, address="192.0.2.7")
    remote.cookies.set(COOKIE, browser.cookies[COOKIE])
    assert remote.get("/console/").status_code == 403


def test_a_forged_cookie_opens_nothing() -> None:
    browser = client(ConsoleAuth())
    browser.cookies.set(COOKIE, "forged")
    assert browser.get("/console/").status_code == 401
