"""FAIL-TaLMs Food tools: recipes by ingredient, nutrition facts and cocktail recipes (``data/tables/recipes.jsonl``,
``nutrition.jsonl``, ``cocktails.jsonl``)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from undertow.env_core.errors import did_you_mean
from undertow.env_core.failtalms.shared import ALIASES, Row, fail, find, lookup_key, positive, read_table
from undertow.env_core.tools import tool


class Recipe(Row):
    name: str
    cuisine: str
    minutes: int  # in all
    servings: int
    ingredients: list[str]


class Nutrition(Row):
    """What 100 g of a food holds."""

    food: str
    kcal: float
    protein_g: float
    carbohydrate_g: float
    fat_g: float


class Cocktail(Row):
    name: str
    glass: str
    method: str
    ingredients: list[str]  # with their amounts


_RECIPES = {row.name: row for row in read_table("recipes", Recipe)}
_NUTRITION = {row.food: row for row in read_table("nutrition", Nutrition)}
_COCKTAILS = {row.name: row for row in read_table("cocktails", Cocktail)}


@tool("Food")
def recipe_search(
    ingredient: Annotated[str, Field(description="One ingredient, e.g. 'eggs' or 'avocado'.")],
) -> dict[str, Any]:
    """Find recipes that use an ingredient. Returns each recipe's name, cuisine, total time in minutes and servings."""
    wanted = lookup_key(ingredient)
    known = {i for row in _RECIPES.values() for i in row.ingredients}
    matches = [
        {"name": name, "cuisine": row.cuisine, "minutes": row.minutes, "servings": row.servings}
        for name, row in _RECIPES.items()
        if any(lookup_key(i) in (wanted, wanted.removesuffix("s"), wanted + "s") for i in row.ingredients)
    ]
    if not matches:
        hint = did_you_mean(ingredient, known)
        fail(f"no recipe uses {ingredient!r}" + (f"; {hint}" if hint.startswith("did") else ""))
    return {"ingredient": ingredient, "count": len(matches), "recipes": matches}


@tool("Food")
def nutrition_facts(
    food: Annotated[str, Field(description="The food, e.g. 'banana' or 'salmon'.")],
    grams: Annotated[float, Field(description="The portion size in grams.", gt=0, le=10000)] = 100.0,
) -> dict[str, Any]:
    """Nutrition facts of a food for a portion in grams (100 g by default): energy (kcal), protein, carbohydrate and fat
    (g), rounded to one decimal."""
    name, row = find(_NUTRITION, food, "food", ALIASES["food"])
    share = positive(grams, "grams", 10000) / 100
    return {
        "food": name,
        "grams": grams,
        "calories_kcal": round(row.kcal * share, 1),
        "protein_g": round(row.protein_g * share, 1),
        "carbohydrate_g": round(row.carbohydrate_g * share, 1),
        "fat_g": round(row.fat_g * share, 1),
    }


@tool("Food")
def cocktail_recipe(name: Annotated[str, Field(description="The drink's name, e.g. 'Negroni'.")]) -> dict[str, Any]:
    """Recipe of a classic cocktail or mocktail: the glass, the method and the ingredients with their amounts."""
    found, row = find(_COCKTAILS, name, "cocktail")
    return {"name": found, "glass": row.glass, "method": row.method, "ingredients": list(row.ingredients)}
