"""browser_storage: a window's cookies and localStorage exported, imported and cleared."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from playwright.async_api import StorageState

from browserd.daemon.errors import ExecutionError, InvalidParameter
from browserd.daemon.sessions import storage
from browserd.daemon.sessions.window import Window
from browserd.daemon.tools.context import ToolContext
from browserd.daemon.tools.response import Response
from browserd.daemon.tools.tool_registry import Params, Tool, tool

# In an answer that would be too long, longer values are cut to this many characters.
VALUE_KEEP_CHARS = 200
ProfileId = Annotated[str, msgspec.Meta(pattern=r"^[a-zA-Z0-9._-]{1,64}$")]


class StorageCookie(msgspec.Struct, forbid_unknown_fields=True, rename="camel", kw_only=True):
    name: str
    value: str
    domain: str
    path: str = "/"
    expires: Annotated[float, msgspec.Meta(description="Unix seconds; -1: a session cookie.")] = -1
    http_only: bool = False
    secure: bool = False
    same_site: Literal["Lax", "None", "Strict"] = "Lax"
    partition_key: Annotated[str, msgspec.Meta(description="Top-level site of a partitioned cookie.")] | None = None


class StorageItem(msgspec.Struct, forbid_unknown_fields=True):
    name: str
    value: str


class OriginStorage(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    origin: Annotated[str, msgspec.Meta(description="https://host[:port]")]
    local_storage: list[StorageItem] = msgspec.field(default_factory=list, name="localStorage")
    indexed_db: list[Any] | None = msgspec.field(default=None, name="indexedDB")


class StateParam(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    cookies: list[StorageCookie] = msgspec.field(default_factory=list)
    origins: list[OriginStorage] = msgspec.field(default_factory=list)


class StorageParams(Params, kw_only=True):
    action: Literal["export", "import", "clear"]
    window_id: Annotated[str, msgspec.Meta(description="Default: the active window.")] | None = None
    profile_id: (
        Annotated[ProfileId, msgspec.Meta(description="export: publish to this login profile; import: read from it.")]
        | None
    ) = None
    state: Annotated[StateParam, msgspec.Meta(description="import: a state as export answers it.")] | None = None
    mode: Annotated[
        storage.ImportMode, msgspec.Meta(description="import: merge over what the window has, or replace it all.")
    ] = "merge"
    origin: Annotated[str, msgspec.Meta(description="export/clear: only this origin (https://host[:port]).")] | None = (
        None
    )
    what: (
        Annotated[list[storage.StorageKind], msgspec.Meta(description="clear: which kinds (default all three).")] | None
    ) = None
    max_chars: Annotated[int, msgspec.Meta(ge=200, description="export: cut the answer after this.")] | None = None


def _state_of(param: StateParam) -> StorageState:
    origins = []
    for entry in param.origins:
        origin: dict[str, Any] = {
            "origin": storage.origin_of(entry.origin),
            "localStorage": [{"name": i.name, "value": i.value} for i in entry.local_storage],
        }
        if entry.indexed_db is not None:
            origin["indexedDB"] = entry.indexed_db
        origins.append(origin)
    cookies = [{k: v for k, v in c.items() if v is not None} for c in msgspec.to_builtins(param.cookies)]
    return {"cookies": cookies, "origins": origins}  # type: ignore[typeddict-item]


def _encode(value: Any) -> str:
    return msgspec.json.encode(value).decode()


def _bounded(state: StorageState, max_chars: int) -> tuple[dict[str, Any], list[str], int]:
    """The state fitted in max_chars: long values cut first, then whole entries dropped from the end."""
    full: dict[str, Any] = {"cookies": state.get("cookies", []), "origins": state.get("origins", [])}
    if len(_encode(full)) <= max_chars:
        return full, [], 0
    cut: list[str] = []
    cookies = []
    for cookie in full["cookies"]:
        if len(cookie["value"]) > VALUE_KEEP_CHARS:
            cookie = {**cookie, "value": cookie["value"][:VALUE_KEEP_CHARS] + "…"}
            cut.append(f"cookie {cookie['name']} ({cookie['domain']})")
        cookies.append(cookie)
    origins = []
    for entry in full["origins"]:
        items = []
        for item in entry.get("localStorage", []):
            if len(item["value"]) > VALUE_KEEP_CHARS:
                item = {**item, "value": item["value"][:VALUE_KEEP_CHARS] + "…"}
                cut.append(f"localStorage {item['name']} ({entry['origin']})")
            items.append(item)
        origins.append({**entry, "localStorage": items})
    slim: dict[str, Any] = {"cookies": cookies, "origins": origins}
    dropped = 0
    while len(_encode(slim)) > max_chars and (slim["origins"] or slim["cookies"]):
        (slim["origins"] or slim["cookies"]).pop()
        dropped += 1
    return slim, cut, dropped


def _summary(state: StorageState) -> str:
    domains = sorted({str(c.get("domain", "")) for c in state.get("cookies", [])})
    stored = [f"{o['origin']} ({len(o.get('localStorage', []))} item(s))" for o in state.get("origins", [])]
    return (
        f"{len(state.get('cookies', []))} cookie(s)"
        + (f" for {', '.join(domains)}" if domains else "")
        + f"; localStorage of {len(stored)} origin(s)"
        + (f": {', '.join(stored)}" if stored else "")
    )


@tool(
    "browser_storage",
    "devtools",
    "A window's cookies and localStorage: export (to the answer or a login profile), import (JSON or a profile; "
    "merge or replace), clear (cookies, localStorage, sessionStorage; all or one origin).",
    StorageParams,
)
async def browser_storage(ctx: ToolContext, params: StorageParams, response: Response) -> None:
    window = await ctx.session.window(params.window_id)
    if window.profile is not None:
        # A profile-bound window's storage is the profile's: exporting reads it, import and clear write it back.
        ctx.session.trust.check_profile(window.profile.profile_id, f"{params.action} the storage of")
    origin = storage.origin_of(params.origin) if params.origin is not None else None
    if params.action == "export":
        await _export(ctx, window, params, origin, response)
        return
    if params.action == "import":
        if (params.state is None) == (params.profile_id is None):
            raise InvalidParameter(
                "import takes either state (JSON) or profileId",
                hint="Pass the state a browser_storage export answered, or the profileId to read.",
                field="state",
            )
        if params.state is not None:
            state, source = _state_of(params.state), "the given state"
        else:
            profile_id = ctx.session.profiles.profile_id(params.profile_id)
            ctx.session.trust.check_profile(profile_id, "import")
            state, version = await ctx.session.profiles.state_to_import(profile_id)
            source = f"profile {profile_id} (version {version})"
        await storage.import_state(window, state, params.mode)
        _request_publish(window)
        response.data({"windowId": window.id, "mode": params.mode, "imported": _counts(state)})
        response.text(f"Imported {_summary(state)} from {source} into {window.id} ({params.mode})")
        response.code("await context.set_storage_state(state)")
        return
    kinds = set(params.what or ("cookies", "localStorage", "sessionStorage"))
    removed = await storage.clear(window, kinds, origin)
    _request_publish(window)
    response.data({"windowId": window.id, "origin": origin, "removed": removed})
    where = f" of {origin}" if origin else ""
    response.text(
        f"Cleared{where} in {window.id}: "
        + ", ".join(f"{removed[kind]} {kind} entr{'y' if removed[kind] == 1 else 'ies'}" for kind in sorted(kinds))
    )
    if "cookies" in kinds:
        response.code(f"await context.clear_cookies({f'domain={origin!r}' if origin else ''})")


def _counts(state: StorageState) -> dict[str, int]:
    return {
        "cookies": len(state.get("cookies", [])),
        "localStorage": sum(len(o.get("localStorage", [])) for o in state.get("origins", [])),
    }


def _request_publish(window: Window) -> None:
    # A profile-bound window writes what changed back to its profile, as after any action (D-16).
    if window.profile is not None:
        window.profile.request_publish()


async def _export(
    ctx: ToolContext, window: Window, params: StorageParams, origin: str | None, response: Response
) -> None:
    if params.profile_id is not None:
        if origin is not None:
            raise InvalidParameter(
                "a profile holds a window's whole state; origin applies to an export to the answer only",
                hint="Leave out origin, or leave out profileId.",
                field="origin",
            )
        # A login profile is the user's: an untrusted prompt may not write it, and the user's own Chrome's
        # cookies never leave it for a profile (D-14), which its backend says by lacking the capability.
        ctx.session.trust.check_profile(params.profile_id, "write")
        window.backend.require(
            "storage_export", window.id, hint="Export to the answer instead (browser_storage export without profileId)."
        )
        result = await storage.publish_to_profile(window, ctx.session.profiles, params.profile_id)
        if not result.ok:
            raise ExecutionError(
                f"profile {result.profile_id} was not written: {result.status}"
                + (f" (it is at version {result.current_version})" if result.current_version is not None else "")
                + (f": {result.error}" if result.error else ""),
                hint="Retry the export; if it says stale, the profile changed meanwhile and a retry writes over it.",
                profileId=result.profile_id,
                status=result.status,
            )
        response.data({"windowId": window.id, "profileId": result.profile_id, "version": result.version})
        response.text(
            f"Exported {window.id}'s cookies and localStorage to profile {result.profile_id} (version "
            f"{result.version}); scrape or browser_open with profileId={result.profile_id} starts from it"
        )
        return
    state = await storage.export_state(window.context, full=False)
    if origin is not None:
        state = storage.only_origin(state, origin)
    max_chars = params.max_chars or ctx.services.config.browser.storage_max_chars
    shown, cut, dropped = _bounded(state, max_chars)
    truncated = bool(cut or dropped)
    response.data({"windowId": window.id, "state": shown, "truncated": truncated, "cut": cut, "dropped": dropped})
    notes = []
    if cut:
        notes.append(
            f"{len(cut)} value(s) longer than {VALUE_KEEP_CHARS} characters are cut (…), so importing this "
            "answer would not restore them"
        )
    if dropped:
        notes.append(f"{dropped} cookie(s)/origin(s) left out to stay under {max_chars} characters")
    note = (
        "\nNote: " + "; ".join(notes) + ". Export to a profile (profileId) for the whole state, or narrow with origin."
        if truncated
        else ""
    )
    response.text(f"{window.id}: {_summary(state)}{note}\n{_encode(shown)}")
    response.code("state = await context.storage_state()")


TOOLS: list[Tool[Any]] = [browser_storage]
