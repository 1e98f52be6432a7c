"""A family layout's tables as JSON (``undertow report RUN --layout NAME --format json``): each table's title, columns
and rows, a row an object keyed by column, so that a cell is read by its header (``row["PR"]``) rather than by its
place. The schema, generated from the models here, is ``docs/schema/report_layout.json``
(``python -m undertow.cluster.report.layout_json --write-schema docs/schema`` writes it).

Cells are the text the terminal shows, except in the number columns (a table's right-aligned ones): there a plain
decimal is a JSON number and the missing mark (``—``) or an empty cell is null, and a column whose every cell is an
estimate with its interval (``0.67 [0.55–0.78]``, ``9.63 ± 3.94``) becomes numbers: the estimate under the column's
own name, the interval under ``NAME low`` / ``NAME high`` (or ``NAME ±``) added after it. Anything else (``45%``)
stays text. Nothing here names a family."""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field

from undertow.env_core.families import ReportTable
from undertow.scoring.formatting import MISSING

LAYOUT_SCHEMA_VERSION: Final = 1
SCHEMA_FILE: Final = "report_layout.json"
JSON_SCHEMA_DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"

_DECIMAL = r"-?\d+(?:\.\d+)?"
_NUMBER = re.compile(_DECIMAL)
# an estimate and its interval as the families print them: the suffixes name the columns the interval's parts go to
_FORMS = (
    (re.compile(rf"({_DECIMAL}) \[({_DECIMAL}) ?[–-] ?({_DECIMAL})\]"), ("low", "high")),
    (re.compile(rf"({_DECIMAL}) ± ({_DECIMAL})"), ("±",)),
)
_EMPTY = frozenset({MISSING, "", "-", "–"})

Cell = str | int | float | None


class LayoutTableJson(BaseModel):
    """One table of a layout."""

    model_config = ConfigDict(extra="forbid")

    title: str
    columns: list[str] = Field(description="the headers, in order; each row has exactly these keys")
    rows: list[dict[str, Cell]] = Field(
        description="one object per row, keyed by column: text, or in number columns a number (null: missing)"
    )
    note: str = Field(description='what the table\'s cells mean, or why it has no rows ("": nothing to say)')


class LayoutJson(BaseModel):
    """What ``undertow report RUN --layout NAME --format json`` prints."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int
    run_id: str
    layout: str
    tables: list[LayoutTableJson]


def unique_columns(columns: Sequence[str]) -> list[str]:
    """The headers as row keys: a header that repeats gets `` (2)``, `` (3)``... (a name no other header has), so
    that no cell is lost."""
    taken = set(columns)
    out: list[str] = []
    for column in columns:
        name, n = column, 1
        while name in out:
            n += 1
            name = f"{column} ({n})"
            while name in taken and name not in out and name != column:  # a real header of the table: skip it
                n += 1
                name = f"{column} ({n})"
        out.append(name)
    return out


def _number(text: str) -> int | float:
    return float(text) if "." in text else int(text)


def cell_value(text: str, number: bool) -> Cell:
    """A cell as JSON: in a number column a plain decimal as a number and the missing mark as null; text else."""
    if not number:
        return text
    stripped = text.strip()
    if stripped in _EMPTY:
        return None
    return _number(stripped) if _NUMBER.fullmatch(stripped) else text


def _filled(cell: str | None) -> bool:
    return cell is not None and cell.strip() not in _EMPTY


def _form(cells: Sequence[str | None], number: bool) -> tuple[re.Pattern[str], tuple[str, ...]] | None:
    """The interval form every filled cell of a number column is written in (``0.67 [0.55–0.78]``,
    ``9.63 ± 3.94``) and the suffixes of the columns its parts go to; None when the column is not so written."""
    filled = [cell.strip() for cell in cells if cell is not None and _filled(cell)]
    if not number or not filled:
        return None
    for pattern, suffixes in _FORMS:
        if all(pattern.fullmatch(cell) for cell in filled):
            return pattern, suffixes
    return None


def table_json(table: ReportTable) -> LayoutTableJson:
    """A :class:`ReportTable` with its rows as objects keyed by column (a short row's missing cells are null). A
    number column whose every cell is an estimate with its interval becomes numbers: the estimate under the
    column's name, the interval's ends under ``NAME low`` and ``NAME high`` (or its half width under ``NAME ±``)."""
    width = len(table.columns)
    right = [*table.right, *[False] * (width - len(table.right))]
    grid = [[*row, *[None] * (width - len(row))] for row in table.rows]
    names: list[str] = []
    forms = []
    for j, column in enumerate(table.columns):
        form = _form([row[j] for row in grid], right[j])
        forms.append(form)
        names += [column, *(f"{column} {suffix}" for suffix in (form[1] if form else ()))]
    columns = unique_columns(names)
    rows: list[dict[str, Cell]] = []
    for row in grid:
        values: list[Cell] = []
        for cell, number, form in zip(row, right, forms, strict=True):
            if form is None:
                values.append(None if cell is None else cell_value(cell, number))
            elif cell is None or not _filled(cell):
                values += [None] * (1 + len(form[1]))
            else:
                found = form[0].fullmatch(cell.strip())
                assert found is not None  # every filled cell of the column matched when its form was chosen
                values += [_number(part) for part in found.groups()]
        rows.append(dict(zip(columns, values, strict=True)))
    return LayoutTableJson(title=table.title, columns=columns, rows=rows, note=table.note)


def layout_json(run_id: str, layout: str, tables: Sequence[ReportTable]) -> dict[str, Any]:
    """The layout's tables as the JSON the command prints (validated by the schema's models)."""
    out = LayoutJson(
        schema_version=LAYOUT_SCHEMA_VERSION, run_id=run_id, layout=layout, tables=[table_json(t) for t in tables]
    )
    return out.model_dump(mode="json")


def layout_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of :func:`layout_json`'s output."""
    schema = LayoutJson.model_json_schema(mode="serialization", ref_template="#/$defs/{model}")
    schema.pop("description", None)
    head = {
        "$schema": JSON_SCHEMA_DIALECT,
        "title": "ReportLayoutOutput",
        "description": f"What `undertow report RUN --layout NAME --format json` prints (schema_version "
        f"{LAYOUT_SCHEMA_VERSION}): the layout's tables, each row an object keyed by the table's columns; in number "
        "columns a plain decimal is a number and a missing cell null, an estimate with its interval is split into "
        "numbers (NAME, then NAME low / NAME high or NAME ±), other cells are the text the table shows.",
    }
    schema.pop("title", None)
    defs = schema.pop("$defs", {})
    return {**head, **schema, "$defs": dict(sorted(defs.items()))}


def schema_text() -> str:
    return json.dumps(layout_schema(), indent=2, ensure_ascii=False) + "\n"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m undertow.cluster.report.layout_json", description="the report layout schema"
    )
    parser.add_argument("--write-schema", metavar="FOLDER", required=True, help="e.g. docs/schema")
    args = parser.parse_args(argv)
    path = Path(args.write_schema) / SCHEMA_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(schema_text(), encoding="utf-8")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
