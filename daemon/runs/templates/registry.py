"""The templates this daemon offers, by id and version (list_task_templates, S1-10, S1-15)."""

from __future__ import annotations

from typing import Any

from browserd.daemon.errors import TemplateNotFound, TemplateVersionUnsupported
from browserd.daemon.runs.templates.base import Template
from browserd.daemon.runs.templates.batch_extract import BatchExtractPages
from browserd.daemon.runs.templates.crawl import Crawl
from browserd.daemon.runs.templates.login_session import LoginKeepSession
from browserd.daemon.runs.templates.multi_tab_compare import MultiTabCompare


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) if part.isdigit() else 0 for part in version.split("."))


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
        found = versions.get(version)
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


def builtin_templates() -> list[Template[Any]]:
    """Add a new template here (daemon/runs/templates/base.py says how to write one)."""
    return [BatchExtractPages(), LoginKeepSession(), Crawl(), MultiTabCompare()]
