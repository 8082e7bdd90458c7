"""The trust policy: what a session of a given trust level may do, as one object (DESIGN.md §5, D-11, D-33).

Every entry point asks the session's `TrustPolicy` (tools through `ctx.session.trust`, runs and their
templates through `ctx.trust`) instead of testing the trust level itself, so a new tool gets the
same answers as the old ones. A refusal is TRUST_LEVEL_NOT_ALLOWED (URL_NOT_ALLOWED for URLs, from
the URL policy) with `details.rule` naming the rule it broke:

- `remote-script`: no JavaScript evaluation nor script steps.
- `remote-cdp`: no attaching to a browser over CDP.
- `remote-profile`: no login profile is opened, read, imported, exported or written back unless
  `[security] remote_profiles` lists it; a call that names no profile works in a fresh anonymous
  context instead of `master` (`default_profile`).
- `remote-session`: a remote connection reaches only the session it created, and only its own runs.
- `template-trust`: a template whose trustLevelSupport lacks the caller's level.
- uploads come only from `[security] allowed_file_roots` (`upload_roots`).
- `remote-owner`: what a local session made (flows, their versions, datasets, schedules) is out of a remote
  session's sight and reach, unless `[security] remote_flows` holds `local-flows`; what was made before
  owners were recorded counts as local.
- `remote-publish`, `remote-schedule`: no publishing flows as tools, no schedules nor triggers, unless
  `[security] remote_flows` holds `publish` / `schedule`.
- `owner-trust`: what a lower level made (a remote flow) runs with that level's rights only, so it is refused
  where it would run with the caller's (run_task_template, a subflow of a local run, the console's dry run in a
  local tab).
- `remote-guard`, `remote-extension`: a remote window lives only on a backend whose traffic goes through
  the URL guard; the user's own Chrome (extension windows) only with `[bridge] allow_remote`.

Work that outlives a call (a flow run, whoever starts it) runs with `lowered(owner)`: the lower of the
caller's and the owner's level.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Literal

from browserd.daemon.config import SecurityConfig
from browserd.daemon.errors import NotAllowed, TrustLevelNotAllowed
from browserd.daemon.policy.urls import UrlPolicy
from browserd.daemon.profiles.ids import validate_profile_id
from browserd.protocol.messages import TrustLevel

# What [security] remote_flows may grant remote sessions (config.SecurityConfig.remote_flows).
FlowRight = Literal["publish", "schedule", "local-flows"]
FLOWS_HINT = (
    "A remote session works with the flows it made itself; the operator may widen that in [security] remote_flows."
)
PROFILE_HINT = (
    "A remote session works without the user's login profiles; leave profileId out for a fresh anonymous "
    "context, or the operator lists the profile in [security] remote_profiles."
)


def stricter(first: TrustLevel, second: TrustLevel) -> TrustLevel:
    """The lower of two trust levels: a level may be lowered, never raised (DESIGN.md §5)."""
    return "remote" if "remote" in (first, second) else "local"


@dataclass(frozen=True)
class TrustPolicy:
    level: TrustLevel
    urls: UrlPolicy

    @property
    def security(self) -> SecurityConfig:
        return self.urls.config

    @property
    def remote(self) -> bool:
        return self.level != "local"

    def _refuse(self, rule: str, message: str, hint: str | None = None, **details: object) -> TrustLevelNotAllowed:
        return TrustLevelNotAllowed(message, hint=hint, trustLevel=self.level, rule=rule, **details)

    # -- scripts and browsers -----------------------------------------------------------------------

    def check_scripts(self, action: str) -> None:
        """browser_evaluate and script steps (D-33)."""
        if self.remote:
            raise self._refuse("remote-script", f"a {self.level} session cannot {action}", action=action)

    def check_cdp(self, tool: str) -> None:
        """Attaching to a browser over CDP gives full control of it (D-33)."""
        if self.remote:
            raise self._refuse("remote-cdp", f"a {self.level} session cannot attach to a browser over CDP", tool=tool)

    def upload_roots(self) -> list[str] | None:
        """The folders uploads must lie in; None: anywhere the daemon can read (local sessions)."""
        return self.security.allowed_file_roots if self.remote else None

    # -- login profiles -------------------------------------------------------------------------------

    def check_profile(self, profile_id: str, action: str) -> None:
        """Refuse a remote session any use of a login profile that `[security] remote_profiles` does not list."""
        if self.remote and validate_profile_id(profile_id) not in self.security.remote_profiles:
            raise self._refuse(
                "remote-profile",
                f"a {self.level} session cannot {action} login profile {profile_id}",
                hint=PROFILE_HINT,
                profileId=profile_id,
                action=action,
            )

    def default_profile(self, profile_id: str | None, default: str, action: str) -> str | None:
        """The profile a call uses: the one it names (checked), else `default` for a local session and none
        (a fresh anonymous context that is never published) for a remote one."""
        if profile_id is not None:
            self.check_profile(profile_id, action)
            return profile_id
        return None if self.remote else default

    # -- sessions, runs, templates --------------------------------------------------------------------

    def check_template(self, template_id: str, supported: tuple[TrustLevel, ...]) -> None:
        if self.level not in supported:
            raise self._refuse(
                "template-trust",
                f"{template_id} does not run in a {self.level} session (it supports {', '.join(supported)})",
                templateId=template_id,
            )

    def check_session(self, own_session_id: str, session_id: str) -> None:
        """D-11: same-uid local connections may address any session, remote ones only their own."""
        if self.remote and session_id != own_session_id:
            raise NotAllowed(
                f"a {self.level} session cannot run in session {session_id}",
                hint=f"Pass this connection's own sessionId ({own_session_id}) or leave sessionId out.",
                rule="remote-session",
            )

    def run_owner(self, own_session_id: str) -> str | None:
        """Whose runs and artifacts this caller reaches: its own session's (remote), else everyone's (None)."""
        return own_session_id if self.remote else None

    def lowered(self, level: TrustLevel) -> TrustPolicy:
        """This policy held to `level` too: for work another party owns (a flow a remote session made)."""
        lower = stricter(self.level, level)
        return self if lower == self.level else TrustPolicy(lower, self.urls)

    # -- what sessions make: flows, datasets, schedules, published tools ------------------------------

    def _grants(self, right: FlowRight) -> bool:
        return not self.remote or right in self.security.remote_flows

    def reaches(self, owner: TrustLevel) -> bool:
        """Whether this caller sees and touches a thing its `owner` level made."""
        return owner == "remote" or self._grants("local-flows")

    def check_owner(self, owner: TrustLevel, what: str, **details: object) -> None:
        if not self.reaches(owner):
            raise self._refuse(
                "remote-owner",
                f"a {self.level} session cannot reach {what}: a local session made it",
                FLOWS_HINT,
                **details,
            )

    def check_owner_trust(self, owner: TrustLevel, what: str, hint: str, **details: object) -> None:
        """Work a lower level made (a remote flow) runs only at that level, in windows whose URL guard checks at
        that level: refused where it would run with this caller's higher rights, or in its unguarded windows."""
        if stricter(self.level, owner) != self.level:
            raise self._refuse(
                "owner-trust",
                f"{what} was made by a {owner} session: it runs with {owner} rights only",
                hint,
                **details,
            )

    def check_flow_right(self, right: Literal["publish", "schedule"], action: str, **details: object) -> None:
        if not self._grants(right):
            raise self._refuse(f"remote-{right}", f"a {self.level} session cannot {action}", FLOWS_HINT, **details)

    # -- backends -------------------------------------------------------------------------------------

    def check_backend(self, kind: str, capabilities: Collection[str], *, remote_extension: bool) -> None:
        """Before a window opens on a backend: a remote one needs the URL guard; the user's own Chrome takes a
        remote session only when `[bridge] allow_remote` (`remote_extension`) says so."""
        if not self.remote:
            return
        if kind == "extension":
            if not remote_extension:
                raise self._refuse(
                    "remote-extension",
                    f"a {self.level} session cannot drive the user's own Chrome",
                    "Use a window of the daemon's own browser, or set [bridge] allow_remote = true.",
                    backend=kind,
                )
            return
        if "guard_proxy" not in capabilities:
            raise self._refuse(
                "remote-guard",
                f"a {self.level} window needs the URL guard, which a {kind} window cannot use",
                "Use a window of the daemon's own browser.",
                backend=kind,
            )

    # -- URLs -----------------------------------------------------------------------------------------

    async def check_url(self, url: str) -> None:
        """URL_NOT_ALLOWED before anything loads; the guard proxy checks every request after that."""
        await self.urls.check_url(url, self.level)
