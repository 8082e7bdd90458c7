"""A window's cookies and web storage as Playwright storageState: export, import (merge or replace), clear.

Every change goes through Playwright's own API: the window's state is exported (with IndexedDB and the
origin private file system, so a round trip keeps them), changed in memory and written back with
`BrowserContext.set_storage_state`, which sets localStorage on any origin without loading its pages.
Cookie values are secrets: nothing here logs them.
"""

from __future__ import annotations

from typing import Any, Literal
from urllib.parse import urlsplit

from playwright.async_api import BrowserContext, StorageState
from playwright.async_api import Error as PlaywrightError

from browserd.daemon.errors import InvalidParameter
from browserd.daemon.profiles.profile_registry import Profiles
from browserd.daemon.profiles.publish import PublishResult
from browserd.daemon.runtime.contexts import CLEAR_SESSION_STORAGE_JS
from browserd.daemon.sessions.page_errors import page_errors
from browserd.daemon.sessions.window import Window

StorageKind = Literal["cookies", "localStorage", "sessionStorage"]
ImportMode = Literal["merge", "replace"]


def origin_of(url: str) -> str:
    """`scheme://host[:port]` of an origin or URL; anything else is refused."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidParameter(
            f"`{url}` is not an http(s) origin",
            hint="Pass an origin such as https://example.com (scheme, host and port if not the default).",
            field="origin",
        )
    return f"{parts.scheme}://{parts.netloc.lower()}"


def cookie_matches(cookie: Any, origin: str) -> bool:
    """A cookie the origin's pages would be sent: its domain is the host or a parent of it."""
    host = urlsplit(origin).hostname or ""
    domain = str(cookie.get("domain", "")).lower().lstrip(".")
    return host == domain or host.endswith("." + domain)


async def export_state(context: BrowserContext, *, full: bool = True) -> StorageState:
    """The window's state; `full` adds IndexedDB and OPFS, which set_storage_state would otherwise wipe."""
    with page_errors("storage export"):
        return await context.storage_state(indexed_db=full, opfs=full) if full else await context.storage_state()


def only_origin(state: StorageState, origin: str) -> StorageState:
    return {
        "cookies": [c for c in state.get("cookies", []) if cookie_matches(c, origin)],
        "origins": [o for o in state.get("origins", []) if o["origin"] == origin],
    }


def _cookie_key(cookie: Any) -> tuple[str, str, str]:
    return (cookie.get("name", ""), str(cookie.get("domain", "")).lower(), cookie.get("path", "/"))


def merged(current: StorageState, incoming: StorageState) -> StorageState:
    """`incoming` over `current`: its cookies and localStorage items win, everything else is kept."""
    cookies = {_cookie_key(c): c for c in current.get("cookies", [])}
    cookies.update({_cookie_key(c): c for c in incoming.get("cookies", [])})
    origins: dict[str, Any] = {o["origin"]: dict(o) for o in current.get("origins", [])}
    for origin in incoming.get("origins", []):
        kept = origins.setdefault(origin["origin"], {"origin": origin["origin"], "localStorage": []})
        items = {item["name"]: item for item in kept.get("localStorage", [])}
        items.update({item["name"]: item for item in origin.get("localStorage", [])})
        kept["localStorage"] = list(items.values())
        for key, value in origin.items():
            if key not in ("origin", "localStorage"):
                kept[key] = value
    return {"cookies": list(cookies.values()), "origins": list(origins.values())}


async def import_state(window: Window, state: StorageState, mode: ImportMode) -> None:
    context = window.context
    if mode == "merge":
        state = merged(await export_state(context), state)
    with page_errors("storage import"):
        try:
            await context.set_storage_state(state)
        except PlaywrightError as exc:
            if "cookie" in str(exc).lower() or "origin" in str(exc).lower():
                raise InvalidParameter(
                    f"Chromium refused the state: {str(exc).splitlines()[0]}",
                    hint="Pass a state as browser_storage export returns it: cookies need name, value, domain and "
                    "path; origins need an http(s) origin.",
                    field="state",
                ) from exc
            raise


async def clear(window: Window, kinds: set[StorageKind], origin: str | None) -> dict[str, int]:
    """Remove the kinds of storage asked for (of one origin, or all); answers how many of each went."""
    context = window.context
    removed = {"cookies": 0, "localStorage": 0, "sessionStorage": 0}
    if kinds & {"cookies", "localStorage"}:
        state = await export_state(context)
        kept_cookies = []
        for cookie in state.get("cookies", []):
            if "cookies" in kinds and (origin is None or cookie_matches(cookie, origin)):
                removed["cookies"] += 1
            else:
                kept_cookies.append(cookie)
        origins = []
        for entry in state.get("origins", []):
            if "localStorage" in kinds and (origin is None or entry["origin"] == origin):
                removed["localStorage"] += len(entry.get("localStorage", []))
                entry = {**entry, "localStorage": []}
            origins.append(entry)
        if removed["cookies"] or removed["localStorage"]:
            with page_errors("storage clear"):
                await context.set_storage_state({"cookies": kept_cookies, "origins": origins})
    if "sessionStorage" in kinds:
        # Session storage belongs to each tab: clear it in every open tab of the window on that origin.
        for tab in window.open_tabs():
            page_origin = urlsplit(tab.page.url)
            if page_origin.scheme not in ("http", "https"):
                continue
            if origin is not None and f"{page_origin.scheme}://{page_origin.netloc.lower()}" != origin:
                continue
            try:
                removed["sessionStorage"] += await tab.page.evaluate(CLEAR_SESSION_STORAGE_JS)
            except PlaywrightError:
                continue  # a tab navigating away right now has nothing left to clear
    return removed


async def publish_to_profile(window: Window, profiles: Profiles, profile_id: str) -> PublishResult:
    """The window's state as a new version of the profile, through the profile's CAS publish."""
    pid = profiles.profile_id(profile_id)
    link = window.profile
    if link is not None and link.profile_id == pid and link.publisher is not None and link.source is not None:
        # The window's own publisher: its base version moves on with the publish, so it stays in step.
        return await link.publisher.publish(link.source, debounce=False)
    base = (await profiles.load(pid)).version
    with page_errors("storage export"):
        state = await window.context.storage_state(indexed_db=profiles.config.include_indexed_db)
    return await profiles.publish_now(pid, state, base)
