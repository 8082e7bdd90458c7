"""Who makes and who may reach a flow, its versions, dataset, schedules and publication (issue 20).

The flow service takes an `Actor` (the caller's TrustPolicy and client name) with every call that reads or
changes what a session made; what is allowed is the policy's decision (daemon/policy/trust.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from browserd.daemon.flows.flow_model import Owner
from browserd.daemon.policy.trust import TrustPolicy, stricter
from browserd.protocol.messages import TrustLevel


def level_of(owner: Owner | None) -> TrustLevel:
    """A record's owner level; one made before owners were recorded was the user's: local (nothing is lost)."""
    return owner.trust_level if owner is not None else "local"


@dataclass(frozen=True)
class Actor:
    trust: TrustPolicy
    client: str

    @property
    def owner(self) -> Owner:
        return Owner(trust_level=self.trust.level, client=self.client)

    def check(self, owner: Owner | None, what: str, **details: object) -> None:
        self.trust.check_owner(level_of(owner), what, **details)

    def reaches(self, owner: Owner | None) -> bool:
        return self.trust.reaches(level_of(owner))


def keeper(stored: Owner | None, editor: Owner) -> Owner:
    """The owner of a new version: the lower of the previous owner's level and the editor's (a local session
    editing a remote flow does not make it local); on a tie, the editor."""
    if stored is not None and stricter(stored.trust_level, editor.trust_level) != editor.trust_level:
        return stored
    return editor
