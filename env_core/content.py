"""A family's content as data files: records in JSONL, prompts as text, and the digest that keys its builds.

A family keeps what it serves (seed tables, requests, prompts) in its ``data/`` folder beside its code, not as
Python literals, so that content can be reviewed and changed without touching code. This module reads that folder:

- :func:`read_records` validates a JSONL file one line at a time against a pydantic model; the first bad line is a
  :class:`~undertow.env_core.errors.DataError` naming the file, the line and the field;
- :func:`read_prompt` reads a prompt file (text, kept byte for byte but for one trailing newline);
- :func:`code_and_data_digest` hashes a family package's code and data files: a suite built from them is rebuilt
  when either changes.

The files ship in the wheel (``[tool.setuptools.package-data]`` in pyproject.toml).
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from undertow.env_core.errors import DataError

M = TypeVar("M", bound=BaseModel)

DATA = "data"  # the folder of a family package that holds its content


def data_dir(module_file: str | Path) -> Path:
    """The ``data/`` folder of the package a module (``__file__``) belongs to."""
    return Path(module_file).resolve().parent / DATA


def read_records(path: Path, model: type[M]) -> list[M]:
    """Every line of a JSONL file as ``model`` (blank lines skipped). A line that is not JSON, not an object, or
    not a valid record raises a DataError naming the file, the line and the first bad field."""
    records: list[M] = []
    try:
        lines = path.read_bytes().split(b"\n")
    except OSError as exc:
        raise DataError(f"cannot read the data file: {exc.strerror or exc}", file=str(path)) from exc
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            data = json.loads(raw)
        except ValueError as exc:  # not UTF-8 (UnicodeDecodeError is a ValueError) or not JSON
            raise DataError(f"not a JSON line ({exc})", file=str(path), line=number) from exc
        if not isinstance(data, dict):
            raise DataError(f"expected a JSON object, got {type(data).__name__}", file=str(path), line=number)
        try:
            records.append(model.model_validate(data))
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(part) for part in first["loc"]) or None
            more = f" (and {exc.error_count() - 1} more problems)" if exc.error_count() > 1 else ""
            raise DataError(f"{first['msg']}{more}", file=str(path), line=number, field=field) from exc
    return records


@functools.cache
def read_prompt(path: Path) -> str:
    """A prompt file's text: exactly as written, but for the one newline that ends the file."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise DataError(f"cannot read the prompt file: {exc.strerror or exc}", file=str(path)) from exc
    return text.removesuffix("\n")


def code_and_data_digest(package: str | Path, version: str) -> str:
    """A hash of a family package's ``*.py`` files and everything under its ``data/`` folder (names and bytes),
    with the family's suite version: what a build made from them depends on."""
    root = Path(package)
    digest = hashlib.sha256(version.encode())
    files = sorted(root.glob("*.py")) + sorted(p for p in (root / DATA).rglob("*") if p.is_file())
    for path in files:
        digest.update(path.relative_to(root).as_posix().encode() + b"\x00" + path.read_bytes() + b"\x00")
    return digest.hexdigest()
