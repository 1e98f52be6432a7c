"""FAIL-TaLMs Science tools: a safe calculator, unit conversion, percentages, prime factors, the elements and the
planets, and a rocket launch model. The facts come from ``data/tables/`` (units, elements, planets)."""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import Field

from undertow.env_core.errors import close_match
from undertow.env_core.failtalms.shared import Row, fail, find, in_range, positive, read_table, rounded
from undertow.env_core.tools import tool


class Unit(Row):
    """A unit: the dimension it measures, its size in that dimension's base unit (temperatures are converted by
    formula) and the other names it goes by."""

    unit: str
    dimension: str
    size: float
    names: list[str]


class Element(Row):
    symbol: str
    name: str
    atomic_number: int
    atomic_weight: float  # standard atomic weight
    group: str


class Planet(Row):
    planet: str
    diameter_km: int
    gravity_m_s2: float  # at the surface
    day_hours: float
    year_days: float  # Earth days
    distance_from_sun_million_km: float  # mean distance
    moons: int


_UNIT_ROWS = read_table("units", Unit)
_UNITS: dict[str, tuple[str, float]] = {row.unit: (row.dimension, row.size) for row in _UNIT_ROWS}
_UNIT_ALIASES = {name: row.unit for row in _UNIT_ROWS for name in [row.unit, *row.names]}
_ELEMENTS = {row.symbol: row for row in read_table("elements", Element)}
_PLANETS = {row.planet: row for row in read_table("planets", Planet)}


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
        fail("the expression has no real-valued result (a fractional power of a negative number)")
    if isinstance(value, float) and not math.isfinite(value):
        fail("the result is too large to represent")
    if abs(value) > _MAX_MAGNITUDE:
        fail("a value in the expression exceeds 1e100; the calculator works below that")
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
            fail("the power is too large; the calculator works with values below 1e100")
        try:
            return _checked(_OPERATORS[type(node.op)](left, right))
        except ZeroDivisionError:
            fail("division by zero")
        except OverflowError:
            fail("the result is too large to represent")
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitXor):
        fail("'^' is not a power here; write powers with ** (2**10)")
    if isinstance(node, ast.Name | ast.Call | ast.Attribute):
        shown = ast.unparse(node)
        fail(f"{shown!r} is not allowed: only numbers, + - * / // % ** and parentheses (no names or functions)")
    fail(f"{ast.unparse(node)!r} is not allowed: only numbers, + - * / // % ** and parentheses")


@tool("Science")
def calculate(
    expression: Annotated[
        str, Field(description="The arithmetic expression, e.g. '(12.5 + 7) * 3 / 2'.", max_length=_MAX_EXPRESSION)
    ],
) -> dict[str, Any]:
    """Evaluate an arithmetic expression exactly as written. Supports numbers (integers and decimals), the operators + -
    * / // (floor division) % (remainder) ** (power) and parentheses; no variables or functions. Returns the expression
    and its numeric result (decimals rounded to 10 places)."""
    if not expression.strip():
        fail("expression: empty; give an arithmetic expression such as '2 + 2'")
    if len(expression) > _MAX_EXPRESSION:
        fail(f"expression: longer than {_MAX_EXPRESSION} characters; split the calculation")
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        fail(f"could not parse {expression!r}; use numbers, + - * / // % ** and parentheses, e.g. '(3 + 4) * 2'")
    result = _evaluate(tree.body)
    if isinstance(result, float):
        result = round(result, 10)
        if result.is_integer() and abs(result) < 1e15:
            result = int(result)
    return {"expression": expression, "result": result}


def _unit_of(name: str, argument: str) -> str:
    text = name.strip().casefold().replace(" ", "_")
    unit = text if text in _UNITS else _UNIT_ALIASES.get(text)
    if unit is None:
        hint = close_match(text, [*_UNITS, *_UNIT_ALIASES]) or f"known units: {', '.join(_UNITS)}"
        fail(f"{argument}: unknown unit {name!r}; {hint}")
    return unit


def _to_kelvin(value: float, unit: str) -> float:
    return {"c": value + 273.15, "f": (value - 32) * 5 / 9 + 273.15, "k": value}[unit]


@tool("Science")
def convert_units(
    value: Annotated[float, Field(description="The quantity to convert.")],
    from_unit: Annotated[str, Field(description="The unit the value is in, e.g. 'km' or 'fahrenheit'.")],
    to_unit: Annotated[str, Field(description="The unit to convert to; must measure the same dimension.")],
) -> dict[str, Any]:
    """Convert a quantity between units of length, mass, volume, speed, area, energy or temperature. Units are
    abbreviations or names: m, km, mi, ft, in, kg, lb, oz, l, gal (US), cup, km/h, mph, kn, ha, acre, kcal, kWh, C, F, K
    and more. Returns the converted value rounded to 2 decimals (4 significant digits when small)."""
    source, target = _unit_of(from_unit, "from_unit"), _unit_of(to_unit, "to_unit")
    (dimension, size), (target_dimension, target_size) = _UNITS[source], _UNITS[target]
    if dimension != target_dimension:
        fail(f"cannot convert {dimension} ({from_unit}) to {target_dimension} ({to_unit}); pick units of one kind")
    if dimension == "temperature":
        kelvin = _to_kelvin(float(value), source)
        if kelvin < 0:
            fail(f"{value} {from_unit} is below absolute zero")
        result = {"c": kelvin - 273.15, "f": (kelvin - 273.15) * 9 / 5 + 32, "k": kelvin}[target]
    else:
        result = float(value) * size / target_size
    return {"value": value, "from_unit": source, "to_unit": target, "result": rounded(result)}


@tool("Science")
def percentage_change(
    old: Annotated[float, Field(description="The starting value (not zero).")],
    new: Annotated[float, Field(description="The final value.")],
) -> dict[str, Any]:
    """Compute the change from an old value to a new one, absolute and in percent of the old value (positive for an
    increase). Returns change and percent_change, rounded to 2 decimals."""
    if old == 0:
        fail("old: the starting value is 0, so a percentage change is undefined; give a non-zero starting value")
    return {
        "old": old,
        "new": new,
        "change": rounded(new - old),
        "percent_change": round((new - old) / abs(old) * 100, 2),
    }


@tool("Science")
def prime_factors(
    n: Annotated[int, Field(description="A whole number from 2 to 1000000000000.", ge=2, le=10**12)],
) -> dict[str, Any]:
    """Factor a whole number into primes. Returns the prime factors in ascending order (with repetition) and whether the
    number itself is prime."""
    in_range(n, "n", 2, 10**12)
    factors, rest, d = [], n, 2
    while d * d <= rest:
        while rest % d == 0:
            factors.append(d)
            rest //= d
        d += 1 if d == 2 else 2
    if rest > 1:
        factors.append(rest)
    return {"n": n, "factors": factors, "is_prime": factors == [n]}


@tool("Science")
def element_info(symbol: Annotated[str, Field(description="The element's symbol or English name.")]) -> dict[str, Any]:
    """Look up a chemical element by symbol or name (e.g. 'Fe' or 'iron'). Returns its symbol, name, atomic number,
    standard atomic weight and group (noble gas, halogen, transition metal, ...)."""
    names = {s: s for s in _ELEMENTS} | {row.name: s for s, row in _ELEMENTS.items()}
    _, found = find(names, symbol, "element", {"Aluminum": "Al", "Sulphur": "S"})
    return _ELEMENTS[found].model_dump()


_FORMULA_TOKEN = re.compile(r"([A-Z][a-z]?|\(|\)|\d+)")


@tool("Science")
def molar_mass(
    formula: Annotated[
        str, Field(description="The formula, case-sensitive, with optional parentheses: 'NaCl', 'Mg(OH)2'.")
    ],
) -> dict[str, Any]:
    """Compute the molar mass of a chemical formula such as 'H2O', 'C6H12O6' or 'Ca(OH)2' from standard atomic weights.
    Returns the mass in g/mol (2 decimals) and the count of atoms of each element."""
    text = formula.replace(" ", "")
    if not text or "".join(_FORMULA_TOKEN.findall(text)) != text:
        fail(f"formula: cannot read {formula!r}; write element symbols with counts, e.g. 'C6H12O6' or 'Ca(OH)2'")
    stack: list[dict[str, int]] = [{}]
    tokens = _FORMULA_TOKEN.findall(text)
    for i, token in enumerate(tokens):
        if token.isdigit():
            if i == 0 or tokens[i - 1] == "(" or tokens[i - 1].isdigit():
                fail(f"formula: a count must follow an element or ')' in {formula!r}; e.g. 'H2O', not '2H2O'")
            continue
        repeat = int(tokens[i + 1]) if i + 1 < len(tokens) and tokens[i + 1].isdigit() else 1
        if token == "(":
            stack.append({})
        elif token == ")":
            if len(stack) == 1:
                fail(f"formula: unbalanced ')' in {formula!r}")
            group = stack.pop()
            for element, n in group.items():
                stack[-1][element] = stack[-1].get(element, 0) + n * repeat
        else:
            if token not in _ELEMENTS:
                hint = close_match(token, _ELEMENTS) or "element symbols are case-sensitive (Co, not CO)"
                fail(f"formula: unknown element {token!r}; {hint}")
            stack[-1][token] = stack[-1].get(token, 0) + repeat
    if len(stack) != 1:
        fail(f"formula: unbalanced '(' in {formula!r}")
    atoms = stack[0]
    mass = sum(_ELEMENTS[e].atomic_weight * n for e, n in atoms.items())
    return {"formula": formula, "molar_mass_g_mol": round(mass, 2), "atoms": atoms}


@tool("Science")
def planet_facts(
    planet: Annotated[str, Field(description="The planet's English name, e.g. 'Mars'.")],
) -> dict[str, Any]:
    """Key facts about a planet of the Solar System: diameter (km), surface gravity (m/s²), length of day (hours) and of
    year (Earth days), mean distance from the Sun (millions of km) and number of known moons."""
    _, row = find(_PLANETS, planet, "planet")
    return row.model_dump()


_G0 = 9.80665
_EXHAUST_SPEED = 311 * _G0  # a kerosene/oxygen first stage (specific impulse 311 s)
_STRUCTURE = 0.08  # tank and engine mass per kg of fuel


@tool("Science")
def rocket_launch_simulation(
    payload_kg: Annotated[float, Field(description="Payload mass in kg.", ge=0)],
    fuel_kg: Annotated[float, Field(description="Propellant mass in kg.", gt=0)],
    thrust_kn: Annotated[float, Field(description="Engine thrust in kilonewtons.", gt=0)],
) -> dict[str, Any]:
    """Simulate a single-stage vertical rocket launch with constant thrust, a kerosene/oxygen engine (specific impulse
    311 s), tank and engine mass of 8% of the fuel, no drag and flat-Earth gravity. Returns the lift-off
    thrust-to-weight ratio, the ideal delta-v, burn time, burnout speed and altitude, the apogee, and whether the
    delta-v would suffice for low Earth orbit (9.4 km/s)."""
    if payload_kg < 0 or payload_kg > 1e7:
        fail("payload_kg: give a mass from 0 to 10000000 kg")
    fuel, thrust = positive(fuel_kg, "fuel_kg", 1e7), positive(thrust_kn, "thrust_kn", 1e6) * 1000
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
