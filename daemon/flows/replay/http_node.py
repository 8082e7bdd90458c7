"""The `http` node: one request from the daemon, under the calling session's URL policy.

The request leaves the way the session's browser traffic does (`client_for_session`): a session the URL
guard watches sends it through a guard of its own, which checks every hop (the URL and each redirect),
resolves the host itself and connects to the very address it checked, so a name that resolves to a
public address for the check and to a private one for the connection (DNS rebinding) gains nothing.
Each hop is also checked before it is sent, so a refusal names its rule without any request. The
answer becomes the node's output: {status, contentType, text, url, json?}, the text capped.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

import anyio
import msgspec

from browserd.daemon.errors import ExecutionError, NavigationTimeout
from browserd.daemon.flows.flow_model import Step
from browserd.daemon.flows.placeholders import render
from browserd.daemon.policy.proxy import GuardProxy, Guards
from browserd.daemon.policy.trust import TrustPolicy
from browserd.daemon.scrape.fetch import HttpPool, client_for_session

if TYPE_CHECKING:
    import httpx

MAX_REDIRECTS = 5
MAX_TEXT = 256 * 1024


async def send(
    node: Step,
    trust: TrustPolicy,
    guards: Guards,
    pool: HttpPool,
    values: dict[str, Any],
    outputs: dict[str, Any],
    timeout_s: float,
) -> dict[str, Any]:
    import httpx

    url = render(node.url or "", values, outputs)
    method = node.method or "GET"
    headers = {key: render(value, values, outputs) for key, value in (node.headers or {}).items()}
    body = render(node.body, values, outputs).encode() if node.body is not None else None
    try:
        with anyio.fail_after(timeout_s):
            async with client_for_session(guards, pool, trust.level, url) as (client, guard):
                mark = guard.mark() if guard is not None else 0
                for _hop in range(MAX_REDIRECTS + 1):
                    await trust.check_url(url)
                    try:
                        response = await client.send(
                            client.build_request(method, url, headers=headers, content=body), stream=True
                        )
                    except httpx.HTTPError:
                        _raise_refusal(guard, mark, url, None)  # a refused https hop fails its tunnel
                        raise
                    try:
                        _raise_refusal(guard, mark, url, response.headers)
                        location = response.headers.get("location")
                        if not (response.is_redirect and location):
                            return await _answer(response)
                    finally:
                        await response.aclose()
                    url = urljoin(url, location)
                    if urlsplit(url).scheme not in ("http", "https"):
                        raise ExecutionError(f"http node `{node.id}`: redirect to {url}", nodeId=node.id)
                    # 303, and 301/302 after a POST, go on as GET without the body, as browsers do.
                    if response.status_code == 303 or (response.status_code in (301, 302) and method == "POST"):
                        method, body = "GET", None
    except TimeoutError as exc:
        raise NavigationTimeout(f"http node `{node.id}`: {url} took longer than {timeout_s:g} s", url=url) from exc
    except httpx.HTTPError as exc:
        raise ExecutionError(f"http node `{node.id}`: {type(exc).__name__}: {exc}", nodeId=node.id) from exc
    raise ExecutionError(
        f"http node `{node.id}`: more than {MAX_REDIRECTS} redirects",
        hint="Point the node at the redirect chain's final URL.",
        nodeId=node.id,
    )


def _raise_refusal(guard: GuardProxy | None, mark: int, url: str, headers: Any) -> None:
    """URL_NOT_ALLOWED when the guard refused this hop (headers None: the request itself failed)."""
    if guard is None:
        return
    reply = dict(headers) if headers is not None else None
    refusal = guard.navigation_refusal(mark, url, reply)
    if refusal is not None:
        raise refusal.error()


async def _answer(response: httpx.Response) -> dict[str, Any]:
    raw = bytearray()
    async for chunk in response.aiter_bytes():
        raw += chunk
        if len(raw) >= MAX_TEXT:
            break  # the rest is never read: the cap bounds memory, not only the output
    text = bytes(raw[:MAX_TEXT]).decode(response.encoding or "utf-8", errors="replace")
    kind = response.headers.get("content-type", "")
    answer: dict[str, Any] = {
        "status": response.status_code,
        "contentType": kind,
        "text": text,
        "url": str(response.url),
    }
    if "json" in kind:
        # Cut at MAX_TEXT, or not JSON after all: the text is there.
        with contextlib.suppress(msgspec.DecodeError):
            answer["json"] = msgspec.json.decode(text)
    return answer
