"""robots.txt (RFC 9309): the rules for one user agent, its Crawl-delay and the sitemaps it lists.

Used by `map` (sitemaps) and `crawl` (which paths it may load). The groups whose user-agent product token
equals ours (case-insensitively, RFC 9309 §2.2.1) apply, else the `*` group: a group for `b` or
`browser` is some other crawler's, never ours; within it the longest
matching Allow/Disallow pattern wins and Allow wins a tie; `*` matches any run of characters and a
trailing `$` anchors the end. A robots.txt that is missing (4xx) or that the network cannot reach allows
everything (a page load then says what is wrong); one the server fails to give (5xx) disallows everything,
as RFC 9309 §2.3.1.4 says, since its rules are unknown.

Not protego: its 0.7 release still picks a group whose token is a prefix of ours (`User-agent: b` rules
`browserd`), the very defect this parser avoids; the rest of RFC 9309 fits in the hundred lines below.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field
from urllib.parse import unquote, urljoin, urlsplit

from playwright.async_api import APIRequestContext
from playwright.async_api import Error as PlaywrightError

USER_AGENT_TOKEN = "browserd"
FETCH_TIMEOUT_MS = 10_000
MAX_ROBOTS_BYTES = 512 * 1024  # RFC 9309 §2.5: parse at least 500 KiB
MAX_TEXT_BYTES = 10 * 1024 * 1024


@dataclass(frozen=True)
class Rule:
    allow: bool
    pattern: str
    regex: re.Pattern[str]


@dataclass
class Robots:
    rules: list[Rule] = field(default_factory=list)
    crawl_delay_s: float | None = None
    sitemaps: list[str] = field(default_factory=list)
    # The server's error status when robots.txt could not be read and everything is disallowed for now.
    server_error: int | None = None

    def allows(self, url: str) -> bool:
        parts = urlsplit(url)
        target = unquote(parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        best: Rule | None = None
        for rule in self.rules:
            if not rule.regex.match(target):
                continue
            if (
                best is None
                or len(rule.pattern) > len(best.pattern)
                or (len(rule.pattern) == len(best.pattern) and rule.allow and not best.allow)
            ):
                best = rule
        return best is None or best.allow


def _compile(pattern: str) -> re.Pattern[str]:
    anchored = pattern.endswith("$")
    body = unquote(pattern[:-1] if anchored else pattern)
    return re.compile(".*".join(re.escape(piece) for piece in body.split("*")) + ("$" if anchored else ""))


@dataclass
class _Group:
    agents: list[str] = field(default_factory=list)
    lines: list[tuple[str, str]] = field(default_factory=list)


# RFC 9309 §2.2.1: a product token is letters, `_` and `-`; a line such as `browserd/1.0` names `browserd`.
_PRODUCT_TOKEN = re.compile(r"[a-z_-]*")


def _product_token(agent_line: str) -> str:
    match = _PRODUCT_TOKEN.match(agent_line.lower())
    return match.group() if match else ""


def _groups(text: str) -> tuple[list[_Group], list[str]]:
    groups: list[_Group] = []
    sitemaps: list[str] = []
    current: _Group | None = None
    for raw in text.splitlines():
        key, sep, value = raw.split("#", 1)[0].partition(":")
        if not sep:
            continue
        key, value = key.strip().lower(), value.strip()
        if key == "sitemap":
            if value:
                sitemaps.append(value)
        elif key == "user-agent":
            # Consecutive user-agent lines share one group; one after a rule starts the next group.
            if current is None or current.lines:
                current = _Group()
                groups.append(current)
            current.agents.append("*" if value.startswith("*") else _product_token(value))
        elif current is not None and key in ("allow", "disallow", "crawl-delay"):
            current.lines.append((key, value))
    return groups, sitemaps


def parse_robots(text: str, origin: str, agent: str = USER_AGENT_TOKEN) -> Robots:
    groups, sitemaps = _groups(text[:MAX_ROBOTS_BYTES])
    agent = agent.lower()
    ours = [g for g in groups if _product_token(agent) in g.agents]
    chosen = ours or [g for g in groups if "*" in g.agents]
    robots = Robots(sitemaps=[urljoin(origin, s) for s in sitemaps])
    for group in chosen:
        for key, value in group.lines:
            if key == "crawl-delay":
                with contextlib.suppress(ValueError):
                    robots.crawl_delay_s = max(0.0, float(value))
            elif value:  # an empty Disallow allows everything: no rule
                robots.rules.append(Rule(key == "allow", value, _compile(value)))
    return robots


async def fetch_bytes(request: APIRequestContext, url: str, max_bytes: int = MAX_TEXT_BYTES) -> bytes | None:
    """A file of the site through the browser's HTTP client, as sent; None when it is missing or unreadable."""
    try:
        reply = await request.get(url, timeout=FETCH_TIMEOUT_MS, max_redirects=5)
        if not reply.ok:
            return None
        body = await reply.body()
    except PlaywrightError:
        return None
    return body[:max_bytes]


def robots_url(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}/robots.txt"


async def read_robots(request: APIRequestContext, url: str) -> Robots:
    """The robots.txt rules of `url`'s origin (everything allowed when there is none)."""
    parts = urlsplit(url)
    origin = f"{parts.scheme}://{parts.netloc}"
    try:
        reply = await request.get(robots_url(url), timeout=FETCH_TIMEOUT_MS, max_redirects=5)
    except PlaywrightError:
        return Robots()
    if reply.status >= 500:
        robots = parse_robots("User-agent: *\nDisallow: /\n", origin)
        robots.server_error = reply.status
        return robots
    if not reply.ok:
        return Robots()
    body = await reply.body()
    return parse_robots(body[:MAX_ROBOTS_BYTES].decode("utf-8", errors="replace"), origin)
