"""FAIL-TaLMs offline tools and scenario library: every tool's happy path and a bad input with its message, the
calculator's safety, and the library's checks (plans replay to their gold answers, masks remove exactly their
value, both kinds of replaceable tools occur, every tool is used)."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from undertow.env_core.environment import Environment
from undertow.env_core.failtalms import tools as tools_module
from undertow.env_core.failtalms.library import answer_of, base_scenarios, pick, replay
from undertow.env_core.failtalms.tools import ALL_TOOLS, FailTalmsToolBox, categories, run
from undertow.env_core.model import Action, Scenario, ToolCall
from undertow.env_core.tools import ToolExecutionError

SCENARIOS = base_scenarios()
SPECS = {spec.name: spec for spec in ALL_TOOLS}

# ---------------------------------------------------------------------------------------------------------------
# Every tool: a happy path (a subset of the result it must hold) ...

HAPPY: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("calculate", {"expression": "(12.5 + 7) * 3 / 2"}, {"result": 29.25}),
    ("convert_units", {"value": 26.2, "from_unit": "miles", "to_unit": "km"}, {"result": 42.16, "to_unit": "km"}),
    ("percentage_change", {"old": 80, "new": 92}, {"change": 12, "percent_change": 15.0}),
    ("prime_factors", {"n": 360360}, {"factors": [2, 2, 2, 3, 3, 5, 7, 11, 13], "is_prime": False}),
    ("element_info", {"symbol": "iron"}, {"symbol": "Fe", "atomic_number": 26}),
    ("molar_mass", {"formula": "Ca(OH)2"}, {"molar_mass_g_mol": 74.09, "atoms": {"Ca": 1, "O": 2, "H": 2}}),
    ("planet_facts", {"planet": "mars"}, {"planet": "Mars", "moons": 2}),
    ("rocket_launch_simulation", {"payload_kg": 500, "fuel_kg": 20000, "thrust_kn": 400}, {"lifts_off": True}),
    ("day_of_week", {"date": "2026-07-04"}, {"day_of_week": "Saturday", "day_of_year": 185}),
    ("days_between", {"start": "2026-03-02", "end": "2026-03-16"}, {"days": 14, "weeks": 2, "weekdays": 10}),
    ("add_days", {"date": "2026-12-25", "days": 10}, {"result": "2027-01-04", "day_of_week": "Monday"}),
    ("public_holidays", {"country": "US", "year": 2026}, {"country": "United States", "count": 11}),
    ("next_holiday", {"country": "Canada", "date": "2026-05-01"}, {"name": "Victoria Day", "date": "2026-05-18"}),
    ("country_info", {"country": "Deutschland"}, {"country": "Germany", "capital": "Berlin", "currency": "EUR"}),
    ("distance_between", {"city_a": "Paris", "city_b": "Berlin"}, {"distance_km": 877.5}),
    ("timezone_of", {"city": "Mumbai"}, {"timezone": "Asia/Kolkata", "utc_offset": "+05:30"}),
    ("cities_in_country", {"country": "Japan"}, {"cities": ["Kyoto", "Osaka", "Tokyo"]}),
    ("stock_quote", {"symbol": "Novatek Systems", "date": "2025-03-14"}, {"symbol": "NVTK", "currency": "USD"}),
    ("price_history", {"symbol": "ORBT", "start": "2025-01-06", "end": "2025-01-17"}, {"trading_days": 10}),
    ("exchange_rate", {"base": "usd", "quote": "usd", "date": "2025-06-02"}, {"rate": 1.0}),
    ("convert_currency", {"amount": 0, "base": "EUR", "quote": "JPY", "date": "2025-06-02"}, {"converted": 0}),
    ("crypto_price", {"coin": "ETH", "date": "2025-01-01"}, {"coin": "ethereum", "symbol": "ETH"}),
    ("current_weather", {"city": "pittsburgh"}, {"city": "Pittsburgh", "observed_at": "2026-03-20T12:00:00Z"}),
    ("forecast", {"city": "Oslo", "days": 2}, {"issued": "2026-03-20"}),
    ("historical_weather", {"city": "Madrid", "date": "2024-08-15"}, {"city": "Madrid", "date": "2024-08-15"}),
    ("air_quality", {"city": "Delhi"}, {"city": "Delhi"}),
    ("define", {"word": "Journey"}, {"word": "journey", "part_of_speech": "noun"}),
    ("synonyms", {"word": "happy"}, {"synonyms": ["cheerful", "joyful", "glad", "content"]}),
    ("translate", {"word": "friend", "target_language": "fr"}, {"language": "French", "translation": "ami"}),
    ("rhymes", {"word": "heart"}, {"rhymes": ["art", "start", "part", "chart", "smart"]}),
    ("random_joke", {"category": "dad", "seed": 2}, {"category": "dad"}),
    ("quote_of_the_day", {"date": "2026-01-01"}, {"author": "Marie Curie"}),
    ("quotes_by_author", {"author": "Twain"}, {"author": "Mark Twain", "count": 2}),
    ("recipe_search", {"ingredient": "lentil"}, {"count": 1}),
    ("nutrition_facts", {"food": "banana", "grams": 120}, {"calories_kcal": 106.8, "carbohydrate_g": 27.4}),
    ("cocktail_recipe", {"name": "negroni"}, {"name": "Negroni", "glass": "rocks"}),
    ("roll_dice", {"sides": 6, "count": 3, "seed": 7}, {"rolls": [4, 1, 2], "total": 7}),
    ("chess_opening", {"eco_code": "c50"}, {"name": "Italian Game", "moves": "1. e4 e5 2. Nf3 Nc6 3. Bc4"}),
    ("scrabble_score", {"word": "quiz"}, {"word": "QUIZ", "score": 22}),
    ("team_standings", {"league": "coastal league", "season": 2024}, {"league": "Coastal League", "season": 2024}),
    ("match_result", {"home": "Harbor City Gulls", "away": "Pine Valley FC", "date": "2024-03-02"}, {"home_goals": 3}),
    ("player_stats", {"player": "marco deluca", "season": 2024}, {"team": "Harbor City Gulls"}),
    ("piece_info", {"title": "Bolero"}, {"title": "Boléro", "composer": "Maurice Ravel", "year": 1928}),
    ("composer_works", {"composer": "Beethoven"}, {"composer": "Ludwig van Beethoven"}),
    ("chord_notes", {"chord": "Ebmaj7"}, {"quality": "major seventh", "notes": ["Eb", "G", "Bb", "D"]}),
    ("note_frequency", {"note": "A4"}, {"midi_number": 69, "frequency_hz": 440.0}),
    ("bmi", {"weight_kg": 70, "height_cm": 175}, {"bmi": 22.9, "category": "normal weight"}),
    (
        "daily_calorie_needs",
        {"weight_kg": 70, "height_cm": 175, "age": 30, "sex": "male", "activity_level": "moderate"},
        {"bmr_kcal": 1649, "daily_kcal": 2556},
    ),
    ("exercise_calories", {"activity": "jogging", "minutes": 30, "weight_kg": 70}, {"calories_kcal": 360}),
    ("flight_status", {"flight_number": "zp 101", "date": "2026-02-14"}, {"flight": "ZP101", "origin": "London"}),
    ("fuel_cost", {"distance_km": 100, "litres_per_100km": 5, "price_per_litre": 2}, {"litres": 5, "cost": 10}),
    (
        "ev_charging_time",
        {"battery_kwh": 75, "from_percent": 20, "to_percent": 90, "charger_kw": 150},
        {"energy_kwh": 58.33, "minutes": 27},
    ),
]

# ... and a bad input, with the words its message must hold (an agent must be able to act on it)
BAD: list[tuple[str, dict[str, Any], str]] = [
    ("calculate", {"expression": "2 +"}, "could not parse '2 +'"),
    ("convert_units", {"value": 1, "from_unit": "kg", "to_unit": "km"}, "cannot convert mass (kg) to length (km)"),
    ("percentage_change", {"old": 0, "new": 3}, "give a non-zero starting value"),
    ("prime_factors", {"n": 1}, "1 is less than the minimum of 2"),
    ("element_info", {"symbol": "Irn"}, "unknown element 'Irn'; did you mean 'Iron'?"),
    ("molar_mass", {"formula": "2H2O"}, "a count must follow an element"),
    ("planet_facts", {"planet": "Pluto"}, "unknown planet 'Pluto'; known: Earth"),
    ("rocket_launch_simulation", {"payload_kg": -5, "fuel_kg": 1, "thrust_kn": 1}, "-5 is less than the minimum"),
    ("day_of_week", {"date": "07/04/2026"}, "write it as YYYY-MM-DD"),
    ("days_between", {"start": "2026-02-30", "end": "2026-03-01"}, "start: '2026-02-30' is not a date"),
    ("add_days", {"date": "9999-12-30", "days": 5}, "outside the years 1 to 9999"),
    ("public_holidays", {"country": "Spain", "year": 2026}, "no holiday calendar for 'Spain'; calendars cover:"),
    ("next_holiday", {"country": "Japan", "date": "2040-01-01"}, "outside the data this tool has"),
    ("country_info", {"country": "Germny"}, "unknown country 'Germny'; did you mean 'Germany'?"),
    (
        "distance_between",
        {"city_a": "Pitsburgh", "city_b": "Paris"},
        "unknown city 'Pitsburgh'; did you mean 'Pittsburgh'?",
    ),
    ("timezone_of", {"city": "Atlantis"}, "unknown city 'Atlantis'"),
    ("cities_in_country", {"country": "Narnia"}, "unknown country 'Narnia'"),
    ("stock_quote", {"symbol": "NVTK", "date": "2025-03-15"}, "is a Saturday and the exchange is closed; the last"),
    ("price_history", {"symbol": "ORBT", "start": "2025-01-06", "end": "2025-06-17"}, "at most 92 days"),
    ("exchange_rate", {"base": "EUR", "quote": "JYP", "date": "2025-06-02"}, "did you mean 'JPY'?"),
    ("convert_currency", {"amount": 5, "base": "EUR", "quote": "USD", "date": "2014-01-01"}, "outside the data"),
    ("crypto_price", {"coin": "bitcorn", "date": "2025-01-01"}, "did you mean 'bitcoin'?"),
    ("current_weather", {"city": "Pitsburgh"}, "unknown city 'Pitsburgh'; did you mean 'Pittsburgh'?"),
    ("forecast", {"city": "Oslo", "days": 9}, "9 is greater than the maximum of 7"),
    ("historical_weather", {"city": "Madrid", "date": "2026-04-01"}, "(1970-01-01 to 2026-03-19)"),
    ("air_quality", {"city": "Gotham"}, "unknown city 'Gotham'"),
    ("define", {"word": "jurney"}, "'jurney' is not in the dictionary; did you mean 'journey'?"),
    ("synonyms", {"word": "xyzzy"}, "'xyzzy' is not in the dictionary"),
    ("translate", {"word": "friend", "target_language": "Klingon"}, "supported: Spanish (es), French (fr)"),
    ("rhymes", {"word": "orange"}, "no rhymes listed for 'orange'"),
    ("random_joke", {"category": "programing", "seed": 1}, "did you mean 'programming'?"),
    ("quote_of_the_day", {"date": "tomorrow"}, "'tomorrow' is not a date"),
    ("quotes_by_author", {"author": "Shakespeare"}, "unknown author 'Shakespeare'; known:"),
    ("recipe_search", {"ingredient": "avocadoo"}, "no recipe uses 'avocadoo'; did you mean 'avocado'?"),
    ("nutrition_facts", {"food": "bananna"}, "did you mean 'banana'?"),
    ("cocktail_recipe", {"name": "Negorni"}, "did you mean 'Negroni'?"),
    ("roll_dice", {"sides": 1, "count": 1, "seed": 1}, "1 is less than the minimum of 2"),
    ("chess_opening", {"eco_code": "Z99"}, "it is a letter A-E and two digits"),
    ("scrabble_score", {"word": "hi there"}, "give 1 to 15 letters A-Z"),
    ("team_standings", {"league": "Coastal", "season": 2024}, "did you mean 'Coastal League'?"),
    (
        "match_result",
        {"home": "Harbor City Gulls", "away": "Pine Valley FC", "date": "2024-03-09"},
        "they played that match on 2024-03-02",
    ),
    ("player_stats", {"player": "Marco Delucca", "season": 2024}, "did you mean 'Marco Deluca'?"),
    ("piece_info", {"title": "Moonlite Sonata"}, "did you mean 'Moonlight Sonata'?"),
    ("composer_works", {"composer": "Bach?!x"}, "unknown composer"),
    ("chord_notes", {"chord": "Cmaj9"}, "unknown chord type 'maj9' in 'Cmaj9'"),
    # a long argument is quoted short (issue 29)
    ("chord_notes", {"chord": "C" + "x" * 3000}, f"unknown chord type '{'x' * 200}… (3,000 characters)' in 'C"),
    ("note_frequency", {"note": "H4"}, "write a letter, an optional # or b and an octave"),
    ("bmi", {"weight_kg": 70, "height_cm": 1.75}, "give the height in centimetres"),
    (
        "daily_calorie_needs",
        {"weight_kg": 70, "height_cm": 175, "age": 30, "sex": "male", "activity_level": "extreme"},
        "unknown activity level 'extreme'",
    ),
    ("exercise_calories", {"activity": "swiming", "minutes": 30, "weight_kg": 70}, "did you mean 'swimming'?"),
    ("flight_status", {"flight_number": "ZP11", "date": "2026-02-14"}, "did you mean 'ZP101'?"),
    ("fuel_cost", {"distance_km": 0, "litres_per_100km": 5, "price_per_litre": 2}, "less than or equal to the minimum"),
    (
        "ev_charging_time",
        {"battery_kwh": 75, "from_percent": 90, "to_percent": 20, "charger_kw": 150},
        "need 0 <= from_percent < to_percent <= 100",
    ),
]


@pytest.mark.parametrize(("tool", "arguments", "expected"), HAPPY, ids=[h[0] for h in HAPPY])
def test_each_tool_answers(tool: str, arguments: dict[str, Any], expected: dict[str, Any]):
    result = run(tool, arguments)
    assert {k: result[k] for k in expected} == expected
    assert run(tool, arguments) == result  # deterministic
    json.dumps(result)  # a JSON value the model can read


@pytest.mark.parametrize(("tool", "arguments", "message"), BAD, ids=[b[0] for b in BAD])
def test_each_tool_refuses_bad_input_readably(tool: str, arguments: dict[str, Any], message: str):
    with pytest.raises(ToolExecutionError) as caught:
        run(tool, arguments)
    assert message in str(caught.value)


def test_every_tool_has_a_happy_and_a_bad_case():
    assert {h[0] for h in HAPPY} == set(SPECS) == {b[0] for b in BAD}


def test_run_refuses_unknown_tools_and_arguments():
    with pytest.raises(ToolExecutionError, match="unknown tool 'calculator'; did you mean 'calculate'"):
        run("calculator", {})
    with pytest.raises(ToolExecutionError) as caught:
        run("calculate", {"expression": "1", "extra": 2})
    assert caught.value.error_type == "invalid_arguments" and "'extra' was unexpected" in str(caught.value)
    with pytest.raises(ToolExecutionError, match="'expression' is a required property"):
        run("calculate", {})
    with pytest.raises(ToolExecutionError, match="is too long"):
        run("calculate", {"expression": "1+" * 200 + "1"})


# ---------------------------------------------------------------------------------------------------------------
# The calculator


@pytest.mark.parametrize(
    ("expression", "result"),
    [
        ("1 + 1", 2),
        ("45465 * 5487", 249466455),
        ("0.1 + 0.2", 0.3),
        ("10 / 4", 2.5),
        ("10 / 2", 5),
        ("-7 // 2", -4),
        ("17 % 5", 2),
        ("2 ** 10", 1024),
        ("2 ** -1", 0.5),
        ("(3 + 4) * -(2 - 5)", 21),
        ("10 ** 100", 10**100),
        ("(" * 149 + "1" + ")" * 149, 1),  # the deepest nesting the length limit lets through
    ],
)
def test_calculator_arithmetic(expression: str, result: float):
    assert run("calculate", {"expression": expression})["result"] == result


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("__import__('os').system('ls')", "no names or functions"),
        ("abs(-3)", "no names or functions"),
        ("x + 1", "'x' is not allowed"),
        ("(1).real", "no names or functions"),
        ("[1, 2]", "is not allowed"),
        ("True + 1", "is not allowed"),
        ("'a' * 3", "is not allowed"),
        ("1 if 1 else 2", "is not allowed"),
        ("lambda: 1", "is not allowed"),
        ("1 < 2", "is not allowed"),
        ("2 ^ 10", "write powers with **"),
        ("9 ** 9 ** 9", "the power is too large"),
        ("10 ** 101", "the power is too large"),
        ("2 ** 400", "the power is too large"),
        ("10 ** 60 * 10 ** 60", "exceeds 1e100"),
        ("1e308 * 10", "exceeds 1e100"),
        ("1e99 * 1e99 * 1e99 * 1e99", "exceeds 1e100"),
        ("1 / 0", "division by zero"),
        ("5 % 0", "division by zero"),
        ("(-8) ** (1 / 3)", "no real-valued result"),
        ("1 +* 2", "could not parse"),
        ("   ", "empty"),
    ],
)
def test_calculator_refuses_everything_but_arithmetic(expression: str, message: str):
    with pytest.raises(ToolExecutionError, match=re.escape(message)):
        run("calculate", {"expression": expression})


# ---------------------------------------------------------------------------------------------------------------
# Seeded data and dates


def test_seeded_values_are_fixed_and_plausible():
    quote = run("stock_quote", {"symbol": "ORBT", "date": "2025-06-03"})
    assert quote["low"] <= min(quote["open"], quote["close"]) <= max(quote["open"], quote["close"]) <= quote["high"]
    rate = run("exchange_rate", {"base": "EUR", "quote": "USD", "date": "2025-06-02"})["rate"]
    inverse = run("exchange_rate", {"base": "USD", "quote": "EUR", "date": "2025-06-02"})["rate"]
    assert rate * inverse == pytest.approx(1, rel=1e-5)
    converted = run("convert_currency", {"amount": 100, "base": "EUR", "quote": "USD", "date": "2025-06-02"})
    assert converted["converted"] == round(100 * rate, 2)
    history = run("price_history", {"symbol": "ORBT", "start": "2025-06-02", "end": "2025-06-06"})
    assert history["closes"][1]["close"] == quote["close"]
    days = run("forecast", {"city": "Tokyo", "days": 7})["days"]
    assert days[0]["date"] == "2026-03-21" and len(days) == 7
    assert all(d["low_c"] <= d["high_c"] for d in days)
    rolls = run("roll_dice", {"sides": 20, "count": 100, "seed": 3})["rolls"]
    assert all(1 <= r <= 20 for r in rolls) and len(set(rolls)) > 10
    table = run("team_standings", {"league": "Metro Premier", "season": 2023})["table"]
    assert [r["position"] for r in table] == list(range(1, 7))
    assert sum(r["goals_for"] for r in table) == sum(r["goals_against"] for r in table)
    assert all(r["played"] == 10 and r["points"] == 3 * r["won"] + r["drawn"] for r in table)
    summer = run("historical_weather", {"city": "Sydney", "date": "2025-01-15"})["mean_c"]
    winter = run("historical_weather", {"city": "Sydney", "date": "2025-07-15"})["mean_c"]
    assert summer > winter  # the southern hemisphere's seasons


def test_holiday_rules_give_known_dates():
    def dates(country: str, year: int) -> dict[str, str]:
        return {h["name"]: h["date"] for h in run("public_holidays", {"country": country, "year": year})["holidays"]}

    assert dates("US", 2026)["Thanksgiving Day"] == "2026-11-26"
    assert dates("US", 2026)["Memorial Day"] == "2026-05-25"
    assert dates("UK", 2026)["Good Friday"] == "2026-04-03"
    assert dates("Germany", 2027)["Whit Monday"] == "2027-05-17"
    assert dates("Japan", 2026)["Vernal Equinox Day"] == "2026-03-20"
    assert dates("Canada", 2025)["Victoria Day"] == "2025-05-19"
    after = run("next_holiday", {"country": "France", "date": "2026-12-26"})
    assert (after["name"], after["date"], after["days_away"]) == ("New Year's Day", "2027-01-01", 6)


def test_no_tool_reads_the_clock():
    modules = sorted(Path(tools_module.__file__).parent.glob("*.py"))
    assert len(modules) >= 15  # the library and its domain modules
    for module in modules:
        source = module.read_text()
        assert not re.search(r"\b(today|now|utcnow)\(", source), module.name
        assert "import random" not in source and "urllib" not in source and "httpx" not in source, module.name


def test_specs_are_documented_json_schemas():
    assert len(ALL_TOOLS) >= 44 and len(categories()) >= 9
    for spec in ALL_TOOLS:
        assert spec.binding == {"category": spec.binding["category"], "function": spec.name}
        assert len(spec.description) > 40
        schema = spec.parameters
        assert schema["additionalProperties"] is False and set(schema["required"]) <= set(schema["properties"])
        for name, prop in schema["properties"].items():
            assert prop["type"] in ("string", "integer", "number", "boolean"), (spec.name, name)
            assert len(prop["description"]) > 5, (spec.name, name)


def test_toolbox_runs_a_gold_plan_in_the_environment():
    box = FailTalmsToolBox()
    assert box.new_state() == {} and set(box.specs) == set(SPECS)
    assert box.argument_error(box.specs["forecast"], {"city": "Oslo", "days": "3"}) is not None
    scenario = next(s for s in SCENARIOS if len(s.gold.plans[0]) >= 2)
    env = Environment(scenario, FailTalmsToolBox([SPECS[t] for t in scenario.tools]))
    env.reset()
    results = []
    for i, call in enumerate(scenario.gold.plans[0]):
        observation = env.step(
            Action(kind="tool_call", tool_call=ToolCall(id=str(i), name=call.tool, arguments=call.arguments))
        )
        assert observation is not None and observation.ok, observation
        results.append(observation.result)
    assert answer_of(results, scenario.metadata["answer_paths"]) == scenario.gold.answer
    refused = env.step(Action(kind="tool_call", tool_call=ToolCall(id="x", name=call.tool, arguments={"bogus": 1})))
    assert refused is not None and not refused.ok


# ---------------------------------------------------------------------------------------------------------------
# The library


def _mentions(text: str, value: Any) -> bool:
    """``value`` as a whole token of ``text`` (case-insensitive): "12" is not in "2026-12-25"'s neighbours."""
    return re.search(r"(?<![\w.-])" + re.escape(str(value).casefold()) + r"(?![\w-])", text.casefold()) is not None


def test_library_size_and_shape():
    assert len(SCENARIOS) >= 150
    assert len({s.id for s in SCENARIOS}) == len(SCENARIOS)
    by_category = Counter(s.metadata["category"] for s in SCENARIOS)
    assert len(by_category) >= 8 and set(by_category) <= set(categories())
    for s in SCENARIOS:
        assert re.fullmatch(rf"failtalms/{s.metadata['category'].lower()}/\d\d", s.id)
        assert s.family == "failtalms" and s.metadata["setting_source"] == "offline"
        assert s.tools == s.gold.solution_tools() and len(s.gold.plans) == 1
        assert Scenario.model_validate_json(s.model_dump_json()) == s
    sizes = Counter(len(set(s.tools)) for s in SCENARIOS)
    assert sizes[2] > len(SCENARIOS) / 2 and sizes[1] > 0 and sizes[3] > 0


def test_every_plan_replays_to_its_gold_answer():
    for s in SCENARIOS:
        plan = s.gold.plans[0]
        _, results = replay([(c.tool, dict(c.arguments)) for c in plan])
        answer = answer_of(results, s.metadata["answer_paths"])
        assert answer == s.gold.answer, s.id
        values = [v for record in answer for v in record.values()]
        assert values and None not in values, s.id
        assert all(isinstance(a, str | int | float) for c in plan for a in c.arguments.values()), s.id


def test_every_tool_is_used_by_some_scenario():
    used = {t for s in SCENARIOS for t in s.tools}
    assert used == set(SPECS)


def test_masks_leave_out_exactly_their_value():
    masked = [s for s in SCENARIOS if s.masks]
    assert len(masked) >= 0.85 * len(SCENARIOS)
    for s in masked:
        for mask in s.masks:
            assert _mentions(s.task, mask.value), (s.id, mask.value)
            assert not _mentions(mask.task, mask.value), (s.id, mask.value)
            assert mask.phrase and mask.task != s.task
            calls = [c for c in s.gold.plans[0] if c.tool == mask.tool]
            assert any(c.arguments.get(mask.argument) == mask.value for c in calls), (s.id, mask.tool)
            assert mask.argument in SPECS[mask.tool].parameters["properties"]


def test_both_kinds_of_replaceable_tools_occur():
    for s in SCENARIOS:
        assert set(s.replaceable) == set(s.tools), s.id
    assert sum(any(s.replaceable.values()) for s in SCENARIOS) >= 30
    assert sum(not all(s.replaceable.values()) for s in SCENARIOS) >= 30
    replaceable = {t for s in SCENARIOS for t, easy in s.replaceable.items() if easy}
    assert {"calculate", "random_joke", "day_of_week"} <= replaceable
    assert not any(s.replaceable.get(t) for s in SCENARIOS for t in ("rocket_launch_simulation", "stock_quote"))


def test_pick_paths():
    results = [{"rows": [{"k": "a", "v": 1}, {"k": "b", "v": 2}]}, {"x": 3}]
    assert pick(results, "0.rows.1.v") == 2
    assert pick(results, "0.rows.*.k") == ["a", "b"]
    assert pick(results, "0.rows.k=b.v") == 2
    assert answer_of(results, ["0.rows.0.v", "0.rows.1.v", "1.x"]) == [{"v": 1, "v_2": 2, "x": 3}]
    with pytest.raises(KeyError):
        pick(results, "0.rows.k=c.v")
