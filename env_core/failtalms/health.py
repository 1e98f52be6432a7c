"""FAIL-TaLMs Health tools: body mass index, daily energy needs and the energy an activity burns (activity factors
and MET values in ``data/tables/activity_levels.json``, ``exercises.json``)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from undertow.env_core.failtalms.shared import fail, find, in_range, positive, read_mapping
from undertow.env_core.tools import tool

_ACTIVITY_FACTORS = read_mapping("activity_levels", dict[str, float])  # energy needs per unit of basal rate
_METS = read_mapping("exercises", dict[str, float])  # activity: metabolic equivalent (MET)
WeightKg = Annotated[float, Field(description="Body weight in kilograms.", gt=0, le=500)]
HeightCm = Annotated[float, Field(description="Height in centimetres.", gt=0, le=300)]


@tool("Health")
def bmi(weight_kg: WeightKg, height_cm: HeightCm) -> dict[str, Any]:
    """Body mass index from weight and height (kg / m², one decimal) with its WHO adult category (underweight below
    18.5, normal weight to 24.9, overweight to 29.9, obesity from 30)."""
    weight, height = positive(weight_kg, "weight_kg", 500), positive(height_cm, "height_cm", 300)
    if height < 50:
        fail(f"height_cm: {height_cm} cm is implausible for an adult; give the height in centimetres (e.g. 175)")
    value = round(weight / (height / 100) ** 2, 1)
    category = (
        "underweight" if value < 18.5 else "normal weight" if value < 25 else "overweight" if value < 30 else "obesity"
    )
    return {"bmi": value, "category": category}


@tool(
    "Health",
    description=f"""Estimated daily energy needs: basal metabolic rate by the Mifflin-St Jeor equation times an
    activity factor ({", ".join(f"{k} {v}" for k, v in _ACTIVITY_FACTORS.items())}). Returns both, in kcal per day
    (whole numbers).""",
)
def daily_calorie_needs(
    weight_kg: WeightKg,
    height_cm: HeightCm,
    age: Annotated[int, Field(description="Age in years (adults).", ge=18, le=120)],
    sex: Annotated[str, Field(description="'male' or 'female'.")],
    activity_level: Annotated[str, Field(description=f"One of: {', '.join(_ACTIVITY_FACTORS)}.")],
) -> dict[str, Any]:
    weight, height = positive(weight_kg, "weight_kg", 500), positive(height_cm, "height_cm", 300)
    in_range(age, "age", 18, 120)
    gender, _ = find(
        {"male": 5, "female": -161}, sex, "sex", {"man": "male", "woman": "female", "m": "male", "f": "female"}
    )
    level, factor = find(_ACTIVITY_FACTORS, activity_level, "activity level", {"very active": "very_active"})
    bmr = 10 * weight + 6.25 * height - 5 * age + (5 if gender == "male" else -161)
    return {"bmr_kcal": round(bmr), "activity_level": level, "daily_kcal": round(bmr * factor)}


@tool(
    "Health",
    description=f"""Energy burned by an activity: MET value x 3.5 x body weight (kg) / 200 per minute, in kcal (whole
    number). Activities: {", ".join(_METS)}.""",
)
def exercise_calories(
    activity: Annotated[str, Field(description="The activity, e.g. 'running'.")],
    minutes: Annotated[float, Field(description="Duration in minutes.", gt=0, le=1440)],
    weight_kg: WeightKg,
) -> dict[str, Any]:
    name, met = find(_METS, activity, "activity", {"jogging": "running", "biking": "cycling", "skipping": "jump rope"})
    duration, weight = positive(minutes, "minutes", 1440), positive(weight_kg, "weight_kg", 500)
    return {
        "activity": name,
        "met": met,
        "minutes": minutes,
        "calories_kcal": round(met * 3.5 * weight / 200 * duration),
    }
