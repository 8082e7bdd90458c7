"""The scrape fast path: a page's HTML over plain HTTP, for pages whose HTML already holds their content.

One pooled HTTP client per daemon (HttpPool, owned by Services, connections kept alive between
scrapes) fetches the page with the profile's cookies; `fetch_html` follows redirects itself so that
every hop passes the same URL policy as the browser path, caps the body and keeps to a deadline.
Cookies the server sets come back as the storage state the browser path would have exported.

Whether the fetched HTML is enough is `browser_reason` (measurable signals: the extracted text, the
mount point of a script-built app left empty, a <noscript> asking for JavaScript), plus HostMemory, a
per-host memory of which path served the last pages, so a site that always needs the browser is not
fetched twice per page.

Sessions whose traffic the URL guard must see (remote ones, or any under [security] lists) fetch
through that guard (daemon/policy/proxy.py) like their browser contexts: it resolves each host
itself, refuses private addresses after DNS and connects to the address it checked.
"""

from __future__ import annotations

import http.cookiejar
import re
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

import anyio

from browserd.daemon.errors import NavigationTimeout
from browserd.daemon.policy.proxy import GuardProxy, Guards
from browserd.daemon.policy.refusals import REFUSED_HEADER
from browserd.daemon.policy.urls import UrlPolicy
from browserd.protocol.messages import TrustLevel

if TYPE_CHECKING:
    import httpx  # imported on first use: it adds a third of a second to the daemon's start

MAX_REDIRECTS = 20  # Chromium's own limit
# Chromium's answer to "what do you accept" for a page, so servers send what the browser would get.
ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
USER_AGENT = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36"
HTML_TYPES = ("text/html", "application/xhtml+xml")
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE)
# Mount points script-built apps render into (React, Vue, Next.js, Nuxt, Svelte), left empty in the HTML.
_EMPTY_MOUNT = re.compile(
    r"""<(?:div|main|section)\b[^>]*\bid\s*=\s*["'](?:root|app|__next|__nuxt|svelte)["'][^>]*>\s*</(?:div|main|section)>""",
    re.IGNORECASE,
)
_NOSCRIPT = re.compile(r"<noscript\b[^>]*>(.*?)</noscript>", re.IGNORECASE | re.DOTALL)
_SCRIPT = re.compile(r"<script\b", re.IGNORECASE)
_BODY_OR_HEAD_END = re.compile(r"<body\b|</head\s*>", re.IGNORECASE)
_START_TAG = re.compile(r"<([A-Za-z][A-Za-z0-9-]*)")
# Elements a browser keeps in <head> when a page leaves out <head> and <body>; the first other one opens the body.
_HEAD_TAGS = frozenset({"html", "head", "title", "meta", "link", "style", "script", "base", "noscript", "template"})
HOSTS_REMEMBERED = 1024
# A host whose last pages all needed the browser skips the fetch; every so often it is tried again.
BROWSER_STREAK = 2
RETRY_EVERY = 10


@dataclass
class Fetched:
    url: str
    final_url: str
    status: int
    html: str
    # The storage state with the cookies the server set on the way (None: it set none).
    storage_state: dict[str, Any] | None = None


class NotHtml(Exception):
    """The answer is no HTML page (a PDF, an image) or too large: the browser path handles it."""


class FetchFailed(Exception):
    """The HTTP exchange failed (connection refused, reset, bad answer)."""


def browser_reason(html: str, text_chars: int, min_chars: int) -> str | None:
    """Why the fetched `html` is not the page a browser would show (None: it is)."""
    if text_chars == 0:
        return "no-text"
    if _EMPTY_MOUNT.search(html):
        return "app-shell"
    for noscript in _NOSCRIPT.findall(html):
        if "javascript" in noscript.lower():
            return "noscript"
    if text_chars < min_chars and _SCRIPT.search(html):
        return "little-text"
    return None


@dataclass
class HostMemory:
    """Per host: how many pages in a row needed the browser (0: the fast path served the last one)."""

    _streaks: OrderedDict[str, int] = field(default_factory=OrderedDict)
    _skipped: dict[str, int] = field(default_factory=dict)

    def prefers_browser(self, url: str) -> bool:
        host = urlsplit(url).netloc.lower()
        if self._streaks.get(host, 0) < BROWSER_STREAK:
            return False
        self._skipped[host] = self._skipped.get(host, 0) + 1
        return self._skipped[host] % RETRY_EVERY != 0  # now and then, see whether the site changed

    def record(self, url: str, needed_browser: bool) -> None:
        host = urlsplit(url).netloc.lower()
        self._streaks[host] = self._streaks.get(host, 0) + 1 if needed_browser else 0
        self._streaks.move_to_end(host)
        while len(self._streaks) > HOSTS_REMEMBERED:
            gone, _ = self._streaks.popitem(last=False)
            self._skipped.pop(gone, None)


class HttpPool:
    """The daemon's HTTP clients, connections kept alive: direct, and through [browser] proxy."""

    def __init__(self, proxy: str = "", proxy_bypass: str = "") -> None:
        self.proxy = proxy
        self._bypass = tuple(h.strip().lower() for h in proxy_bypass.split(",") if h.strip())
        self._direct: httpx.AsyncClient | None = None
        self._proxied: httpx.AsyncClient | None = None
        self.memory = HostMemory()

    def _bypassed(self, host: str) -> bool:
        return any(host == b.lstrip("*.") or host.endswith("." + b.lstrip("*.")) for b in self._bypass)

    def client_for(self, url: str) -> httpx.AsyncClient:
        """The pooled client for `url`: through [browser] proxy unless its host bypasses the proxy."""
        if self.proxy and not self._bypassed((urlsplit(url).hostname or "").lower()):
            if self._proxied is None:
                self._proxied = new_client(self.proxy)
            return self._proxied
        if self._direct is None:
            self._direct = new_client(None)
        return self._direct

    async def aclose(self) -> None:
        with anyio.CancelScope(shield=True):
            for client in (self._direct, self._proxied):
                if client is not None:
                    await client.aclose()
            self._direct = self._proxied = None


class _NoCookies(http.cookiejar.DefaultCookiePolicy):
    """A shared client must keep no cookies of its own: each fetch carries its profile's in its own jar."""

    def set_ok(self, cookie: http.cookiejar.Cookie, request: Any) -> bool:
        return False

    def return_ok(self, cookie: http.cookiejar.Cookie, request: Any) -> bool:
        return False


def new_client(proxy: str | None) -> httpx.AsyncClient:
    import httpx

    # trust_env off: the daemon's own settings decide where traffic goes, as they do for the browser.
    return httpx.AsyncClient(
        proxy=proxy,
        follow_redirects=False,
        trust_env=False,
        timeout=None,
        cookies=http.cookiejar.CookieJar(policy=_NoCookies()),
    )


@asynccontextmanager
async def one_off_client(proxy: str) -> AsyncIterator[httpx.AsyncClient]:
    """A client whose every request goes through `proxy` (a URL guard's, or a scrape's own), closed after."""
    client = new_client(proxy)
    try:
        yield client
    finally:
        with anyio.CancelScope(shield=True):
            await client.aclose()


@asynccontextmanager
async def client_for_session(
    guards: Guards, pool: HttpPool, trust: TrustLevel, url: str, proxy: str | None = None
) -> AsyncIterator[tuple[httpx.AsyncClient, GuardProxy | None]]:
    """The client a request of a session at `trust` leaves through, and the guard it passes, if any.

    A session whose browser traffic the URL guard sees (remote, or [security] lists) sends this request
    through a guard of its own too: the guard resolves each host, checks the address and connects to
    that very address, so a name re-bound between a check and the connection gains nothing. Otherwise
    `proxy` when given, else the daemon's pooled client (with [browser] proxy).
    """
    if guards.policy.guarded(trust):
        async with guards.guarding(trust) as guard:
            assert guard is not None  # guarded() says this trust level has one
            async with one_off_client(guard.server) as client:
                yield client, guard
    elif proxy:
        async with one_off_client(proxy) as client:
            yield client, None
    else:
        yield pool.client_for(url), None


@dataclass
class FetchRequest:
    url: str
    trust_level: TrustLevel
    timeout_ms: int
    max_bytes: int
    storage_state: Mapping[str, Any] | None = None
    headers: Mapping[str, str] | None = None


async def fetch_html(
    client: httpx.AsyncClient, policy: UrlPolicy, request: FetchRequest, guard: GuardProxy | None = None
) -> Fetched:
    """GET the page, following redirects under the URL policy; NotHtml when the browser should have it."""
    import httpx

    jar = _jar_of(request.storage_state)
    cookies = httpx.Cookies(jar)
    headers = {"user-agent": USER_AGENT, "accept": ACCEPT, "accept-language": "en-US,en;q=0.9"}
    headers.update({k.lower(): v for k, v in (request.headers or {}).items()})
    url = request.url
    set_any = False
    mark = guard.mark() if guard is not None else 0
    try:
        with anyio.fail_after(request.timeout_ms / 1000):
            for _hop in range(MAX_REDIRECTS + 1):
                await policy.check_url(url, request.trust_level)
                outgoing = client.build_request("GET", url, headers=headers)
                cookies.set_cookie_header(outgoing)
                response = await client.send(outgoing, stream=True)
                try:
                    if guard is not None and response.headers.get(REFUSED_HEADER):
                        refusal = guard.refusal_since(mark, url, last=True)
                        if refusal is not None:
                            raise refusal.error()
                    if response.headers.get_list("set-cookie"):
                        cookies.extract_cookies(response)
                        set_any = True
                    location = response.headers.get("location")
                    if response.is_redirect and location:
                        url = urljoin(url, location)
                        if urlsplit(url).scheme not in ("http", "https"):
                            raise NotHtml(f"redirect to {url}")
                        continue
                    body = await _read_html(response, request.max_bytes)
                finally:
                    await response.aclose()
                state = _state_with(request.storage_state, jar) if set_any else None
                return Fetched(request.url, url, response.status_code, body, state)
    except TimeoutError as exc:
        raise NavigationTimeout(f"fetching {request.url} took longer than {request.timeout_ms} ms", url=url) from exc
    except httpx.HTTPError as exc:
        refusal = guard.refusal_since(mark, url) if guard is not None else None
        if refusal is not None:
            raise refusal.error() from exc
        raise FetchFailed(f"{type(exc).__name__}: {exc}") from exc
    raise NotHtml(f"more than {MAX_REDIRECTS} redirects")


async def _read_html(response: httpx.Response, max_bytes: int) -> str:
    content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type and content_type not in HTML_TYPES:
        raise NotHtml(f"{content_type} is not an HTML page")
    length = response.headers.get("content-length", "")
    if length.isdigit() and int(length) > max_bytes:
        raise NotHtml(f"{length} bytes is more than [scrape] fetch_max_bytes")
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > max_bytes:
            raise NotHtml(f"more than {max_bytes} bytes ([scrape] fetch_max_bytes)")
        chunks.append(chunk)
    body = b"".join(chunks)
    if not content_type and b"<html" not in body[:4096].lower():
        raise NotHtml("no content type and no <html>")
    return with_body(body.decode(_charset(response, body), errors="replace"))


def with_body(html: str) -> str:
    """`html` with the <body> a browser would open, where the page leaves out both </head> and <body>.

    lxml's HTML 4 parser puts elements it does not know (main, article, section...) into <head> then,
    where the extractor never looks; a browser's HTML5 parser opens the body at the first of them.
    """
    if _BODY_OR_HEAD_END.search(html):
        return html
    for tag in _START_TAG.finditer(html):
        if tag.group(1).lower() not in _HEAD_TAGS:
            return f"{html[: tag.start()]}<body>{html[tag.start() :]}"
    return html


def _charset(response: httpx.Response, body: bytes) -> str:
    """The header's charset, else the document's <meta charset>, else UTF-8 (what a browser would use)."""
    named = response.charset_encoding
    if not named:
        found = _META_CHARSET.search(body[:4096])
        named = found.group(1).decode("ascii", "replace") if found else "utf-8"
    try:
        "".encode(named)
    except LookupError:
        return "utf-8"
    return named


# -- cookies between Playwright's storage state and the standard library's cookie jar ------------------------


def _jar_of(state: Mapping[str, Any] | None) -> http.cookiejar.CookieJar:
    jar = http.cookiejar.CookieJar()
    for cookie in (state or {}).get("cookies", []):
        domain = str(cookie.get("domain", ""))
        expires = cookie.get("expires", -1)
        jar.set_cookie(
            http.cookiejar.Cookie(
                version=0,
                name=str(cookie["name"]),
                value=str(cookie.get("value", "")),
                port=None,
                port_specified=False,
                domain=domain,
                domain_specified=domain.startswith("."),
                domain_initial_dot=domain.startswith("."),
                path=str(cookie.get("path", "/")),
                path_specified=True,
                secure=bool(cookie.get("secure", False)),
                expires=None if expires is None or expires < 0 else int(expires),
                discard=expires is None or expires < 0,
                comment=None,
                comment_url=None,
                rest={"HttpOnly": ""} if cookie.get("httpOnly") else {},
            )
        )
    return jar


def _state_with(state: Mapping[str, Any] | None, jar: http.cookiejar.CookieJar) -> dict[str, Any]:
    """`state` with its cookies replaced by the jar's: unchanged ones as they were, set ones converted."""
    before = {(c["name"], c.get("domain"), c.get("path")): c for c in (state or {}).get("cookies", [])}
    cookies = []
    now = time.time()
    for cookie in jar:
        if cookie.expires is not None and cookie.expires <= now:
            continue
        key = (cookie.name, cookie.domain, cookie.path)
        old = before.get(key)
        if old is not None and old.get("value") == cookie.value:
            cookies.append(old)
            continue
        same_site = str(cookie.get_nonstandard_attr("SameSite") or cookie.get_nonstandard_attr("samesite") or "Lax")
        cookies.append(
            {
                "name": cookie.name,
                "value": cookie.value or "",
                "domain": cookie.domain,
                "path": cookie.path,
                "expires": float(cookie.expires) if cookie.expires is not None else -1,
                "httpOnly": cookie.has_nonstandard_attr("HttpOnly") or cookie.has_nonstandard_attr("httponly"),
                "secure": cookie.secure,
                "sameSite": same_site.capitalize() if same_site.lower() in ("lax", "strict", "none") else "Lax",
            }
        )
    return {**(state or {}), "cookies": cookies, "origins": list((state or {}).get("origins", []))}
