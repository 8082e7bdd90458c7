"""The templates this daemon offers, by id and version (list_task_templates, S1-10, S1-15)."""

from __future__ import annotations

from typing import Any

from browserd.daemon.errors import TemplateNotFound, TemplateVersionUnsupported
from browserd.daemon.runs.templates.agent import AgentRun
from browserd.daemon.runs.templates.batch_extract import BatchExtractPages
from browserd.daemon.runs.templates.crawl import Crawl
from browserd.daemon.runs.templates.login_session import LoginKeepSession
from browserd.daemon.runs.templates.multi_tab_compare import MultiTabCompare
from browserd.daemon.runs.templates.template_interface import Template


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) if part.isdigit() else 0 for part in version.split("."))


def _semver(version: str) -> tuple[int, int, int] | None:
    """`1`, `1.0` and `1.0.0` name the same version; anything else is no version."""
    parts = version.split(".")
    if not 1 <= len(parts) <= 3 or not all(part.isdigit() for part in parts):
        return None
    major, minor, patch = [int(part) for part in parts] + [0] * (3 - len(parts))
    return major, minor, patch


def _serves(have: tuple[int, int, int], wanted: tuple[int, int, int]) -> bool:
    """Semver compatibility: a newer minor or patch only adds (reference/001 §11); below 1.0 a minor breaks."""
    same_line = have[0] == wanted[0] and (have[0] > 0 or have[1] == wanted[1])
    return same_line and have >= wanted


class TemplateRegistry:
    def __init__(self, templates: list[Template[Any]]) -> None:
        self._templates: dict[str, dict[str, Template[Any]]] = {}
        for template in templates:
            self._templates.setdefault(template.template_id, {})[template.version] = template

    def all(self) -> list[Template[Any]]:
        """Every template, the latest version of each first."""
        return [
            template
            for versions in self._templates.values()
            for template in sorted(versions.values(), key=lambda t: _version_key(t.version), reverse=True)
        ]

    def get(self, template_id: str, version: str | None = None) -> Template[Any]:
        versions = self._templates.get(template_id)
        if not versions:
            raise TemplateNotFound(
                f"no template `{template_id}`; templates: {', '.join(sorted(self._templates))}", templateId=template_id
            )
        if version is None:
            return versions[max(versions, key=_version_key)]
        found = self._compatible(versions, version)
        if found is None:
            supported = sorted(versions, key=_version_key)
            raise TemplateVersionUnsupported(
                f"{template_id} has no version {version}; supported: {', '.join(supported)}",
                hint=f"Pass templateVersion {supported[-1]} or leave it out for the latest.",
                templateId=template_id,
                templateVersion=version,
                supportedVersions=supported,
            )
        return found

    @staticmethod
    def _compatible(versions: dict[str, Template[Any]], version: str) -> Template[Any] | None:
        """S1-15: the version asked for if we have it, else the newest compatible one; None if incompatible."""
        if version in versions:
            return versions[version]
        wanted = _semver(version)
        if wanted is None:
            return None
        known = [(have, template) for name, template in versions.items() if (have := _semver(name)) is not None]
        for have, template in known:
            if have == wanted:
                return template
        serving = [(have, template) for have, template in known if _serves(have, wanted)]
        return max(serving, key=lambda pair: pair[0])[1] if serving else None


def builtin_templates() -> list[Template[Any]]:
    """Add a new template here (daemon/runs/templates/template_interface.py says how to write one). Templates of the
    packages above runs (a flow's replay) are added where the daemon is put together (services.py)."""
    return [BatchExtractPages(), LoginKeepSession(), Crawl(), MultiTabCompare(), AgentRun()]
