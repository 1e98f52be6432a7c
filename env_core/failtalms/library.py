"""The FAIL-TaLMs scenario library: hand-written, fully specified ("perfect") requests over the offline tools.

Each case names its request, the calls that serve it, where the answer's facts sit in those calls' results, the
tools an average person could stand in for with little effort, and its under-specified variants (the request with
one needed value left out). The gold plan is replayed through :func:`env_core.failtalms.tools.run` when the library
is built, so every gold answer is what the tools return, never a value typed by hand; an argument that depends on
an earlier result (:class:`Ref`) is resolved then and written into the plan as a literal.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from undertow.env_core.failtalms.tools import run
from undertow.env_core.model import Gold, Mask, PlannedCall, Scenario

FAMILY = "failtalms"


@dataclass(frozen=True)
class Ref:
    """An argument taken from an earlier call's result when the library is built: ``path`` into the results (see
    :func:`pick`), formatted with ``template`` when given ("{} * 4" makes a calculator expression)."""

    path: str
    template: str | None = None


@dataclass(frozen=True)
class Case:
    """One request: ``calls`` (tool, arguments) serve it; ``answer`` are paths to the facts a right answer states;
    ``easy`` the gold tools a person could stand in for; ``masks`` are (request without a value, "tool.argument",
    how the user says the value)."""

    task: str
    calls: list[tuple[str, dict[str, Any]]]
    answer: list[str]
    easy: tuple[str, ...] = ()
    masks: list[tuple[str, str, str]] = field(default_factory=list)


def pick(results: Sequence[Any], path: str) -> Any:
    """The value at ``path`` in a plan's results: the call's index, then dict keys, list indexes, ``*`` (every item
    of a list) or ``key=value`` (the first row whose ``key`` reads ``value``), separated by dots."""
    head, *rest = path.split(".")
    return _walk(results[int(head)], rest, path)


def _walk(value: Any, steps: list[str], path: str) -> Any:
    for i, step in enumerate(steps):
        if step == "*":
            return [_walk(item, steps[i + 1 :], path) for item in value]
        if "=" in step:
            key, wanted = step.split("=", 1)
            value = next((row for row in value if str(row.get(key)) == wanted), None)
            if value is None:
                raise KeyError(f"{path}: no row with {key} = {wanted!r}")
        elif isinstance(value, list):
            value = value[int(step)]
        else:
            value = value[step]
    return value


def answer_of(results: Sequence[Any], paths: Sequence[str]) -> list[dict[str, Any]]:
    """The gold answer: one record holding the value of every path, keyed by the path's last field name (a repeated
    name gets a number: ``close``, ``close_2``)."""
    record: dict[str, Any] = {}
    for path in paths:
        name = next(s for s in reversed(path.split(".")) if not s.isdigit() and s != "*" and "=" not in s)
        key, n = name, 1
        while key in record:
            n += 1
            key = f"{name}_{n}"
        record[key] = pick(results, path)
    return [record]


def _resolve(value: Any, results: Sequence[Any]) -> Any:
    if not isinstance(value, Ref):
        return value
    found = pick(results, value.path)
    return found if value.template is None else value.template.format(found)


def replay(calls: Sequence[tuple[str, dict[str, Any]]]) -> tuple[list[PlannedCall], list[Any]]:
    """Run calls in order, resolving each :class:`Ref` against the results so far: the literal plan and its
    results."""
    plan: list[PlannedCall] = []
    results: list[Any] = []
    for tool, arguments in calls:
        literal = {name: _resolve(value, results) for name, value in arguments.items()}
        results.append(run(tool, literal))
        plan.append(PlannedCall(tool=tool, arguments=literal))
    return plan, results


def build_gold(calls: Sequence[tuple[str, dict[str, Any]]], paths: Sequence[str]) -> Gold:
    """The gold of a request: its literal plan, and the answer read from what the plan returns."""
    plan, results = replay(calls)
    answer = answer_of(results, paths)
    # the oracle reports every fact the request asked for (the results of all its calls), not only the last result
    return Gold(answer=answer, plans=[plan], reports=[json.dumps(answer, ensure_ascii=False)])


def _mask(plan: list[PlannedCall], masked: str, target: str, phrase: str) -> Mask:
    """The mask's value is the argument of the first ``tool`` call whose value the masked text leaves out."""
    tool, argument = target.split(".")
    values = [c.arguments[argument] for c in plan if c.tool == tool and argument in c.arguments]
    if not values:
        raise ValueError(f"mask {target}: the plan has no such call argument")
    value = next((v for v in values if str(v).casefold() not in masked.casefold()), values[0])
    return Mask(task=masked, tool=tool, argument=argument, value=value, phrase=phrase)


def scenario(category: str, number: int, case: Case) -> Scenario:
    gold = build_gold(case.calls, case.answer)
    tools = gold.solution_tools()
    unknown = set(case.easy) - set(tools)
    if unknown:
        raise ValueError(f"{category} {number}: easy names tools the plan does not use: {sorted(unknown)}")
    return Scenario(
        id=f"{FAMILY}/{category.lower()}/{number:02d}",
        family=FAMILY,
        task=case.task,
        tools=tools,
        gold=gold,
        masks=[_mask(gold.plans[0], *m) for m in case.masks],
        replaceable={tool: tool in case.easy for tool in tools},
        metadata={"category": category, "setting_source": "offline", "answer_paths": list(case.answer)},
    )


def base_scenarios() -> list[Scenario]:
    """Every request of the library, in category order."""
    return [scenario(category, n, case) for category, cases in CASES.items() for n, case in enumerate(cases, 1)]


C = Case  # the table below is long; a short name keeps it readable

CASES: dict[str, list[Case]] = {
    "Science": [
        C(
            "A recipe for 6 people calls for 2.5 pounds of flour, but I'm cooking for 4. Work out 2.5 * 4 / 6 and "
            "convert that many pounds to kilograms.",
            [
                ("calculate", {"expression": "2.5 * 4 / 6"}),
                ("convert_units", {"value": Ref("0.result"), "from_unit": "pounds", "to_unit": "kilograms"}),
            ],
            ["1.result"],
            easy=("calculate",),
            masks=[
                (
                    "A recipe for 6 people calls for 2.5 pounds of flour, but I'm cooking for 4. Work out 2.5 * 4 / 6 "
                    "and convert that many pounds to the unit my kitchen scale shows.",
                    "convert_units.to_unit",
                    "kilograms",
                )
            ],
        ),
        C(
            "My rent went from 1450 to 1595 a month. By what percent did it rise, and how much extra will I pay "
            "over 12 months?",
            [
                ("percentage_change", {"old": 1450, "new": 1595}),
                ("calculate", {"expression": Ref("0.change", "{} * 12")}),
            ],
            ["0.percent_change", "1.result"],
            easy=("percentage_change", "calculate"),
            masks=[
                (
                    "My rent just went up to 1595 a month. By what percent did it rise, and how much extra will I pay "
                    "over 12 months?",
                    "percentage_change.old",
                    "it used to be 1450 a month",
                )
            ],
        ),
        C(
            "I'm making a saline solution for the lab. What is the atomic weight of sodium, and what is the molar "
            "mass of NaCl?",
            [("element_info", {"symbol": "sodium"}), ("molar_mass", {"formula": "NaCl"})],
            ["0.atomic_weight", "1.molar_mass_g_mol"],
            masks=[
                (
                    "I'm making a solution for the lab. What is the atomic weight of sodium, and what is the molar "
                    "mass of the compound I'm dissolving?",
                    "molar_mass.formula",
                    "NaCl, table salt",
                )
            ],
        ),
        C(
            "How many grams of glucose (C6H12O6) do I need for 0.25 mol? Look up its molar mass and multiply it by "
            "0.25.",
            [
                ("molar_mass", {"formula": "C6H12O6"}),
                ("calculate", {"expression": Ref("0.molar_mass_g_mol", "{} * 0.25")}),
            ],
            ["0.molar_mass_g_mol", "1.result"],
            easy=("calculate",),
            masks=[
                (
                    "How many grams of my reagent do I need for 0.25 mol? Look up its molar mass and multiply it by "
                    "0.25.",
                    "molar_mass.formula",
                    "glucose, C6H12O6",
                )
            ],
        ),
        C(
            "What is the surface gravity on Mars, and what force in newtons does a 70 kg astronaut feel there "
            "(70 times the gravity)?",
            [("planet_facts", {"planet": "Mars"}), ("calculate", {"expression": Ref("0.gravity_m_s2", "70 * {}")})],
            ["0.gravity_m_s2", "1.result"],
            easy=("calculate",),
            masks=[
                (
                    "What is the surface gravity on the planet in my story, and what force in newtons does a 70 kg "
                    "astronaut feel there (70 times the gravity)?",
                    "planet_facts.planet",
                    "Mars",
                )
            ],
        ),
        C(
            "Simulate a launch of a 500 kg payload on a rocket with 20000 kg of fuel and 400 kN of thrust. What "
            "delta-v does it get, and what apogee does it reach?",
            [("rocket_launch_simulation", {"payload_kg": 500, "fuel_kg": 20000, "thrust_kn": 400})],
            ["0.delta_v_m_s", "0.apogee_km"],
            masks=[
                (
                    "Simulate a launch of my payload on a rocket with 20000 kg of fuel and 400 kN of thrust. What "
                    "delta-v does it get, and what apogee does it reach?",
                    "rocket_launch_simulation.payload_kg",
                    "500 kg",
                ),
                (
                    "Simulate a launch of a 500 kg payload on a rocket with 20000 kg of fuel and the thrust of our "
                    "engine. What delta-v does it get, and what apogee does it reach?",
                    "rocket_launch_simulation.thrust_kn",
                    "400 kN",
                ),
            ],
        ),
        C(
            "Run a launch simulation for a 1200 kg satellite with 45000 kg of propellant and 900 kN of thrust, then "
            "convert the apogee from km to miles.",
            [
                ("rocket_launch_simulation", {"payload_kg": 1200, "fuel_kg": 45000, "thrust_kn": 900}),
                ("convert_units", {"value": Ref("0.apogee_km"), "from_unit": "km", "to_unit": "miles"}),
            ],
            ["0.apogee_km", "1.result"],
            masks=[
                (
                    "Run a launch simulation for a 1200 kg satellite with the propellant load we planned and 900 kN "
                    "of thrust, then convert the apogee from km to miles.",
                    "rocket_launch_simulation.fuel_kg",
                    "45000 kg",
                )
            ],
        ),
        C(
            "Is 1000003 a prime number? Also, what is 1000003 % 97?",
            [("prime_factors", {"n": 1000003}), ("calculate", {"expression": "1000003 % 97"})],
            ["0.factors", "1.result"],
            masks=[
                (
                    "Is the number on my raffle ticket a prime? Also, what is its remainder when divided by 97?",
                    "prime_factors.n",
                    "1000003",
                )
            ],
        ),
        C(
            "My old car's tank held 12 gallons and the new one holds 55 liters. Convert 12 gallons to liters and "
            "tell me the percentage change in capacity.",
            [
                ("convert_units", {"value": 12, "from_unit": "gallons", "to_unit": "liters"}),
                ("percentage_change", {"old": Ref("0.result"), "new": 55}),
            ],
            ["0.result", "1.percent_change"],
            masks=[
                (
                    "My old car's tank was smaller and the new one holds 55 liters. Convert the old tank's size in "
                    "gallons to liters and tell me the percentage change in capacity.",
                    "convert_units.value",
                    "12 gallons",
                )
            ],
        ),
        C(
            "Which group of the periodic table does argon belong to, and what is its atomic number?",
            [("element_info", {"symbol": "argon"})],
            ["0.group", "0.atomic_number"],
            masks=[
                (
                    "Which group of the periodic table does the gas in my double glazing belong to, and what is its "
                    "atomic number?",
                    "element_info.symbol",
                    "argon",
                )
            ],
        ),
        C(
            "What is 15% of 80, and what do I get when I add that to 80?",
            [("calculate", {"expression": "80 * 0.15"}), ("calculate", {"expression": "80 + 12"})],
            ["0.result", "1.result"],
            easy=("calculate",),
        ),
        C(
            "My thermometer reads 98.6 degrees Fahrenheit. What is that in Celsius?",
            [("convert_units", {"value": 98.6, "from_unit": "Fahrenheit", "to_unit": "Celsius"})],
            ["0.result"],
            easy=("convert_units",),
            masks=[
                (
                    "My thermometer shows a reading in Fahrenheit. What is that in Celsius?",
                    "convert_units.value",
                    "98.6 °F",
                )
            ],
        ),
        C(
            "How long is a year on Neptune in Earth days, and how many Earth years is that (the days divided by "
            "365.25)?",
            [
                ("planet_facts", {"planet": "Neptune"}),
                ("calculate", {"expression": Ref("0.year_days", "{} / 365.25")}),
            ],
            ["0.year_days", "1.result"],
            easy=("calculate",),
            masks=[
                (
                    "How long is a year on the planet my science project is about, in Earth days, and how many Earth "
                    "years is that (the days divided by 365.25)?",
                    "planet_facts.planet",
                    "Neptune",
                )
            ],
        ),
        C(
            "What is the molar mass of CaCO3, and which group of the periodic table does calcium belong to?",
            [("molar_mass", {"formula": "CaCO3"}), ("element_info", {"symbol": "calcium"})],
            ["0.molar_mass_g_mol", "1.group"],
            masks=[
                (
                    "What is the molar mass of the compound in my antacid tablets, and which group of the periodic "
                    "table does calcium belong to?",
                    "molar_mass.formula",
                    "CaCO3, calcium carbonate",
                )
            ],
        ),
        C(
            "Simulate a launch of a 1500 kg payload with 60000 kg of fuel and 1200 kN of thrust. Does it lift off, "
            "what is its lift-off thrust-to-weight ratio, and is its delta-v enough for orbit?",
            [("rocket_launch_simulation", {"payload_kg": 1500, "fuel_kg": 60000, "thrust_kn": 1200})],
            ["0.lifts_off", "0.liftoff_thrust_to_weight", "0.reaches_orbit_delta_v"],
            masks=[
                (
                    "Simulate a launch of a 1500 kg payload with the fuel load in our design and 1200 kN of thrust. "
                    "Does it lift off, what is its lift-off thrust-to-weight ratio, and is its delta-v enough for "
                    "orbit?",
                    "rocket_launch_simulation.fuel_kg",
                    "60000 kg of fuel",
                ),
                (
                    "Simulate a launch of a 1500 kg payload with 60000 kg of fuel and the thrust our engine gives. "
                    "Does it lift off, what is its lift-off thrust-to-weight ratio, and is its delta-v enough for "
                    "orbit?",
                    "rocket_launch_simulation.thrust_kn",
                    "1200 kN",
                ),
            ],
        ),
    ],
    "Calendar": [
        C(
            "My visa starts on 2026-05-11 and is valid for 90 days. What weekday does it start on, and on what date "
            "does it run out?",
            [("day_of_week", {"date": "2026-05-11"}), ("add_days", {"date": "2026-05-11", "days": 90})],
            ["0.day_of_week", "1.result"],
            easy=("day_of_week",),
            masks=[
                (
                    "My visa is valid for 90 days from its start date. What weekday does it start on, and on what "
                    "date does it run out?",
                    "day_of_week.date",
                    "11 May 2026",
                ),
                (
                    "My visa starts on 2026-05-11. What weekday is that, and on what date does it run out?",
                    "add_days.days",
                    "it is valid for 90 days",
                ),
            ],
        ),
        C(
            "How many days are there from 2026-03-20 until my sister's wedding on 2026-09-12, how many of those are "
            "weekdays, and what day of the week is the wedding?",
            [("days_between", {"start": "2026-03-20", "end": "2026-09-12"}), ("day_of_week", {"date": "2026-09-12"})],
            ["0.days", "0.weekdays", "1.day_of_week"],
            masks=[
                (
                    "How many days are there from 2026-03-20 until my sister's wedding, how many of those are "
                    "weekdays, and what day of the week is the wedding?",
                    "days_between.end",
                    "12 September 2026",
                ),
                (
                    "How many days are left until my sister's wedding on 2026-09-12, how many of those are weekdays, "
                    "and what day of the week is the wedding?",
                    "days_between.start",
                    "today is 2026-03-20",
                ),
            ],
        ),
        C(
            "I'm moving to Germany. How many public holidays does it have in 2026, and what weekday is German Unity "
            "Day, 2026-10-03?",
            [("public_holidays", {"country": "Germany", "year": 2026}), ("day_of_week", {"date": "2026-10-03"})],
            ["0.count", "1.day_of_week"],
            easy=("day_of_week",),
            masks=[
                (
                    "I'm moving abroad. How many public holidays does my new country have in 2026, and what weekday "
                    "is 2026-10-03?",
                    "public_holidays.country",
                    "Germany",
                )
            ],
        ),
        C(
            "Starting from 2026-04-10, what is the next public holiday in the United Kingdom, and how many days are "
            "there from that holiday until 2026-12-25?",
            [
                ("next_holiday", {"country": "United Kingdom", "date": "2026-04-10"}),
                ("days_between", {"start": Ref("0.date"), "end": "2026-12-25"}),
            ],
            ["0.name", "0.date", "1.days"],
            masks=[
                (
                    "Starting from 2026-04-10, what is the next public holiday where I live, and how many days are "
                    "there from that holiday until 2026-12-25?",
                    "next_holiday.country",
                    "the UK",
                )
            ],
        ),
        C(
            "I'm in Japan. Which public holiday is the first one on or after 2026-07-01, how many days away is it, and "
            "how many public holidays does Japan have in 2026 altogether?",
            [
                ("next_holiday", {"country": "Japan", "date": "2026-07-01"}),
                ("public_holidays", {"country": "Japan", "year": 2026}),
            ],
            ["0.name", "0.date", "0.days_away", "1.count"],
            masks=[
                (
                    "I'm in Japan. Which public holiday comes next, how many days away is it, and how many public "
                    "holidays does Japan have in 2026 altogether?",
                    "next_holiday.date",
                    "today, 1 July 2026",
                )
            ],
        ),
        C(
            "What date is 30 days after 2026-06-01, and which weekday is it?",
            [("add_days", {"date": "2026-06-01", "days": 30})],
            ["0.result", "0.day_of_week"],
            easy=("add_days",),
            masks=[
                (
                    "What date is 30 days after my start date, and which weekday is it?",
                    "add_days.date",
                    "1 June 2026",
                )
            ],
        ),
        C(
            "How many public holidays does France have in 2027, and on what date is Ascension Day that year?",
            [("public_holidays", {"country": "France", "year": 2027})],
            ["0.count", "0.holidays.name=Ascension Day.date"],
            masks=[
                (
                    "How many public holidays does France have in the year I'm planning for, and on what date is "
                    "Ascension Day then?",
                    "public_holidays.year",
                    "2027",
                )
            ],
        ),
        C(
            "I was born on 1990-08-17. What weekday was that, how many days old will I be on 2026-08-17, and on "
            "what date will I be 20000 days old?",
            [
                ("day_of_week", {"date": "1990-08-17"}),
                ("days_between", {"start": "1990-08-17", "end": "2026-08-17"}),
                ("add_days", {"date": "1990-08-17", "days": 20000}),
            ],
            ["0.day_of_week", "1.days", "2.result"],
            masks=[
                (
                    "What weekday was I born on, how many days old will I be on 2026-08-17, and on what date will I "
                    "be 20000 days old?",
                    "day_of_week.date",
                    "17 August 1990",
                )
            ],
        ),
        C(
            "What day of the week is Christmas Day, 2026-12-25, how many public holidays does the United States have "
            "in 2026, and how many days are there from Thanksgiving, 2026-11-26, to Christmas?",
            [
                ("day_of_week", {"date": "2026-12-25"}),
                ("public_holidays", {"country": "United States", "year": 2026}),
                ("days_between", {"start": "2026-11-26", "end": "2026-12-25"}),
            ],
            ["0.day_of_week", "1.count", "2.days"],
            easy=("day_of_week", "days_between"),
            masks=[
                (
                    "What day of the week is Christmas Day, 2026-12-25, how many public holidays does my country have "
                    "in 2026, and how many days are there from Thanksgiving, 2026-11-26, to Christmas?",
                    "public_holidays.country",
                    "the United States",
                )
            ],
        ),
        C(
            "What day of the week was 2026-01-01, and what date was one week later?",
            [("day_of_week", {"date": "2026-01-01"}), ("add_days", {"date": "2026-01-01", "days": 7})],
            ["0.day_of_week", "1.result"],
            easy=("day_of_week", "add_days"),
            masks=[
                (
                    "What day of the week was my first day at the new job, and what date was one week later?",
                    "day_of_week.date",
                    "1 January 2026",
                )
            ],
        ),
        C(
            "How many days are there from 2026-02-09 to 2026-06-19, and how many of them are weekdays?",
            [("days_between", {"start": "2026-02-09", "end": "2026-06-19"})],
            ["0.days", "0.weekdays"],
            masks=[
                (
                    "How many days are there from 2026-02-09 to the last day of term, and how many of them are "
                    "weekdays?",
                    "days_between.end",
                    "19 June 2026",
                )
            ],
        ),
        C(
            "On what date and weekday does Canada Day fall in 2027, and how many public holidays does Canada have "
            "that year?",
            [("public_holidays", {"country": "Canada", "year": 2027})],
            [
                "0.holidays.name=Canada Day.date",
                "0.holidays.name=Canada Day.day_of_week",
                "0.count",
            ],
            masks=[
                (
                    "On what date and weekday does Canada Day fall in the year of our family reunion, and how many "
                    "public holidays does Canada have that year?",
                    "public_holidays.year",
                    "2027",
                )
            ],
        ),
        C(
            "My library books were due on 2026-03-02 and I'm returning them on 2026-03-23. How many days late are "
            "they, and what is the fine at 0.25 per day?",
            [
                ("days_between", {"start": "2026-03-02", "end": "2026-03-23"}),
                ("calculate", {"expression": Ref("0.days", "{} * 0.25")}),
            ],
            ["0.days", "1.result"],
            easy=("days_between", "calculate"),
            masks=[
                (
                    "My library books were due on 2026-03-02 and I'm returning them today. How many days late are "
                    "they, and what is the fine at 0.25 per day?",
                    "days_between.end",
                    "today, 23 March 2026",
                )
            ],
        ),
        C(
            "What is the first public holiday in Canada on or after 2026-08-10, and what date and weekday is 3 days "
            "after it?",
            [
                ("next_holiday", {"country": "Canada", "date": "2026-08-10"}),
                ("add_days", {"date": Ref("0.date"), "days": 3}),
            ],
            ["0.name", "0.date", "1.result", "1.day_of_week"],
            easy=("add_days",),
            masks=[
                (
                    "What is the next public holiday in Canada from today, and what date and weekday is 3 days after "
                    "it?",
                    "next_holiday.date",
                    "today is 10 August 2026",
                )
            ],
        ),
        C(
            "What ISO week number and day of the year is 2026-11-11, and what weekday is it?",
            [("day_of_week", {"date": "2026-11-11"})],
            ["0.iso_week", "0.day_of_year", "0.day_of_week"],
            masks=[
                (
                    "What ISO week number and day of the year is my dentist appointment on, and what weekday is it?",
                    "day_of_week.date",
                    "11 November 2026",
                )
            ],
        ),
    ],
    "Geo": [
        C(
            "What is the capital of Japan, what currency does it use, and what time zone is Osaka in?",
            [("country_info", {"country": "Japan"}), ("timezone_of", {"city": "Osaka"})],
            ["0.capital", "0.currency", "1.timezone", "1.utc_offset"],
            easy=("country_info",),
            masks=[
                (
                    "What is the capital of Japan, what currency does it use, and what time zone is the city I'm "
                    "moving to in?",
                    "timezone_of.city",
                    "Osaka",
                )
            ],
        ),
        C(
            "How far is it from Paris to Berlin as the crow flies, and what time zone is Berlin in?",
            [("distance_between", {"city_a": "Paris", "city_b": "Berlin"}), ("timezone_of", {"city": "Berlin"})],
            ["0.distance_km", "1.timezone"],
            masks=[
                (
                    "How far is it from Paris to my next stop as the crow flies, and what time zone is that city in?",
                    "distance_between.city_b",
                    "Berlin",
                )
            ],
        ),
        C(
            "Which cities in Italy does your map service cover, and how far apart are Rome and Milan?",
            [("cities_in_country", {"country": "Italy"}), ("distance_between", {"city_a": "Rome", "city_b": "Milan"})],
            ["0.cities", "1.distance_km"],
            masks=[
                (
                    "Which cities in Italy does your map service cover, and how far is Rome from the city I'm flying "
                    "to?",
                    "distance_between.city_b",
                    "Milan",
                )
            ],
        ),
        C(
            "Compare the populations of Norway and Sweden.",
            [("country_info", {"country": "Norway"}), ("country_info", {"country": "Sweden"})],
            ["0.population", "1.population"],
            masks=[
                (
                    "Compare the population of Norway with that of the country where I was born.",
                    "country_info.country",
                    "Sweden",
                )
            ],
        ),
        C(
            "What are the standard UTC offsets of Sydney and Los Angeles?",
            [("timezone_of", {"city": "Sydney"}), ("timezone_of", {"city": "Los Angeles"})],
            ["0.utc_offset", "1.utc_offset"],
            masks=[
                (
                    "What are the standard UTC offsets of Sydney and of the city my colleague works in?",
                    "timezone_of.city",
                    "Los Angeles",
                )
            ],
        ),
        C(
            "What is the capital of Australia, how far is Sydney from Melbourne, and what time zone is Melbourne in?",
            [
                ("country_info", {"country": "Australia"}),
                ("distance_between", {"city_a": "Sydney", "city_b": "Melbourne"}),
                ("timezone_of", {"city": "Melbourne"}),
            ],
            ["0.capital", "1.distance_km", "2.timezone"],
            easy=("country_info",),
            masks=[
                (
                    "What is the capital of Australia, how far is Sydney from the city I'm driving to, and what time "
                    "zone is that city in?",
                    "distance_between.city_b",
                    "Melbourne",
                )
            ],
        ),
        C(
            "List the cities your service covers in Canada, and give me Vancouver's time zone.",
            [("cities_in_country", {"country": "Canada"}), ("timezone_of", {"city": "Vancouver"})],
            ["0.cities", "1.timezone"],
            masks=[
                (
                    "List the cities your service covers in Canada, and give me the time zone of the one I live in.",
                    "timezone_of.city",
                    "Vancouver",
                )
            ],
        ),
        C(
            "What is the capital of France, and what language is spoken there?",
            [("country_info", {"country": "France"})],
            ["0.capital", "0.languages"],
            easy=("country_info",),
            masks=[
                (
                    "What is the capital of the country I'm visiting, and what language is spoken there?",
                    "country_info.country",
                    "France",
                )
            ],
        ),
        C(
            "What is the capital of Egypt, and how far is Cairo from Nairobi?",
            [("country_info", {"country": "Egypt"}), ("distance_between", {"city_a": "Cairo", "city_b": "Nairobi"})],
            ["0.capital", "1.distance_km"],
            easy=("country_info",),
            masks=[
                (
                    "What is the capital of Egypt, and how far is Cairo from the city my flight continues to?",
                    "distance_between.city_b",
                    "Nairobi",
                )
            ],
        ),
        C(
            "What currency does Switzerland use, what are its main languages, and what time zone is Zurich in?",
            [("country_info", {"country": "Switzerland"}), ("timezone_of", {"city": "Zurich"})],
            ["0.currency", "0.languages", "1.timezone"],
            easy=("country_info",),
            masks=[
                (
                    "What currency does Switzerland use, what are its main languages, and what time zone is the city "
                    "of my conference in?",
                    "timezone_of.city",
                    "Zurich",
                )
            ],
        ),
        C(
            "How far is Tokyo from Seoul in miles, and which cities in South Korea does your service cover?",
            [
                ("distance_between", {"city_a": "Tokyo", "city_b": "Seoul"}),
                ("cities_in_country", {"country": "South Korea"}),
            ],
            ["0.distance_miles", "1.cities"],
            masks=[
                (
                    "How far is Tokyo in miles from the city I'm flying to next, and which cities in South Korea does "
                    "your service cover?",
                    "distance_between.city_b",
                    "Seoul",
                )
            ],
        ),
        C(
            "Does Buenos Aires observe daylight saving time, and what is its standard UTC offset?",
            [("timezone_of", {"city": "Buenos Aires"})],
            ["0.observes_dst", "0.utc_offset"],
            masks=[
                (
                    "Does my cousin's city observe daylight saving time, and what is its standard UTC offset?",
                    "timezone_of.city",
                    "Buenos Aires",
                )
            ],
        ),
        C(
            "Which continent is Turkey counted in, what is its capital, and how far is Istanbul from Ankara?",
            [
                ("country_info", {"country": "Turkey"}),
                ("distance_between", {"city_a": "Istanbul", "city_b": "Ankara"}),
            ],
            ["0.continent", "0.capital", "1.distance_km"],
            easy=("country_info",),
            masks=[
                (
                    "Which continent is Turkey counted in, what is its capital, and how far is the city I land in "
                    "from Ankara?",
                    "distance_between.city_a",
                    "Istanbul",
                )
            ],
        ),
        C(
            "What are Brazil's capital and currency, which Brazilian cities does your service cover, and how far is "
            "São Paulo from Rio de Janeiro?",
            [
                ("country_info", {"country": "Brazil"}),
                ("cities_in_country", {"country": "Brazil"}),
                ("distance_between", {"city_a": "São Paulo", "city_b": "Rio de Janeiro"}),
            ],
            ["0.capital", "0.currency", "1.cities", "2.distance_km"],
            easy=("country_info",),
            masks=[
                (
                    "What are Brazil's capital and currency, which Brazilian cities does your service cover, and how "
                    "far is São Paulo from the city we visit after it?",
                    "distance_between.city_b",
                    "Rio de Janeiro",
                )
            ],
        ),
    ],
    "Finance": [
        C(
            "What did NVTK close at on 2025-03-14, and what was that price in EUR at that day's rate?",
            [
                ("stock_quote", {"symbol": "NVTK", "date": "2025-03-14"}),
                ("convert_currency", {"amount": Ref("0.close"), "base": "USD", "quote": "EUR", "date": "2025-03-14"}),
            ],
            ["0.close", "1.converted"],
            masks=[
                (
                    "What did NVTK close at on the day I sold my shares, and what was that price in EUR at that "
                    "day's rate?",
                    "stock_quote.date",
                    "2025-03-14",
                ),
                (
                    "What did my stock close at on 2025-03-14, and what was that price in EUR at that day's rate?",
                    "stock_quote.symbol",
                    "NVTK",
                ),
            ],
        ),
        C(
            "Between 2025-01-06 and 2025-01-31, what were ORBT's lowest and highest closing prices, how much did it "
            "change in percent, and how many ORBT shares traded on 2025-01-31?",
            [
                ("price_history", {"symbol": "ORBT", "start": "2025-01-06", "end": "2025-01-31"}),
                ("stock_quote", {"symbol": "ORBT", "date": "2025-01-31"}),
            ],
            ["0.lowest_close", "0.highest_close", "0.change_percent", "1.volume"],
            masks=[
                (
                    "Between 2025-01-06 and 2025-01-31, what were the lowest and highest closing prices of the stock "
                    "I hold, how much did it change in percent, and how many of its shares traded on 2025-01-31?",
                    "price_history.symbol",
                    "ORBT",
                )
            ],
        ),
        C(
            "What was the EUR to JPY exchange rate on 2025-06-02, and how many yen would 850 EUR have bought that day?",
            [
                ("exchange_rate", {"base": "EUR", "quote": "JPY", "date": "2025-06-02"}),
                ("convert_currency", {"amount": 850, "base": "EUR", "quote": "JPY", "date": "2025-06-02"}),
            ],
            ["0.rate", "1.converted"],
            masks=[
                (
                    "What was the EUR to JPY exchange rate on 2025-06-02, and how many yen would my travel budget in "
                    "EUR have bought that day?",
                    "convert_currency.amount",
                    "850 euros",
                )
            ],
        ),
        C(
            "What was the price of bitcoin on 2024-01-01 and on 2025-01-01, and by what percent did it change "
            "between those days?",
            [
                ("crypto_price", {"coin": "bitcoin", "date": "2024-01-01"}),
                ("crypto_price", {"coin": "bitcoin", "date": "2025-01-01"}),
                ("percentage_change", {"old": Ref("0.price_usd"), "new": Ref("1.price_usd")}),
            ],
            ["0.price_usd", "1.price_usd", "2.percent_change"],
            masks=[
                (
                    "What was the price of the coin I bought on 2024-01-01 and on 2025-01-01, and by what percent "
                    "did it change between those days?",
                    "crypto_price.coin",
                    "bitcoin",
                )
            ],
        ),
        C(
            "Compare the closing prices of BLWR and PNCL on 2024-11-29.",
            [
                ("stock_quote", {"symbol": "BLWR", "date": "2024-11-29"}),
                ("stock_quote", {"symbol": "PNCL", "date": "2024-11-29"}),
            ],
            ["0.close", "1.close"],
            masks=[
                (
                    "Compare the closing prices of BLWR and PNCL on the day I rebalanced my portfolio.",
                    "stock_quote.date",
                    "2024-11-29",
                )
            ],
        ),
        C(
            "I'm sending 1200 GBP to a friend in Canada. How much is that in CAD at the 2026-03-02 rate?",
            [("convert_currency", {"amount": 1200, "base": "GBP", "quote": "CAD", "date": "2026-03-02"})],
            ["0.rate", "0.converted"],
            masks=[
                (
                    "I'm sending some GBP to a friend in Canada. How much is that in CAD at the 2026-03-02 rate?",
                    "convert_currency.amount",
                    "1200 pounds",
                ),
                (
                    "I'm sending 1200 GBP to a friend in Canada. How much is that in CAD at the rate of the day I "
                    "made the transfer?",
                    "convert_currency.date",
                    "2026-03-02",
                ),
            ],
        ),
        C(
            "How much did GRNW move from open to close on 2025-09-15, in percent?",
            [
                ("stock_quote", {"symbol": "GRNW", "date": "2025-09-15"}),
                ("percentage_change", {"old": Ref("0.open"), "new": Ref("0.close")}),
            ],
            ["0.open", "0.close", "1.percent_change"],
            masks=[
                (
                    "How much did GRNW move from open to close on the day of its earnings call, in percent?",
                    "stock_quote.date",
                    "2025-09-15",
                )
            ],
        ),
        C(
            "I report my HLXF position in Swiss francs. What was HLXF's highest close between 2024-04-01 and "
            "2024-04-30, and what was the USD to CHF rate on 2024-04-30?",
            [
                ("price_history", {"symbol": "HLXF", "start": "2024-04-01", "end": "2024-04-30"}),
                ("exchange_rate", {"base": "USD", "quote": "CHF", "date": "2024-04-30"}),
            ],
            ["0.highest_close", "1.rate"],
            masks=[
                (
                    "I report my stock position in Swiss francs. What was its highest close between 2024-04-01 and "
                    "2024-04-30, and what was the USD to CHF rate on 2024-04-30?",
                    "price_history.symbol",
                    "HLXF",
                )
            ],
        ),
        C(
            "What was the price of ethereum on 2025-08-01, and what is that in GBP at that day's rate?",
            [
                ("crypto_price", {"coin": "ethereum", "date": "2025-08-01"}),
                (
                    "convert_currency",
                    {"amount": Ref("0.price_usd"), "base": "USD", "quote": "GBP", "date": "2025-08-01"},
                ),
            ],
            ["0.price_usd", "1.converted"],
            masks=[
                (
                    "What was the price of my coin on 2025-08-01, and what is that in GBP at that day's rate?",
                    "crypto_price.coin",
                    "ethereum",
                )
            ],
        ),
        C(
            "What was the exchange rate from USD to INR on 2025-10-01?",
            [("exchange_rate", {"base": "USD", "quote": "INR", "date": "2025-10-01"})],
            ["0.rate"],
            masks=[
                (
                    "What was the exchange rate from USD to my home currency on 2025-10-01?",
                    "exchange_rate.quote",
                    "Indian rupees, INR",
                ),
                (
                    "What was the exchange rate from USD to INR on the day my salary was paid?",
                    "exchange_rate.date",
                    "2025-10-01",
                ),
            ],
        ),
        C(
            "What did CRTX close at on 2025-06-16 and on 2025-12-15, and by what percent did its close change "
            "between those two days?",
            [
                ("stock_quote", {"symbol": "CRTX", "date": "2025-06-16"}),
                ("stock_quote", {"symbol": "CRTX", "date": "2025-12-15"}),
                ("percentage_change", {"old": Ref("0.close"), "new": Ref("1.close")}),
            ],
            ["0.close", "1.close", "2.percent_change"],
            masks=[
                (
                    "What did the healthcare stock I own close at on 2025-06-16 and on 2025-12-15, and by what "
                    "percent did its close change between those two days?",
                    "stock_quote.symbol",
                    "CRTX, Cortex Health",
                )
            ],
        ),
        C(
            "What was dogecoin's price on 2025-02-10, and how much did it move over the previous 24 hours?",
            [("crypto_price", {"coin": "dogecoin", "date": "2025-02-10"})],
            ["0.price_usd", "0.change_24h_percent"],
            masks=[
                (
                    "What was dogecoin's price on the day I bought it, and how much did it move over the previous 24 "
                    "hours?",
                    "crypto_price.date",
                    "2025-02-10",
                )
            ],
        ),
        C(
            "Between 2025-10-01 and 2025-12-31, what were DNLG's lowest and highest closing prices, and what was the "
            "highest close worth in EUR at the 2025-12-31 rate?",
            [
                ("price_history", {"symbol": "DNLG", "start": "2025-10-01", "end": "2025-12-31"}),
                (
                    "convert_currency",
                    {"amount": Ref("0.highest_close"), "base": "USD", "quote": "EUR", "date": "2025-12-31"},
                ),
            ],
            ["0.lowest_close", "0.highest_close", "1.converted"],
            masks=[
                (
                    "Between 2025-10-01 and 2025-12-31, what were the lowest and highest closing prices of the "
                    "logistics stock I hold, and what was the highest close worth in EUR at the 2025-12-31 rate?",
                    "price_history.symbol",
                    "DNLG",
                )
            ],
        ),
        C(
            "I hold 40 shares of PNCL. What was its close on 2026-03-18, and what were my shares worth at that price?",
            [
                ("stock_quote", {"symbol": "PNCL", "date": "2026-03-18"}),
                ("calculate", {"expression": Ref("0.close", "{} * 40")}),
            ],
            ["0.close", "1.result"],
            masks=[
                (
                    "I hold 40 shares of PNCL. What was its close yesterday, and what were my shares worth at that "
                    "price?",
                    "stock_quote.date",
                    "yesterday, 2026-03-18",
                )
            ],
        ),
    ],
    "Weather": [
        C(
            "What's the weather like in Pittsburgh right now, how is the air quality there, and what high is "
            "forecast for tomorrow?",
            [
                ("current_weather", {"city": "Pittsburgh"}),
                ("air_quality", {"city": "Pittsburgh"}),
                ("forecast", {"city": "Pittsburgh", "days": 1}),
            ],
            ["0.temperature_c", "0.condition", "1.aqi", "1.category", "2.days.0.high_c"],
            masks=[
                (
                    "What's the weather like right now, how is the air quality, and what high is forecast for "
                    "tomorrow?",
                    "current_weather.city",
                    "Pittsburgh",
                )
            ],
        ),
        C(
            "Will it rain in Oslo over the next 3 days? Give me each day's high.",
            [("forecast", {"city": "Oslo", "days": 3})],
            ["0.days.*.condition", "0.days.*.high_c"],
            masks=[
                ("Will it rain in Oslo over the next few days? Give me each day's high.", "forecast.days", "3 days"),
                ("Will it rain over the next 3 days where I am? Give me each day's high.", "forecast.city", "Oslo"),
            ],
        ),
        C(
            "How does the current temperature in Madrid compare with the mean temperature there on 2025-03-20?",
            [("current_weather", {"city": "Madrid"}), ("historical_weather", {"city": "Madrid", "date": "2025-03-20"})],
            ["0.temperature_c", "1.mean_c"],
            masks=[
                (
                    "How does the current temperature in Madrid compare with the mean temperature there on the day "
                    "I arrived last year?",
                    "historical_weather.date",
                    "2025-03-20",
                )
            ],
        ),
        C(
            "I'm planning runs in Delhi this week. What's the air quality index there, and what's the forecast for "
            "the next 2 days?",
            [("air_quality", {"city": "Delhi"}), ("forecast", {"city": "Delhi", "days": 2})],
            ["0.aqi", "0.category", "1.days.*.condition", "1.days.*.high_c"],
            masks=[
                (
                    "I'm planning runs this week. What's the air quality index where I'm staying, and what's the "
                    "forecast for the next 2 days?",
                    "air_quality.city",
                    "Delhi",
                )
            ],
        ),
        C(
            "Was it warmer in London or in Paris on 2024-07-14? Give me both mean temperatures.",
            [
                ("historical_weather", {"city": "London", "date": "2024-07-14"}),
                ("historical_weather", {"city": "Paris", "date": "2024-07-14"}),
            ],
            ["0.mean_c", "1.mean_c"],
            masks=[
                (
                    "Was it warmer in London or in Paris on the day of my trip? Give me both mean temperatures.",
                    "historical_weather.date",
                    "2024-07-14",
                )
            ],
        ),
        C(
            "What are the current conditions in Seattle, and what high and low are forecast there for tomorrow?",
            [("current_weather", {"city": "Seattle"}), ("forecast", {"city": "Seattle", "days": 1})],
            ["0.temperature_c", "0.condition", "1.days.0.high_c", "1.days.0.low_c"],
            masks=[
                (
                    "What are the current conditions where I live, and what high and low are forecast for tomorrow?",
                    "current_weather.city",
                    "Seattle",
                )
            ],
        ),
        C(
            "What was the high temperature in Chicago on 2024-01-15, and what is that in Fahrenheit?",
            [
                ("historical_weather", {"city": "Chicago", "date": "2024-01-15"}),
                ("convert_units", {"value": Ref("0.high_c"), "from_unit": "C", "to_unit": "Fahrenheit"}),
            ],
            ["0.high_c", "1.result"],
            masks=[
                (
                    "What was the high temperature in Chicago on the day of the big storm, and what is that in "
                    "Fahrenheit?",
                    "historical_weather.date",
                    "2024-01-15",
                )
            ],
        ),
        C(
            "Is the air quality better in Beijing or in Seoul right now, and what's the temperature in Seoul?",
            [
                ("air_quality", {"city": "Beijing"}),
                ("air_quality", {"city": "Seoul"}),
                ("current_weather", {"city": "Seoul"}),
            ],
            ["0.aqi", "1.aqi", "2.temperature_c"],
            masks=[
                (
                    "Is the air quality better in Beijing or in the city I'm flying to next, and what's the "
                    "temperature there?",
                    "air_quality.city",
                    "Seoul",
                )
            ],
        ),
        C(
            "What's the forecast for Barcelona over the next 5 days? Give me each day's condition and chance of rain.",
            [("forecast", {"city": "Barcelona", "days": 5})],
            ["0.days.*.condition", "0.days.*.precipitation_chance_percent"],
            masks=[
                (
                    "What's the forecast for Barcelona over the next few days? Give me each day's condition and "
                    "chance of rain.",
                    "forecast.days",
                    "5 days",
                ),
                (
                    "What's the forecast where I'm going over the next 5 days? Give me each day's condition and "
                    "chance of rain.",
                    "forecast.city",
                    "Barcelona",
                ),
            ],
        ),
        C(
            "What was the high in Cairo on 2025-08-15, and what is that in Fahrenheit?",
            [
                ("historical_weather", {"city": "Cairo", "date": "2025-08-15"}),
                ("convert_units", {"value": Ref("0.high_c"), "from_unit": "C", "to_unit": "F"}),
            ],
            ["0.high_c", "1.result"],
            masks=[
                (
                    "What was the high in the city I was visiting on 2025-08-15, and what is that in Fahrenheit?",
                    "historical_weather.city",
                    "Cairo",
                )
            ],
        ),
        C(
            "Which has cleaner air right now, Mumbai or Shanghai? Give me both air quality indexes and the dominant "
            "pollutants.",
            [("air_quality", {"city": "Mumbai"}), ("air_quality", {"city": "Shanghai"})],
            ["0.aqi", "0.dominant_pollutant", "1.aqi", "1.dominant_pollutant"],
            masks=[
                (
                    "Which has cleaner air right now, Mumbai or the city my sister lives in? Give me both air quality "
                    "indexes and the dominant pollutants.",
                    "air_quality.city",
                    "Shanghai",
                )
            ],
        ),
        C(
            "What are the humidity and wind speed in Amsterdam right now, and how much precipitation fell there on "
            "2026-03-19?",
            [
                ("current_weather", {"city": "Amsterdam"}),
                ("historical_weather", {"city": "Amsterdam", "date": "2026-03-19"}),
            ],
            ["0.humidity_percent", "0.wind_kph", "1.precipitation_mm"],
            masks=[
                (
                    "What are the humidity and wind speed in Amsterdam right now, and how much precipitation fell "
                    "there yesterday?",
                    "historical_weather.date",
                    "yesterday, 2026-03-19",
                )
            ],
        ),
    ],
    "Language": [
        C(
            "What does 'journey' mean, and what are some synonyms for it?",
            [("define", {"word": "journey"}), ("synonyms", {"word": "journey"})],
            ["0.definition", "1.synonyms"],
            easy=("define", "synonyms"),
            masks=[
                (
                    "What does the word on my flashcard mean, and what are some synonyms for it?",
                    "define.word",
                    "journey",
                )
            ],
        ),
        C(
            "How do you say 'friend' in French and in Italian?",
            [
                ("translate", {"word": "friend", "target_language": "French"}),
                ("translate", {"word": "friend", "target_language": "Italian"}),
            ],
            ["0.translation", "1.translation"],
            masks=[
                (
                    "How do you say 'friend' in French and in the other language I'm learning?",
                    "translate.target_language",
                    "Italian",
                )
            ],
        ),
        C(
            "I'm writing song lyrics. What rhymes with 'night', and what are some synonyms for 'light'?",
            [("rhymes", {"word": "night"}), ("synonyms", {"word": "light"})],
            ["0.rhymes", "1.synonyms"],
            easy=("rhymes", "synonyms"),
            masks=[
                (
                    "I'm writing song lyrics. What rhymes with the last word of my chorus, and what are some synonyms "
                    "for 'light'?",
                    "rhymes.word",
                    "night",
                )
            ],
        ),
        C(
            "Define 'ancient' and translate it into Spanish.",
            [("define", {"word": "ancient"}), ("translate", {"word": "ancient", "target_language": "Spanish"})],
            ["0.definition", "1.translation"],
            easy=("define",),
            masks=[
                (
                    "Define 'ancient' and translate it into my pen pal's language.",
                    "translate.target_language",
                    "Spanish",
                )
            ],
        ),
        C(
            "Give me synonyms for 'brave' and its German translation.",
            [("synonyms", {"word": "brave"}), ("translate", {"word": "brave", "target_language": "German"})],
            ["0.synonyms", "1.translation"],
            easy=("synonyms",),
            masks=[
                (
                    "Give me synonyms for the word I keep overusing in my essay, and its German translation.",
                    "synonyms.word",
                    "brave",
                )
            ],
        ),
        C(
            "What words rhyme with 'heart', and how do you say 'heart' in Italian?",
            [("rhymes", {"word": "heart"}), ("translate", {"word": "heart", "target_language": "Italian"})],
            ["0.rhymes", "1.translation"],
            easy=("rhymes",),
            masks=[
                (
                    "What words rhyme with the last word of my poem's first line, and how do you say that word in "
                    "Italian?",
                    "rhymes.word",
                    "heart",
                )
            ],
        ),
        C(
            "What does 'dream' mean, and what rhymes with it?",
            [("define", {"word": "dream"}), ("rhymes", {"word": "dream"})],
            ["0.definition", "1.rhymes"],
            easy=("define", "rhymes"),
            masks=[
                ("What does the answer to my crossword clue mean, and what rhymes with it?", "define.word", "dream")
            ],
        ),
        C(
            "What part of speech is 'begin', and how do you say it in French?",
            [("define", {"word": "begin"}), ("translate", {"word": "begin", "target_language": "French"})],
            ["0.part_of_speech", "1.translation"],
            easy=("define",),
            masks=[
                (
                    "What part of speech is 'begin', and how do you say it in the language of my exchange school?",
                    "translate.target_language",
                    "French",
                )
            ],
        ),
        C(
            "How do you say 'tree' in German and 'rain' in Italian?",
            [
                ("translate", {"word": "tree", "target_language": "German"}),
                ("translate", {"word": "rain", "target_language": "Italian"}),
            ],
            ["0.translation", "1.translation"],
            masks=[
                (
                    "How do you say 'tree' in German and the other word on my vocabulary list in Italian?",
                    "translate.word",
                    "rain",
                )
            ],
        ),
        C(
            "What words rhyme with 'cold', and what is 'cold' in Spanish?",
            [("rhymes", {"word": "cold"}), ("translate", {"word": "cold", "target_language": "Spanish"})],
            ["0.rhymes", "1.translation"],
            easy=("rhymes",),
            masks=[
                (
                    "What words rhyme with 'cold', and what is 'cold' in the language of my holiday destination?",
                    "translate.target_language",
                    "Spanish",
                )
            ],
        ),
        C(
            "Define 'smart', list its synonyms, and translate it into French.",
            [
                ("define", {"word": "smart"}),
                ("synonyms", {"word": "smart"}),
                ("translate", {"word": "smart", "target_language": "French"}),
            ],
            ["0.definition", "1.synonyms", "2.translation"],
            easy=("define", "synonyms"),
            masks=[
                (
                    "Define the adjective my teacher wrote on my report, list its synonyms, and translate it into "
                    "French.",
                    "define.word",
                    "smart",
                )
            ],
        ),
        C(
            "I'm learning Italian. How do you say 'song' and 'love' in Italian?",
            [
                ("translate", {"word": "song", "target_language": "Italian"}),
                ("translate", {"word": "love", "target_language": "Italian"}),
            ],
            ["0.translation", "1.translation"],
            masks=[
                (
                    "I'm learning a new language. How do you say 'song' and 'love' in it?",
                    "translate.target_language",
                    "Italian",
                )
            ],
        ),
    ],
    "Inspiration": [
        C(
            "Tell me a programming joke; use seed 7 so my friend can pull up the same one.",
            [("random_joke", {"category": "programming", "seed": 7})],
            ["0.joke"],
            easy=("random_joke",),
            masks=[
                (
                    "Tell me a joke about my favourite topic; use seed 7 so my friend can pull up the same one.",
                    "random_joke.category",
                    "programming",
                )
            ],
        ),
        C(
            "What is the quote of the day for 2026-04-15, and which quotes do you have by its author?",
            [("quote_of_the_day", {"date": "2026-04-15"}), ("quotes_by_author", {"author": Ref("0.author")})],
            ["0.author", "1.quotes"],
            masks=[
                (
                    "What is today's quote of the day, and which quotes do you have by its author?",
                    "quote_of_the_day.date",
                    "today, 15 April 2026",
                )
            ],
        ),
        C(
            "Share the quotes you have by Seneca, and tell me who said the quote of the day for 2026-03-01.",
            [("quotes_by_author", {"author": "Seneca"}), ("quote_of_the_day", {"date": "2026-03-01"})],
            ["0.quotes", "1.author"],
            masks=[
                (
                    "Share the quotes you have by the philosopher we discussed in class, and tell me who said the "
                    "quote of the day for 2026-03-01.",
                    "quotes_by_author.author",
                    "Seneca",
                )
            ],
        ),
        C(
            "I need two jokes for my kid's lunchbox notes: an animals joke with seed 3 and a food joke with seed 5.",
            [("random_joke", {"category": "animals", "seed": 3}), ("random_joke", {"category": "food", "seed": 5})],
            ["0.joke", "1.joke"],
            easy=("random_joke",),
            masks=[
                (
                    "I need two jokes for my kid's lunchbox notes: one about her favourite topic with seed 3 and a "
                    "food joke with seed 5.",
                    "random_joke.category",
                    "animals",
                )
            ],
        ),
        C(
            "For our team newsletter dated 2026-02-02, get the quote of the day and a dad joke with seed 2.",
            [("quote_of_the_day", {"date": "2026-02-02"}), ("random_joke", {"category": "dad", "seed": 2})],
            ["0.quote", "0.author", "1.joke"],
            easy=("random_joke",),
            masks=[
                (
                    "For this week's team newsletter, get the quote of the day and a dad joke with seed 2.",
                    "quote_of_the_day.date",
                    "the newsletter is dated 2026-02-02",
                )
            ],
        ),
        C(
            "Who said the quote of the day for 2025-12-31, and how many quotes by that author do you have?",
            [("quote_of_the_day", {"date": "2025-12-31"}), ("quotes_by_author", {"author": Ref("0.author")})],
            ["0.author", "1.count"],
            masks=[
                (
                    "Who said the quote of the day on New Year's Eve, and how many quotes by that author do you have?",
                    "quote_of_the_day.date",
                    "New Year's Eve 2025",
                )
            ],
        ),
        C(
            "Give me a science joke with seed 12, and the quotes you have by Marie Curie.",
            [
                ("random_joke", {"category": "science", "seed": 12}),
                ("quotes_by_author", {"author": "Marie Curie"}),
            ],
            ["0.joke", "1.quotes"],
            easy=("random_joke",),
            masks=[
                (
                    "Give me a science joke with seed 12, and the quotes you have by my favourite scientist.",
                    "quotes_by_author.author",
                    "Marie Curie",
                )
            ],
        ),
        C(
            "Tell me a dad joke, with seed 21.",
            [("random_joke", {"category": "dad", "seed": 21})],
            ["0.joke"],
            easy=("random_joke",),
            masks=[("Tell me a dad joke, using my lucky number as the seed.", "random_joke.seed", "21")],
        ),
        C(
            "Show me the quotes you have by Confucius and by Lao Tzu.",
            [("quotes_by_author", {"author": "Confucius"}), ("quotes_by_author", {"author": "Lao Tzu"})],
            ["0.quotes", "1.quotes"],
            masks=[
                (
                    "Show me the quotes you have by Confucius and by the sage on my desk calendar.",
                    "quotes_by_author.author",
                    "Lao Tzu",
                )
            ],
        ),
        C(
            "My birthday is 2026-07-04. What is the quote of the day for it, and which food joke does seed 8 give?",
            [("quote_of_the_day", {"date": "2026-07-04"}), ("random_joke", {"category": "food", "seed": 8})],
            ["0.quote", "0.author", "1.joke"],
            easy=("random_joke",),
            masks=[
                (
                    "What is the quote of the day for my birthday, and which food joke does seed 8 give?",
                    "quote_of_the_day.date",
                    "4 July 2026",
                )
            ],
        ),
        C(
            "Get the quote of the day for 2026-09-01 and for 2026-09-02, and list every quote you have by the "
            "author of the first one.",
            [
                ("quote_of_the_day", {"date": "2026-09-01"}),
                ("quote_of_the_day", {"date": "2026-09-02"}),
                ("quotes_by_author", {"author": Ref("0.author")}),
            ],
            ["0.quote", "1.quote", "2.quotes"],
            masks=[
                (
                    "Get the quote of the day for the first day of school and for 2026-09-02, and list every quote "
                    "you have by the author of the first one.",
                    "quote_of_the_day.date",
                    "1 September 2026",
                )
            ],
        ),
        C(
            "For my slides, give me two programming jokes: one with seed 1 and one with seed 3.",
            [
                ("random_joke", {"category": "programming", "seed": 1}),
                ("random_joke", {"category": "programming", "seed": 3}),
            ],
            ["0.joke", "1.joke"],
            easy=("random_joke",),
            masks=[
                (
                    "For my slides, give me two jokes about my field: one with seed 1 and one with seed 3.",
                    "random_joke.category",
                    "programming",
                )
            ],
        ),
    ],
    "Food": [
        C(
            "I have some ripe avocado. Which recipes use avocado, and how many calories are in 150 grams of it?",
            [("recipe_search", {"ingredient": "avocado"}), ("nutrition_facts", {"food": "avocado", "grams": 150})],
            ["0.recipes.*.name", "1.calories_kcal"],
            masks=[
                (
                    "I have some ripe avocado. Which recipes use avocado, and how many calories are in my portion of "
                    "it?",
                    "nutrition_facts.grams",
                    "150 grams",
                )
            ],
        ),
        C(
            "How do I make a Negroni? Which glass does it go in, and what are the ingredients?",
            [("cocktail_recipe", {"name": "Negroni"})],
            ["0.glass", "0.ingredients"],
            masks=[
                (
                    "How do I make the cocktail my friend ordered last night? Which glass does it go in, and what are "
                    "the ingredients?",
                    "cocktail_recipe.name",
                    "a Negroni",
                )
            ],
        ),
        C(
            "Which has more protein: 100 grams of tofu or 100 grams of lentils?",
            [
                ("nutrition_facts", {"food": "tofu", "grams": 100}),
                ("nutrition_facts", {"food": "lentils", "grams": 100}),
            ],
            ["0.protein_g", "1.protein_g"],
            masks=[
                (
                    "Which has more protein: 100 grams of tofu or 100 grams of the other thing on my shopping list?",
                    "nutrition_facts.food",
                    "lentils",
                )
            ],
        ),
        C(
            "How do the ingredients of a Mojito and a Daiquiri differ?",
            [("cocktail_recipe", {"name": "Mojito"}), ("cocktail_recipe", {"name": "Daiquiri"})],
            ["0.ingredients", "1.ingredients"],
            masks=[
                (
                    "How do the ingredients of a Mojito and my usual order differ?",
                    "cocktail_recipe.name",
                    "a Daiquiri",
                )
            ],
        ),
        C(
            "Find recipes that use salmon, and tell me how much protein is in 200 grams of salmon.",
            [("recipe_search", {"ingredient": "salmon"}), ("nutrition_facts", {"food": "salmon", "grams": 200})],
            ["0.recipes.*.name", "1.protein_g"],
            masks=[
                (
                    "Find recipes that use the fish I bought, and tell me how much protein is in 200 grams of it.",
                    "recipe_search.ingredient",
                    "salmon",
                )
            ],
        ),
        C(
            "What can I cook with lentils, how long does each recipe take, and how much protein is in 250 grams of "
            "cooked lentils?",
            [("recipe_search", {"ingredient": "lentils"}), ("nutrition_facts", {"food": "lentils", "grams": 250})],
            ["0.recipes.*.name", "0.recipes.*.minutes", "1.protein_g"],
            masks=[
                (
                    "What can I cook with the bag of pulses in my cupboard, how long does each recipe take, and how "
                    "much protein is in 250 grams of them, cooked?",
                    "recipe_search.ingredient",
                    "lentils",
                )
            ],
        ),
        C(
            "How many calories are in 50 grams of dark chocolate, and how many would 30 minutes of running burn for "
            "me at 68 kg?",
            [
                ("nutrition_facts", {"food": "dark chocolate", "grams": 50}),
                ("exercise_calories", {"activity": "running", "minutes": 30, "weight_kg": 68}),
            ],
            ["0.calories_kcal", "1.calories_kcal"],
            masks=[
                (
                    "How many calories are in 50 grams of dark chocolate, and how many would 30 minutes of running "
                    "burn for me?",
                    "exercise_calories.weight_kg",
                    "I weigh 68 kg",
                )
            ],
        ),
        C(
            "I'm hosting brunch: which recipes use eggs, and what goes into a Shirley Temple for the kids?",
            [("recipe_search", {"ingredient": "eggs"}), ("cocktail_recipe", {"name": "Shirley Temple"})],
            ["0.recipes.*.name", "1.ingredients"],
            masks=[
                (
                    "I'm hosting brunch: which recipes use the ingredient I have plenty of, and what goes into a "
                    "Shirley Temple for the kids?",
                    "recipe_search.ingredient",
                    "eggs",
                )
            ],
        ),
        C(
            "How do I make a Moscow Mule, and what glass is it served in?",
            [("cocktail_recipe", {"name": "Moscow Mule"})],
            ["0.ingredients", "0.method", "0.glass"],
            masks=[
                (
                    "How do I make the drink on the menu at my favourite bar, and what glass is it served in?",
                    "cocktail_recipe.name",
                    "a Moscow Mule",
                )
            ],
        ),
        C(
            "Which recipes use tomato, and how long does each one take?",
            [("recipe_search", {"ingredient": "tomato"})],
            ["0.recipes.*.name", "0.recipes.*.minutes"],
            masks=[
                (
                    "Which recipes use the crop my garden overproduced this year, and how long does each one take?",
                    "recipe_search.ingredient",
                    "tomatoes",
                )
            ],
        ),
        C(
            "How many calories, and how much protein and fat, are in 40 grams of almonds?",
            [("nutrition_facts", {"food": "almonds", "grams": 40})],
            ["0.calories_kcal", "0.protein_g", "0.fat_g"],
            masks=[
                (
                    "How many calories, and how much protein and fat, are in my usual handful of almonds?",
                    "nutrition_facts.grams",
                    "40 grams",
                )
            ],
        ),
        C(
            "How many calories are in an 8 ounce salmon fillet? Convert 8 ounces to grams and look up the nutrition "
            "of that many grams of salmon.",
            [
                ("convert_units", {"value": 8, "from_unit": "ounces", "to_unit": "grams"}),
                ("nutrition_facts", {"food": "salmon", "grams": Ref("0.result")}),
            ],
            ["0.result", "1.calories_kcal", "1.protein_g"],
            masks=[
                (
                    "How many calories are in my salmon fillet? Convert its weight in ounces to grams and look up the "
                    "nutrition of that many grams of salmon.",
                    "convert_units.value",
                    "8 ounces",
                )
            ],
        ),
        C(
            "Which recipes use tofu, and how much protein and fat are in 150 grams of tofu?",
            [("recipe_search", {"ingredient": "tofu"}), ("nutrition_facts", {"food": "tofu", "grams": 150})],
            ["0.recipes.*.name", "1.protein_g", "1.fat_g"],
            masks=[
                (
                    "Which recipes use tofu, and how much protein and fat are in the block of tofu I bought?",
                    "nutrition_facts.grams",
                    "150 grams",
                )
            ],
        ),
    ],
    "Games": [
        C(
            "Roll 3 six-sided dice with seed 99 for our board game and tell me the total.",
            [("roll_dice", {"sides": 6, "count": 3, "seed": 99})],
            ["0.rolls", "0.total"],
            easy=("roll_dice",),
            masks=[
                (
                    "Roll some six-sided dice with seed 99 for our board game and tell me the total.",
                    "roll_dice.count",
                    "3 dice",
                )
            ],
        ),
        C(
            "Which openings have the ECO codes B20 and C60, and what are their main lines?",
            [("chess_opening", {"eco_code": "B20"}), ("chess_opening", {"eco_code": "C60"})],
            ["0.name", "0.moves", "1.name", "1.moves"],
            masks=[
                (
                    "Which openings have the ECO code B20 and the code in my chess book, and what are their main "
                    "lines?",
                    "chess_opening.eco_code",
                    "C60",
                )
            ],
        ),
        C(
            "Which scores more in Scrabble, 'quiz' or 'jukebox'?",
            [("scrabble_score", {"word": "quiz"}), ("scrabble_score", {"word": "jukebox"})],
            ["0.score", "1.score"],
            masks=[
                (
                    "Which scores more in Scrabble, 'quiz' or the word my opponent just played?",
                    "scrabble_score.word",
                    "jukebox",
                )
            ],
        ),
        C(
            "Roll 2 twenty-sided dice with seed 11 and multiply the total by 3.",
            [
                ("roll_dice", {"sides": 20, "count": 2, "seed": 11}),
                ("calculate", {"expression": Ref("0.total", "{} * 3")}),
            ],
            ["0.total", "1.result"],
            easy=("roll_dice", "calculate"),
            masks=[
                (
                    "Roll 2 twenty-sided dice with my usual seed and multiply the total by 3.",
                    "roll_dice.seed",
                    "seed 11",
                )
            ],
        ),
        C(
            "For my new character, roll 4 six-sided dice with seed 5 for strength and 4 six-sided dice with seed 6 "
            "for dexterity.",
            [("roll_dice", {"sides": 6, "count": 4, "seed": 5}), ("roll_dice", {"sides": 6, "count": 4, "seed": 6})],
            ["0.rolls", "0.total", "1.rolls", "1.total"],
            easy=("roll_dice",),
            masks=[
                (
                    "For my new character, roll 4 six-sided dice with seed 5 for strength and 4 more with the seed my "
                    "friend picked for dexterity.",
                    "roll_dice.seed",
                    "seed 6",
                )
            ],
        ),
        C(
            "What is the main line of the opening with ECO code D06?",
            [("chess_opening", {"eco_code": "D06"})],
            ["0.name", "0.moves"],
            masks=[
                ("What is the main line of the opening my coach told me to study?", "chess_opening.eco_code", "D06")
            ],
        ),
        C(
            "How many points is 'oxygen' worth in Scrabble?",
            [("scrabble_score", {"word": "oxygen"})],
            ["0.score"],
            masks=[
                ("How many points is the word I'm about to play worth in Scrabble?", "scrabble_score.word", "oxygen")
            ],
        ),
        C(
            "What is 'zephyr' worth in Scrabble, and what would it score on a double-word square (the score times 2)?",
            [("scrabble_score", {"word": "zephyr"}), ("calculate", {"expression": Ref("0.score", "{} * 2")})],
            ["0.score", "1.result"],
            easy=("calculate",),
            masks=[
                (
                    "What is the word I'm about to play worth in Scrabble, and what would it score on a double-word "
                    "square (the score times 2)?",
                    "scrabble_score.word",
                    "zephyr",
                )
            ],
        ),
        C(
            "Roll 1 twelve-sided die with seed 42.",
            [("roll_dice", {"sides": 12, "count": 1, "seed": 42})],
            ["0.rolls", "0.total"],
            easy=("roll_dice",),
            masks=[("Roll 1 twelve-sided die with the seed we agreed on.", "roll_dice.seed", "42")],
        ),
        C(
            "Name the chess openings with the ECO codes C00 and B10, and give their main lines.",
            [("chess_opening", {"eco_code": "C00"}), ("chess_opening", {"eco_code": "B10"})],
            ["0.name", "0.moves", "1.name", "1.moves"],
            masks=[
                (
                    "Name the chess openings with the ECO code C00 and the one my coach told me to study, and give "
                    "their main lines.",
                    "chess_opening.eco_code",
                    "B10",
                )
            ],
        ),
        C(
            "Roll 5 six-sided dice with seed 2024, then give the total as a percentage of the maximum of 30 (the "
            "total / 30 * 100).",
            [
                ("roll_dice", {"sides": 6, "count": 5, "seed": 2024}),
                ("calculate", {"expression": Ref("0.total", "{} / 30 * 100")}),
            ],
            ["0.rolls", "0.total", "1.result"],
            easy=("roll_dice", "calculate"),
            masks=[
                (
                    "Roll 5 six-sided dice with our game's seed, then give the total as a percentage of the maximum "
                    "of 30 (the total / 30 * 100).",
                    "roll_dice.seed",
                    "2024",
                )
            ],
        ),
        C(
            "Which scores more in Scrabble, 'rhythm' or 'quartz'?",
            [("scrabble_score", {"word": "rhythm"}), ("scrabble_score", {"word": "quartz"})],
            ["0.score", "1.score"],
            masks=[
                (
                    "Which scores more in Scrabble, 'rhythm' or the word my sister just played?",
                    "scrabble_score.word",
                    "quartz",
                )
            ],
        ),
    ],
    "Sports": [
        C(
            "Who won the Coastal League in 2024, with how many points, and how many goals did Marco Deluca score "
            "that season?",
            [
                ("team_standings", {"league": "Coastal League", "season": 2024}),
                ("player_stats", {"player": "Marco Deluca", "season": 2024}),
            ],
            ["0.table.position=1.team", "0.table.position=1.points", "1.goals"],
            masks=[
                (
                    "Who won the Coastal League in the season my son played, with how many points, and how many goals "
                    "did Marco Deluca score that season?",
                    "team_standings.season",
                    "2024",
                )
            ],
        ),
        C(
            "What was the score when Harbor City Gulls hosted Pine Valley FC on 2024-03-02, and where did Pine "
            "Valley FC finish in the 2024 Coastal League?",
            [
                ("match_result", {"home": "Harbor City Gulls", "away": "Pine Valley FC", "date": "2024-03-02"}),
                ("team_standings", {"league": "Coastal League", "season": 2024}),
            ],
            ["0.home_goals", "0.away_goals", "1.table.team=Pine Valley FC.position"],
            masks=[
                (
                    "What was the score when Harbor City Gulls hosted Pine Valley FC in the match I went to, and "
                    "where did Pine Valley FC finish in the 2024 Coastal League?",
                    "match_result.date",
                    "2024-03-02",
                )
            ],
        ),
        C(
            "How many goals did Marco Deluca score in 2023, and how many did Harbor City Gulls score in total in the "
            "2023 Coastal League season?",
            [
                ("player_stats", {"player": "Marco Deluca", "season": 2023}),
                ("team_standings", {"league": "Coastal League", "season": 2023}),
            ],
            ["0.goals", "1.table.team=Harbor City Gulls.goals_for"],
            masks=[
                (
                    "How many goals did my favourite player score in 2023, and how many did Harbor City Gulls score "
                    "in total in the 2023 Coastal League season?",
                    "player_stats.player",
                    "Marco Deluca",
                )
            ],
        ),
        C(
            "Compare the goals and assists of Dario Kestrel and Felix Amani in 2025.",
            [
                ("player_stats", {"player": "Dario Kestrel", "season": 2025}),
                ("player_stats", {"player": "Felix Amani", "season": 2025}),
            ],
            ["0.goals", "0.assists", "1.goals", "1.assists"],
            masks=[
                (
                    "Compare the goals and assists of Dario Kestrel and Felix Amani in the season I'm writing about.",
                    "player_stats.season",
                    "2025",
                )
            ],
        ),
        C(
            "What was the score of Eastbank Athletic against Riverside Comets on 2024-03-30, and of the return match "
            "at Riverside Comets on 2024-05-04?",
            [
                ("match_result", {"home": "Eastbank Athletic", "away": "Riverside Comets", "date": "2024-03-30"}),
                ("match_result", {"home": "Riverside Comets", "away": "Eastbank Athletic", "date": "2024-05-04"}),
            ],
            ["0.home_goals", "0.away_goals", "1.home_goals", "1.away_goals"],
            masks=[
                (
                    "What was the score of Eastbank Athletic against Riverside Comets in the home game I watched, "
                    "and of the return match at Riverside Comets on 2024-05-04?",
                    "match_result.date",
                    "2024-03-30",
                )
            ],
        ),
        C(
            "Where did Oldmill Albion finish in the Metro Premier in 2022 and in 2023?",
            [
                ("team_standings", {"league": "Metro Premier", "season": 2022}),
                ("team_standings", {"league": "Metro Premier", "season": 2023}),
            ],
            ["0.table.team=Oldmill Albion.position", "1.table.team=Oldmill Albion.position"],
            masks=[
                (
                    "Where did Oldmill Albion finish in their league in 2022 and in 2023?",
                    "team_standings.league",
                    "the Metro Premier",
                )
            ],
        ),
        C(
            "How many goals did Jonah Berg score in 2025, and what was the result when Ridgeport Rangers hosted "
            "Harbor City Gulls on 2025-05-03?",
            [
                ("player_stats", {"player": "Jonah Berg", "season": 2025}),
                ("match_result", {"home": "Ridgeport Rangers", "away": "Harbor City Gulls", "date": "2025-05-03"}),
            ],
            ["0.goals", "1.home_goals", "1.away_goals"],
            masks=[
                (
                    "How many goals did Jonah Berg score in 2025, and what was the result when Ridgeport Rangers "
                    "hosted the team I support on 2025-05-03?",
                    "match_result.away",
                    "Harbor City Gulls",
                )
            ],
        ),
        C(
            "Which team finished last in the 2021 Metro Premier, and with how many points?",
            [("team_standings", {"league": "Metro Premier", "season": 2021})],
            ["0.table.5.team", "0.table.5.points"],
            masks=[
                (
                    "Which team finished last in the Metro Premier the season I moved to the city, and with how many "
                    "points?",
                    "team_standings.season",
                    "2021",
                ),
                (
                    "Which team finished last in my local league in 2021, and with how many points?",
                    "team_standings.league",
                    "the Metro Premier",
                ),
            ],
        ),
        C(
            "What was the score when Lakeside Pioneers hosted Harbor City Gulls on 2022-03-26, and how many goals "
            "did Ilya Marsh score in 2022?",
            [
                ("match_result", {"home": "Lakeside Pioneers", "away": "Harbor City Gulls", "date": "2022-03-26"}),
                ("player_stats", {"player": "Ilya Marsh", "season": 2022}),
            ],
            ["0.home_goals", "0.away_goals", "1.goals"],
            masks=[
                (
                    "What was the score when Lakeside Pioneers hosted Harbor City Gulls on the day I went to the "
                    "ground, and how many goals did Ilya Marsh score in 2022?",
                    "match_result.date",
                    "2022-03-26",
                )
            ],
        ),
        C(
            "How many goals and assists did Owen Castell have in 2024, and how many goals did Oldmill Albion score "
            "in the Metro Premier that season?",
            [
                ("player_stats", {"player": "Owen Castell", "season": 2024}),
                ("team_standings", {"league": "Metro Premier", "season": 2024}),
            ],
            ["0.goals", "0.assists", "1.table.team=Oldmill Albion.goals_for"],
            masks=[
                (
                    "How many goals and assists did Owen Castell have in the season my son started watching, and how "
                    "many goals did Oldmill Albion score in the Metro Premier that season?",
                    "player_stats.season",
                    "2024",
                )
            ],
        ),
        C(
            "Compare Tomás Okafor's assists in 2022 and in 2023.",
            [
                ("player_stats", {"player": "Tomás Okafor", "season": 2022}),
                ("player_stats", {"player": "Tomás Okafor", "season": 2023}),
            ],
            ["0.assists", "1.assists"],
            masks=[
                (
                    "Compare my favourite midfielder's assists in 2022 and in 2023.",
                    "player_stats.player",
                    "Tomás Okafor",
                )
            ],
        ),
        C(
            "What was the score when Union Square FC hosted Eastbank Athletic on 2025-03-22, and which team won "
            "their league in 2025?",
            [
                ("match_result", {"home": "Union Square FC", "away": "Eastbank Athletic", "date": "2025-03-22"}),
                ("team_standings", {"league": Ref("0.league"), "season": 2025}),
            ],
            ["0.home_goals", "0.away_goals", "1.table.0.team"],
            masks=[
                (
                    "What was the score when Union Square FC hosted Eastbank Athletic on the day I bought my season "
                    "ticket, and which team won their league in 2025?",
                    "match_result.date",
                    "2025-03-22",
                )
            ],
        ),
    ],
    "Music": [
        C(
            "When was the Moonlight Sonata written, and which other works by its composer are in your catalogue?",
            [("piece_info", {"title": "Moonlight Sonata"}), ("composer_works", {"composer": Ref("0.composer")})],
            ["0.composer", "0.year", "1.works.*.title"],
            masks=[
                (
                    "When was the piece I'm practising written, and which other works by its composer are in your "
                    "catalogue?",
                    "piece_info.title",
                    "the Moonlight Sonata",
                )
            ],
        ),
        C(
            "Which notes make up Am7 and Dm7?",
            [("chord_notes", {"chord": "Am7"}), ("chord_notes", {"chord": "Dm7"})],
            ["0.notes", "1.notes"],
            masks=[("Which notes make up Am7 and the next chord in my song?", "chord_notes.chord", "Dm7")],
        ),
        C(
            "I'm tuning my violin: what are the frequencies of A4 and E5?",
            [("note_frequency", {"note": "A4"}), ("note_frequency", {"note": "E5"})],
            ["0.frequency_hz", "1.frequency_hz"],
            masks=[
                (
                    "I'm tuning my violin: what are the frequencies of A4 and of the string I'm on now?",
                    "note_frequency.note",
                    "E5",
                )
            ],
        ),
        C(
            "Spell an Em chord for me and give me the frequency of E4.",
            [("chord_notes", {"chord": "Em"}), ("note_frequency", {"note": "E4"})],
            ["0.notes", "1.frequency_hz"],
            masks=[
                (
                    "Spell the chord my guitar teacher assigned and give me the frequency of E4.",
                    "chord_notes.chord",
                    "E minor, Em",
                )
            ],
        ),
        C(
            "Which works by Mozart are in your catalogue, and in what years were they written?",
            [("composer_works", {"composer": "Mozart"})],
            ["0.works.*.title", "0.works.*.year"],
            masks=[
                (
                    "Which works by my favourite composer are in your catalogue, and in what years were they written?",
                    "composer_works.composer",
                    "Mozart",
                )
            ],
        ),
        C(
            "Which takes longer to perform, Boléro or Rhapsody in Blue, and who composed each?",
            [("piece_info", {"title": "Boléro"}), ("piece_info", {"title": "Rhapsody in Blue"})],
            ["0.composer", "0.duration_minutes", "1.composer", "1.duration_minutes"],
            masks=[
                (
                    "Which takes longer to perform, Boléro or the piece after the interval tonight, and who composed "
                    "each?",
                    "piece_info.title",
                    "Rhapsody in Blue",
                )
            ],
        ),
        C(
            "Who composed Eine kleine Nachtmusik?",
            [("piece_info", {"title": "Eine kleine Nachtmusik"})],
            ["0.composer"],
            easy=("piece_info",),
            masks=[
                ("Who composed the piece the string quartet is playing?", "piece_info.title", "Eine kleine Nachtmusik")
            ],
        ),
        C(
            "What are the MIDI number and the frequency of middle C, C4, and which notes make up a C major chord?",
            [("note_frequency", {"note": "C4"}), ("chord_notes", {"chord": "C"})],
            ["0.midi_number", "0.frequency_hz", "1.notes"],
            masks=[
                (
                    "What are the MIDI number and the frequency of the note I'm humming, and which notes make up a C "
                    "major chord?",
                    "note_frequency.note",
                    "C4",
                )
            ],
        ),
        C(
            "Which notes make up a Bbmaj7 chord, and what is its quality?",
            [("chord_notes", {"chord": "Bbmaj7"})],
            ["0.notes", "0.quality"],
            masks=[
                (
                    "Which notes make up the first chord of my jazz chart, and what is its quality?",
                    "chord_notes.chord",
                    "Bbmaj7",
                )
            ],
        ),
        C(
            "Which works by Beethoven are in your catalogue, and what key is Für Elise in?",
            [("composer_works", {"composer": "Beethoven"}), ("piece_info", {"title": "Für Elise"})],
            ["0.works.*.title", "1.key"],
            masks=[
                (
                    "Which works by Beethoven are in your catalogue, and what key is the piece I'm learning in?",
                    "piece_info.title",
                    "Für Elise",
                )
            ],
        ),
        C(
            "What is the frequency of G3, and which notes make up a G7 chord?",
            [("note_frequency", {"note": "G3"}), ("chord_notes", {"chord": "G7"})],
            ["0.frequency_hz", "1.notes"],
            masks=[
                (
                    "What is the frequency of G3, and which notes make up the chord in bar 4 of my song?",
                    "chord_notes.chord",
                    "G7",
                )
            ],
        ),
        C(
            "How many minutes does a performance of Messiah take, and how many hours is that (the minutes divided "
            "by 60)?",
            [
                ("piece_info", {"title": "Messiah"}),
                ("calculate", {"expression": Ref("0.duration_minutes", "{} / 60")}),
            ],
            ["0.duration_minutes", "1.result"],
            easy=("calculate",),
            masks=[
                (
                    "How many minutes does a performance of the oratorio our choir sings at Christmas take, and how "
                    "many hours is that (the minutes divided by 60)?",
                    "piece_info.title",
                    "Handel's Messiah",
                )
            ],
        ),
        C(
            "Who composed Clair de lune?",
            [("piece_info", {"title": "Clair de lune"})],
            ["0.composer"],
            easy=("piece_info",),
            masks=[("Who composed the piece my daughter plays on the piano?", "piece_info.title", "Clair de lune")],
        ),
    ],
    "Health": [
        C(
            "I'm female, 34 years old, 62 kg and 168 cm, with a moderate activity level. What's my BMI, and how many "
            "calories do I need a day?",
            [
                ("bmi", {"weight_kg": 62, "height_cm": 168}),
                (
                    "daily_calorie_needs",
                    {"weight_kg": 62, "height_cm": 168, "age": 34, "sex": "female", "activity_level": "moderate"},
                ),
            ],
            ["0.bmi", "0.category", "1.daily_kcal"],
            masks=[
                (
                    "I'm female, 34 years old and 168 cm, with a moderate activity level. What's my BMI, and how many "
                    "calories do I need a day?",
                    "bmi.weight_kg",
                    "62 kg",
                )
            ],
        ),
        C(
            "I weigh 80 kg. How many calories do I burn cycling for 45 minutes, and how many over 4 such rides?",
            [
                ("exercise_calories", {"activity": "cycling", "minutes": 45, "weight_kg": 80}),
                ("calculate", {"expression": Ref("0.calories_kcal", "{} * 4")}),
            ],
            ["0.calories_kcal", "1.result"],
            easy=("calculate",),
            masks=[
                (
                    "How many calories do I burn cycling for 45 minutes, and how many over 4 such rides?",
                    "exercise_calories.weight_kg",
                    "80 kg",
                )
            ],
        ),
        C(
            "What is the BMI of someone who weighs 95 kg and is 180 cm tall, and which category does it fall in?",
            [("bmi", {"weight_kg": 95, "height_cm": 180})],
            ["0.bmi", "0.category"],
            masks=[
                (
                    "What is the BMI of someone who weighs 95 kg, and which category does it fall in?",
                    "bmi.height_cm",
                    "180 cm",
                )
            ],
        ),
        C(
            "For a 70 kg person, which burns more calories in 60 minutes: swimming or tennis?",
            [
                ("exercise_calories", {"activity": "swimming", "minutes": 60, "weight_kg": 70}),
                ("exercise_calories", {"activity": "tennis", "minutes": 60, "weight_kg": 70}),
            ],
            ["0.calories_kcal", "1.calories_kcal"],
            masks=[
                (
                    "For a 70 kg person, which burns more calories in 60 minutes: swimming or the sport I play on "
                    "weekends?",
                    "exercise_calories.activity",
                    "tennis",
                )
            ],
        ),
        C(
            "I'm male, 45 years old, 88 kg and 182 cm, and sedentary. What are my daily calorie needs, and how many "
            "calories would a 30-minute brisk walking session burn?",
            [
                (
                    "daily_calorie_needs",
                    {"weight_kg": 88, "height_cm": 182, "age": 45, "sex": "male", "activity_level": "sedentary"},
                ),
                ("exercise_calories", {"activity": "brisk walking", "minutes": 30, "weight_kg": 88}),
            ],
            ["0.daily_kcal", "1.calories_kcal"],
            masks=[
                (
                    "I'm male, 88 kg and 182 cm, and sedentary. What are my daily calorie needs, and how many "
                    "calories would a 30-minute brisk walking session burn?",
                    "daily_calorie_needs.age",
                    "I'm 45",
                )
            ],
        ),
        C(
            "I'm 6 feet tall and weigh 82 kg. Convert 6 feet to centimetres and work out my BMI.",
            [
                ("convert_units", {"value": 6, "from_unit": "feet", "to_unit": "centimetres"}),
                ("bmi", {"weight_kg": 82, "height_cm": Ref("0.result")}),
            ],
            ["0.result", "1.bmi"],
            masks=[
                (
                    "I'm 6 feet tall. Convert 6 feet to centimetres and work out my BMI.",
                    "bmi.weight_kg",
                    "82 kg",
                )
            ],
        ),
        C(
            "What is my BMI if I weigh 54 kg and am 160 cm tall, and what category is that?",
            [("bmi", {"weight_kg": 54, "height_cm": 160})],
            ["0.bmi", "0.category"],
            masks=[
                (
                    "What is my BMI if I weigh 54 kg, and what category is that?",
                    "bmi.height_cm",
                    "I'm 160 cm tall",
                )
            ],
        ),
        C(
            "I'm male, 28 years old, 75 kg and 178 cm, and active. What are my basal metabolic rate and my daily "
            "calorie needs?",
            [
                (
                    "daily_calorie_needs",
                    {"weight_kg": 75, "height_cm": 178, "age": 28, "sex": "male", "activity_level": "active"},
                )
            ],
            ["0.bmr_kcal", "0.daily_kcal"],
            masks=[
                (
                    "I'm male, 75 kg and 178 cm, and active. What are my basal metabolic rate and my daily calorie "
                    "needs?",
                    "daily_calorie_needs.age",
                    "I'm 28",
                )
            ],
        ),
        C(
            "At 65 kg, how many calories do I burn in 20 minutes of jump rope, and how many in a week of daily "
            "sessions (7 times that)?",
            [
                ("exercise_calories", {"activity": "jump rope", "minutes": 20, "weight_kg": 65}),
                ("calculate", {"expression": Ref("0.calories_kcal", "{} * 7")}),
            ],
            ["0.calories_kcal", "1.result"],
            easy=("calculate",),
            masks=[
                (
                    "At 65 kg, how many calories do I burn in one of my jump rope sessions, and how many in a week of "
                    "daily sessions (7 times that)?",
                    "exercise_calories.minutes",
                    "20 minutes",
                )
            ],
        ),
        C(
            "I weigh 150 pounds. Convert that to kilograms and tell me how many calories 60 minutes of yoga burns "
            "for me.",
            [
                ("convert_units", {"value": 150, "from_unit": "pounds", "to_unit": "kilograms"}),
                ("exercise_calories", {"activity": "yoga", "minutes": 60, "weight_kg": Ref("0.result")}),
            ],
            ["0.result", "1.calories_kcal"],
            masks=[
                (
                    "Convert my weight from pounds to kilograms and tell me how many calories 60 minutes of yoga "
                    "burns for me.",
                    "convert_units.value",
                    "150 pounds",
                )
            ],
        ),
        C(
            "I'm female, 52 years old, 70 kg and 165 cm, with a light activity level. What's my BMI, how many "
            "calories do I need a day, and how many would 40 minutes of dancing burn?",
            [
                ("bmi", {"weight_kg": 70, "height_cm": 165}),
                (
                    "daily_calorie_needs",
                    {"weight_kg": 70, "height_cm": 165, "age": 52, "sex": "female", "activity_level": "light"},
                ),
                ("exercise_calories", {"activity": "dancing", "minutes": 40, "weight_kg": 70}),
            ],
            ["0.bmi", "1.daily_kcal", "2.calories_kcal"],
            masks=[
                (
                    "I'm female, 70 kg and 165 cm, with a light activity level. What's my BMI, how many calories do I "
                    "need a day, and how many would 40 minutes of dancing burn?",
                    "daily_calorie_needs.age",
                    "I'm 52",
                )
            ],
        ),
        C(
            "For an 85 kg person, which burns more calories in 45 minutes: rowing or hiking?",
            [
                ("exercise_calories", {"activity": "rowing", "minutes": 45, "weight_kg": 85}),
                ("exercise_calories", {"activity": "hiking", "minutes": 45, "weight_kg": 85}),
            ],
            ["0.calories_kcal", "1.calories_kcal"],
            masks=[
                (
                    "For an 85 kg person, which burns more calories in 45 minutes: rowing or what I do on weekends?",
                    "exercise_calories.activity",
                    "hiking",
                )
            ],
        ),
        C(
            "I'm 172 cm tall and weigh 68 kg. What's my BMI, and by what percent would my weight change if I got "
            "down to 63 kg?",
            [
                ("bmi", {"weight_kg": 68, "height_cm": 172}),
                ("percentage_change", {"old": 68, "new": 63}),
            ],
            ["0.bmi", "1.percent_change"],
            easy=("percentage_change",),
            masks=[
                (
                    "I'm 172 cm tall and weigh 68 kg. What's my BMI, and by what percent would my weight change if I "
                    "reached my goal weight?",
                    "percentage_change.new",
                    "63 kg",
                )
            ],
        ),
    ],
    "Transportation": [
        C(
            "Was Zephyr Air flight ZP101 on 2026-02-14 on time, when did it arrive, and how far is London from New "
            "York?",
            [
                ("flight_status", {"flight_number": "ZP101", "date": "2026-02-14"}),
                ("distance_between", {"city_a": "London", "city_b": "New York"}),
            ],
            ["0.status", "0.delay_minutes", "0.arrival_utc", "1.distance_km"],
            masks=[
                (
                    "Was Zephyr Air flight ZP101 on time on the day my parents flew, when did it arrive, and how far "
                    "is London from New York?",
                    "flight_status.date",
                    "2026-02-14",
                ),
                (
                    "Was my parents' Zephyr Air flight on 2026-02-14 on time, when did it arrive, and how far is "
                    "London from New York?",
                    "flight_status.flight_number",
                    "ZP101",
                ),
            ],
        ),
        C(
            "I'm driving from Lyon to Marseille. Take the straight-line distance between them and estimate the fuel "
            "cost for my car, which uses 6.5 litres per 100 km, at 1.85 per litre.",
            [
                ("distance_between", {"city_a": "Lyon", "city_b": "Marseille"}),
                (
                    "fuel_cost",
                    {"distance_km": Ref("0.distance_km"), "litres_per_100km": 6.5, "price_per_litre": 1.85},
                ),
            ],
            ["0.distance_km", "1.litres", "1.cost"],
            masks=[
                (
                    "I'm driving from Lyon to Marseille. Take the straight-line distance between them and estimate the "
                    "fuel cost for my car, which uses 6.5 litres per 100 km, at today's pump price.",
                    "fuel_cost.price_per_litre",
                    "1.85 a litre",
                )
            ],
        ),
        C(
            "My EV has a 75 kWh battery at 20%. How long will it take to charge to 90% on a 150 kW charger?",
            [("ev_charging_time", {"battery_kwh": 75, "from_percent": 20, "to_percent": 90, "charger_kw": 150})],
            ["0.minutes", "0.energy_kwh"],
            masks=[
                (
                    "My EV has a 75 kWh battery at 20%. How long will it take to charge to 90% at the charger I'm "
                    "parked at?",
                    "ev_charging_time.charger_kw",
                    "150 kW",
                )
            ],
        ),
        C(
            "For a 350 km trip I can rent an EV or a petrol car. How long would charging the EV's 60 kWh battery "
            "from 10% to 80% take on a 50 kW charger, and what would petrol cost at 7 litres per 100 km and 1.9 per "
            "litre?",
            [
                ("ev_charging_time", {"battery_kwh": 60, "from_percent": 10, "to_percent": 80, "charger_kw": 50}),
                ("fuel_cost", {"distance_km": 350, "litres_per_100km": 7, "price_per_litre": 1.9}),
            ],
            ["0.minutes", "1.cost"],
            masks=[
                (
                    "For a road trip I can rent an EV or a petrol car. How long would charging the EV's 60 kWh battery "
                    "from 10% to 80% take on a 50 kW charger, and what would petrol cost for the trip at 7 litres per "
                    "100 km and 1.9 per litre?",
                    "fuel_cost.distance_km",
                    "350 km",
                )
            ],
        ),
        C(
            "Check Zephyr Air flights ZP305 and ZP902 on 2026-01-07: which one had the longer delay?",
            [
                ("flight_status", {"flight_number": "ZP305", "date": "2026-01-07"}),
                ("flight_status", {"flight_number": "ZP902", "date": "2026-01-07"}),
            ],
            ["0.delay_minutes", "1.delay_minutes"],
            masks=[
                (
                    "Check Zephyr Air flights ZP305 and ZP902 on the day of the snowstorm: which one had the longer "
                    "delay?",
                    "flight_status.date",
                    "2026-01-07",
                )
            ],
        ),
        C(
            "My road trip is 1200 km, my car uses 8 litres per 100 km and fuel costs 1.75 EUR per litre. What will "
            "the fuel cost, and what is that in USD at the 2026-03-02 rate?",
            [
                ("fuel_cost", {"distance_km": 1200, "litres_per_100km": 8, "price_per_litre": 1.75}),
                ("convert_currency", {"amount": Ref("0.cost"), "base": "EUR", "quote": "USD", "date": "2026-03-02"}),
            ],
            ["0.cost", "1.converted"],
            masks=[
                (
                    "My road trip is 1200 km, my car uses 8 litres per 100 km and fuel costs 1.75 EUR per litre. What "
                    "will the fuel cost, and what is that in USD at the rate of the day I booked?",
                    "convert_currency.date",
                    "2026-03-02",
                )
            ],
        ),
        C(
            "A 100 km drive in a car that uses 5 litres per 100 km, with fuel at 2 per litre: how many litres will "
            "it take, and how much money?",
            [("fuel_cost", {"distance_km": 100, "litres_per_100km": 5, "price_per_litre": 2})],
            ["0.litres", "0.cost"],
            easy=("fuel_cost",),
            masks=[
                (
                    "A 100 km drive in a car that uses 5 litres per 100 km: how many litres will it take, and how much "
                    "money at the pump price here?",
                    "fuel_cost.price_per_litre",
                    "2 a litre",
                )
            ],
        ),
        C(
            "Was Zephyr Air flight ZP518 on time on 2025-11-28, and which gate did it leave from?",
            [("flight_status", {"flight_number": "ZP518", "date": "2025-11-28"})],
            ["0.status", "0.delay_minutes", "0.gate"],
            masks=[
                (
                    "Was my Zephyr Air flight on time on 2025-11-28, and which gate did it leave from?",
                    "flight_status.flight_number",
                    "ZP518",
                )
            ],
        ),
        C(
            "How far is Chicago from Los Angeles, and how late was Zephyr Air flight ZP412 on 2025-12-19?",
            [
                ("distance_between", {"city_a": "Chicago", "city_b": "Los Angeles"}),
                ("flight_status", {"flight_number": "ZP412", "date": "2025-12-19"}),
            ],
            ["0.distance_km", "1.status", "1.delay_minutes"],
            masks=[
                (
                    "How far is Chicago from Los Angeles, and how late was Zephyr Air flight ZP412 on the day I flew "
                    "home for the holidays?",
                    "flight_status.date",
                    "2025-12-19",
                )
            ],
        ),
        C(
            "My city EV has a 40 kWh battery at 15%. How long will it take to charge to 100% on an 11 kW wall box, "
            "and how much energy will it draw?",
            [("ev_charging_time", {"battery_kwh": 40, "from_percent": 15, "to_percent": 100, "charger_kw": 11})],
            ["0.minutes", "0.energy_kwh"],
            masks=[
                (
                    "My city EV's battery is at 15%. How long will it take to charge to 100% on an 11 kW wall box, "
                    "and how much energy will it draw?",
                    "ev_charging_time.battery_kwh",
                    "40 kWh",
                )
            ],
        ),
        C(
            "My trip is 300 miles. Convert that to kilometres and estimate the fuel and its cost for a car using 7.2 "
            "litres per 100 km, at 1.65 per litre.",
            [
                ("convert_units", {"value": 300, "from_unit": "miles", "to_unit": "kilometres"}),
                (
                    "fuel_cost",
                    {"distance_km": Ref("0.result"), "litres_per_100km": 7.2, "price_per_litre": 1.65},
                ),
            ],
            ["0.result", "1.litres", "1.cost"],
            masks=[
                (
                    "My trip is 300 miles. Convert that to kilometres and estimate the fuel and its cost for a car "
                    "using 7.2 litres per 100 km, at the price at my local station.",
                    "fuel_cost.price_per_litre",
                    "1.65 a litre",
                )
            ],
        ),
        C(
            "When did Zephyr Air flight ZP210 arrive (in UTC) on 2026-03-06, and what time zone is Tokyo in?",
            [
                ("flight_status", {"flight_number": "ZP210", "date": "2026-03-06"}),
                ("timezone_of", {"city": "Tokyo"}),
            ],
            ["0.arrival_utc", "1.timezone", "1.utc_offset"],
            masks=[
                (
                    "When did my Zephyr Air flight from Paris arrive (in UTC) on 2026-03-06, and what time zone is "
                    "Tokyo in?",
                    "flight_status.flight_number",
                    "ZP210",
                )
            ],
        ),
    ],
}
