"""The FAIL-TaLMs tool library: everyday tools (a calculator, calendars, weather, quotes, recipes, ...) that run
offline and deterministically.

Each tool is a typed function registered with :func:`_tool`, which builds its :class:`ToolSpec` from the signature
and the parameter descriptions. Data come from seeded tables in this module; values that vary by day (prices,
weather, flight delays) are a fixed function of their keys (:func:`_unit`), so every call with the same arguments
returns the same result on every machine. No tool reads the clock: a date is always an argument, and the weather
feed's "now" is the fixed :data:`REFERENCE_DAY`.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import math
import operator
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any, NoReturn, TypeVar, get_type_hints

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from undertow.env_core.errors import close_match, did_you_mean
from undertow.env_core.model import ToolSpec
from undertow.env_core.tools import ToolBox, ToolExecutionError
from undertow.env_core.untrusted import capped

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")
_Day = date  # tools take an argument named ``date``, which shadows the class inside them

# ---------------------------------------------------------------------------------------------------------------
# Registry


@dataclass(frozen=True)
class _Entry:
    function: Callable[..., Any]
    spec: ToolSpec


_REGISTRY: dict[str, _Entry] = {}
_JSON_TYPES: dict[object, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}


def _tool(category: str, description: str, /, **params: str | tuple[str, dict[str, Any]]) -> Callable[[F], F]:
    """Register a function as a tool of ``category``. ``params`` describe each argument (a text, or a text and extra
    JSON-schema keywords such as bounds); the JSON types come from the function's annotations, and an argument
    with a default is optional."""

    def register(function: F) -> F:
        hints = get_type_hints(function)
        properties: dict[str, Any] = {}
        required: list[str] = []
        for name, parameter in inspect.signature(function).parameters.items():
            assert name in params, f"{function.__name__}: parameter {name!r} has no description"
            described = params[name]
            text, extra = (described, {}) if isinstance(described, str) else described
            schema: dict[str, Any] = {"type": _JSON_TYPES[hints[name]], "description": text, **extra}
            if parameter.default is inspect.Parameter.empty:
                required.append(name)
            else:
                schema["default"] = parameter.default
            properties[name] = schema
        unknown = set(params) - set(properties)
        assert not unknown, f"{function.__name__}: described parameters it lacks: {unknown}"
        spec = ToolSpec(
            name=function.__name__,
            description=" ".join(description.split()),
            parameters={
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": False,
            },
            binding={"category": category, "function": function.__name__},
        )
        _REGISTRY[spec.name] = _Entry(function, spec)
        return function

    return register


# ---------------------------------------------------------------------------------------------------------------
# Shared helpers


def _fail(message: str) -> NoReturn:
    raise ToolExecutionError(message)


def _key(name: str) -> str:
    """A lookup key: accents, case, spaces and punctuation dropped ("São Paulo" -> "saopaulo")."""
    plain = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]", "", plain.casefold())


def _find(table: Mapping[str, T], name: str, what: str, aliases: Mapping[str, str] | None = None) -> tuple[str, T]:
    """The (display name, row) of ``table`` that ``name`` means, ignoring case, accents and punctuation; an
    unknown name raises with the closest known one as a hint."""
    index = {_key(k): k for k in table}
    index.update({_key(a): k for a, k in (aliases or {}).items()})
    for candidate in (name, name.split(",")[0]):  # "Paris, France" -> "Paris"
        found = index.get(_key(candidate))
        if found is not None:
            return found, table[found]
    hint = did_you_mean(name.strip().title() if name.islower() else name.strip(), table)
    _fail(f"unknown {what} {name!r}" + (f"; {hint}" if hint else ""))


_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _date(text: str, argument: str = "date", first: date | None = None, last: date | None = None) -> date:
    """An ISO date argument, optionally within [first, last]."""
    try:
        if not _ISO_DATE.match(text.strip()):
            raise ValueError
        day = date.fromisoformat(text.strip())
    except ValueError:
        _fail(f"{argument}: {text!r} is not a date; write it as YYYY-MM-DD, e.g. 2026-07-04")
    if (first and day < first) or (last and day > last):
        _fail(f"{argument}: {day} is outside the data this tool has ({first} to {last})")
    return day


def _unit(*parts: object) -> float:
    """A number in [0, 1) fixed by ``parts``: the seeded "randomness" of every daily value."""
    digest = hashlib.sha256("|".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def _round(x: float) -> float:
    """Two decimals, or four significant digits for small magnitudes (0.01235)."""
    if x == 0 or not math.isfinite(x):
        return x
    return round(x, max(2, 3 - math.floor(math.log10(abs(x))))) + 0.0  # never -0.0


def _sig(x: float, digits: int = 6) -> float:
    return float(f"{x:.{digits}g}")


def _weekday(day: date) -> str:
    return day.strftime("%A")


def _count(value: int, argument: str, low: int, high: int) -> int:
    if not low <= value <= high:
        _fail(f"{argument}: {value} is out of range; give a whole number from {low} to {high}")
    return value


def _positive(value: float, argument: str, high: float = 1e9) -> float:
    if not 0 < value <= high:
        _fail(f"{argument}: {value} is out of range; give a number above 0 and at most {high:g}")
    return float(value)


# ---------------------------------------------------------------------------------------------------------------
# Science


_OPERATORS: dict[type[ast.AST], Callable[..., Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
}
_MAX_EXPRESSION = 300  # characters
_MAX_MAGNITUDE = 10**100  # any intermediate value; keeps big-integer arithmetic cheap


def _checked(value: Any) -> int | float:
    if isinstance(value, complex):
        _fail("the expression has no real-valued result (a fractional power of a negative number)")
    if isinstance(value, float) and not math.isfinite(value):
        _fail("the result is too large to represent")
    if abs(value) > _MAX_MAGNITUDE:
        _fail("a value in the expression exceeds 1e100; the calculator works below that")
    return value  # type: ignore[no-any-return]


def _evaluate(node: ast.AST) -> int | float:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return _checked(node.value)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _OPERATORS:
        return _checked(_OPERATORS[type(node.op)](_evaluate(node.operand)))
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if (
            isinstance(node.op, ast.Pow)
            and abs(left) > 1
            and (abs(right) > 1000 or right * math.log10(abs(left)) > 100)
        ):
            _fail("the power is too large; the calculator works with values below 1e100")
        try:
            return _checked(_OPERATORS[type(node.op)](left, right))
        except ZeroDivisionError:
            _fail("division by zero")
        except OverflowError:
            _fail("the result is too large to represent")
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitXor):
        _fail("'^' is not a power here; write powers with ** (2**10)")
    if isinstance(node, ast.Name | ast.Call | ast.Attribute):
        shown = ast.unparse(node)
        _fail(f"{shown!r} is not allowed: only numbers, + - * / // % ** and parentheses (no names or functions)")
    _fail(f"{ast.unparse(node)!r} is not allowed: only numbers, + - * / // % ** and parentheses")


@_tool(
    "Science",
    """Evaluate an arithmetic expression exactly as written. Supports numbers (integers and decimals), the
    operators + - * / // (floor division) % (remainder) ** (power) and parentheses; no variables or functions.
    Returns the expression and its numeric result (decimals rounded to 10 places).""",
    expression=("The arithmetic expression, e.g. '(12.5 + 7) * 3 / 2'.", {"maxLength": _MAX_EXPRESSION}),
)
def calculate(expression: str) -> dict[str, Any]:
    if not expression.strip():
        _fail("expression: empty; give an arithmetic expression such as '2 + 2'")
    if len(expression) > _MAX_EXPRESSION:
        _fail(f"expression: longer than {_MAX_EXPRESSION} characters; split the calculation")
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        _fail(f"could not parse {expression!r}; use numbers, + - * / // % ** and parentheses, e.g. '(3 + 4) * 2'")
    result = _evaluate(tree.body)
    if isinstance(result, float):
        result = round(result, 10)
        if result.is_integer() and abs(result) < 1e15:
            result = int(result)
    return {"expression": expression, "result": result}


# unit -> (dimension, size in the dimension's base unit); temperatures are converted by formula
_UNITS: dict[str, tuple[str, float]] = {
    **{u: ("length", f) for u, f in [("m", 1), ("km", 1e3), ("cm", 0.01), ("mm", 1e-3), ("mi", 1609.344),
                                      ("yd", 0.9144), ("ft", 0.3048), ("in", 0.0254), ("nmi", 1852)]},
    **{u: ("mass", f) for u, f in [("kg", 1), ("g", 1e-3), ("mg", 1e-6), ("t", 1e3), ("lb", 0.45359237),
                                    ("oz", 0.028349523125), ("st", 6.35029318)]},
    **{u: ("volume", f) for u, f in [("l", 1), ("ml", 1e-3), ("m3", 1e3), ("gal", 3.785411784), ("qt", 0.946352946),
                                      ("pt", 0.473176473), ("cup", 0.2365882365), ("fl_oz", 0.0295735295625)]},
    **{u: ("speed", f) for u, f in [("m/s", 1), ("km/h", 1 / 3.6), ("mph", 0.44704), ("kn", 1852 / 3600)]},
    **{u: ("area", f) for u, f in [("m2", 1), ("km2", 1e6), ("ha", 1e4), ("acre", 4046.8564224), ("ft2", 0.09290304)]},
    **{u: ("energy", f) for u, f in [("j", 1), ("kj", 1e3), ("cal", 4.184), ("kcal", 4184), ("wh", 3600),
                                      ("kwh", 3.6e6)]},
    **{u: ("temperature", 1) for u in ("c", "f", "k")},
}  # fmt: skip
_UNIT_NAMES = """m: meter metre meters metres; km: kilometer kilometre kilometers kilometres; cm: centimeter centimeters
centimetre centimetres; mm: millimeter millimeters millimetre millimetres; mi: mile miles; yd: yard yards;
ft: foot feet; in: inch inches; nmi: nautical_mile nautical_miles; kg: kilogram kilograms kilo kilos; g: gram grams;
mg: milligram milligrams; t: tonne tonnes metric_ton; lb: pound pounds lbs; oz: ounce ounces; st: stone stones;
l: liter liters litre litres; ml: milliliter milliliters millilitre millilitres; m3: cubic_meter cubic_meters;
gal: gallon gallons us_gallon; qt: quart quarts; pt: pint pints; cup: cups; fl_oz: fluid_ounce fluid_ounces floz;
m/s: meters_per_second mps; km/h: kph kmh kilometers_per_hour; mph: miles_per_hour; kn: knot knots kt;
m2: square_meter square_meters sq_m; km2: square_kilometer square_kilometers; ha: hectare hectares;
acre: acres; ft2: square_foot square_feet sq_ft; j: joule joules; kj: kilojoule kilojoules; cal: calorie calories;
kcal: kilocalorie kilocalories; wh: watt_hour watt_hours; kwh: kilowatt_hour kilowatt_hours;
c: celsius °c degc; f: fahrenheit °f degf; k: kelvin"""
_UNIT_ALIASES = {
    name: unit.strip()
    for entry in _UNIT_NAMES.replace("\n", " ").split(";")
    for unit, names in [entry.split(":")]
    for name in [unit.strip(), *names.split()]
}


def _unit_of(name: str, argument: str) -> str:
    text = name.strip().casefold().replace(" ", "_")
    unit = text if text in _UNITS else _UNIT_ALIASES.get(text)
    if unit is None:
        hint = close_match(text, [*_UNITS, *_UNIT_ALIASES]) or f"known units: {', '.join(_UNITS)}"
        _fail(f"{argument}: unknown unit {name!r}; {hint}")
    return unit


def _to_kelvin(value: float, unit: str) -> float:
    return {"c": value + 273.15, "f": (value - 32) * 5 / 9 + 273.15, "k": value}[unit]


@_tool(
    "Science",
    """Convert a quantity between units of length, mass, volume, speed, area, energy or temperature. Units are
    abbreviations or names: m, km, mi, ft, in, kg, lb, oz, l, gal (US), cup, km/h, mph, kn, ha, acre, kcal, kWh,
    C, F, K and more. Returns the converted value rounded to 2 decimals (4 significant digits when small).""",
    value="The quantity to convert.",
    from_unit="The unit the value is in, e.g. 'km' or 'fahrenheit'.",
    to_unit="The unit to convert to; must measure the same dimension.",
)
def convert_units(value: float, from_unit: str, to_unit: str) -> dict[str, Any]:
    source, target = _unit_of(from_unit, "from_unit"), _unit_of(to_unit, "to_unit")
    (dimension, size), (target_dimension, target_size) = _UNITS[source], _UNITS[target]
    if dimension != target_dimension:
        _fail(f"cannot convert {dimension} ({from_unit}) to {target_dimension} ({to_unit}); pick units of one kind")
    if dimension == "temperature":
        kelvin = _to_kelvin(float(value), source)
        if kelvin < 0:
            _fail(f"{value} {from_unit} is below absolute zero")
        result = {"c": kelvin - 273.15, "f": (kelvin - 273.15) * 9 / 5 + 32, "k": kelvin}[target]
    else:
        result = float(value) * size / target_size
    return {"value": value, "from_unit": source, "to_unit": target, "result": _round(result)}


@_tool(
    "Science",
    """Compute the change from an old value to a new one, absolute and in percent of the old value (positive for an
    increase). Returns change and percent_change, rounded to 2 decimals.""",
    old="The starting value (not zero).",
    new="The final value.",
)
def percentage_change(old: float, new: float) -> dict[str, Any]:
    if old == 0:
        _fail("old: the starting value is 0, so a percentage change is undefined; give a non-zero starting value")
    return {
        "old": old,
        "new": new,
        "change": _round(new - old),
        "percent_change": round((new - old) / abs(old) * 100, 2),
    }


@_tool(
    "Science",
    "Factor a whole number into primes. Returns the prime factors in ascending order (with repetition) and whether "
    "the number itself is prime.",
    n=("A whole number from 2 to 1000000000000.", {"minimum": 2, "maximum": 10**12}),
)
def prime_factors(n: int) -> dict[str, Any]:
    _count(n, "n", 2, 10**12)
    factors, rest, d = [], n, 2
    while d * d <= rest:
        while rest % d == 0:
            factors.append(d)
            rest //= d
        d += 1 if d == 2 else 2
    if rest > 1:
        factors.append(rest)
    return {"n": n, "factors": factors, "is_prime": factors == [n]}


# symbol: (name, atomic number, standard atomic weight, group)
_ELEMENTS: dict[str, tuple[str, int, float, str]] = {
    "H": ("Hydrogen", 1, 1.008, "nonmetal"),
    "He": ("Helium", 2, 4.0026, "noble gas"),
    "Li": ("Lithium", 3, 6.94, "alkali metal"),
    "C": ("Carbon", 6, 12.011, "nonmetal"),
    "N": ("Nitrogen", 7, 14.007, "nonmetal"),
    "O": ("Oxygen", 8, 15.999, "nonmetal"),
    "F": ("Fluorine", 9, 18.998, "halogen"),
    "Ne": ("Neon", 10, 20.18, "noble gas"),
    "Na": ("Sodium", 11, 22.99, "alkali metal"),
    "Mg": ("Magnesium", 12, 24.305, "alkaline earth metal"),
    "Al": ("Aluminium", 13, 26.982, "post-transition metal"),
    "Si": ("Silicon", 14, 28.085, "metalloid"),
    "P": ("Phosphorus", 15, 30.974, "nonmetal"),
    "S": ("Sulfur", 16, 32.06, "nonmetal"),
    "Cl": ("Chlorine", 17, 35.45, "halogen"),
    "Ar": ("Argon", 18, 39.948, "noble gas"),
    "K": ("Potassium", 19, 39.098, "alkali metal"),
    "Ca": ("Calcium", 20, 40.078, "alkaline earth metal"),
    "Fe": ("Iron", 26, 55.845, "transition metal"),
    "Cu": ("Copper", 29, 63.546, "transition metal"),
    "Zn": ("Zinc", 30, 65.38, "transition metal"),
    "Ag": ("Silver", 47, 107.87, "transition metal"),
    "Sn": ("Tin", 50, 118.71, "post-transition metal"),
    "I": ("Iodine", 53, 126.9, "halogen"),
    "Pt": ("Platinum", 78, 195.08, "transition metal"),
    "Au": ("Gold", 79, 196.97, "transition metal"),
    "Hg": ("Mercury", 80, 200.59, "transition metal"),
    "Pb": ("Lead", 82, 207.2, "post-transition metal"),
    "U": ("Uranium", 92, 238.03, "actinide"),
}


@_tool(
    "Science",
    """Look up a chemical element by symbol or name (e.g. 'Fe' or 'iron'). Returns its symbol, name, atomic
    number, standard atomic weight and group (noble gas, halogen, transition metal, ...).""",
    symbol="The element's symbol or English name.",
)
def element_info(symbol: str) -> dict[str, Any]:
    names = {s: s for s in _ELEMENTS} | {row[0]: s for s, row in _ELEMENTS.items()}
    _, found = _find(names, symbol, "element", {"Aluminum": "Al", "Sulphur": "S"})
    name, number, weight, group = _ELEMENTS[found]
    return {"symbol": found, "name": name, "atomic_number": number, "atomic_weight": weight, "group": group}


_FORMULA_TOKEN = re.compile(r"([A-Z][a-z]?|\(|\)|\d+)")


@_tool(
    "Science",
    """Compute the molar mass of a chemical formula such as 'H2O', 'C6H12O6' or 'Ca(OH)2' from standard atomic
    weights. Returns the mass in g/mol (2 decimals) and the count of atoms of each element.""",
    formula="The formula, case-sensitive, with optional parentheses: 'NaCl', 'Mg(OH)2'.",
)
def molar_mass(formula: str) -> dict[str, Any]:
    text = formula.replace(" ", "")
    if not text or "".join(_FORMULA_TOKEN.findall(text)) != text:
        _fail(f"formula: cannot read {formula!r}; write element symbols with counts, e.g. 'C6H12O6' or 'Ca(OH)2'")
    stack: list[dict[str, int]] = [{}]
    tokens = _FORMULA_TOKEN.findall(text)
    for i, token in enumerate(tokens):
        if token.isdigit():
            if i == 0 or tokens[i - 1] == "(" or tokens[i - 1].isdigit():
                _fail(f"formula: a count must follow an element or ')' in {formula!r}; e.g. 'H2O', not '2H2O'")
            continue
        repeat = int(tokens[i + 1]) if i + 1 < len(tokens) and tokens[i + 1].isdigit() else 1
        if token == "(":
            stack.append({})
        elif token == ")":
            if len(stack) == 1:
                _fail(f"formula: unbalanced ')' in {formula!r}")
            group = stack.pop()
            for element, n in group.items():
                stack[-1][element] = stack[-1].get(element, 0) + n * repeat
        else:
            if token not in _ELEMENTS:
                hint = close_match(token, _ELEMENTS) or "element symbols are case-sensitive (Co, not CO)"
                _fail(f"formula: unknown element {token!r}; {hint}")
            stack[-1][token] = stack[-1].get(token, 0) + repeat
    if len(stack) != 1:
        _fail(f"formula: unbalanced '(' in {formula!r}")
    atoms = stack[0]
    mass = sum(_ELEMENTS[e][2] * n for e, n in atoms.items())
    return {"formula": formula, "molar_mass_g_mol": round(mass, 2), "atoms": atoms}


# name: (diameter km, surface gravity m/s², day length h, year length days, mean distance from the Sun 10^6 km, moons)
_PLANETS: dict[str, tuple[int, float, float, float, float, int]] = {
    "Mercury": (4879, 3.7, 4222.6, 88.0, 57.9, 0),
    "Venus": (12104, 8.9, 2802.0, 224.7, 108.2, 0),
    "Earth": (12756, 9.8, 24.0, 365.2, 149.6, 1),
    "Mars": (6792, 3.7, 24.7, 687.0, 228.0, 2),
    "Jupiter": (142984, 23.1, 9.9, 4331.0, 778.5, 95),
    "Saturn": (120536, 9.0, 10.7, 10747.0, 1432.0, 146),
    "Uranus": (51118, 8.7, 17.2, 30589.0, 2867.0, 28),
    "Neptune": (49528, 11.0, 16.1, 59800.0, 4515.0, 16),
}


@_tool(
    "Science",
    """Key facts about a planet of the Solar System: diameter (km), surface gravity (m/s²), length of day (hours)
    and of year (Earth days), mean distance from the Sun (millions of km) and number of known moons.""",
    planet="The planet's English name, e.g. 'Mars'.",
)
def planet_facts(planet: str) -> dict[str, Any]:
    name, (diameter, gravity, day, year, distance, moons) = _find(_PLANETS, planet, "planet")
    return {
        "planet": name,
        "diameter_km": diameter,
        "gravity_m_s2": gravity,
        "day_hours": day,
        "year_days": year,
        "distance_from_sun_million_km": distance,
        "moons": moons,
    }


_G0 = 9.80665
_EXHAUST_SPEED = 311 * _G0  # a kerosene/oxygen first stage (specific impulse 311 s)
_STRUCTURE = 0.08  # tank and engine mass per kg of fuel


@_tool(
    "Science",
    """Simulate a single-stage vertical rocket launch with constant thrust, a kerosene/oxygen engine (specific
    impulse 311 s), tank and engine mass of 8% of the fuel, no drag and flat-Earth gravity. Returns the lift-off
    thrust-to-weight ratio, the ideal delta-v, burn time, burnout speed and altitude, the apogee, and whether the
    delta-v would suffice for low Earth orbit (9.4 km/s).""",
    payload_kg=("Payload mass in kg.", {"minimum": 0}),
    fuel_kg=("Propellant mass in kg.", {"exclusiveMinimum": 0}),
    thrust_kn=("Engine thrust in kilonewtons.", {"exclusiveMinimum": 0}),
)
def rocket_launch_simulation(payload_kg: float, fuel_kg: float, thrust_kn: float) -> dict[str, Any]:
    if payload_kg < 0 or payload_kg > 1e7:
        _fail("payload_kg: give a mass from 0 to 10000000 kg")
    fuel, thrust = _positive(fuel_kg, "fuel_kg", 1e7), _positive(thrust_kn, "thrust_kn", 1e6) * 1000
    wet = payload_kg + fuel * (1 + _STRUCTURE)
    dry = wet - fuel
    twr = thrust / (wet * _G0)
    flow = thrust / _EXHAUST_SPEED
    burn = fuel / flow
    delta_v = _EXHAUST_SPEED * math.log(wet / dry)
    result: dict[str, Any] = {
        "liftoff_thrust_to_weight": round(twr, 2),
        "lifts_off": twr > 1,
        "delta_v_m_s": round(delta_v, 1),
        "burn_time_s": round(burn, 1),
        "reaches_orbit_delta_v": delta_v >= 9400,
    }
    if twr <= 1:
        return result | {"burnout_speed_m_s": 0.0, "burnout_altitude_km": 0.0, "apogee_km": 0.0}
    speed = delta_v - _G0 * burn
    altitude = _EXHAUST_SPEED * (burn - dry / flow * math.log(wet / dry)) - _G0 * burn**2 / 2
    apogee = altitude + max(speed, 0) ** 2 / (2 * _G0)
    return result | {
        "burnout_speed_m_s": round(speed, 1),
        "burnout_altitude_km": round(altitude / 1000, 1),
        "apogee_km": round(apogee / 1000, 1),
    }


# ---------------------------------------------------------------------------------------------------------------
# Calendar

_CALENDAR_FIRST, _CALENDAR_LAST = date(1, 1, 1), date(9999, 12, 31)
_HOLIDAY_YEARS = (2022, 2030)
_WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")

# country: holiday rules, one "name = rule" per line. Rules: MM-DD (fixed), nth WEEKDAY MM (n = -1: last),
# easter+N, monday-before MM-DD, equinox spring|autumn (Japan). Calendar dates, without weekend substitutes.
_HOLIDAY_RULES = {
    "United States": """New Year's Day = 01-01; Martin Luther King Jr. Day = 3 mon 01; Presidents' Day = 3 mon 02;
        Memorial Day = -1 mon 05; Juneteenth = 06-19; Independence Day = 07-04; Labor Day = 1 mon 09;
        Columbus Day = 2 mon 10; Veterans Day = 11-11; Thanksgiving Day = 4 thu 11; Christmas Day = 12-25""",
    "United Kingdom": """New Year's Day = 01-01; Good Friday = easter-2; Easter Monday = easter+1;
        Early May Bank Holiday = 1 mon 05; Spring Bank Holiday = -1 mon 05; Summer Bank Holiday = -1 mon 08;
        Christmas Day = 12-25; Boxing Day = 12-26""",
    "France": """New Year's Day = 01-01; Easter Monday = easter+1; Labour Day = 05-01; Victory in Europe Day = 05-08;
        Ascension Day = easter+39; Whit Monday = easter+50; Bastille Day = 07-14; Assumption Day = 08-15;
        All Saints' Day = 11-01; Armistice Day = 11-11; Christmas Day = 12-25""",
    "Germany": """New Year's Day = 01-01; Good Friday = easter-2; Easter Monday = easter+1; Labour Day = 05-01;
        Ascension Day = easter+39; Whit Monday = easter+50; German Unity Day = 10-03; Christmas Day = 12-25;
        Second Day of Christmas = 12-26""",
    "Japan": """New Year's Day = 01-01; Coming of Age Day = 2 mon 01; National Foundation Day = 02-11;
        Emperor's Birthday = 02-23; Vernal Equinox Day = equinox spring; Showa Day = 04-29;
        Constitution Memorial Day = 05-03; Greenery Day = 05-04; Children's Day = 05-05; Marine Day = 3 mon 07;
        Mountain Day = 08-11; Respect for the Aged Day = 3 mon 09; Autumnal Equinox Day = equinox autumn;
        Sports Day = 2 mon 10; Culture Day = 11-03; Labour Thanksgiving Day = 11-23""",
    "Canada": """New Year's Day = 01-01; Good Friday = easter-2; Victoria Day = monday-before 05-25;
        Canada Day = 07-01; Labour Day = 1 mon 09; National Day for Truth and Reconciliation = 09-30;
        Thanksgiving = 2 mon 10; Remembrance Day = 11-11; Christmas Day = 12-25; Boxing Day = 12-26""",
}
_COUNTRY_ALIASES = {
    "US": "United States",
    "USA": "United States",
    "United States of America": "United States",
    "America": "United States",
    "UK": "United Kingdom",
    "GB": "United Kingdom",
    "Great Britain": "United Kingdom",
    "Britain": "United Kingdom",
    "England": "United Kingdom",
    "Deutschland": "Germany",
    "FR": "France",
    "DE": "Germany",
    "JP": "Japan",
    "CA": "Canada",
    "Nippon": "Japan",
    "Korea": "South Korea",
    "Republic of Korea": "South Korea",
    "Holland": "Netherlands",
    "PRC": "China",
    "Türkiye": "Turkey",
    "NZ": "New Zealand",
    "Aotearoa": "New Zealand",
    "RSA": "South Africa",
    "Brasil": "Brazil",
}


def _easter(year: int) -> date:
    """Gregorian Easter Sunday (the anonymous Gregorian algorithm)."""
    a, b, c = year % 19, year // 100, year % 100
    d, e = divmod(b, 4)
    g = (8 * b + 13) // 25
    h = (19 * a + b - d - g + 15) % 30
    i, k = divmod(c, 4)
    ell = (32 + 2 * e + 2 * i - h - k) % 7
    m = (a + 11 * h + 22 * ell) // 451
    month, day = divmod(h + ell - 7 * m + 114, 31)
    return date(year, month, day + 1)


def _nth_weekday(year: int, month: int, weekday: int, n: int) -> date:
    if n > 0:
        first = date(year, month, 1)
        return first + timedelta(days=(weekday - first.weekday()) % 7 + 7 * (n - 1))
    last = (date(year + month // 12, month % 12 + 1, 1)) - timedelta(days=1)
    return last - timedelta(days=(last.weekday() - weekday) % 7)


def _rule_date(rule: str, year: int) -> date:
    parts = rule.split()
    if rule.startswith("easter"):
        return _easter(year) + timedelta(days=int(rule[6:]))
    if parts[0] == "equinox":  # the usual approximation, good for 1980-2099
        base = 20.8431 if parts[1] == "spring" else 23.2488
        day = int(base + 0.242194 * (year - 1980) - (year - 1980) // 4)
        return date(year, 3 if parts[1] == "spring" else 9, day)
    if parts[0] == "monday-before":
        limit = date(year, *map(int, parts[1].split("-")))
        return limit - timedelta(days=(limit.weekday() - 0) % 7 or 7)
    if len(parts) == 3:
        return _nth_weekday(year, int(parts[2]), _WEEKDAYS.index(parts[1]), int(parts[0]))
    return date(year, *map(int, rule.split("-")))


def _holidays(country: str, year: int) -> list[tuple[date, str]]:
    rules = [line.split("=") for line in _HOLIDAY_RULES[country].replace("\n", " ").split(";")]
    return sorted((_rule_date(rule.strip(), year), name.strip()) for name, rule in rules)


def _holiday_country(country: str) -> str:
    index = {_key(k): k for k in _HOLIDAY_RULES} | {
        _key(a): k for a, k in _COUNTRY_ALIASES.items() if k in _HOLIDAY_RULES
    }
    found = index.get(_key(country))
    if found is None:
        _fail(f"no holiday calendar for {country!r}; calendars cover: {', '.join(_HOLIDAY_RULES)}")
    return found


@_tool(
    "Calendar",
    "Tell the day of the week of a date, with its ISO week number and day of the year.",
    date="The date, YYYY-MM-DD.",
)
def day_of_week(date: str) -> dict[str, Any]:
    day = _date(date)
    return {
        "date": day.isoformat(),
        "day_of_week": _weekday(day),
        "iso_week": day.isocalendar()[1],
        "day_of_year": day.timetuple().tm_yday,
    }


@_tool(
    "Calendar",
    """Count the days from a start date to an end date (negative when the end comes first). Also returns the whole
    weeks and the number of weekdays (Monday to Friday) from the start date up to, not including, the end date.""",
    start="The first date, YYYY-MM-DD.",
    end="The second date, YYYY-MM-DD.",
)
def days_between(start: str, end: str) -> dict[str, Any]:
    first, last = _date(start, "start"), _date(end, "end")
    days = (last - first).days
    low, high = sorted((first, last))
    full_weeks, extra = divmod((high - low).days, 7)
    weekdays = full_weeks * 5 + sum((low + timedelta(days=i)).weekday() < 5 for i in range(extra))
    return {
        "start": first.isoformat(),
        "end": last.isoformat(),
        "days": days,
        "weeks": abs(days) // 7,
        "weekdays": weekdays,
    }


@_tool(
    "Calendar",
    "Add a number of days (negative to go back) to a date. Returns the resulting date and its day of the week.",
    date="The starting date, YYYY-MM-DD.",
    days=("Days to add; negative values count backwards.", {"minimum": -100000, "maximum": 100000}),
)
def add_days(date: str, days: int) -> dict[str, Any]:
    start = _date(date)
    _count(days, "days", -100000, 100000)
    try:
        result = start + timedelta(days=days)
    except OverflowError:
        _fail("days: the result falls outside the years 1 to 9999")
    return {"date": start.isoformat(), "days": days, "result": result.isoformat(), "day_of_week": _weekday(result)}


@_tool(
    "Calendar",
    f"""List the national public holidays of a country in a year, in date order. Covers the United States, the
    United Kingdom (England and Wales), France, Germany (nationwide days), Japan and Canada (federal), years
    {_HOLIDAY_YEARS[0]} to {_HOLIDAY_YEARS[1]}. Dates are the holidays' own dates, without weekend substitutes.""",
    country="The country's name or code, e.g. 'France' or 'US'.",
    year=("The year.", {"minimum": _HOLIDAY_YEARS[0], "maximum": _HOLIDAY_YEARS[1]}),
)
def public_holidays(country: str, year: int) -> dict[str, Any]:
    name = _holiday_country(country)
    _count(year, "year", *_HOLIDAY_YEARS)
    rows = [{"date": d.isoformat(), "name": n, "day_of_week": _weekday(d)} for d, n in _holidays(name, year)]
    return {"country": name, "year": year, "count": len(rows), "holidays": rows}


@_tool(
    "Calendar",
    """Find the first public holiday of a country on or after a date (same coverage as public_holidays). Returns its
    name, date, weekday and the number of days from the given date.""",
    country="The country's name or code, e.g. 'Japan' or 'UK'.",
    date="The date to search from, YYYY-MM-DD.",
)
def next_holiday(country: str, date: str) -> dict[str, Any]:
    name = _holiday_country(country)
    start = _date(date, first=_Day(_HOLIDAY_YEARS[0], 1, 1), last=_Day(_HOLIDAY_YEARS[1], 12, 31))
    for year in (start.year, start.year + 1):
        for day, holiday in _holidays(name, year):
            if day >= start:
                return {
                    "country": name,
                    "name": holiday,
                    "date": day.isoformat(),
                    "day_of_week": _weekday(day),
                    "days_away": (day - start).days,
                }
    _fail(f"no holiday found after {start}")  # unreachable: every calendar has New Year's Day


# ---------------------------------------------------------------------------------------------------------------
# Geo

# name: (capital, population, currency, languages, continent)
_COUNTRIES: dict[str, tuple[str, int, str, str, str]] = {
    "United States": ("Washington, D.C.", 334_900_000, "USD", "English", "North America"),
    "Canada": ("Ottawa", 40_100_000, "CAD", "English, French", "North America"),
    "Mexico": ("Mexico City", 128_500_000, "MXN", "Spanish", "North America"),
    "Brazil": ("Brasília", 216_400_000, "BRL", "Portuguese", "South America"),
    "Argentina": ("Buenos Aires", 46_700_000, "ARS", "Spanish", "South America"),
    "United Kingdom": ("London", 68_300_000, "GBP", "English", "Europe"),
    "France": ("Paris", 68_200_000, "EUR", "French", "Europe"),
    "Germany": ("Berlin", 84_500_000, "EUR", "German", "Europe"),
    "Italy": ("Rome", 58_900_000, "EUR", "Italian", "Europe"),
    "Spain": ("Madrid", 48_300_000, "EUR", "Spanish", "Europe"),
    "Netherlands": ("Amsterdam", 17_900_000, "EUR", "Dutch", "Europe"),
    "Sweden": ("Stockholm", 10_600_000, "SEK", "Swedish", "Europe"),
    "Norway": ("Oslo", 5_500_000, "NOK", "Norwegian", "Europe"),
    "Switzerland": ("Bern", 8_800_000, "CHF", "German, French, Italian, Romansh", "Europe"),
    "Poland": ("Warsaw", 36_700_000, "PLN", "Polish", "Europe"),
    "Turkey": ("Ankara", 85_300_000, "TRY", "Turkish", "Asia"),
    "Egypt": ("Cairo", 112_700_000, "EGP", "Arabic", "Africa"),
    "Nigeria": ("Abuja", 223_800_000, "NGN", "English", "Africa"),
    "Kenya": ("Nairobi", 55_100_000, "KES", "Swahili, English", "Africa"),
    "South Africa": ("Pretoria", 60_400_000, "ZAR", "Zulu, Xhosa, Afrikaans, English and 8 more", "Africa"),
    "India": ("New Delhi", 1_428_600_000, "INR", "Hindi, English", "Asia"),
    "China": ("Beijing", 1_410_700_000, "CNY", "Mandarin Chinese", "Asia"),
    "Japan": ("Tokyo", 124_500_000, "JPY", "Japanese", "Asia"),
    "South Korea": ("Seoul", 51_700_000, "KRW", "Korean", "Asia"),
    "Australia": ("Canberra", 26_600_000, "AUD", "English", "Oceania"),
    "New Zealand": ("Wellington", 5_200_000, "NZD", "English, Māori", "Oceania"),
}


@dataclass(frozen=True)
class _City:
    country: str
    lat: float
    lon: float
    zone: str
    offset: float  # standard-time UTC offset in hours
    dst: bool
    jan: float  # mean January temperature, °C
    jul: float  # mean July temperature, °C
    wet: float  # share of days with precipitation


_CITY_ROWS = """Pittsburgh|United States|40.4406|-79.9959|America/New_York|-5|1|-2.0|23.0|0.45
New York|United States|40.7128|-74.0060|America/New_York|-5|1|0.5|25.0|0.40
Washington|United States|38.9072|-77.0369|America/New_York|-5|1|2.0|26.5|0.38
Miami|United States|25.7617|-80.1918|America/New_York|-5|1|20.0|29.0|0.45
Chicago|United States|41.8781|-87.6298|America/Chicago|-6|1|-4.5|24.0|0.38
Los Angeles|United States|34.0522|-118.2437|America/Los_Angeles|-8|1|14.0|22.5|0.12
San Francisco|United States|37.7749|-122.4194|America/Los_Angeles|-8|1|10.5|17.5|0.20
Seattle|United States|47.6062|-122.3321|America/Los_Angeles|-8|1|5.5|19.5|0.50
Toronto|Canada|43.6532|-79.3832|America/Toronto|-5|1|-5.5|22.5|0.40
Montreal|Canada|45.5017|-73.5673|America/Toronto|-5|1|-9.5|21.5|0.42
Vancouver|Canada|49.2827|-123.1207|America/Vancouver|-8|1|4.0|18.0|0.50
Mexico City|Mexico|19.4326|-99.1332|America/Mexico_City|-6|0|14.5|17.5|0.35
São Paulo|Brazil|-23.5505|-46.6333|America/Sao_Paulo|-3|0|23.5|17.0|0.40
Rio de Janeiro|Brazil|-22.9068|-43.1729|America/Sao_Paulo|-3|0|27.0|22.0|0.35
Buenos Aires|Argentina|-34.6037|-58.3816|America/Argentina/Buenos_Aires|-3|0|24.5|11.0|0.30
London|United Kingdom|51.5074|-0.1278|Europe/London|0|1|5.5|19.0|0.45
Manchester|United Kingdom|53.4808|-2.2426|Europe/London|0|1|4.5|16.5|0.55
Edinburgh|United Kingdom|55.9533|-3.1883|Europe/London|0|1|4.0|15.0|0.50
Paris|France|48.8566|2.3522|Europe/Paris|1|1|5.0|20.5|0.40
Lyon|France|45.7640|4.8357|Europe/Paris|1|1|3.5|22.5|0.35
Marseille|France|43.2965|5.3698|Europe/Paris|1|1|8.0|25.0|0.20
Berlin|Germany|52.5200|13.4050|Europe/Berlin|1|1|0.5|19.5|0.38
Munich|Germany|48.1351|11.5820|Europe/Berlin|1|1|-1.0|19.0|0.45
Hamburg|Germany|53.5511|9.9937|Europe/Berlin|1|1|1.5|18.0|0.50
Rome|Italy|41.9028|12.4964|Europe/Rome|1|1|8.0|25.5|0.25
Milan|Italy|45.4642|9.1900|Europe/Rome|1|1|2.5|24.0|0.33
Madrid|Spain|40.4168|-3.7038|Europe/Madrid|1|1|6.5|26.0|0.18
Barcelona|Spain|41.3874|2.1686|Europe/Madrid|1|1|10.0|25.0|0.22
Amsterdam|Netherlands|52.3676|4.9041|Europe/Amsterdam|1|1|3.5|18.0|0.50
Stockholm|Sweden|59.3293|18.0686|Europe/Stockholm|1|1|-1.5|18.0|0.40
Oslo|Norway|59.9139|10.7522|Europe/Oslo|1|1|-3.0|17.5|0.42
Zurich|Switzerland|47.3769|8.5417|Europe/Zurich|1|1|0.5|18.5|0.45
Warsaw|Poland|52.2297|21.0122|Europe/Warsaw|1|1|-1.5|19.5|0.40
Istanbul|Turkey|41.0082|28.9784|Europe/Istanbul|3|0|6.5|24.5|0.35
Ankara|Turkey|39.9334|32.8597|Europe/Istanbul|3|0|0.5|23.5|0.20
Cairo|Egypt|30.0444|31.2357|Africa/Cairo|2|1|14.0|28.5|0.02
Lagos|Nigeria|6.5244|3.3792|Africa/Lagos|1|0|27.0|25.5|0.50
Nairobi|Kenya|-1.2921|36.8219|Africa/Nairobi|3|0|19.5|16.5|0.30
Cape Town|South Africa|-33.9249|18.4241|Africa/Johannesburg|2|0|21.5|12.5|0.30
Johannesburg|South Africa|-26.2041|28.0473|Africa/Johannesburg|2|0|20.5|10.5|0.30
Mumbai|India|19.0760|72.8777|Asia/Kolkata|5.5|0|24.5|27.5|0.35
Delhi|India|28.7041|77.1025|Asia/Kolkata|5.5|0|14.0|31.5|0.20
Beijing|China|39.9042|116.4074|Asia/Shanghai|8|0|-3.0|27.0|0.25
Shanghai|China|31.2304|121.4737|Asia/Shanghai|8|0|5.0|29.0|0.40
Tokyo|Japan|35.6762|139.6503|Asia/Tokyo|9|0|5.5|26.5|0.38
Osaka|Japan|34.6937|135.5023|Asia/Tokyo|9|0|6.0|28.0|0.36
Kyoto|Japan|35.0116|135.7681|Asia/Tokyo|9|0|4.5|27.5|0.38
Seoul|South Korea|37.5665|126.9780|Asia/Seoul|9|0|-2.0|25.5|0.33
Sydney|Australia|-33.8688|151.2093|Australia/Sydney|10|1|23.5|13.0|0.38
Melbourne|Australia|-37.8136|144.9631|Australia/Melbourne|10|1|21.0|10.5|0.40
Auckland|New Zealand|-36.8485|174.7633|Pacific/Auckland|12|1|20.0|11.0|0.45
Wellington|New Zealand|-41.2866|174.7756|Pacific/Auckland|12|1|17.5|9.0|0.50"""
_CITIES: dict[str, _City] = {
    name: _City(country, float(lat), float(lon), zone, float(offset), dst == "1", float(jan), float(jul), float(wet))
    for name, country, lat, lon, zone, offset, dst, jan, jul, wet in (row.split("|") for row in _CITY_ROWS.split("\n"))
}
_CITY_ALIASES = {
    "NYC": "New York",
    "New York City": "New York",
    "Washington DC": "Washington",
    "LA": "Los Angeles",
    "SF": "San Francisco",
    "New Delhi": "Delhi",
    "Bombay": "Mumbai",
    "Peking": "Beijing",
    "Zürich": "Zurich",
    "Montréal": "Montreal",
}


def _city(name: str) -> tuple[str, _City]:
    return _find(_CITIES, name, "city", _CITY_ALIASES)


def _country(name: str) -> str:
    return _find(_COUNTRIES, name, "country", _COUNTRY_ALIASES)[0]


@_tool(
    "Geo",
    """Basic facts about a country: capital, population (2023 estimate), currency (ISO code), main languages and
    continent. Accepts common names and codes ('Germany', 'UK', 'USA').""",
    country="The country's name or code.",
)
def country_info(country: str) -> dict[str, Any]:
    name = _country(country)
    capital, population, currency, languages, continent = _COUNTRIES[name]
    return {
        "country": name,
        "capital": capital,
        "population": population,
        "currency": currency,
        "languages": languages,
        "continent": continent,
    }


@_tool(
    "Geo",
    """Great-circle distance between two cities (haversine formula, mean Earth radius 6371 km), in kilometres and
    miles, rounded to one decimal.""",
    city_a="The first city, e.g. 'Paris'.",
    city_b="The second city, e.g. 'Berlin'.",
)
def distance_between(city_a: str, city_b: str) -> dict[str, Any]:
    (name_a, a), (name_b, b) = _city(city_a), _city(city_b)
    lat1, lon1, lat2, lon2 = map(math.radians, (a.lat, a.lon, b.lat, b.lon))
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    km = 2 * 6371.0 * math.asin(math.sqrt(h))
    return {"from": name_a, "to": name_b, "distance_km": round(km, 1), "distance_miles": round(km / 1.609344, 1)}


def _offset_text(hours: float) -> str:
    sign = "-" if hours < 0 else "+"
    whole, minutes = divmod(round(abs(hours) * 60), 60)
    return f"{sign}{whole:02d}:{minutes:02d}"


@_tool(
    "Geo",
    """The time zone of a city: its IANA name, its standard-time UTC offset (+HH:MM) and whether it observes
    daylight saving time.""",
    city="The city, e.g. 'Tokyo'.",
)
def timezone_of(city: str) -> dict[str, Any]:
    name, row = _city(city)
    return {"city": name, "timezone": row.zone, "utc_offset": _offset_text(row.offset), "observes_dst": row.dst}


@_tool(
    "Geo",
    "List the cities of a country that this geographic service covers (usable with the weather and distance tools).",
    country="The country's name or code.",
)
def cities_in_country(country: str) -> dict[str, Any]:
    name = _country(country)
    cities = sorted(c for c, row in _CITIES.items() if row.country == name)
    return {"country": name, "count": len(cities), "cities": cities}


# ---------------------------------------------------------------------------------------------------------------
# Finance (a simulated exchange: fictional listed companies, seeded prices)

_MARKET_FIRST, _MARKET_LAST = date(2023, 1, 2), date(2026, 3, 20)
# symbol: (company, sector, close on the first day, yearly drift, average daily volume)
_STOCKS: dict[str, tuple[str, str, float, float, int]] = {
    "NVTK": ("Novatek Systems", "technology", 142.0, 0.18, 8_400_000),
    "BLWR": ("Bluewater Energy", "energy", 58.5, 0.04, 5_100_000),
    "CRTX": ("Cortex Health", "healthcare", 96.2, 0.09, 2_300_000),
    "DNLG": ("Dune Logistics", "industrials", 33.8, -0.05, 3_900_000),
    "HLXF": ("Helix Foods", "consumer staples", 71.4, 0.06, 1_800_000),
    "ORBT": ("Orbit Aerospace", "aerospace", 212.0, 0.22, 4_600_000),
    "PNCL": ("Pinnacle Bank", "financials", 44.1, 0.07, 6_200_000),
    "GRNW": ("Greenway Motors", "automotive", 18.9, 0.30, 12_000_000),
}
_COMPANY_ALIASES = {row[0]: symbol for symbol, row in _STOCKS.items()}
# currency: US dollars per unit on the first day of the feed
_CURRENCIES: dict[str, float] = {
    "USD": 1.0, "EUR": 1.08, "GBP": 1.27, "JPY": 0.0068, "CHF": 1.13, "CAD": 0.74, "AUD": 0.66, "NZD": 0.61,
    "CNY": 0.139, "INR": 0.0121, "KRW": 0.00076, "MXN": 0.057, "BRL": 0.195, "ARS": 0.0012, "SEK": 0.095,
    "NOK": 0.094, "PLN": 0.25, "TRY": 0.031, "ZAR": 0.054, "EGP": 0.021, "NGN": 0.00068, "KES": 0.0077,
}  # fmt: skip
_CURRENCY_NAMES = {"dollar": "USD", "us dollar": "USD", "euro": "EUR", "pound": "GBP", "sterling": "GBP",
                   "yen": "JPY", "franc": "CHF", "swiss franc": "CHF", "canadian dollar": "CAD", "yuan": "CNY",
                   "renminbi": "CNY", "rupee": "INR", "won": "KRW", "peso": "MXN", "real": "BRL", "rand": "ZAR",
                   "krona": "SEK", "krone": "NOK", "zloty": "PLN", "lira": "TRY", "naira": "NGN",
                   "australian dollar": "AUD", "new zealand dollar": "NZD"}  # fmt: skip
_FX_FIRST = date(2015, 1, 1)
# coin: (ticker, US dollars on 2023-01-01, yearly drift, volatility)
_COINS: dict[str, tuple[str, float, float, float]] = {
    "bitcoin": ("BTC", 16_600.0, 0.55, 0.25),
    "ethereum": ("ETH", 1_200.0, 0.40, 0.30),
    "solana": ("SOL", 10.0, 0.95, 0.45),
    "cardano": ("ADA", 0.25, 0.35, 0.40),
    "dogecoin": ("DOGE", 0.07, 0.45, 0.50),
    "litecoin": ("LTC", 70.0, 0.10, 0.30),
}


def _symbol(symbol: str) -> str:
    return _find(_STOCKS, symbol, "stock symbol", _COMPANY_ALIASES)[0]


def _trading_day(text: str, argument: str) -> date:
    day = _date(text, argument, _MARKET_FIRST, _MARKET_LAST)
    if day.weekday() >= 5:
        before = day - timedelta(days=day.weekday() - 4)
        _fail(
            f"{argument}: {day} is a {_weekday(day)} and the exchange is closed; the last trading day before it "
            f"is {before}"
        )
    return day


def _close(symbol: str, day: date) -> float:
    _, _, base, drift, _ = _STOCKS[symbol]
    years = (day - _MARKET_FIRST).days / 365.25
    wave = 0.08 * math.sin(2 * math.pi * years / 1.3 + 6.28 * _unit(symbol))
    return round(base * math.exp(drift * years + wave) * (1 + 0.015 * (2 * _unit(symbol, day) - 1)), 2)


@_tool(
    "Finance",
    f"""Daily quote of a stock listed on the Harbor Exchange (end-of-day data, {_MARKET_FIRST} to {_MARKET_LAST};
    the exchange trades Monday to Friday). Returns the company, open, high, low and close prices in USD and the
    volume. Listed: {", ".join(f"{s} ({row[0]})" for s, row in _STOCKS.items())}.""",
    symbol="The ticker symbol, e.g. 'NVTK' (a listed company's name also works).",
    date="The trading day, YYYY-MM-DD.",
)
def stock_quote(symbol: str, date: str) -> dict[str, Any]:
    ticker = _symbol(symbol)
    day = _trading_day(date, "date")
    close = _close(ticker, day)
    opening = round(close * (1 + 0.012 * (2 * _unit(ticker, day, "open") - 1)), 2)
    high = round(max(opening, close) * (1 + 0.01 * _unit(ticker, day, "high")), 2)
    low = round(min(opening, close) * (1 - 0.01 * _unit(ticker, day, "low")), 2)
    volume = int(_STOCKS[ticker][4] * (0.6 + 0.8 * _unit(ticker, day, "volume")))
    return {
        "symbol": ticker,
        "company": _STOCKS[ticker][0],
        "date": day.isoformat(),
        "open": opening,
        "high": high,
        "low": low,
        "close": close,
        "volume": volume,
        "currency": "USD",
    }


@_tool(
    "Finance",
    """Closing prices of a Harbor Exchange stock for every trading day from start to end (both included, at most 92
    days apart), with the lowest and highest close and the percent change from the first close to the last.""",
    symbol="The ticker symbol, e.g. 'ORBT'.",
    start="The first day, YYYY-MM-DD.",
    end="The last day, YYYY-MM-DD.",
)
def price_history(symbol: str, start: str, end: str) -> dict[str, Any]:
    ticker = _symbol(symbol)
    first = _date(start, "start", _MARKET_FIRST, _MARKET_LAST)
    last = _date(end, "end", _MARKET_FIRST, _MARKET_LAST)
    if last < first:
        _fail(f"end ({last}) is before start ({first}); swap them")
    if (last - first).days > 92:
        _fail(f"the range spans {(last - first).days} days; ask for at most 92 days at a time")
    days = [first + timedelta(days=i) for i in range((last - first).days + 1)]
    trading = [d for d in days if d.weekday() < 5]
    if not trading:
        _fail(f"no trading day between {first} and {last} (a weekend); widen the range")
    values = [_close(ticker, d) for d in trading]
    return {
        "symbol": ticker,
        "start": first.isoformat(),
        "end": last.isoformat(),
        "trading_days": len(trading),
        "closes": [{"date": d.isoformat(), "close": v} for d, v in zip(trading, values, strict=True)],
        "lowest_close": min(values),
        "highest_close": max(values),
        "change_percent": round((values[-1] - values[0]) / values[0] * 100, 2),
    }


def _currency(code: str, argument: str) -> str:
    text = code.strip()
    if text.upper() in _CURRENCIES:
        return text.upper()
    found = _CURRENCY_NAMES.get(text.casefold().removesuffix("s"))
    if found is None:
        hint = close_match(text.upper(), _CURRENCIES) or f"known currencies: {', '.join(_CURRENCIES)}"
        _fail(f"{argument}: unknown currency {code!r}; {hint}")
    return found


def _usd_value(currency: str, day: date) -> float:
    if currency == "USD":
        return 1.0
    years = (day - _FX_FIRST).days / 365.25
    wave = 0.04 * math.sin(2 * math.pi * years / 2.7 + 6.28 * _unit(currency))
    return _CURRENCIES[currency] * (1 + wave + 0.006 * (2 * _unit(currency, day) - 1))


def _rate(base: str, quote: str, day: date) -> float:
    return _sig(_usd_value(base, day) / _usd_value(quote, day))


@_tool(
    "Finance",
    f"""Reference exchange rate on a date ({_FX_FIRST} to {_MARKET_LAST}): how many units of the quote currency one
    unit of the base currency buys (6 significant digits). Currencies are ISO codes: {", ".join(_CURRENCIES)}.""",
    base="The currency to convert from, e.g. 'EUR'.",
    quote="The currency to convert to, e.g. 'JPY'.",
    date="The day of the rate, YYYY-MM-DD.",
)
def exchange_rate(base: str, quote: str, date: str) -> dict[str, Any]:
    source, target = _currency(base, "base"), _currency(quote, "quote")
    day = _date(date, "date", _FX_FIRST, _MARKET_LAST)
    return {"base": source, "quote": target, "date": day.isoformat(), "rate": _rate(source, target, day)}


@_tool(
    "Finance",
    """Convert an amount of money between currencies at the reference rate of a date (the rate exchange_rate gives
    for that day). Returns the rate used and the converted amount rounded to 2 decimals.""",
    amount=("The amount in the base currency.", {"minimum": 0}),
    base="The currency of the amount, e.g. 'USD'.",
    quote="The currency to convert to, e.g. 'GBP'.",
    date="The day whose rate to use, YYYY-MM-DD.",
)
def convert_currency(amount: float, base: str, quote: str, date: str) -> dict[str, Any]:
    if amount < 0 or amount > 1e12:
        _fail("amount: give an amount from 0 to 1000000000000")
    rate = exchange_rate(base, quote, date)
    return {**rate, "amount": amount, "converted": round(amount * rate["rate"], 2)}


def _coin_price(coin: str, day: date) -> float:
    _, base, drift, volatility = _COINS[coin]
    years = (day - date(2023, 1, 1)).days / 365.25
    wave = volatility * math.sin(2 * math.pi * years / 1.7 + 6.28 * _unit(coin))
    return _sig(base * math.exp(drift * years + wave) * (1 + 0.03 * (2 * _unit(coin, day) - 1)), 6)


@_tool(
    "Finance",
    f"""Daily reference price of a cryptocurrency in US dollars ({_FX_FIRST} to {_MARKET_LAST}; crypto trades every
    day), with the change from the day before in percent. Coins: {
        ", ".join(f"{c} ({t})" for c, (t, *_) in _COINS.items())
    }.""",
    coin="The coin's name or ticker, e.g. 'bitcoin' or 'ETH'.",
    date="The day, YYYY-MM-DD.",
)
def crypto_price(coin: str, date: str) -> dict[str, Any]:
    name, _ = _find(_COINS, coin, "coin", {row[0]: c for c, row in _COINS.items()})
    day = _date(date, "date", _FX_FIRST, _MARKET_LAST)
    price, before = _coin_price(name, day), _coin_price(name, day - timedelta(days=1))
    return {
        "coin": name,
        "symbol": _COINS[name][0],
        "date": day.isoformat(),
        "price_usd": price,
        "change_24h_percent": round((price - before) / before * 100, 2),
    }


# ---------------------------------------------------------------------------------------------------------------
# Weather (a seeded climate model per city)

REFERENCE_DAY = date(2026, 3, 20)  # the weather feed's "today": current conditions and forecasts are issued on it
_WEATHER_FIRST = date(1970, 1, 1)


def _day_weather(name: str, day: date) -> dict[str, Any]:
    row = _CITIES[name]
    season = math.cos(2 * math.pi * (day.timetuple().tm_yday - 15) / 365.25)  # 1 in mid-January, -1 in mid-July
    mean = (row.jan + row.jul) / 2 + (row.jan - row.jul) / 2 * season + 6 * (_unit(name, day, "t") - 0.5)
    spread = 3 + 3 * _unit(name, day, "spread")
    wet = _unit(name, day, "wet") < row.wet
    rain = round(0.5 + 24 * _unit(name, day, "mm") ** 2, 1) if wet else 0.0
    sky = _unit(name, day, "sky")
    condition = (
        ("snow" if mean < 0.5 else "rain")
        if wet
        else "cloudy"
        if sky < 0.35
        else "partly cloudy"
        if sky < 0.65
        else "sunny"
    )
    return {  # + 0.0 turns a rounded -0.0 into 0.0
        "high_c": round(mean + spread, 1) + 0.0,
        "low_c": round(mean - spread, 1) + 0.0,
        "mean_c": round(mean, 1) + 0.0,
        "precipitation_mm": rain,
        "condition": condition,
    }


@_tool(
    "Weather",
    f"""Current conditions in a city from the latest observation of the feed (taken {REFERENCE_DAY} at 12:00 UTC):
    temperature and feels-like temperature (°C), condition, relative humidity (%) and wind speed (km/h).""",
    city="The city, e.g. 'Pittsburgh'.",
)
def current_weather(city: str) -> dict[str, Any]:
    name, row = _city(city)
    day = _day_weather(name, REFERENCE_DAY)
    temperature = round(day["mean_c"] + 0.6 * (day["high_c"] - day["mean_c"]), 1) + 0.0
    wind = round(5 + 30 * _unit(name, REFERENCE_DAY, "wind"), 1)
    humidity = round(45 + 50 * row.wet * (1.4 if day["precipitation_mm"] else 1) * _unit(name, REFERENCE_DAY, "h"))
    chill = (
        temperature - 0.15 * wind if temperature < 10 else temperature + (0.05 * humidity if temperature > 25 else 0)
    )
    return {
        "city": name,
        "observed_at": f"{REFERENCE_DAY}T12:00:00Z",
        "temperature_c": temperature,
        "feels_like_c": round(chill, 1),
        "condition": day["condition"],
        "humidity_percent": min(humidity, 100),
        "wind_kph": wind,
    }


@_tool(
    "Weather",
    f"""Daily forecast for a city for the next 1 to 7 days, issued {REFERENCE_DAY} (the first day forecast is the
    day after). Each day: date, high and low (°C), condition and chance of precipitation (%).""",
    city="The city, e.g. 'Oslo'.",
    days=("How many days ahead, 1 to 7.", {"minimum": 1, "maximum": 7}),
)
def forecast(city: str, days: int) -> dict[str, Any]:
    name, row = _city(city)
    _count(days, "days", 1, 7)
    rows = []
    for i in range(1, days + 1):
        day = REFERENCE_DAY + timedelta(days=i)
        weather = _day_weather(name, day)
        chance = (
            70 + round(25 * _unit(name, day, "p"))
            if weather["precipitation_mm"]
            else round(60 * row.wet * _unit(name, day, "p"))
        )
        rows.append(
            {
                "date": day.isoformat(),
                "day_of_week": _weekday(day),
                "high_c": weather["high_c"],
                "low_c": weather["low_c"],
                "condition": weather["condition"],
                "precipitation_chance_percent": chance,
            }
        )
    return {"city": name, "issued": REFERENCE_DAY.isoformat(), "days": rows}


@_tool(
    "Weather",
    f"""Recorded weather of a city on a past day ({_WEATHER_FIRST} to the day before {REFERENCE_DAY}): high, low and
    mean temperature (°C), precipitation (mm) and the day's prevailing condition.""",
    city="The city, e.g. 'Madrid'.",
    date="The day, YYYY-MM-DD.",
)
def historical_weather(city: str, date: str) -> dict[str, Any]:
    name, _ = _city(city)
    day = _date(date, "date", _WEATHER_FIRST, REFERENCE_DAY - timedelta(days=1))
    return {"city": name, "date": day.isoformat(), **_day_weather(name, day)}


_AQI_BANDS = (
    (50, "Good"),
    (100, "Moderate"),
    (150, "Unhealthy for sensitive groups"),
    (200, "Unhealthy"),
    (300, "Very unhealthy"),
    (500, "Hazardous"),
)


@_tool(
    "Weather",
    f"""Current air quality in a city (observation of {REFERENCE_DAY}): US EPA air quality index (0-500), its
    category, the dominant pollutant and the PM2.5 concentration (µg/m³).""",
    city="The city, e.g. 'Delhi'.",
)
def air_quality(city: str) -> dict[str, Any]:
    name, _ = _city(city)
    aqi = 12 + round(170 * _unit(name, "aqi") ** 2)
    category = next(label for top, label in _AQI_BANDS if aqi <= top)
    pollutant = ("PM2.5", "PM10", "ozone", "NO2")[int(4 * _unit(name, "pollutant"))]
    return {
        "city": name,
        "aqi": aqi,
        "category": category,
        "dominant_pollutant": pollutant,
        "pm2_5_ug_m3": round(aqi * 0.42, 1),
    }


# ---------------------------------------------------------------------------------------------------------------
# Language

_LANGUAGES = {"es": "Spanish", "fr": "French", "de": "German", "it": "Italian"}
# word: part of speech | definition | synonyms
_LEXICON_ROWS = """happy|adjective|feeling or showing pleasure and contentment|cheerful, joyful, glad, content
quick|adjective|moving fast or taking little time|fast, rapid, swift, speedy
house|noun|a building that people live in|home, dwelling, residence
book|noun|a set of written or printed pages bound together|volume, tome, publication
big|adjective|of considerable size or amount|large, huge, sizable, great
small|adjective|of less than usual size|little, tiny, compact, petite
friend|noun|a person one knows well and likes|companion, pal, ally, comrade
beautiful|adjective|very pleasing to the senses or the mind|lovely, gorgeous, attractive, stunning
light|noun|the natural energy that makes things visible|illumination, brightness, glow, radiance
night|noun|the time of darkness between sunset and sunrise|nighttime, dark, evening
brave|adjective|willing to face danger or pain without fear|courageous, bold, fearless, valiant
tired|adjective|in need of rest or sleep|weary, exhausted, fatigued, sleepy
smart|adjective|quick to learn and understand|clever, intelligent, bright, sharp
difficult|adjective|needing much effort or skill|hard, tough, challenging, demanding
begin|verb|to start doing something|start, commence, launch, initiate
journey|noun|an act of travelling from one place to another|trip, voyage, expedition, trek
cold|adjective|having a low temperature|chilly, cool, freezing, icy
love|noun|a strong feeling of deep affection|affection, devotion, fondness, adoration
dream|noun|images and feelings that pass through the mind during sleep|vision, fantasy, reverie
heart|noun|the organ that pumps blood through the body|core, centre, ticker
song|noun|a short piece of music with words that are sung|tune, melody, ballad, anthem
ancient|adjective|belonging to the very distant past|old, antique, archaic, age-old
rain|noun|water that falls from clouds in drops|shower, drizzle, downpour
time|noun|the continuing sequence of events, measured in seconds, hours and years|duration, period, span
tree|noun|a tall plant with a woody trunk and branches|timber, sapling, evergreen"""
# word: Spanish French German Italian
_TRANSLATION_ROWS = """happy: feliz heureux glücklich felice; quick: rápido rapide schnell veloce
house: casa maison Haus casa; book: libro livre Buch libro; big: grande grand groß grande
small: pequeño petit klein piccolo; friend: amigo ami Freund amico; beautiful: hermoso beau schön bello
light: luz lumière Licht luce; night: noche nuit Nacht notte; brave: valiente courageux mutig coraggioso
tired: cansado fatigué müde stanco; smart: inteligente intelligent klug intelligente
difficult: difícil difficile schwierig difficile; begin: empezar commencer beginnen iniziare
journey: viaje voyage Reise viaggio; cold: frío froid kalt freddo; love: amor amour Liebe amore
dream: sueño rêve Traum sogno; heart: corazón cœur Herz cuore; song: canción chanson Lied canzone
ancient: antiguo ancien antik antico; rain: lluvia pluie Regen pioggia; time: tiempo temps Zeit tempo
tree: árbol arbre Baum albero"""
_TRANSLATIONS = {
    word: dict(zip(_LANGUAGES, words.split(), strict=True))
    for entry in _TRANSLATION_ROWS.replace("\n", "; ").split("; ")
    for word, words in [entry.split(": ")]
}
_LEXICON: dict[str, tuple[str, str, list[str], dict[str, str]]] = {
    word: (pos, meaning, synonyms.split(", "), _TRANSLATIONS[word])
    for word, pos, meaning, synonyms in (row.split("|") for row in _LEXICON_ROWS.split("\n"))
}
_RHYME_GROUPS = [
    group.split()
    for group in """light night bright flight kite write sight white
day play stay way gray may say|heart art start part chart smart|dream stream team beam seam cream
love above dove glove shove|time rhyme climb chime lime prime|rain train plain brain chain gain lane
song long strong wrong along belong|cold bold gold hold old told|tree free sea key see three glee
cat hat bat mat flat that|moon soon tune june spoon noon|book look cook hook brook took""".replace("\n", "|").split("|")
]


def _word(word: str) -> tuple[str, tuple[str, str, list[str], dict[str, str]]]:
    text = word.strip().casefold()
    if text not in _LEXICON:
        hint = did_you_mean(text, _LEXICON)
        _fail(f"{word!r} is not in the dictionary" + (f"; {hint}" if hint else ""))
    return text, _LEXICON[text]


@_tool(
    "Language",
    "Dictionary entry of an English word: its part of speech and definition.",
    word="The English word, e.g. 'journey'.",
)
def define(word: str) -> dict[str, Any]:
    text, (pos, meaning, _, _) = _word(word)
    return {"word": text, "part_of_speech": pos, "definition": meaning}


@_tool(
    "Language",
    "Thesaurus: English words with the same or a close meaning as the given word, most common first.",
    word="The English word, e.g. 'happy'.",
)
def synonyms(word: str) -> dict[str, Any]:
    text, (_, _, words, _) = _word(word)
    return {"word": text, "synonyms": words}


@_tool(
    "Language",
    """Translate an English dictionary word into Spanish, French, German or Italian. The target language is a
    name or an ISO 639-1 code (es, fr, de, it). Returns the translation.""",
    word="The English word, e.g. 'friend'.",
    target_language="The language to translate into, e.g. 'French' or 'fr'.",
)
def translate(word: str, target_language: str) -> dict[str, Any]:
    text, (_, _, _, words) = _word(word)
    index = {k: k for k in _LANGUAGES} | {v.casefold(): k for k, v in _LANGUAGES.items()}
    code = index.get(target_language.strip().casefold())
    if code is None:
        known = ", ".join(f"{name} ({c})" for c, name in _LANGUAGES.items())
        _fail(f"target_language: cannot translate into {target_language!r}; supported: {known}")
    return {"word": text, "language": _LANGUAGES[code], "translation": words[code]}


@_tool(
    "Language",
    "Words that rhyme with an English word (perfect rhymes from the rhyming dictionary).",
    word="The English word, e.g. 'night'.",
)
def rhymes(word: str) -> dict[str, Any]:
    text = word.strip().casefold()
    for group in _RHYME_GROUPS:
        if text in group:
            return {"word": text, "rhymes": [w for w in group if w != text]}
    _fail(f"no rhymes listed for {word!r}; the rhyming dictionary covers common short words (night, day, heart, ...)")


# ---------------------------------------------------------------------------------------------------------------
# Inspiration

_JOKES: dict[str, list[str]] = {
    "programming": [
        "Why do programmers prefer dark mode? Because light attracts bugs.",
        "A database query walks into a bar, sees two tables and asks: mind if I join you?",
        "There are 10 kinds of people: those who read binary and those who don't.",
        "Why did the developer go broke? He spent his whole cache.",
    ],
    "science": [
        "Never trust an atom: they make up everything.",
        "A neutron orders a coffee and asks what he owes. The barista says: for you, no charge.",
        "What did the biologist wear to impress his date? Designer genes.",
    ],
    "animals": [
        "What do you call a sleeping bull? A bulldozer.",
        "Why don't cats play cards in the jungle? Too many cheetahs.",
        "What do you call a fish without eyes? A fsh.",
    ],
    "food": [
        "Why did the tomato turn red? It saw the salad dressing.",
        "What do you call cheese that belongs to someone else? Nacho cheese.",
        "I'm reading a book about anti-gravity pizza dough. I can't put it down.",
    ],
    "dad": [
        "I didn't like my beard at first. Then it grew on me.",
        "Why don't eggs tell jokes? They would crack each other up.",
        "I only know 25 letters of the alphabet. I don't know y.",
    ],
}
# (author, quote): sayings long in the public domain, in common English renderings
_QUOTES = [
    ("Marcus Aurelius", "The happiness of your life depends upon the quality of your thoughts."),
    ("Marcus Aurelius", "Waste no more time arguing about what a good man should be. Be one."),
    ("Seneca", "While we wait for life, life passes."),
    ("Seneca", "Luck is what happens when preparation meets opportunity."),
    ("Confucius", "It does not matter how slowly you go as long as you do not stop."),
    ("Confucius", "Real knowledge is to know the extent of one's ignorance."),
    ("Lao Tzu", "A journey of a thousand miles begins with a single step."),
    ("Aristotle", "Knowing yourself is the beginning of all wisdom."),
    ("Benjamin Franklin", "An investment in knowledge pays the best interest."),
    ("Benjamin Franklin", "Well done is better than well said."),
    ("Mark Twain", "The secret of getting ahead is getting started."),
    ("Mark Twain", "Kindness is the language which the deaf can hear and the blind can see."),
    ("Oscar Wilde", "Experience is simply the name we give our mistakes."),
    ("Marie Curie", "Nothing in life is to be feared, it is only to be understood."),
    ("Henry David Thoreau", "Go confidently in the direction of your dreams."),
    ("Helen Keller", "Alone we can do so little; together we can do so much."),
    ("Albert Einstein", "Life is like riding a bicycle. To keep your balance you must keep moving."),
]


@_tool(
    "Inspiration",
    f"""A joke from a category ({", ".join(_JOKES)}). The pick is fixed by the seed: the same category and seed
    always give the same joke, a different seed usually another one.""",
    category="The joke category, e.g. 'programming'.",
    seed=("Any whole number choosing the joke.", {"minimum": 0}),
)
def random_joke(category: str, seed: int) -> dict[str, Any]:
    name, jokes = _find(_JOKES, category, "joke category")
    if seed < 0:
        _fail("seed: give a whole number of 0 or more")
    index = int(_unit("joke", name, seed) * len(jokes))
    return {"category": name, "id": f"{name}-{index + 1}", "joke": jokes[index]}


@_tool(
    "Inspiration",
    "The quote of the day for a given date, with its author. Every date has one quote, the same for everyone.",
    date="The day, YYYY-MM-DD.",
)
def quote_of_the_day(date: str) -> dict[str, Any]:
    day = _date(date)
    author, text = _QUOTES[int(_unit("quote", day) * len(_QUOTES))]
    return {"date": day.isoformat(), "quote": text, "author": author}


@_tool(
    "Inspiration",
    "All quotes of an author in the quotation collection (full name or surname).",
    author="The author, e.g. 'Mark Twain'.",
)
def quotes_by_author(author: str) -> dict[str, Any]:
    authors = {a: a for a, _ in _QUOTES}
    surnames = {a.split()[-1]: a for a in authors if " " in a}
    name, _ = _find(authors, author, "author", surnames)
    quotes = [text for a, text in _QUOTES if a == name]
    return {"author": name, "count": len(quotes), "quotes": quotes}


# ---------------------------------------------------------------------------------------------------------------
# Food

# name: (cuisine, total minutes, servings, ingredients)
_RECIPES: dict[str, tuple[str, int, int, str]] = {
    "Spaghetti Carbonara": ("Italian", 25, 4, "spaghetti, eggs, pecorino, guanciale, black pepper"),
    "Margherita Pizza": ("Italian", 90, 2, "flour, yeast, tomato, mozzarella, basil, olive oil"),
    "Shakshuka": ("Middle Eastern", 30, 3, "eggs, tomato, onion, bell pepper, cumin, paprika"),
    "Chicken Tikka Masala": ("Indian", 60, 4, "chicken, yogurt, tomato, cream, garam masala, garlic, ginger"),
    "Guacamole": ("Mexican", 10, 4, "avocado, lime, onion, tomato, cilantro"),
    "Buttermilk Pancakes": ("American", 20, 4, "flour, buttermilk, eggs, butter, sugar, baking powder"),
    "Miso Soup": ("Japanese", 15, 2, "miso, tofu, wakame, scallion, dashi"),
    "Greek Salad": ("Greek", 15, 2, "tomato, cucumber, feta, olives, onion, olive oil"),
    "Banana Bread": ("American", 70, 8, "banana, flour, eggs, butter, sugar, baking soda"),
    "Vegetable Stir-Fry": ("Chinese", 20, 3, "broccoli, bell pepper, carrot, soy sauce, garlic, ginger, rice"),
    "French Omelette": ("French", 10, 1, "eggs, butter, chives"),
    "Red Lentil Soup": ("Turkish", 40, 4, "lentils, onion, carrot, cumin, lemon"),
    "Salmon Teriyaki": ("Japanese", 25, 2, "salmon, soy sauce, mirin, sugar, ginger, rice"),
    "Avocado Toast": ("American", 10, 1, "bread, avocado, lemon, chili flakes, eggs"),
}
# food: per 100 g (kcal, protein g, carbohydrate g, fat g)
_NUTRITION: dict[str, tuple[float, float, float, float]] = {
    "apple": (52, 0.3, 13.8, 0.2), "banana": (89, 1.1, 22.8, 0.3), "egg": (143, 12.6, 0.7, 9.5),
    "chicken breast": (165, 31.0, 0.0, 3.6), "cooked white rice": (130, 2.7, 28.2, 0.3), "oats": (389, 16.9, 66.3, 6.9),
    "avocado": (160, 2.0, 8.5, 14.7), "broccoli": (34, 2.8, 6.6, 0.4), "salmon": (208, 20.4, 0.0, 13.4),
    "almonds": (579, 21.2, 21.6, 49.9), "whole milk": (61, 3.2, 4.8, 3.3), "cheddar": (403, 24.9, 1.3, 33.1),
    "potato": (77, 2.0, 17.5, 0.1), "cooked lentils": (116, 9.0, 20.1, 0.4), "tofu": (76, 8.1, 1.9, 4.8),
    "cooked spaghetti": (158, 5.8, 30.9, 0.9), "greek yogurt": (59, 10.2, 3.6, 0.4),
    "dark chocolate": (598, 7.8, 45.9, 42.6),
}  # fmt: skip
_FOOD_ALIASES = {"eggs": "egg", "rice": "cooked white rice", "lentils": "cooked lentils", "pasta": "cooked spaghetti",
                 "spaghetti": "cooked spaghetti", "chicken": "chicken breast", "milk": "whole milk",
                 "yogurt": "greek yogurt", "cheddar cheese": "cheddar", "chocolate": "dark chocolate"}  # fmt: skip
# name: (glass, method, ingredients)
_COCKTAILS: dict[str, tuple[str, str, str]] = {
    "Mojito": (
        "highball",
        "muddle and build",
        "50 ml white rum; 25 ml lime juice; 20 ml sugar syrup; 8 mint leaves; soda water to top",
    ),
    "Margarita": ("coupe", "shake", "50 ml tequila; 25 ml triple sec; 25 ml lime juice; salt rim"),
    "Old Fashioned": ("rocks", "stir", "60 ml bourbon; 10 ml sugar syrup; 2 dashes aromatic bitters; orange peel"),
    "Negroni": ("rocks", "stir", "30 ml gin; 30 ml Campari; 30 ml sweet vermouth; orange slice"),
    "Daiquiri": ("coupe", "shake", "60 ml white rum; 25 ml lime juice; 15 ml sugar syrup"),
    "Moscow Mule": ("copper mug", "build", "50 ml vodka; 15 ml lime juice; 120 ml ginger beer; lime wedge"),
    "Espresso Martini": ("martini glass", "shake", "50 ml vodka; 25 ml coffee liqueur; 30 ml fresh espresso"),
    "Shirley Temple": ("highball", "build", "180 ml ginger ale; 15 ml grenadine; maraschino cherry"),
}


@_tool(
    "Food",
    "Find recipes that use an ingredient. Returns each recipe's name, cuisine, total time in minutes and servings.",
    ingredient="One ingredient, e.g. 'eggs' or 'avocado'.",
)
def recipe_search(ingredient: str) -> dict[str, Any]:
    wanted = _key(ingredient)
    known = {i for row in _RECIPES.values() for i in row[3].split(", ")}
    matches = [
        {"name": name, "cuisine": cuisine, "minutes": minutes, "servings": servings}
        for name, (cuisine, minutes, servings, items) in _RECIPES.items()
        if any(_key(i) in (wanted, wanted.removesuffix("s"), wanted + "s") for i in items.split(", "))
    ]
    if not matches:
        hint = did_you_mean(ingredient, known)
        _fail(f"no recipe uses {ingredient!r}" + (f"; {hint}" if hint.startswith("did") else ""))
    return {"ingredient": ingredient, "count": len(matches), "recipes": matches}


@_tool(
    "Food",
    """Nutrition facts of a food for a portion in grams (100 g by default): energy (kcal), protein, carbohydrate
    and fat (g), rounded to one decimal.""",
    food="The food, e.g. 'banana' or 'salmon'.",
    grams=("The portion size in grams.", {"exclusiveMinimum": 0, "maximum": 10000}),
)
def nutrition_facts(food: str, grams: float = 100.0) -> dict[str, Any]:
    name, (kcal, protein, carbs, fat) = _find(_NUTRITION, food, "food", _FOOD_ALIASES)
    share = _positive(grams, "grams", 10000) / 100
    return {
        "food": name,
        "grams": grams,
        "calories_kcal": round(kcal * share, 1),
        "protein_g": round(protein * share, 1),
        "carbohydrate_g": round(carbs * share, 1),
        "fat_g": round(fat * share, 1),
    }


@_tool(
    "Food",
    "Recipe of a classic cocktail or mocktail: the glass, the method and the ingredients with their amounts.",
    name="The drink's name, e.g. 'Negroni'.",
)
def cocktail_recipe(name: str) -> dict[str, Any]:
    found, (glass, method, items) = _find(_COCKTAILS, name, "cocktail")
    return {"name": found, "glass": glass, "method": method, "ingredients": items.split("; ")}


# ---------------------------------------------------------------------------------------------------------------
# Games

# ECO code: (opening, moves)
_OPENINGS: dict[str, tuple[str, str]] = {
    "A09": ("Réti Opening", "1. Nf3 d5 2. c4"), "A10": ("English Opening", "1. c4"),
    "A80": ("Dutch Defence", "1. d4 f5"), "B01": ("Scandinavian Defence", "1. e4 d5"),
    "B07": ("Pirc Defence", "1. e4 d6 2. d4 Nf6"), "B10": ("Caro-Kann Defence", "1. e4 c6"),
    "B20": ("Sicilian Defence", "1. e4 c5"), "C00": ("French Defence", "1. e4 e6"),
    "C30": ("King's Gambit", "1. e4 e5 2. f4"), "C42": ("Petrov's Defence", "1. e4 e5 2. Nf3 Nf6"),
    "C50": ("Italian Game", "1. e4 e5 2. Nf3 Nc6 3. Bc4"), "C60": ("Ruy Lopez", "1. e4 e5 2. Nf3 Nc6 3. Bb5"),
    "D06": ("Queen's Gambit", "1. d4 d5 2. c4"), "D10": ("Slav Defence", "1. d4 d5 2. c4 c6"),
    "E60": ("King's Indian Defence", "1. d4 Nf6 2. c4 g6"),
}  # fmt: skip
_LETTER_SCORES = {
    c: s
    for letters, s in [("aeilnorstu", 1), ("dg", 2), ("bcmp", 3), ("fhvwy", 4), ("k", 5), ("jx", 8), ("qz", 10)]
    for c in letters
}


@_tool(
    "Games",
    """Roll dice. The rolls are fixed by the seed (the same seed, sides and count always roll the same numbers),
    so a game can be replayed. Returns each roll and the total.""",
    sides=("Faces per die, 2 to 100.", {"minimum": 2, "maximum": 100}),
    count=("How many dice, 1 to 100.", {"minimum": 1, "maximum": 100}),
    seed=("Any whole number fixing the rolls.", {"minimum": 0}),
)
def roll_dice(sides: int, count: int, seed: int) -> dict[str, Any]:
    _count(sides, "sides", 2, 100)
    _count(count, "count", 1, 100)
    if seed < 0:
        _fail("seed: give a whole number of 0 or more")
    rolls = [1 + int(_unit("dice", seed, sides, i) * sides) for i in range(count)]
    return {"sides": sides, "count": count, "seed": seed, "rolls": rolls, "total": sum(rolls)}


@_tool(
    "Games",
    "Name and main line of a chess opening from its ECO code (Encyclopaedia of Chess Openings, e.g. 'C50').",
    eco_code="The ECO code: a letter A-E and two digits.",
)
def chess_opening(eco_code: str) -> dict[str, Any]:
    code = eco_code.strip().upper()
    if not re.fullmatch(r"[A-E]\d\d", code):
        _fail(f"eco_code: {eco_code!r} is not an ECO code; it is a letter A-E and two digits, e.g. 'B20'")
    if code not in _OPENINGS:
        _fail(f"eco_code: no opening catalogued under {code}; catalogued codes: {', '.join(_OPENINGS)}")
    name, moves = _OPENINGS[code]
    return {"eco_code": code, "name": name, "moves": moves}


@_tool(
    "Games",
    "Score an English word in Scrabble with standard tile values (no board bonuses). Returns the score per letter "
    "and the total.",
    word="The word, letters only.",
)
def scrabble_score(word: str) -> dict[str, Any]:
    text = word.strip().casefold()
    if not text or not text.isascii() or not text.isalpha() or len(text) > 15:
        _fail(f"word: {word!r} is not a playable word; give 1 to 15 letters A-Z")
    return {
        "word": text.upper(),
        "letters": [_LETTER_SCORES[c] for c in text],
        "score": sum(_LETTER_SCORES[c] for c in text),
    }


# ---------------------------------------------------------------------------------------------------------------
# Sports (two fictional leagues, seeded results)

_SEASONS = (2021, 2025)
# league: team -> strength
_LEAGUES: dict[str, dict[str, float]] = {
    "Coastal League": {"Harbor City Gulls": 1.6, "Ridgeport Rangers": 1.4, "Lakeside Pioneers": 1.3,
                       "Northgate United": 1.2, "Stonebridge Rovers": 1.0, "Pine Valley FC": 0.9},
    "Metro Premier": {"Eastbank Athletic": 1.5, "Riverside Comets": 1.35, "Union Square FC": 1.25,
                      "Westfield Wanderers": 1.1, "Kingsport Town": 1.0, "Oldmill Albion": 0.85},
}  # fmt: skip
_TEAMS = {team: league for league, teams in _LEAGUES.items() for team in teams}
# player: (team, share of the team's goals, share of its assists)
_PLAYERS: dict[str, tuple[str, float, float]] = {
    "Marco Deluca": ("Harbor City Gulls", 0.32, 0.10),
    "Tomás Okafor": ("Harbor City Gulls", 0.12, 0.26),
    "Jonah Berg": ("Ridgeport Rangers", 0.35, 0.08),
    "Ilya Marsh": ("Lakeside Pioneers", 0.28, 0.15),
    "Sam Achterberg": ("Pine Valley FC", 0.30, 0.12),
    "Dario Kestrel": ("Eastbank Athletic", 0.34, 0.12),
    "Felix Amani": ("Riverside Comets", 0.22, 0.24),
    "Owen Castell": ("Oldmill Albion", 0.38, 0.05),
}


def _first_saturday_of_march(year: int) -> date:
    first = date(year, 3, 1)
    return first + timedelta(days=(5 - first.weekday()) % 7)


def _fixtures(league: str, season: int) -> list[tuple[date, str, str]]:
    """A double round robin by the circle method, one round a week from the first Saturday of March."""
    teams = list(_LEAGUES[league])
    rounds: list[list[tuple[str, str]]] = []
    order = teams[:]
    for r in range(len(teams) - 1):
        pairs = [(order[i], order[-1 - i]) for i in range(len(teams) // 2)]
        rounds.append([(a, b) if (r + i) % 2 == 0 else (b, a) for i, (a, b) in enumerate(pairs)])
        order = [order[0], order[-1], *order[1:-1]]
    rounds += [[(b, a) for a, b in matches] for matches in rounds]
    start = _first_saturday_of_march(season)
    return [(start + timedelta(weeks=r), home, away) for r, matches in enumerate(rounds) for home, away in matches]


def _goals(mean: float, u: float) -> int:
    """Inverse Poisson CDF: the goal count at quantile ``u``."""
    k, p = 0, math.exp(-mean)
    total = p
    while u > total and k < 9:
        k += 1
        p *= mean / k
        total += p
    return k


def _score(league: str, season: int, home: str, away: str) -> tuple[int, int]:
    strength = _LEAGUES[league]
    return (
        _goals(0.25 + 1.2 * strength[home] / strength[away], _unit(season, home, away, "h")),
        _goals(1.0 * strength[away] / strength[home], _unit(season, home, away, "a")),
    )


def _season(season: int) -> int:
    return _count(season, "season", *_SEASONS)


def _table(league: str, season: int) -> list[dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {
        t: {"team": t, "played": 0, "won": 0, "drawn": 0, "lost": 0, "goals_for": 0, "goals_against": 0, "points": 0}
        for t in _LEAGUES[league]
    }
    for _, home, away in _fixtures(league, season):
        goals = dict(zip((home, away), _score(league, season, home, away), strict=True))
        for team, other in ((home, away), (away, home)):
            row = rows[team]
            row["played"] += 1
            row["goals_for"] += goals[team]
            row["goals_against"] += goals[other]
            outcome = "won" if goals[team] > goals[other] else "drawn" if goals[team] == goals[other] else "lost"
            row[outcome] += 1
            row["points"] += {"won": 3, "drawn": 1, "lost": 0}[outcome]
    ranked = sorted(
        rows.values(), key=lambda r: (-r["points"], r["goals_against"] - r["goals_for"], -r["goals_for"], r["team"])
    )
    return [{"position": i + 1, **row} for i, row in enumerate(ranked)]


@_tool(
    "Sports",
    f"""Final league table of a season ({_SEASONS[0]} to {_SEASONS[1]}) of the Coastal League or the Metro Premier
    (six teams each, a double round robin from March): per team the position, games played, won, drawn and lost,
    goals for and against and points (3 a win, 1 a draw).""",
    league="The league, 'Coastal League' or 'Metro Premier'.",
    season=("The season (its year).", {"minimum": _SEASONS[0], "maximum": _SEASONS[1]}),
)
def team_standings(league: str, season: int) -> dict[str, Any]:
    name, _ = _find(_LEAGUES, league, "league")
    return {"league": name, "season": _season(season), "table": _table(name, season)}


@_tool(
    "Sports",
    """Result of a league match given the home team, the away team and the match date. Returns the score and the
    winner ('draw' for a tie). Each pair of teams meets twice a season, once at each ground.""",
    home="The home team, e.g. 'Harbor City Gulls'.",
    away="The away team.",
    date="The match day, YYYY-MM-DD.",
)
def match_result(home: str, away: str, date: str) -> dict[str, Any]:
    home_team, league = _find(_TEAMS, home, "team")
    away_team, away_league = _find(_TEAMS, away, "team")
    if league != away_league:
        _fail(f"{home_team} ({league}) and {away_team} ({away_league}) play in different leagues and never meet")
    if home_team == away_team:
        _fail("home and away are the same team")
    day = _date(date, "date", _Day(_SEASONS[0], 1, 1), _Day(_SEASONS[1], 12, 31))
    fixture = next(d for d, h, a in _fixtures(league, day.year) if (h, a) == (home_team, away_team))
    if fixture != day:
        _fail(
            f"{home_team} did not host {away_team} on {day}; in the {day.year} season they played that match on "
            f"{fixture}"
        )
    home_goals, away_goals = _score(league, day.year, home_team, away_team)
    winner = home_team if home_goals > away_goals else away_team if away_goals > home_goals else "draw"
    return {
        "league": league,
        "date": day.isoformat(),
        "home": home_team,
        "away": away_team,
        "home_goals": home_goals,
        "away_goals": away_goals,
        "winner": winner,
    }


@_tool(
    "Sports",
    f"""A player's league statistics for a season ({_SEASONS[0]} to {_SEASONS[1]}): team, appearances, goals and
    assists.""",
    player="The player's full name, e.g. 'Marco Deluca'.",
    season=("The season (its year).", {"minimum": _SEASONS[0], "maximum": _SEASONS[1]}),
)
def player_stats(player: str, season: int) -> dict[str, Any]:
    name, (team, goal_share, assist_share) = _find(_PLAYERS, player, "player")
    _season(season)
    row = next(r for r in _table(_TEAMS[team], season) if r["team"] == team)
    goals = round(row["goals_for"] * goal_share * (0.7 + 0.6 * _unit(name, season, "g")))
    assists = round(row["goals_for"] * assist_share * (0.7 + 0.6 * _unit(name, season, "a")))
    return {
        "player": name,
        "team": team,
        "season": season,
        "appearances": 10 - int(3 * _unit(name, season) ** 2),
        "goals": goals,
        "assists": assists,
    }


# ---------------------------------------------------------------------------------------------------------------
# Music

# title: (composer, year completed or first published, key, form, typical duration in minutes)
_PIECES: dict[str, tuple[str, int, str, str, int]] = {
    "Symphony No. 5": ("Ludwig van Beethoven", 1808, "C minor", "symphony", 31),
    "Moonlight Sonata": ("Ludwig van Beethoven", 1801, "C-sharp minor", "piano sonata", 15),
    "Für Elise": ("Ludwig van Beethoven", 1810, "A minor", "bagatelle", 3),
    "Eine kleine Nachtmusik": ("Wolfgang Amadeus Mozart", 1787, "G major", "serenade", 18),
    "Requiem in D minor": ("Wolfgang Amadeus Mozart", 1791, "D minor", "requiem mass", 55),
    "The Four Seasons": ("Antonio Vivaldi", 1725, "various", "violin concertos", 42),
    "Brandenburg Concerto No. 3": ("Johann Sebastian Bach", 1721, "G major", "concerto", 11),
    "Messiah": ("George Frideric Handel", 1741, "D major", "oratorio", 140),
    "Clair de lune": ("Claude Debussy", 1905, "D-flat major", "piano piece", 5),
    "Boléro": ("Maurice Ravel", 1928, "C major", "ballet", 15),
    "Gymnopédie No. 1": ("Erik Satie", 1888, "D major", "piano piece", 3),
    "Swan Lake": ("Pyotr Ilyich Tchaikovsky", 1876, "various", "ballet", 150),
    "New World Symphony": ("Antonín Dvořák", 1893, "E minor", "symphony", 42),
    "Rhapsody in Blue": ("George Gershwin", 1924, "B-flat major", "rhapsody", 16),
    "The Planets": ("Gustav Holst", 1916, "various", "orchestral suite", 50),
    "Nocturne Op. 9 No. 2": ("Frédéric Chopin", 1832, "E-flat major", "nocturne", 4),
    "Piano Concerto No. 2": ("Sergei Rachmaninoff", 1901, "C minor", "concerto", 34),
}
_PIECE_ALIASES = {"Beethoven's Fifth": "Symphony No. 5", "Piano Sonata No. 14": "Moonlight Sonata",
                  "Symphony No. 9 From the New World": "New World Symphony", "Bolero": "Boléro"}  # fmt: skip
_LETTERS = "CDEFGAB"
_NATURAL = {"C": 0, "D": 2, "E": 4, "F": 5, "G": 7, "A": 9, "B": 11}
# chord suffix: (quality, intervals as (semitones, letter steps) above the root)
_CHORDS: dict[str, tuple[str, tuple[tuple[int, int], ...]]] = {
    "": ("major", ((4, 2), (7, 4))), "m": ("minor", ((3, 2), (7, 4))),
    "7": ("dominant seventh", ((4, 2), (7, 4), (10, 6))), "maj7": ("major seventh", ((4, 2), (7, 4), (11, 6))),
    "m7": ("minor seventh", ((3, 2), (7, 4), (10, 6))), "dim": ("diminished", ((3, 2), (6, 4))),
    "dim7": ("diminished seventh", ((3, 2), (6, 4), (9, 6))), "aug": ("augmented", ((4, 2), (8, 4))),
    "sus2": ("suspended second", ((2, 1), (7, 4))), "sus4": ("suspended fourth", ((5, 3), (7, 4))),
    "6": ("major sixth", ((4, 2), (7, 4), (9, 5))), "9": ("dominant ninth", ((4, 2), (7, 4), (10, 6), (14, 1))),
    "add9": ("added ninth", ((4, 2), (7, 4), (14, 1))),
}  # fmt: skip
_CHORD_ALIASES = {
    "maj": "",
    "M": "",
    "min": "m",
    "-": "m",
    "M7": "maj7",
    "min7": "m7",
    "-7": "m7",
    "+": "aug",
    "°": "dim",
}


def _composer(name: str) -> str:
    composers = {c: c for c, *_ in _PIECES.values()}
    surnames = {c.split()[-1]: c for c in composers}
    return _find(composers, name, "composer", surnames)[0]


@_tool(
    "Music",
    """Facts about a classical work: composer, year completed or first published, key, form and typical
    performance length in minutes. Accepts the usual title ('Moonlight Sonata', 'Boléro').""",
    title="The work's title.",
)
def piece_info(title: str) -> dict[str, Any]:
    name, (composer, year, key, form, minutes) = _find(_PIECES, title, "piece", _PIECE_ALIASES)
    return {"title": name, "composer": composer, "year": year, "key": key, "form": form, "duration_minutes": minutes}


@_tool(
    "Music",
    "The catalogued works of a composer (full name or surname), oldest first, with year and form.",
    composer="The composer, e.g. 'Mozart'.",
)
def composer_works(composer: str) -> dict[str, Any]:
    name = _composer(composer)
    works = sorted((year, title, form) for title, (c, year, _, form, _) in _PIECES.items() if c == name)
    return {"composer": name, "works": [{"title": t, "year": y, "form": f} for y, t, f in works]}


def _note_name(letter_index: int, pitch: int) -> str:
    letter = _LETTERS[letter_index % 7]
    shift = (pitch - _NATURAL[letter] + 6) % 12 - 6
    return letter + {-2: "bb", -1: "b", 0: "", 1: "#", 2: "##"}.get(shift, "?")


@_tool(
    "Music",
    """Spell the notes of a chord from its symbol: a root (C, F#, Bb, ...) and a suffix such as m, 7, maj7, m7, dim,
    dim7, aug, sus2, sus4, 6, 9 or add9 (none: major). Notes are spelled by scale degree (Cm: C Eb G).""",
    chord="The chord symbol, e.g. 'Am7' or 'Ebmaj7'.",
)
def chord_notes(chord: str) -> dict[str, Any]:
    match = re.fullmatch(r"([A-Ga-g])(#|b)?(.*)", chord.strip())
    if not match:
        _fail(f"chord: {chord!r} does not start with a note letter A-G; e.g. 'C', 'F#m', 'Bbmaj7'")
    letter, accidental, suffix = match.group(1).upper(), match.group(2) or "", match.group(3)
    suffix = _CHORD_ALIASES.get(suffix, suffix)
    if suffix not in _CHORDS:
        hint = close_match(suffix, _CHORDS) or f"known suffixes: major (none), {', '.join(s for s in _CHORDS if s)}"
        _fail(f"chord: unknown chord type {capped(suffix)!r} in {capped(chord)!r}; {hint}")
    quality, intervals = _CHORDS[suffix]
    root = _NATURAL[letter] + {"#": 1, "b": -1, "": 0}[accidental]
    start = _LETTERS.index(letter)
    notes = [letter + accidental] + [_note_name(start + steps, root + semis) for semis, steps in intervals]
    return {"chord": chord.strip(), "root": letter + accidental, "quality": quality, "notes": notes}


@_tool(
    "Music",
    """Frequency of a musical note in twelve-tone equal temperament with A4 = 440 Hz, and its MIDI number. Notes are
    written in scientific pitch notation: letter, optional # or b, octave ('A4', 'C#5', 'Bb3').""",
    note="The note, e.g. 'C4' (middle C).",
)
def note_frequency(note: str) -> dict[str, Any]:
    match = re.fullmatch(r"([A-Ga-g])(#|b)?(-?\d)", note.strip())
    if not match:
        _fail(f"note: {note!r} is not a note; write a letter, an optional # or b and an octave, e.g. 'A4' or 'F#3'")
    letter, accidental, octave = match.group(1).upper(), match.group(2) or "", int(match.group(3))
    midi = 12 * (octave + 1) + _NATURAL[letter] + {"#": 1, "b": -1, "": 0}[accidental]
    if not 0 <= midi <= 127:
        _fail(f"note: {note!r} is outside the MIDI range C-1 to G9")
    return {
        "note": letter + accidental + str(octave),
        "midi_number": midi,
        "frequency_hz": round(440 * 2 ** ((midi - 69) / 12), 2),
    }


# ---------------------------------------------------------------------------------------------------------------
# Health

_ACTIVITY_FACTORS = {"sedentary": 1.2, "light": 1.375, "moderate": 1.55, "active": 1.725, "very_active": 1.9}
# activity: metabolic equivalent (MET)
_METS = {
    "walking": 3.5,
    "brisk walking": 4.3,
    "running": 9.8,
    "cycling": 7.5,
    "swimming": 8.0,
    "yoga": 2.5,
    "rowing": 7.0,
    "hiking": 6.0,
    "dancing": 5.0,
    "tennis": 7.3,
    "jump rope": 12.3,
}


@_tool(
    "Health",
    """Body mass index from weight and height (kg / m², one decimal) with its WHO adult category (underweight below
    18.5, normal weight to 24.9, overweight to 29.9, obesity from 30).""",
    weight_kg=("Body weight in kilograms.", {"exclusiveMinimum": 0, "maximum": 500}),
    height_cm=("Height in centimetres.", {"exclusiveMinimum": 0, "maximum": 300}),
)
def bmi(weight_kg: float, height_cm: float) -> dict[str, Any]:
    weight, height = _positive(weight_kg, "weight_kg", 500), _positive(height_cm, "height_cm", 300)
    if height < 50:
        _fail(f"height_cm: {height_cm} cm is implausible for an adult; give the height in centimetres (e.g. 175)")
    value = round(weight / (height / 100) ** 2, 1)
    category = (
        "underweight" if value < 18.5 else "normal weight" if value < 25 else "overweight" if value < 30 else "obesity"
    )
    return {"bmi": value, "category": category}


@_tool(
    "Health",
    f"""Estimated daily energy needs: basal metabolic rate by the Mifflin-St Jeor equation times an activity factor
    ({", ".join(f"{k} {v}" for k, v in _ACTIVITY_FACTORS.items())}). Returns both, in kcal per day (whole numbers).""",
    weight_kg=("Body weight in kilograms.", {"exclusiveMinimum": 0, "maximum": 500}),
    height_cm=("Height in centimetres.", {"exclusiveMinimum": 0, "maximum": 300}),
    age=("Age in years (adults).", {"minimum": 18, "maximum": 120}),
    sex="'male' or 'female'.",
    activity_level=f"One of: {', '.join(_ACTIVITY_FACTORS)}.",
)
def daily_calorie_needs(weight_kg: float, height_cm: float, age: int, sex: str, activity_level: str) -> dict[str, Any]:
    weight, height = _positive(weight_kg, "weight_kg", 500), _positive(height_cm, "height_cm", 300)
    _count(age, "age", 18, 120)
    gender, _ = _find(
        {"male": 5, "female": -161}, sex, "sex", {"man": "male", "woman": "female", "m": "male", "f": "female"}
    )
    level, factor = _find(_ACTIVITY_FACTORS, activity_level, "activity level", {"very active": "very_active"})
    bmr = 10 * weight + 6.25 * height - 5 * age + (5 if gender == "male" else -161)
    return {"bmr_kcal": round(bmr), "activity_level": level, "daily_kcal": round(bmr * factor)}


@_tool(
    "Health",
    f"""Energy burned by an activity: MET value x 3.5 x body weight (kg) / 200 per minute, in kcal (whole number).
    Activities: {", ".join(_METS)}.""",
    activity="The activity, e.g. 'running'.",
    minutes=("Duration in minutes.", {"exclusiveMinimum": 0, "maximum": 1440}),
    weight_kg=("Body weight in kilograms.", {"exclusiveMinimum": 0, "maximum": 500}),
)
def exercise_calories(activity: str, minutes: float, weight_kg: float) -> dict[str, Any]:
    name, met = _find(_METS, activity, "activity", {"jogging": "running", "biking": "cycling", "skipping": "jump rope"})
    duration, weight = _positive(minutes, "minutes", 1440), _positive(weight_kg, "weight_kg", 500)
    return {
        "activity": name,
        "met": met,
        "minutes": minutes,
        "calories_kcal": round(met * 3.5 * weight / 200 * duration),
    }


# ---------------------------------------------------------------------------------------------------------------
# Transportation

_FLIGHTS_FIRST = date(2025, 1, 1)
# flight: (origin, destination, departure UTC, minutes in the air, aircraft) — Zephyr Air, a fictional carrier
_FLIGHTS: dict[str, tuple[str, str, str, int, str]] = {
    "ZP101": ("London", "New York", "09:30", 480, "Airbus A350"),
    "ZP102": ("New York", "London", "23:00", 415, "Airbus A350"),
    "ZP210": ("Paris", "Tokyo", "10:00", 760, "Boeing 787"),
    "ZP305": ("Sydney", "Auckland", "23:15", 185, "Airbus A321"),
    "ZP412": ("Chicago", "Los Angeles", "13:45", 275, "Boeing 737"),
    "ZP518": ("Berlin", "Madrid", "12:20", 190, "Airbus A320"),
    "ZP620": ("Toronto", "Vancouver", "21:05", 300, "Boeing 737"),
    "ZP733": ("Mumbai", "Delhi", "01:10", 135, "Airbus A320"),
    "ZP845": ("Cairo", "Nairobi", "21:10", 300, "Boeing 787"),
    "ZP902": ("Seoul", "Tokyo", "01:30", 140, "Airbus A321"),
}


@_tool(
    "Transportation",
    f"""Record of a Zephyr Air flight on a date ({_FLIGHTS_FIRST} to {REFERENCE_DAY}): route, aircraft, status
    (on time, delayed or cancelled), delay in minutes, gate, and the scheduled and actual departure and the arrival
    time, all in UTC. Flights: {", ".join(_FLIGHTS)}.""",
    flight_number="The flight number, e.g. 'ZP101'.",
    date="The departure day (UTC), YYYY-MM-DD.",
)
def flight_status(flight_number: str, date: str) -> dict[str, Any]:
    code = re.sub(r"\s", "", flight_number).upper()
    if code not in _FLIGHTS:
        hint = close_match(code, _FLIGHTS) or f"Zephyr Air flies {', '.join(_FLIGHTS)}"
        _fail(f"flight_number: no flight {flight_number!r}; {hint}")
    day = _date(date, "date", _FLIGHTS_FIRST, REFERENCE_DAY)
    origin, destination, departure, minutes, aircraft = _FLIGHTS[code]
    scheduled = datetime.combine(day, datetime.strptime(departure, "%H:%M").time())
    u = _unit(code, day)
    record: dict[str, Any] = {
        "flight": code,
        "date": day.isoformat(),
        "origin": origin,
        "destination": destination,
        "aircraft": aircraft,
        "scheduled_departure_utc": scheduled.strftime("%Y-%m-%d %H:%M"),
    }
    if u < 0.03:
        return record | {"status": "cancelled", "delay_minutes": None, "gate": None, "actual_departure_utc": None,
                         "arrival_utc": None}  # fmt: skip
    delay = 0 if u < 0.65 else 5 * round(1 + 23 * _unit(code, day, "delay") ** 2)
    actual = scheduled + timedelta(minutes=delay)
    gate = f"{'ABC'[int(3 * _unit(code, day, 'terminal'))]}{1 + int(30 * _unit(code, day, 'gate'))}"
    return record | {
        "status": "delayed" if delay > 15 else "on time",
        "delay_minutes": delay,
        "gate": gate,
        "actual_departure_utc": actual.strftime("%Y-%m-%d %H:%M"),
        "arrival_utc": (actual + timedelta(minutes=minutes)).strftime("%Y-%m-%d %H:%M"),
    }


@_tool(
    "Transportation",
    "Fuel needed for a road trip and what it costs: litres = distance x consumption / 100, cost = litres x price "
    "(2 decimals, in the price's currency).",
    distance_km=("Trip length in kilometres.", {"exclusiveMinimum": 0, "maximum": 100000}),
    litres_per_100km=("The vehicle's consumption in litres per 100 km.", {"exclusiveMinimum": 0, "maximum": 100}),
    price_per_litre=("Fuel price per litre.", {"exclusiveMinimum": 0, "maximum": 100}),
)
def fuel_cost(distance_km: float, litres_per_100km: float, price_per_litre: float) -> dict[str, Any]:
    distance = _positive(distance_km, "distance_km", 100000)
    litres = distance * _positive(litres_per_100km, "litres_per_100km", 100) / 100
    return {"litres": round(litres, 2), "cost": round(litres * _positive(price_per_litre, "price_per_litre", 100), 2)}


_CHARGE_EFFICIENCY = 0.9  # energy that reaches the battery
_TAPER_FROM = 80  # percent of charge above which a fast charger delivers half its power


@_tool(
    "Transportation",
    """Estimate the time to charge an electric car's battery between two charge levels: 90% charging efficiency,
    and above 80% charge the charger delivers half its rated power. Returns the energy drawn (kWh) and the minutes.""",
    battery_kwh=("Usable battery capacity in kWh.", {"exclusiveMinimum": 0, "maximum": 300}),
    from_percent=("Charge level at the start, 0 to 100.", {"minimum": 0, "maximum": 100}),
    to_percent=("Charge level wanted, above the start and at most 100.", {"minimum": 0, "maximum": 100}),
    charger_kw=("The charger's rated power in kW.", {"exclusiveMinimum": 0, "maximum": 1000}),
)
def ev_charging_time(battery_kwh: float, from_percent: float, to_percent: float, charger_kw: float) -> dict[str, Any]:
    capacity, power = _positive(battery_kwh, "battery_kwh", 300), _positive(charger_kw, "charger_kw", 1000)
    if not 0 <= from_percent < to_percent <= 100:
        _fail(f"charge levels: need 0 <= from_percent < to_percent <= 100, got {from_percent} and {to_percent}")
    fast = max(0.0, min(to_percent, _TAPER_FROM) - from_percent) / 100 * capacity / _CHARGE_EFFICIENCY
    slow = max(0.0, to_percent - max(from_percent, _TAPER_FROM)) / 100 * capacity / _CHARGE_EFFICIENCY
    return {"energy_kwh": round(fast + slow, 2), "minutes": round((fast / power + slow / (power / 2)) * 60)}


# ---------------------------------------------------------------------------------------------------------------
# The library

ALL_TOOLS: list[ToolSpec] = [entry.spec for entry in _REGISTRY.values()]
_VALIDATORS: dict[str, Draft202012Validator] = {}


def categories() -> dict[str, list[str]]:
    """Tool names by category, in registration order."""
    grouped: dict[str, list[str]] = {}
    for spec in ALL_TOOLS:
        grouped.setdefault(spec.binding["category"], []).append(spec.name)
    return grouped


def run(name: str, arguments: Mapping[str, Any]) -> Any:
    """Run a tool by name. Arguments are checked against its schema first; a bad call raises ToolExecutionError
    with a message the caller can act on."""
    entry = _REGISTRY.get(name)
    if entry is None:
        _fail(f"unknown tool {name!r}; {did_you_mean(name, _REGISTRY)}")
    validator = _VALIDATORS.get(name)
    if validator is None:
        validator = _VALIDATORS[name] = Draft202012Validator(entry.spec.parameters)
    error = best_match(validator.iter_errors(dict(arguments)))
    if error is not None:
        where = ".".join(str(p) for p in error.absolute_path)
        raise ToolExecutionError(
            f"invalid arguments for {name}: {error.message}" + (f" (at '{where}')" if where else ""),
            "invalid_arguments",
        )
    return entry.function(**arguments)


class FailTalmsToolBox(ToolBox):
    """The offline tools. They are pure functions of their arguments, so an episode's state is an empty dict (not
    None: the environment reads a None state as "not reset yet")."""

    def __init__(self, specs: Iterable[ToolSpec] | None = None) -> None:
        super().__init__(ALL_TOOLS if specs is None else specs)

    def new_state(self) -> dict[str, Any]:
        return {}

    def execute(self, state: Any, spec: ToolSpec, arguments: dict[str, Any]) -> Any:
        return run(spec.binding.get("function", spec.name), arguments)
