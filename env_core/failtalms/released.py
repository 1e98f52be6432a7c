"""Reading the released FAIL-TaLMs files (Treviño et al., NAACL 2025): the query files of its five settings and
the tool descriptions under ``tool_specs/``.

The released tools call live public web APIs that no machine here can reach, so every tool becomes an *emulated*
``ToolSpec`` (its binding names the API; a judge or an emulator stands in for it), and every query becomes a
``Scenario`` without a gold answer or plan: the released data has none, so these episodes are judged.

The settings are the paper's data splits (§3.2): ``perfect`` (``all_Original_queries.json``), ``underspecified``,
``replaceable`` and ``non_replaceable`` (whose ``api_list`` already leaves the unavailable tool out) and
``no_tools`` (the perfect queries with no tool). Nothing here raises on bad input: a malformed entry or an
unreadable file becomes a :class:`~undertow.env_core.spider.Problem` and the rest is still read.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, TypeGuard

from undertow.env_core.model import Condition, Gold, Scenario, ToolSpec
from undertow.env_core.simulated import EMULATED
from undertow.env_core.spider import Problem

FAMILY = "failtalms"
SOURCE = "released"


class Setting(NamedTuple):
    """A released setting: the file that holds its queries, and the condition its scenarios already are in
    (``Scenario.condition``: they run under settings of that condition)."""

    file: str
    condition: Condition


# the settings in reading order (the first spec of a tool wins)
SETTINGS: dict[str, Setting] = {
    "perfect": Setting("all_Original_queries.json", "none"),
    "underspecified": Setting("all_Underspecified_queries.json", "underspecified"),
    "replaceable": Setting("all_Replaceable_queries.json", "replaceable"),
    "non_replaceable": Setting("all_Non-replaceable_queries.json", "non_replaceable"),
    "no_tools": Setting("all_No-tools_queries.json", "no_tools"),
}
SPECS_FOLDER = "tool_specs"

_NAME_LIMIT = 64  # ToolSpec.name: ^[A-Za-z_][A-Za-z0-9_\-]{0,63}$
_NAME_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]{0,63}$")

# the released parameter types (upper-cased) -> JSON-schema types; a type not listed gets no "type" (any value)
_TYPES: dict[str, str] = {
    "STRING": "string",
    "STR": "string",
    "TEXT": "string",
    "ENUM": "string",
    "DATE": "string",
    "DATETIME": "string",
    "INTEGER": "integer",
    "INT": "integer",
    "LONG": "integer",
    "NUMBER": "number",
    "FLOAT": "number",
    "DOUBLE": "number",
    "DECIMAL": "number",
    "BOOLEAN": "boolean",
    "BOOL": "boolean",
    "LIST": "array",
    "ARRAY": "array",
    "DICT": "object",
    "OBJECT": "object",
    "JSON": "object",
}


@dataclass(frozen=True)
class Conflict:
    """Two different specs of one function (same tool_name and api_name): the first read is kept."""

    tool_name: str
    api_name: str
    kept: str  # where the kept spec was read ("all_Original_queries.json[3]")
    other: str  # where the differing one was read
    fields: tuple[str, ...]  # what differs: "description", "parameters"


@dataclass
class Released:
    """What :func:`read_released` found: scenarios, their tools, what was skipped and the spec conflicts."""

    scenarios: list[Scenario] = field(default_factory=list)
    tools: list[ToolSpec] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)  # scenarios per setting (every setting listed)
    conflicts: list[Conflict] = field(default_factory=list)
    digest: str = ""  # source_digest of the folder

    def tool(self, name: str) -> ToolSpec:
        """The tool of that name (KeyError when there is none)."""
        for spec in self.tools:
            if spec.name == name:
                return spec
        raise KeyError(name)


class _Malformed(Exception):
    """An entry that cannot be used: ``kind`` is the short category a Problem carries."""

    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(reason)
        self.kind = kind
        self.reason = reason


@dataclass
class _Function:
    """One released function, read but not yet named."""

    tool_name: str
    api_name: str
    description: str
    parameters: dict[str, Any]
    binding: dict[str, Any]
    where: str


# ---------------------------------------------------------------------------------------------------------------
# Public entry points


def source_digest(folder: str | Path) -> str:
    """sha256 over the released files (the five query files and ``tool_specs/**/*.json``), in sorted path order:
    each file's path relative to ``folder`` and its bytes. A missing file simply does not count."""
    folder = Path(folder)
    digest = hashlib.sha256()
    for relative in _data_files(folder):
        try:
            data = (folder / relative).read_bytes()
        except OSError:
            continue
        digest.update(relative.encode() + b"\0" + hashlib.sha256(data).digest())
    return digest.hexdigest()


def read_released(folder: str | Path) -> Released:
    """Read the released FAIL-TaLMs folder: one scenario per well-formed query, one emulated tool per distinct
    (tool_name, api_name) over the queries' api_lists and the tool_specs files; problems and conflicts collected."""
    folder = Path(folder)
    problems: list[Problem] = []
    functions: dict[tuple[str, str], _Function] = {}
    conflicts: list[Conflict] = []

    # 1. the query files: each entry's functions and its scenario fields (named once every function is known)
    pending: list[tuple[str, dict[str, Any], list[tuple[str, str]]]] = []  # (setting, fields, function keys)
    for setting, (filename, _) in SETTINGS.items():
        entries = _read_json(folder / filename, filename, list, problems)
        if entries is None:
            continue
        for index, entry in enumerate(entries):
            where = f"{filename}[{index}]"
            try:
                fields, read = _read_entry(entry, where)
            except _Malformed as exc:
                problems.append(Problem(where, exc.kind, exc.reason))
                continue
            for function in read:
                _remember(function, functions, conflicts)
            fields["index"] = index
            fields["categories"] = sorted({f.binding["category"] for f in read if f.binding["category"]})
            pending.append((setting, fields, [(f.tool_name, f.api_name) for f in read]))

    # 2. the tool_specs files: the same functions (a query's spec, read first, stands) and those no query uses
    specs_folder = folder / SPECS_FOLDER
    if not specs_folder.is_dir():
        problems.append(Problem(SPECS_FOLDER, "missing folder", f"{specs_folder} not found"))
    else:
        for path in sorted(specs_folder.glob("*/*.json")):
            for function in _read_spec_file(path, f"{SPECS_FOLDER}/{path.parent.name}/{path.name}", problems):
                _remember(function, functions, conflicts)

    names = _tool_names(list(functions))
    tools = [
        ToolSpec(
            name=names[key],
            description=function.description,
            parameters=function.parameters,
            binding=function.binding,
        )
        for key, function in functions.items()
    ]

    # 3. the scenarios: ids unique within a setting (a repeated query_id gets -2, -3, ...). Each is already in its
    # setting's condition; the perfect query it was derived from (:func:`_original`) says what the user meant in
    # full, and the tools it lists that this one lacks are the ones taken away.
    originals = [
        _Original(fields["query"], list(dict.fromkeys(names[k] for k in keys)), fields["categories"])
        for setting, fields, keys in pending
        if setting == "perfect"
    ]
    by_text = {o.query: o for o in reversed(originals)}  # the first of a repeated text wins
    scenarios: list[Scenario] = []
    seen: Counter[str] = Counter()
    counts = dict.fromkeys(SETTINGS, 0)
    for setting, fields, keys in pending:
        base = f"{FAMILY}/{SOURCE}/{setting}/{fields['query_id']:04d}"
        seen[base] += 1
        scenario_id = base if seen[base] == 1 else f"{base}-{seen[base]}"
        tool_names = list(dict.fromkeys(names[k] for k in keys))
        original = _original(fields["query"], [names[k] for k in keys], setting, originals, by_text)
        categories = fields["categories"]
        if not keys and original is not None:  # no_tools: the categories of the perfect query it repeats
            categories = original.categories
        metadata: dict[str, Any] = {
            "setting": setting,
            "source": SOURCE,
            "query_id": fields["query_id"],
            "index": fields["index"],
            "categories": categories,
            "emulated": True,
        }
        removed = [t for t in original.tools if t not in tool_names] if original is not None else []
        if setting != "perfect" and original is not None:
            metadata["intended"] = original.query
        if removed:
            metadata["removed"] = removed
        scenarios.append(
            Scenario(
                id=scenario_id,
                family=FAMILY,
                task=fields["query"],
                tools=tool_names,
                gold=Gold(),
                condition=SETTINGS[setting].condition,
                replaceable=dict.fromkeys(removed, True)
                if setting == "replaceable"
                else (dict.fromkeys(removed, False) if setting == "non_replaceable" else {}),
                metadata=metadata,
            )
        )
        counts[setting] += 1
    return Released(scenarios, tools, problems, counts, conflicts, source_digest(folder))


@dataclass(frozen=True)
class _Original:
    query: str
    tools: list[str]
    categories: list[str]


LINK_SIMILARITY = 0.5  # the least text similarity (difflib's ratio) of a derived query to the original it rewrites


def _original(
    query: str, tools: list[str], setting: str, originals: list[_Original], by_text: dict[str, _Original]
) -> _Original | None:
    """The perfect query a derived one comes from. The files' query_ids are numbered per file, so they do not link
    them: the same text links a query whose tool was taken away (most do), else the original with the same tools
    (under-specified) or more (unavailable tools) whose text is the most alike, when alike enough."""
    if setting == "perfect":
        return None
    exact = by_text.get(query)
    if exact is not None and set(tools) <= set(exact.tools):
        return exact
    wanted = set(tools)
    candidates = [
        o for o in originals if (set(o.tools) == wanted if setting == "underspecified" else wanted <= set(o.tools))
    ]
    scored = [(difflib.SequenceMatcher(None, o.query, query).ratio(), i) for i, o in enumerate(candidates)]
    if not scored:
        return None
    best, index = max(scored)
    return candidates[index] if best >= LINK_SIMILARITY else None


# ---------------------------------------------------------------------------------------------------------------
# Files


def _data_files(folder: Path) -> list[str]:
    """The released data files under ``folder``, as sorted relative paths (the query files whether present or not)."""
    files = {setting.file for setting in SETTINGS.values()}
    specs = folder / SPECS_FOLDER
    if specs.is_dir():
        files.update(path.relative_to(folder).as_posix() for path in specs.glob("*/*.json"))
    return sorted(files)


def _read_json(path: Path, item: str, kind: type, problems: list[Problem]) -> Any:
    """The JSON value of a file when it is a ``kind`` (list or dict); otherwise None and a problem."""
    try:
        value = json.loads(path.read_bytes())
    except FileNotFoundError:
        problems.append(Problem(item, "missing file", f"{path} not found"))
        return None
    except (OSError, ValueError) as exc:
        problems.append(Problem(item, "unreadable file", f"{type(exc).__name__}: {exc}"))
        return None
    if not isinstance(value, kind):
        expected = "a JSON list" if kind is list else "a JSON object"
        problems.append(Problem(item, "unreadable file", f"expected {expected}, got {type(value).__name__}"))
        return None
    return value


def _read_entry(entry: Any, where: str) -> tuple[dict[str, Any], list[_Function]]:
    """A query entry's fields (query, query_id) and its functions; raises _Malformed."""
    if not isinstance(entry, dict):
        raise _Malformed("not an object", f"expected a JSON object, got {type(entry).__name__}")
    query = entry.get("query")
    if not isinstance(query, str) or not query.strip():
        raise _Malformed("no query text", "'query' is missing or empty" if not query else "'query' is not text")
    query_id = entry.get("query_id")
    if isinstance(query_id, str) and query_id.strip().isdigit():
        query_id = int(query_id)
    if isinstance(query_id, bool) or not isinstance(query_id, int) or query_id < 0:
        raise _Malformed("bad query_id", f"'query_id' must be a non-negative integer, got {query_id!r}")
    api_list = entry.get("api_list", [])
    if not isinstance(api_list, list):
        raise _Malformed("api_list not a list", f"'api_list' is {type(api_list).__name__}, not a list")
    functions = [_read_api(api, f"api_list[{position}]", where) for position, api in enumerate(api_list)]
    return {"query": query.strip(), "query_id": query_id}, functions


def _read_api(api: Any, what: str, where: str) -> _Function:
    """One api_list entry (``what``) of a query entry (``where``); raises _Malformed naming ``what``."""
    if not isinstance(api, dict):
        raise _Malformed("api not an object", f"{what}: expected a JSON object, got {type(api).__name__}")
    for key in ("tool_name", "api_name"):
        if not _text(api.get(key)):
            raise _Malformed(f"api without {key}", f"{what}: '{key}' is missing or empty")
    description = api.get("api_description")
    return _function(
        api["tool_name"].strip(),
        api["api_name"].strip(),
        description if _text(description) else api.get("description"),
        api,
        api.get("category_name"),
        what,
        where,
    )


def _read_spec_file(path: Path, item: str, problems: list[Problem]) -> list[_Function]:
    """The functions of one ``tool_specs/<Category>/<tool>.json`` file; a bad endpoint is a problem and skipped."""
    spec = _read_json(path, item, dict, problems)
    if spec is None:
        return []
    tool_name = spec.get("tool_name")
    if not _text(tool_name):
        problems.append(Problem(item, "spec without tool_name", "'tool_name' is missing or empty"))
        return []
    api_list = spec.get("api_list", [])
    if not isinstance(api_list, list):
        problems.append(Problem(item, "api_list not a list", f"'api_list' is {type(api_list).__name__}, not a list"))
        return []
    functions = []
    for index, api in enumerate(api_list):
        where = f"{item}[{index}]"
        try:
            if not isinstance(api, dict):
                raise _Malformed("api not an object", f"expected a JSON object, got {type(api).__name__}")
            name = api.get("api_name") or api.get("name")
            if not _text(name):
                raise _Malformed("api without api_name", "'name' is missing or empty")
            description = api.get("description")
            description = description if _text(description) else api.get("api_description")
            functions.append(_function(tool_name.strip(), name.strip(), description, api, path.parent.name, "", where))
        except _Malformed as exc:
            problems.append(Problem(where, exc.kind, exc.reason))
    return functions


def _text(value: Any) -> TypeGuard[str]:
    return isinstance(value, str) and bool(value.strip())


# ---------------------------------------------------------------------------------------------------------------
# Functions and their schemas


def _function(
    tool_name: str, api_name: str, description: Any, api: dict[str, Any], category: Any, what: str, where: str
) -> _Function:
    """A function from its released entry ``api`` (parameters, method, url, template_response); ``what`` prefixes
    the reason of a _Malformed it raises, ``where`` is where it was read (a conflict names it)."""
    parameters = _schema(api.get("required_parameters"), api.get("optional_parameters"), what)
    method, url = api.get("method"), api.get("url")
    binding: dict[str, Any] = {
        "kind": "emulated",
        EMULATED: True,
        "tool_name": tool_name,
        "api_name": api_name,
        "category": category if isinstance(category, str) else None,
        "method": method if isinstance(method, str) else None,
    }
    if "template_response" in api:
        binding["template_response"] = api["template_response"]
    if isinstance(url, str) and url:
        binding["url"] = url
    text = " ".join(description.split()) if isinstance(description, str) else ""
    return _Function(tool_name, api_name, text, parameters, binding, where)


def _schema(required: Any, optional: Any, what: str) -> dict[str, Any]:
    """The JSON schema of a function's parameters (``required`` ones listed as such); raises _Malformed."""
    lead = f"{what}: " if what else ""
    properties: dict[str, Any] = {}
    names: list[str] = []
    for group, params in (("required_parameters", required), ("optional_parameters", optional)):
        if params is None:
            continue
        if not isinstance(params, list):
            raise _Malformed("parameters not a list", f"{lead}'{group}' is {type(params).__name__}, not a list")
        for position, param in enumerate(params):
            if isinstance(param, str):  # a bare name (tool_specs/Science/spacex.json): no type, no description
                param = {"name": param}
            name = param.get("name") if isinstance(param, dict) else None
            if not _text(name):
                raise _Malformed("parameter without a name", f"{lead}{group}[{position}] has no name")
            name = name.strip()
            if name in properties:  # listed twice (required and optional): the first listing stands
                continue
            properties[name] = _property(param)
            if group == "required_parameters":
                names.append(name)
    return {"type": "object", "properties": properties, "required": names, "additionalProperties": False}


def _property(param: dict[str, Any]) -> dict[str, Any]:
    schema = _json_type(param.get("type"))
    if _text(param.get("description")):
        schema["description"] = " ".join(param["description"].split())
    if param.get("default") is not None:
        schema["default"] = param["default"]
    return schema


def _json_type(released: Any) -> dict[str, Any]:
    """The JSON schema of a released type name: "STRING" -> string, "LIST[INTEGER]" / "LIST of STRINGS" -> an array
    of that, "STRING or LIST of STRINGS" -> anyOf; an unknown or missing type -> {} (any value)."""
    if not isinstance(released, str) or not released.strip():
        return {}
    text = released.strip().upper()
    parts = [p.strip() for p in re.split(r"\s+OR\s+|\|", text) if p.strip()]
    if len(parts) > 1:
        options = [_json_type(p) for p in parts]
        return {"anyOf": options} if all(options) else {}
    match = re.fullmatch(r"(LIST|ARRAY)\s*(?:\[\s*(\w+)\s*\]|OF\s+(\w+?)S?)?", text)
    if match:
        item = match.group(2) or match.group(3)
        items = _json_type(item) if item else {}
        return {"type": "array", "items": items} if items else {"type": "array"}
    return {"type": _TYPES[text]} if text in _TYPES else {}


def _remember(function: _Function, functions: dict[tuple[str, str], _Function], conflicts: list[Conflict]) -> None:
    """Keep the first spec of a function; a later one that differs is a conflict, and fills in only the binding
    fields the first lacks (method, url, template_response)."""
    key = (function.tool_name, function.api_name)
    kept = functions.get(key)
    if kept is None:
        functions[key] = function
        return
    for name, value in function.binding.items():
        if kept.binding.get(name) is None and value is not None:
            kept.binding[name] = value
    differ = tuple(
        name
        for name, mine, theirs in (
            ("description", kept.description, function.description),
            ("parameters", kept.parameters, function.parameters),
        )
        if mine != theirs
    )
    if differ:
        conflicts.append(Conflict(function.tool_name, function.api_name, kept.where, function.where, differ))


# ---------------------------------------------------------------------------------------------------------------
# Tool names


def _sanitize(text: str) -> str:
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"_+", "_", re.sub(r"[^A-Za-z0-9_\-]", "_", plain)).strip("_")


def _hashed(base: str, key: tuple[str, str], length: int = 8) -> str:
    tag = hashlib.sha256("\0".join(key).encode()).hexdigest()[:length]
    return f"{base[: _NAME_LIMIT - length - 1].rstrip('_')}_{tag}"


def _tool_names(keys: list[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """A valid, unique ToolSpec name per (tool_name, api_name): ``<tool>_<api>`` sanitized; one that is too long,
    or that two functions would share, gets a short hash of its key instead of its tail. The name depends only on
    the key and on which other keys exist, never on reading order."""
    bases: dict[tuple[str, str], str] = {}
    for key in keys:
        base = "_".join(part for part in (_sanitize(key[0]), _sanitize(key[1])) if part) or "tool"
        if not re.match(r"[A-Za-z_]", base):
            base = f"t_{base}"
        bases[key] = base
    shared = Counter(bases.values())
    names: dict[tuple[str, str], str] = {}
    taken: set[str] = set()
    for key in sorted(keys):
        base = bases[key]
        name = base if shared[base] == 1 and len(base) <= _NAME_LIMIT else _hashed(base, key)
        length = 8
        while name in taken:  # a hash that meets another name (never seen): lengthen it
            length += 4
            name = _hashed(base, key, length)
        assert _NAME_PATTERN.match(name), name
        taken.add(name)
        names[key] = name
    return names
