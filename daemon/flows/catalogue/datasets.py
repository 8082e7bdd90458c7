"""Data sets as a client takes them away (dataset_export): a flow's datasetWrite rows, or a run over rows
with each row's outputs flattened to `stepId.field` columns, as CSV or JSON text."""

from __future__ import annotations

import csv
import io
from typing import Any, Literal

import msgspec

DatasetFormat = Literal["csv", "json"]


def flatten(item: dict[str, Any]) -> dict[str, Any]:
    """A run item of a flow run over rows, its outputs as `stepId.field` columns."""
    row = {k: v for k, v in item.items() if k != "outputs"}
    for step_id, fields in (item.get("outputs") or {}).items():
        for name, value in fields.items():
            row[f"{step_id}.{name}"] = value
    return row


def as_text(rows: list[dict[str, Any]], format: DatasetFormat) -> str:
    """JSON, or CSV whose columns are every key in the order the rows first name them."""
    if format == "json":
        return msgspec.json.encode(rows).decode()
    columns = list(dict.fromkeys(key for row in rows for key in row))
    out = io.StringIO()
    writer = csv.DictWriter(out, columns)
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()
