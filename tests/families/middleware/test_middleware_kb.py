"""The middleware family's knowledge base: the triple store and its loaders, the seven KB tools with their rules and
error messages, valid_actions, databases of spider-dev converted to KBs, derived questions, and the synthetic KB."""

from __future__ import annotations

import sqlite3
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from undertow.env_core.environment import Environment
from undertow.env_core.errors import DataError
from undertow.env_core.middleware.convert import (
    Question,
    attribute_kind,
    database_to_kb,
    derive_questions,
    select_questions,
    synthetic_kb,
)
from undertow.env_core.middleware.kb import (
    KB_TOOLS,
    KBState,
    KBToolBox,
    TripleStore,
    answer_entities,
    f1,
    load_ntriples,
    load_tsv,
    run_tool,
    unique_names,
    valid_actions,
)
from undertow.env_core.model import Action, Gold, Scenario, ToolCall
from undertow.env_core.spider import SpiderData
from undertow.env_core.tools import ToolExecutionError


@pytest.fixture(scope="module")
def kb_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("kbs")


@pytest.fixture(scope="module")
def concert_kb(spider: SpiderData, kb_dir: Path) -> Path:
    path = kb_dir / "concert_singer.kb"
    database_to_kb(spider.databases["concert_singer"], spider.schemas["concert_singer"], path)
    return path


@pytest.fixture(scope="module")
def box(concert_kb: Path) -> KBToolBox:
    return KBToolBox(KB_TOOLS, {"concert_singer": concert_kb})


# a concert's name in the KB: two concerts are called "Week 1", so each of them carries its key
CONCERT_NAME = (
    "c.concert_Name || CASE WHEN (SELECT count(*) FROM concert d WHERE d.concert_Name = c.concert_Name) > 1 "
    "THEN ' (concert ' || c.concert_ID || ')' ELSE '' END"
)


def db(spider: SpiderData, name: str) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{spider.databases[name]}?mode=ro", uri=True)


def scenario(entities: list[str], kb: str = "concert_singer") -> Scenario:
    return Scenario(
        id="middleware/kb/test",
        family="middleware",
        task="t",
        tools=[spec.name for spec in KB_TOOLS],
        gold=Gold(),
        metadata={"kb": kb, "entities": entities},
    )


def episode(box: KBToolBox, *entities: str) -> KBState:
    state = box.new_state()
    box.start(state, scenario(list(entities)))
    return state


def call(box: KBToolBox, state: KBState, tool: str, **arguments: Any) -> Any:
    return box.execute(state, box.specs[tool], arguments)


def fails(box: KBToolBox, state: KBState, tool: str, **arguments: Any) -> str:
    with pytest.raises(ToolExecutionError) as caught:
        call(box, state, tool, **arguments)
    return str(caught.value)


# ---------------------------------------------------------------------------------------------------------------
# Conversion


def test_concert_singer_converts_to_the_counts_its_tables_give(spider: SpiderData, concert_kb: Path):
    conn = db(spider, "concert_singer")
    rows = {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("stadium", "singer", "concert")}
    # concert.Stadium_ID is text and stadium.Stadium_ID an integer: matched as numbers
    concerts_placed = conn.execute(
        "SELECT count(*) FROM concert c JOIN stadium s ON CAST(c.Stadium_ID AS INTEGER) = s.Stadium_ID"
    ).fetchone()[0]
    links = conn.execute(
        "SELECT count(*) FROM singer_in_concert x JOIN singer s ON CAST(x.Singer_ID AS INTEGER) = s.Singer_ID "
        "JOIN concert c ON x.concert_ID = c.concert_ID"
    ).fetchone()[0]
    values = sum(
        conn.execute(f"SELECT count({column}) FROM {table}").fetchone()[0]
        for table, column in [
            ("stadium", "Capacity"),
            ("stadium", "Highest"),
            ("stadium", "Lowest"),
            ("stadium", "Average"),
            ("singer", "Age"),
            ("singer", "Song_release_year"),  # text holding years: numbers all the same
            ("concert", "Year"),
        ]
    )
    store = TripleStore.open(concert_kb)
    stats = store.stats()
    # singer_in_concert is a junction (its key is its two foreign keys): its rows are links, not entities
    assert stats.entities == sum(rows.values()) == 21
    assert stats.triples == 2 * concerts_placed + 2 * links == 32
    assert stats.relations == 4
    assert stats.attributes == values == 54
    assert stats.attribute_names == 7  # Is_male ('T'/'F') and the keys are no attributes
    assert set(store.relation_ids) == {
        "concert.stadium",
        "stadium.concert",
        "concert.singer_in_concert.singer",
        "singer.singer_in_concert.concert",
    }
    singers = {r[0] for r in conn.execute("SELECT Name FROM singer")}
    stadiums = {r[0] for r in conn.execute("SELECT Name FROM stadium")}  # Name, not Location
    names = dict(store.conn.execute("SELECT name, type FROM entities").fetchall())
    assert {n for n, t in names.items() if t == "singer"} == singers
    assert {n for n, t in names.items() if t == "stadium"} == stadiums
    # two concerts are called "Week 1": both are told apart by their key, neither keeps the bare name
    assert {"Week 1 (concert 4)", "Week 1 (concert 5)"} <= set(names) and "Week 1" not in names
    store.close()


def test_a_junction_without_a_key_and_stray_spaces_in_keys(spider: SpiderData, kb_dir: Path):
    pets = kb_dir / "pets_1.kb"
    stats = database_to_kb(spider.databases["pets_1"], spider.schemas["pets_1"], pets)
    conn = db(spider, "pets_1")
    students, animals, links = (
        conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("Student", "Pets", "Has_Pet")
    )
    assert stats.entities == students + animals and stats.triples == 2 * links
    store = TripleStore.open(pets)
    assert set(store.relation_ids) == {"student.has_pet.pet", "pets.has_pet.stu"}
    first, last = conn.execute("SELECT Fname, LName FROM Student ORDER BY StuID").fetchone()
    assert store.entity_id(f"{first} {last}") is not None  # a first and a last name make the name
    store.close()

    flights = kb_dir / "flight_2.kb"
    stats = database_to_kb(spider.databases["flight_2"], spider.schemas["flight_2"], flights)
    conn = db(spider, "flight_2")
    # the flights' airport codes carry a leading blank the airports' codes lack: they still match
    assert (
        conn.execute(
            "SELECT count(*) FROM flights WHERE SourceAirport IN (SELECT AirportCode FROM airports)"
        ).fetchone()[0]
        == 0
    )
    both = conn.execute(
        "SELECT count(*) FROM flights f WHERE trim(f.SourceAirport) IN (SELECT trim(AirportCode) FROM airports) "
        "AND trim(f.DestAirport) IN (SELECT trim(AirportCode) FROM airports)"
    ).fetchone()[0]
    assert both > 0 and stats.triples == 4 * both
    store = TripleStore.open(flights)
    assert "airports.flights_by_source_airport" in store.relation_ids  # two keys to airports: named by column
    store.close()


def test_conversion_errors_name_the_problem(spider: SpiderData, kb_dir: Path, tmp_path: Path):
    with pytest.raises(DataError, match=r"database .*nowhere.sqlite not found"):
        database_to_kb(tmp_path / "nowhere.sqlite", None, kb_dir / "x.kb")
    schema = spider.schemas["singer"]
    wrong = type(schema)(schema.db_id, {**schema.tables, "ghost": ["id"]})
    with pytest.raises(DataError, match="the schema names tables the database lacks: ghost"):
        database_to_kb(spider.databases["singer"], wrong, kb_dir / "x.kb")
    assert not (kb_dir / "x.kb").exists()
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"not a database at all" * 100)
    with pytest.raises(DataError, match=r"garbage.sqlite: file is not a database"):
        database_to_kb(garbage, None, kb_dir / "x.kb")
    with pytest.raises(DataError, match="not found"):
        TripleStore.open(tmp_path / "none.kb")
    with pytest.raises(DataError, match=r"singer.sqlite is not a knowledge base: no such table: meta"):
        TripleStore.open(spider.databases["singer"])
    other = tmp_path / "other.kb"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT)")
        conn.execute("INSERT INTO meta VALUES ('format', 'someone-else/9')")
    conn.close()
    with pytest.raises(
        DataError, match=r"other.kb is not a knowledge base of format undertow-kb/1 \(found 'someone-else/9'\)"
    ):
        TripleStore.open(other)
    with pytest.raises(ValueError, match=r"entity id out of range \(there are 1 entities\): 0, 1"):
        TripleStore.create(tmp_path / "bad.kb", [("a", "t", "1")], [(0, "r", 1)])
    assert not (tmp_path / "bad.kb").exists()


def test_unique_names_suffix_every_namesake():
    names = unique_names(
        [("Paris", "city", "1"), ("Paris", "film", "7"), ("Rome", "city", "2"), ("", "city", "3"), ("#3", "x", "9")]
    )
    assert names == ["Paris (city 1)", "Paris (film 7)", "Rome", "city 3", "#3 (x 9)"]


# ---------------------------------------------------------------------------------------------------------------
# The tools on concert_singer


def test_get_relations_and_get_neighbors(spider: SpiderData, box: KBToolBox):
    state = episode(box, "Justin Brown")
    assert call(box, state, "get_relations", variable="Justin Brown") == ["singer.singer_in_concert.concert"]
    shown = call(box, state, "get_neighbors", variable="Justin Brown", relation="singer.singer_in_concert.concert")
    expected = {
        r[0]
        for r in db(spider, "concert_singer").execute(
            f"SELECT {CONCERT_NAME} FROM singer_in_concert x JOIN concert c ON c.concert_ID = x.concert_ID "
            "JOIN singer s ON s.Singer_ID = CAST(x.Singer_ID AS INTEGER) WHERE s.Name = 'Justin Brown'"
        )
    }
    assert shown == f"variable #0, which are instances of concert ({len(expected)} entities)"
    assert answer_entities(state, "#0") == expected
    assert call(box, state, "get_relations", variable="#0") == ["concert.singer_in_concert.singer", "concert.stadium"]
    assert call(box, state, "get_neighbors", variable="#0", relation="concert.stadium").startswith(
        "variable #1, which are instances of stadium"
    )
    # an entity's name is found whatever its case
    assert call(box, state, "get_relations", variable="justin brown") == ["singer.singer_in_concert.concert"]


def test_intersection_count_get_attributes_argmax_argmin(spider: SpiderData, box: KBToolBox):
    state = episode(box, "Justin Brown", "Tribal King")
    for singer in ("Justin Brown", "Tribal King"):
        call(box, state, "get_relations", variable=singer)
        call(box, state, "get_neighbors", variable=singer, relation="singer.singer_in_concert.concert")
    assert call(box, state, "intersection", variable1="#0", variable2="#1").startswith("variable #2, which are")
    conn = db(spider, "concert_singer")
    shared = conn.execute(
        f"SELECT {CONCERT_NAME} FROM concert c WHERE c.concert_ID IN (SELECT x.concert_ID FROM singer_in_concert x "
        "JOIN singer s ON s.Singer_ID = CAST(x.Singer_ID AS INTEGER) WHERE s.Name = 'Justin Brown') AND "
        "c.concert_ID IN (SELECT x.concert_ID FROM singer_in_concert x JOIN singer s "
        "ON s.Singer_ID = CAST(x.Singer_ID AS INTEGER) WHERE s.Name = 'Tribal King')"
    ).fetchall()
    assert answer_entities(state, "#2") == {r[0] for r in shared}
    assert call(box, state, "count", variable="#2") == len(shared)

    call(box, state, "get_relations", variable="#0")
    call(box, state, "get_neighbors", variable="#0", relation="concert.stadium")  # #3: Justin Brown's stadiums
    assert call(box, state, "get_attributes", variable="#3") == [
        "stadium.average",
        "stadium.capacity",
        "stadium.highest",
        "stadium.lowest",
    ]
    stadiums = conn.execute(
        "SELECT DISTINCT st.Name, st.Capacity FROM stadium st JOIN concert c ON CAST(c.Stadium_ID AS INTEGER) = "
        "st.Stadium_ID JOIN singer_in_concert x ON x.concert_ID = c.concert_ID JOIN singer s "
        "ON s.Singer_ID = CAST(x.Singer_ID AS INTEGER) WHERE s.Name = 'Justin Brown'"
    ).fetchall()
    assert call(box, state, "argmax", variable="#3", attribute="stadium.capacity") == (
        "variable #4, which are instances of stadium (1 entity)"
    )
    assert answer_entities(state, "#4") == {max(stadiums, key=lambda r: r[1])[0]}
    call(box, state, "argmin", variable="#3", attribute="stadium.capacity")
    assert answer_entities(state, "#5") == {min(stadiums, key=lambda r: r[1])[0]}


def test_every_rule_of_appendix_a_has_its_message(box: KBToolBox):
    state = episode(box, "Justin Brown", "Timbaland")
    with pytest.raises(ToolExecutionError, match="unknown KB tool 'get_relation'; did you mean 'get_relations'"):
        run_tool(state, "get_relation", {"variable": "Timbaland"})
    # Joe Sharp sang in no concert: get_relations lists nothing, so get_neighbors has nothing to follow
    assert call(box, state, "get_relations", variable="Joe Sharp") == []
    assert fails(box, state, "get_neighbors", variable="Joe Sharp", relation="singer.singer_in_concert.concert") == (
        "get_neighbors: relation 'singer.singer_in_concert.concert' is not connected to Joe Sharp "
        "(get_relations(Joe Sharp) did not list it); it listed no relation at all"
    )
    # get_relations: an unknown entity, with the closest name
    assert fails(box, state, "get_relations", variable="Justin Browne") == (
        "get_relations: 'Justin Browne' is neither a variable (#0, #1, …) nor an entity of the knowledge base; "
        "did you mean 'Justin Brown'?"
    )
    assert fails(box, state, "get_relations", variable="#0") == (
        "get_relations: #0 does not exist; no variable is defined yet "
        "(get_neighbors, intersection, argmax or argmin make them)"
    )
    assert "is not a variable: variables are written #0, #1, …" in fails(box, state, "get_relations", variable="#x")
    # get_neighbors: only after get_relations of the same entity or variable, with a relation it listed
    assert fails(box, state, "get_neighbors", variable="Justin Brown", relation="singer.singer_in_concert.concert") == (
        "get_neighbors: call get_relations(Justin Brown) first; the relation must be one it lists for Justin Brown"
    )
    call(box, state, "get_relations", variable="Justin Brown")
    assert fails(
        box, state, "get_neighbors", variable="Justin Brown", relation="singer.singer_in_concert.concerts"
    ) == (
        "get_neighbors: relation 'singer.singer_in_concert.concerts' is not connected to Justin Brown "
        "(get_relations(Justin Brown) did not list it); did you mean 'singer.singer_in_concert.concert'?"
    )
    call(box, state, "get_neighbors", variable="Justin Brown", relation="singer.singer_in_concert.concert")  # #0
    call(box, state, "get_relations", variable="#0")
    call(box, state, "get_neighbors", variable="#0", relation="concert.stadium")  # #1
    # a relation get_relations listed for #0 is not one listed for #1
    call(box, state, "get_relations", variable="#1")
    assert "relation 'concert.stadium' is not connected to #1" in fails(
        box, state, "get_neighbors", variable="#1", relation="concert.stadium"
    )
    assert fails(box, state, "count", variable="#7") == "count: #7 does not exist; defined so far: #0, #1"
    # intersection: two different variables of a common type
    assert fails(box, state, "intersection", variable1="#0", variable2="#1") == (
        "intersection: #0 holds concert entities but #1 holds stadium entities; "
        "the two variables must be of the same type"
    )
    assert fails(box, state, "intersection", variable1="#0", variable2="#0") == (
        "intersection: #0 and #0 are the same variable; give two different ones"
    )
    entity_message = (
        "'Timbaland' is an entity, not a variable; {tool} works on a variable that get_neighbors, intersection, "
        "argmax or argmin made (first get_neighbors(Timbaland, …)); defined so far: #0, #1"
    )
    assert fails(box, state, "intersection", variable1="#0", variable2="Timbaland") == (
        "intersection: " + entity_message.format(tool="intersection")
    )
    # get_attributes and count: variables only
    for tool in ("get_attributes", "count"):
        assert fails(box, state, tool, variable="Timbaland") == f"{tool}: " + entity_message.format(tool=tool)
    # argmax / argmin: after get_attributes of the same variable, with an attribute it listed
    for tool in ("argmax", "argmin"):
        assert fails(box, state, tool, variable="#1", attribute="stadium.capacity") == (
            f"{tool}: call get_attributes(#1) first; the attribute must be one it lists"
        )
        assert fails(box, state, tool, variable="Timbaland", attribute="x").startswith(f"{tool}: 'Timbaland' is an")
    call(box, state, "get_attributes", variable="#1")
    for tool in ("argmax", "argmin"):
        assert fails(box, state, tool, variable="#1", attribute="capacity") == (
            f"{tool}: 'capacity' is not an attribute of #1 (get_attributes(#1) did not list it); "
            "did you mean 'stadium.capacity'?"
        )
        assert "call get_attributes(#0) first" in fails(box, state, tool, variable="#0", attribute="stadium.capacity")
    # a failed call changes nothing: still two variables
    assert len(state.variables) == 2


def test_valid_actions_follow_the_rules(box: KBToolBox):
    state = episode(box, "Justin Brown", "Timbaland")
    assert valid_actions(state) == [
        ("get_relations", {"variable": "Justin Brown"}),
        ("get_relations", {"variable": "Timbaland"}),
    ]
    call(box, state, "get_relations", variable="Justin Brown")
    relation = "singer.singer_in_concert.concert"
    assert valid_actions(state) == [
        ("get_relations", {"variable": "Timbaland"}),
        ("get_neighbors", {"variable": "Justin Brown", "relation": relation}),
    ]
    for singer in ("Timbaland", "Justin Brown"):
        call(box, state, "get_relations", variable=singer)
        call(box, state, "get_neighbors", variable=singer, relation=relation)
    actions = valid_actions(state)
    assert ("intersection", {"variable1": "#0", "variable2": "#1"}) in actions
    assert ("count", {"variable": "#1"}) in actions and ("get_attributes", {"variable": "#0"}) in actions
    assert not any(tool in ("argmax", "argmin") for tool, _ in actions)  # no get_attributes yet
    assert ("get_neighbors", {"variable": "Justin Brown", "relation": relation}) not in actions  # already made
    # everything valid_actions offers runs
    for tool, arguments in actions:
        run_tool(state.fork(), tool, arguments)


def test_episodes_do_not_share_state_and_forks_are_private(box: KBToolBox):
    first = episode(box, "Justin Brown")
    call(box, first, "get_relations", variable="Justin Brown")
    call(box, first, "get_neighbors", variable="Justin Brown", relation="singer.singer_in_concert.concert")
    second = episode(box, "Justin Brown")
    assert second.variables == [] and second.relations_seen == {}
    assert "call get_relations(Justin Brown) first" in fails(
        box, second, "get_neighbors", variable="Justin Brown", relation="singer.singer_in_concert.concert"
    )
    fork = box.fork_state(first)
    call(box, fork, "get_relations", variable="#0")
    call(box, fork, "get_neighbors", variable="#0", relation="concert.stadium")
    box.close_state(fork)  # a fork does not own the store: closing it leaves the episode's open
    assert len(first.variables) == 1 and "#0" not in first.relations_seen
    assert call(box, first, "count", variable="#0") == 3
    box.close_state(first)
    box.close_state(second)
    with pytest.raises(RuntimeError, match="start\\(\\) was not called"):
        call(box, box.new_state(), "count", variable="#0")


def test_start_checks_the_scenario(box: KBToolBox):
    with pytest.raises(DataError, match=r"unknown knowledge base 'concert'.*did you mean 'concert_singer'"):
        box.start(box.new_state(), scenario([], kb="concert"))
    with pytest.raises(DataError, match="1 of its entities are not in knowledge base 'concert_singer': 'Nobody'"):
        box.start(box.new_state(), scenario(["Justin Brown", "Nobody"]))
    with pytest.raises(ValueError, match="tool 'count_rows' is not a KB tool; did you mean 'count'"):
        KBToolBox([KB_TOOLS[0].model_copy(update={"name": "count_rows"})], {})


def test_the_environment_runs_the_tools(box: KBToolBox):
    env = Environment(scenario(["Justin Brown"]), box)
    start = env.reset()
    assert [s.name for s in start.tools] == [s.name for s in KB_TOOLS]

    def step(name: str, **arguments: Any) -> Any:
        return env.step(Action(kind="tool_call", tool_call=ToolCall(id="c", name=name, arguments=arguments)))

    early = step("get_neighbors", variable="Justin Brown", relation="singer.singer_in_concert.concert")
    assert (
        not early.ok
        and early.error.type == "tool_error"
        and "call get_relations(Justin Brown) first" in early.error.message
    )
    assert step("get_relations", variable="Justin Brown").result == ["singer.singer_in_concert.concert"]
    made = step("get_neighbors", variable="Justin Brown", relation="singer.singer_in_concert.concert")
    assert made.ok and made.result == "variable #0, which are instances of concert (3 entities)"
    missing = step("count")
    assert not missing.ok and missing.error.type == "invalid_arguments"
    env.close()


def test_scoring_helpers():
    assert f1({"a", "b"}, {"a", "b"}) == 1.0
    assert f1({"a"}, {"a", "b"}) == pytest.approx(2 / 3)
    assert f1(set(), {"a"}) == 0.0 and f1(set(), set()) == 1.0
    assert answer_entities(KBState(), "#4") == set() and answer_entities(KBState(), "four") == set()


# ---------------------------------------------------------------------------------------------------------------
# Derived questions


def replay(store: TripleStore, question: Question) -> Any:
    """Run a question's gold actions from a fresh episode, checking at every step that valid_actions offers the
    next one; the answer as the scorer reads it."""
    state = KBState(store=store, entities=question.entities)
    result: Any = None
    for tool, arguments in question.actions:
        assert (tool, arguments) in valid_actions(state), (question.text, tool, arguments)
        result = run_tool(state, tool, arguments)
    if question.answer_variable is None:
        return [str(result)]
    return sorted(answer_entities(state, question.answer_variable))


# the words that make an attribute an identifier, a code or a flag, as the issue lists them
IDENTIFIER_WORDS = {"id", "code", "zip", "zipcode", "postcode", "postal", "phone", "ssn", "fax", "key", "no", "number"}


def test_derived_questions_replay_to_their_answers_on_every_database(spider: SpiderData, kb_dir: Path):
    kinds: set[tuple[str, int, bool]] = set()
    for name in sorted(spider.databases):
        path = kb_dir / f"all_{name}.kb"
        database_to_kb(spider.databases[name], spider.schemas[name], path)
        store = TripleStore.open(path)
        questions = derive_questions(store, seed=3)
        assert derive_questions(store, seed=3) == questions  # seeded: the same questions every time
        relations = set(store.relation_ids) | set(store.attribute_ids)
        for question in questions:
            # the paper's selection: three relations, or two and an aggregation
            assert question.hops == 3 or (question.hops == 2 and question.kind != "path"), question.text
            assert 1 <= len(question.answer) <= 50
            if question.kind == "path":
                assert not set(question.entities) & set(question.answer)
            predicted = replay(store, question)
            assert f1(predicted, question.answer) == 1.0, question.text
            kinds.add((question.kind, question.hops, question.conjunction))
            # the text names the entities and the ask, never a relation's name
            assert all(f'"{entity}"' in question.text for entity in question.entities), question.text
            assert not any(relation in question.text for relation in relations), question.text
            assert "_" not in question.text.replace(question.entity, "").replace(question.other or "", "")
            if question.conjunction:
                assert ("intersection", {"variable1": "#0", "variable2": "#1"}) in question.actions
            if question.attribute is not None:
                words = question.attribute.split(".", 1)[1].split("_")
                assert question.attribute_kind in ("measure", "date") and not set(words) & IDENTIFIER_WORDS
        keys = [(q.kind, tuple(q.entities), tuple(q.answer), q.attribute) for q in questions]
        assert len(keys) == len(set(keys))  # no duplicates
        store.close()
    assert {("path", 3, False), ("count", 2, False), ("count", 3, False), ("argmax", 2, False)} <= kinds
    assert {("argmin", 3, False), ("path", 3, True), ("count", 2, True)} <= kinds


def test_derived_questions_on_concert_singer(spider: SpiderData, concert_kb: Path):
    store = TripleStore.open(concert_kb)
    questions = derive_questions(store, seed=0)
    assert questions and {q.kind for q in questions} == {"path", "count", "argmax", "argmin"}
    path = next(q for q in questions if q.kind == "path" and not q.conjunction)
    assert path.actions[0] == ("get_relations", {"variable": path.entity})
    assert path.answer_variable == "#2" and path.text.startswith("Which ") and "entities of type" not in path.text
    superlative = next(q for q in questions if q.kind in ("argmax", "argmin"))
    assert superlative.actions[-2][0] == "get_attributes" and superlative.attribute is not None
    assert superlative.text.startswith("Among the ")
    # conjunctions of two singers: the concerts both sang in (then their stadiums, or how many), checked in SQL
    both = (
        "SELECT a.concert_ID FROM singer_in_concert a JOIN singer_in_concert b ON a.concert_ID = b.concert_ID "
        "JOIN singer x ON x.Singer_ID = a.Singer_ID JOIN singer y ON y.Singer_ID = b.Singer_ID "
        "WHERE x.Name = ? AND y.Name = ?"
    )
    joint = [q for q in questions if q.relations[:2] == ["singer.singer_in_concert.concert"] * 2]
    assert {q.kind for q in joint} == {"path", "count"}
    with db(spider, "concert_singer") as conn:
        for question in joint:
            assert question.other is not None and question.conjunction
            assert question.text.count('"') == 4 and "are also concerts of the singer" in question.text
            concerts = {r[0] for r in conn.execute(both, (question.entity, question.other))}
            if question.kind == "count":
                assert question.answer == [str(len(concerts))] and question.hops == 2
            else:
                assert question.relations[2] == "concert.stadium" and question.text.startswith("Which stadiums ")
                marks = ",".join("?" * len(concerts))
                sql = (
                    "SELECT DISTINCT s.Name FROM stadium s JOIN concert c ON c.Stadium_ID = s.Stadium_ID "
                    f"WHERE c.concert_ID IN ({marks})"
                )
                assert question.answer == sorted(r[0] for r in conn.execute(sql, sorted(concerts)))
    store.close()


@pytest.mark.parametrize(
    ("attribute", "distinct", "kind"),
    [
        ("stadium.capacity", 9, "measure"),
        ("cars_data.mpg", 120, "measure"),
        ("company.number_of_employees", 40, "measure"),  # "number" first: a quantity, not a number that names
        ("concert.year", 5, "date"),
        ("singer.song_release_year", 6, "date"),
        ("addresses.zip_postcode", 15, None),
        ("people.ssn", 30, None),
        ("customers.phone_number", 30, None),
        ("flights.flight_no", 1200, None),
        ("country.country_code", 200, None),
        ("visits.tourist_id", 20, None),
        ("student.is_full_time", 2, None),
        ("student.has_allergy", 3, None),
        ("pets.weight", 2, None),  # two values over the whole KB: a flag, whatever its name
        ("pets.weight", 1, None),
    ],
)
def test_attribute_kind_ranks_measures_and_dates_only(attribute: str, distinct: int, kind: str | None):
    assert attribute_kind(attribute, distinct) == kind


def made(kind: str, n: int, conjunction: bool = False) -> list[Question]:
    """``n`` questions of ``kind`` told apart by their entity (what select_questions keeps is all that counts)."""
    return [
        Question(kind, f"q{i}", f"{kind}{i}", ["r"] * 3, [], ["x"], None, other="o" if conjunction else None)
        for i in range(n)
    ]


def test_select_questions_caps_every_database_and_keeps_the_paper_mix():
    # five databases of 6 plain questions and 4 counts (40%, 10 of 50 each): nothing to cut
    even = {f"db{i}": made("path", 6) + made("count", 4) for i in range(5)}
    assert select_questions(even, seed=0) == even
    # one database of 30 + 20 beside four of 6 + 4: its cap falls from 18 (20% of 90) to 11 to 10 (20% of 50); it
    # keeps its plain questions first, counts for a tenth of its cap: 2 of 18, then 1 of 11, 1 of 10
    big = {
        "big": made("path", 30) + made("count", 20),
        **{f"db{i}": made("path", 6) + made("count", 4) for i in range(4)},
    }
    kept = select_questions(big, seed=0)
    assert [len(kept[db]) for db in big] == [10, 10, 10, 10, 10]
    assert Counter(q.kind for q in kept["big"]) == {"path": 9, "count": 1}
    assert all(q in big["big"] for q in kept["big"]) and kept["big"] == sorted(kept["big"], key=big["big"].index)
    assert select_questions(big, seed=0) == kept and select_questions(big, seed=1) != kept  # seeded
    # counts at 80% (8 of 10 in each of five): cut to a common ceiling that leaves at most 38%: int(10 * 38 / 62) = 6
    # allowed, so one per database; then 2 + 1 in each, 33%
    counted = {f"db{i}": made("path", 2) + made("count", 8) for i in range(5)}
    kept = select_questions(counted, seed=0)
    assert [Counter(q.kind for q in kept[db]) for db in counted] == [{"path": 2, "count": 1}] * 5
    # plain questions at 90%: cut so that the 2 counts of each are 38% or more, conjunctions kept first
    plain = {f"db{i}": made("path", 16) + made("path", 2, conjunction=True) + made("count", 2) for i in range(5)}
    kept = select_questions(plain, seed=0)
    for db in plain:
        shares = Counter(q.kind for q in kept[db])
        assert shares == {"path": 3, "count": 2} and sum(q.conjunction for q in kept[db]) == 2
    # one database: no cap, only the mix; none: nothing
    assert select_questions({"only": made("path", 6) + made("count", 4)}, seed=0)["only"] == made("path", 6) + made(
        "count", 4
    )
    assert select_questions({}, seed=0) == {}
    # every question a count: the mix is out of reach, and nothing is cut for it (two databases: caps of 50%)
    counts = {"a": made("count", 3), "b": made("count", 3)}
    assert select_questions(counts, seed=0) == counts
    # one plain question beside ten counts: the counts go down to one (38% of one is less), not to none
    kept = select_questions({"only": made("path", 1) + made("count", 10)}, seed=0)["only"]
    assert Counter(q.kind for q in kept) == {"path": 1, "count": 1}


# ---------------------------------------------------------------------------------------------------------------
# Loaders and the synthetic KB

NTRIPLES = r"""# a comment
<http://kb.example/m/obama> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://kb.example/people.person> .
<http://kb.example/m/obama> <http://www.w3.org/2000/01/rdf-schema#label> "Barack Obama"@en .
<http://kb.example/m/obama> <http://kb.example/people.person.profession> <http://kb.example/m/lawyer> .
<http://kb.example/m/obama> <http://kb.example/people.person.profession> <http://kb.example/m/politician> .
<http://kb.example/m/obama> <http://kb.example/people.person.height> "1.87"^^<http://www.w3.org/2001/XMLSchema#float> .
<http://kb.example/m/lawyer> <http://www.w3.org/2000/01/rdf-schema#label> "Lawyer" .
<http://kb.example/m/politician> <http://www.w3.org/2000/01/rdf-schema#label> "Politician \u00e9lu" .
<http://kb.example/m/obama> <http://kb.example/common.topic.description> "a description, skipped" .
_:b1 <http://kb.example/people.person.profession> <http://kb.example/m/lawyer> .
"""


def test_load_ntriples(tmp_path: Path):
    source = tmp_path / "facts.nt"
    source.write_text(NTRIPLES, encoding="utf-8")
    stats = load_ntriples(source, tmp_path / "facts.kb")
    assert (stats.entities, stats.relations, stats.triples, stats.attributes) == (4, 1, 3, 1)
    store = TripleStore.open(tmp_path / "facts.kb")
    assert dict(store.conn.execute("SELECT name, type FROM entities").fetchall()) == {
        "Barack Obama": "people.person",
        "Lawyer": "entity",
        "Politician élu": "entity",
        "_:b1": "entity",
    }
    state = KBState(store=store, entities=["Barack Obama"])
    assert run_tool(state, "get_relations", {"variable": "Barack Obama"}) == ["people.person.profession"]
    run_tool(state, "get_neighbors", {"variable": "Barack Obama", "relation": "people.person.profession"})
    assert answer_entities(state, "#0") == {"Lawyer", "Politician élu"}
    obama = store.entity_id("Barack Obama")
    assert obama is not None and store.values({obama}, "people.person.height", True) == {obama: 1.87}
    store.close()
    bad = tmp_path / "bad.nt"
    bad.write_text(NTRIPLES + '"literal" <http://p> <http://o> .\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"bad.nt:11: not an N-Triples statement"):
        load_ntriples(bad, tmp_path / "bad.kb")


def test_load_tsv(tmp_path: Path):
    source = tmp_path / "facts.tsv"
    source.write_text(
        "# subject\trelation\tobject\n"
        "Kerosene\ttype\tfuel\n"
        "Gas-generator cycle\ttype\tcycle\n"
        "RD-107\ttype\tengine\nRD-108\ttype\tengine\n"
        "Kerosene\tfuel.engines\tRD-107\nKerosene\tfuel.engines\tRD-108\n"
        "Gas-generator cycle\tcycle.engines\tRD-107\nRD-107\tengine.designed_by\tGlushko\n"
        "RD-107\tengine.thrust_kn\t 1000 \nRD-108\tengine.thrust_kn\t745.5\n\n",
        encoding="utf-8",
    )
    stats = load_tsv(source, tmp_path / "facts.kb")
    assert (stats.entities, stats.relations, stats.triples, stats.attributes) == (5, 3, 4, 2)
    store = TripleStore.open(tmp_path / "facts.kb")
    state = KBState(store=store, entities=["Kerosene", "Gas-generator cycle"])
    for entity, relation in (("Kerosene", "fuel.engines"), ("Gas-generator cycle", "cycle.engines")):
        run_tool(state, "get_relations", {"variable": entity})
        run_tool(state, "get_neighbors", {"variable": entity, "relation": relation})
    assert run_tool(state, "intersection", {"variable1": "#0", "variable2": "#1"}).startswith(
        "variable #2, which are instances of engine (1 entity)"
    )
    assert answer_entities(state, "#2") == {"RD-107"}
    assert run_tool(state, "get_attributes", {"variable": "#0"}) == ["engine.thrust_kn"]
    run_tool(state, "argmin", {"variable": "#0", "attribute": "engine.thrust_kn"})
    assert answer_entities(state, "#3") == {"RD-108"}
    run_tool(state, "get_relations", {"variable": "#2"})
    run_tool(state, "get_neighbors", {"variable": "#2", "relation": "engine.designed_by"})
    assert run_tool(state, "get_attributes", {"variable": "#4"}) == []  # Glushko has no number
    with pytest.raises(ToolExecutionError) as caught:
        run_tool(state, "argmax", {"variable": "#4", "attribute": "engine.thrust_kn"})
    assert str(caught.value) == (
        "argmax: 'engine.thrust_kn' is not an attribute of #4 (get_attributes(#4) did not list it); "
        "#4 has no numerical attribute"
    )
    store.close()
    bad = tmp_path / "bad.tsv"
    bad.write_text("a\tb\tc\nonly two\tfields\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"bad.tsv:2: expected subject, relation and object separated by tabs, got 2"):
        load_tsv(bad, tmp_path / "bad.kb")


def test_synthetic_kb(tmp_path: Path):
    started = time.perf_counter()
    stats = synthetic_kb(tmp_path / "synthetic.kb", 20_000, seed=5)
    assert time.perf_counter() - started < 10
    assert stats.triples == 20_000 and stats.entities == 2_500 and stats.relations == 96
    assert stats.attributes > 0 and stats.attribute_names == 48
    again = synthetic_kb(tmp_path / "again.kb", 20_000, seed=5)
    assert again == stats
    store = TripleStore.open(tmp_path / "synthetic.kb")
    other = TripleStore.open(tmp_path / "again.kb")
    query = "SELECT s, r, o FROM triples ORDER BY s, r, o LIMIT 50"
    assert store.conn.execute(query).fetchall() == other.conn.execute(query).fetchall()
    hub = store.conn.execute("SELECT s FROM triples GROUP BY s ORDER BY count(*) DESC LIMIT 1").fetchone()[0]
    name = store.names({hub})[0]
    state = KBState(store=store, entities=[name])
    relations = run_tool(state, "get_relations", {"variable": name})
    assert relations and all("." in r for r in relations)
    assert run_tool(state, "get_neighbors", {"variable": name, "relation": relations[0]}).startswith("variable #0")
    store.close()
    other.close()
    with pytest.raises(ValueError, match="n_triples must be at least 2"):
        synthetic_kb(tmp_path / "tiny.kb", 1)
