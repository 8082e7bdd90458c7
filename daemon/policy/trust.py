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
"""

from __future__ import annotations

from dataclasses import dataclass

from browserd.daemon.config import SecurityConfig
from browserd.daemon.errors import NotAllowed, TrustLevelNotAllowed
from browserd.daemon.policy.urls import UrlPolicy
from browserd.daemon.profiles.ids import validate_profile_id
from browserd.protocol.messages import TrustLevel

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

    # -- URLs -----------------------------------------------------------------------------------------

    async def check_url(self, url: str) -> None:
        """URL_NOT_ALLOWED before anything loads; the guard proxy checks every request after that."""
        await self.urls.check_url(url, self.level)
