"""The `http` node: one request from the daemon, under the calling session's URL policy.

Every hop (the URL and each redirect) is checked by the session's TrustPolicy before it is sent, so a
flow reaches over HTTP exactly what its session could open in a tab. The answer becomes the node's
output: {status, contentType, text, json?}, the text capped; the daemon's pooled HTTP client sends it.
"""

from __future__ import annotations

import contextlib
from typing import Any
from urllib.parse import urljoin, urlsplit

import anyio
import msgspec

from browserd.daemon.errors import ExecutionError, NavigationTimeout
from browserd.daemon.flows.model import Step
from browserd.daemon.flows.templating import render
from browserd.daemon.policy.trust import TrustPolicy
from browserd.daemon.scrape.fetch import HttpPool

MAX_REDIRECTS = 5
MAX_TEXT = 256 * 1024


async def send(
    node: Step, trust: TrustPolicy, pool: HttpPool, values: dict[str, Any], outputs: dict[str, Any], timeout_s: float
) -> dict[str, Any]:
    import httpx

    url = render(node.url or "", values, outputs)
    method = node.method or "GET"
    headers = {key: render(value, values, outputs) for key, value in (node.headers or {}).items()}
    body = render(node.body, values, outputs).encode() if node.body is not None else None
    try:
        with anyio.fail_after(timeout_s):
            for _hop in range(MAX_REDIRECTS + 1):
                await trust.check_url(url)
                response = await pool.client_for(url).request(method, url, headers=headers, content=body)
                location = response.headers.get("location")
                if response.is_redirect and location:
                    url = urljoin(url, location)
                    if urlsplit(url).scheme not in ("http", "https"):
                        raise ExecutionError(f"http node `{node.id}`: redirect to {url}", nodeId=node.id)
                    # 303, and 301/302 after a POST, go on as GET without the body, as browsers do.
                    if response.status_code == 303 or (response.status_code in (301, 302) and method == "POST"):
                        method, body = "GET", None
                    continue
                return _answer(response)
    except TimeoutError as exc:
        raise NavigationTimeout(f"http node `{node.id}`: {url} took longer than {timeout_s:g} s", url=url) from exc
    except httpx.HTTPError as exc:
        raise ExecutionError(f"http node `{node.id}`: {type(exc).__name__}: {exc}", nodeId=node.id) from exc
    raise ExecutionError(f"http node `{node.id}`: more than {MAX_REDIRECTS} redirects", nodeId=node.id)


def _answer(response: Any) -> dict[str, Any]:
    text = response.text[:MAX_TEXT]
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
