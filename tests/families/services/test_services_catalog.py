"""All 30 simulated services (env_core.services.catalog) held to one contract: each service's shape, each tool spec,
each recipe (lookup and write) against the seeded state, counterparts that share topics, and episodes that never
share a write. What one service module alone seeds or does (the paper's cards, particular tool behaviours and errors)
is tested beside it, in test_services_<module>.py."""

from __future__ import annotations

from collections import defaultdict
from datetime import timedelta
from types import ModuleType
from typing import Any

import pytest
from simulated_services import call, episode, fresh, ok, run, text

from undertow.env_core.environment import Environment
from undertow.env_core.faults import partial_arguments
from undertow.env_core.model import Action, ToolCall, ToolSpec
from undertow.env_core.services import commerce, communication, finance, information, travel
from undertow.env_core.services.base import DOMAINS, Service
from undertow.env_core.services.catalog import BY_NAME, SERVICES, all_specs
from undertow.env_core.services.recipes import Call, Lookup, Write
from undertow.env_core.services.tools import pristine_world

# each service module's one domain, and its categories with their services
TAXONOMY: dict[ModuleType, tuple[str, dict[str, set[str]]]] = {
    travel: ("travel & lodging", {"lodging": {"booking", "expedia", "airbnb"}, "rides": {"uber", "lyft"}}),
    finance: ("payments & finance", {"payments": {"zelle", "venmo", "paypal"}, "trading": {"robinhood", "etrade"}}),
    commerce: (
        "commerce & food",
        {
            "food_delivery": {"ubereats", "doordash", "grubhub"},
            "retail": {"amazon", "walmart"},
            "groceries": {"instacart", "shipt"},
        },
    ),
    communication: (
        "communication & productivity",
        {"email": {"gmail", "outlook_mail"}, "calendar": {"google_calendar", "outlook_calendar"}},
    ),
    information: (
        "information",
        {
            "weather": {"weathercom", "yahoo_weather", "accuweather", "nws"},
            "reviews": {"google_reviews", "yelp", "tripadvisor"},
            "news": {"google_news", "reuters"},
        },
    ),
}
# Walmart carries the card's four pickup tools beside the catalog and cart its retail recipes need
MAX_TOOLS: dict[str, int] = {"walmart": 8}
READ_ONLY = {"nws", "google_news", "reuters"}  # the contract lets these offer no writes
# the arguments that make a lookup a search, which then needs a pin, by domain
SEARCH_ARGUMENTS: dict[str, set[str]] = {
    "travel & lodging": {"query", "city", "location"},
    "payments & finance": {"query"},
    "commerce & food": {"query"},
}
# the domains where every service pins at least one of its lookups
PINNED_DOMAINS = {"communication & productivity", "information"}
# a pin opens the record a lookup shows first, except on these topics (the Monday agenda's pin opens its second meeting)
PIN_OPENS_ANOTHER = {"calendar_monday_agenda"}

SPECS = sorted(all_specs(), key=lambda s: s.name)
LOOKUPS = [(service, lookup) for service in SERVICES for lookup in service.lookups()]
WRITES = [(service, write) for service in SERVICES for write in service.writes()]
PARTIAL_WRITES = [(s, w) for s, w in WRITES if partial_arguments(dict(w.call.arguments)) is not None]


def recipe_id(value: Any) -> str | None:
    return getattr(value, "name", None) or getattr(value, "topic", None)


def read(env: Environment, service: type[Service], request: Call) -> list[str]:
    """A read's result as JSON text twice: called in the episode, and run straight on a pristine world."""
    return [text(ok(env, service, request.method, **request.arguments)), text(run(fresh(service, SERVICES), request))]


@pytest.mark.parametrize("module", TAXONOMY, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_taxonomy(module: ModuleType) -> None:
    domain, expected = TAXONOMY[module]
    categories: dict[str, set[str]] = defaultdict(set)
    for service in module.SERVICES:
        assert service.domain == domain
        categories[service.category].add(service.name)
    assert categories == expected


@pytest.mark.parametrize("service", SERVICES, ids=lambda s: s.name)
def test_service_shape(service: type[Service]) -> None:
    world = pristine_world(SERVICES)
    assert service(world).state is world.states[service.name]
    assert service.domain in DOMAINS and service.category and service.title
    peers = {s.name for s in SERVICES if s.category == service.category and s is not service}
    assert set(service.counterparts) == peers
    assert 4 <= len(service.tool_methods()) <= MAX_TOOLS.get(service.name, 7)
    assert 4 <= len(service.specs()) <= MAX_TOOLS.get(service.name, 7)
    if service.writes() or service.name not in READ_ONLY:
        assert {"write", "readback"} <= {spec.binding["kind"] for spec in service.specs()}
    # seeded the same every time, never from the wall clock
    assert service.initial_state().model_dump() == service.initial_state().model_dump()


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_tool_spec(spec: ToolSpec) -> None:
    service = BY_NAME[spec.binding["service"]]
    assert spec.name.startswith(f"{service.name}_")
    assert spec.description.startswith(f"{service.title}: ") and len(spec.description) > len(service.title) + 20
    assert spec.binding["kind"] in ("read", "write", "readback")
    assert spec.binding["failure_hint"].strip().endswith(".")
    assert spec.parameters["type"] == "object" and spec.parameters["additionalProperties"] is False
    for name, prop in spec.parameters.get("properties", {}).items():
        assert prop.get("description"), f"{spec.name}.{name} has no description"
        assert "type" in prop or "anyOf" in prop or "enum" in prop, f"{spec.name}.{name} is untyped"


@pytest.mark.parametrize("service", SERVICES, ids=lambda s: s.name)
def test_service_has_recipes(service: type[Service]) -> None:
    lookups = service.lookups()
    assert len(lookups) >= 2
    searches = [lk for lk in lookups if set(lk.call.arguments) & SEARCH_ARGUMENTS.get(service.domain, set())]
    assert not searches or any(lk.pin for lk in searches), "a search lookup needs a pin"
    if service.domain in PINNED_DOMAINS:
        assert any(lookup.pin is not None for lookup in lookups)
    assert service.writes() or service.name in READ_ONLY


@pytest.mark.parametrize(("service", "lookup"), LOOKUPS, ids=recipe_id)
def test_lookup_answers_appear_in_the_true_result(service: type[Service], lookup: Lookup) -> None:
    assert lookup.call.arguments and lookup.request.strip() and 1 <= len(lookup.answer) <= 3
    assert lookup.call.method in service.tool_methods()
    env = episode(SERVICES)
    results = read(env, service, lookup.call)
    for result in results:
        for concept in [*lookup.answer, *lookup.shows]:
            assert concept in result, (service.name, lookup.topic, concept)
    # a read is a pure function of the state: the same later on the clock, in the episode and on a later world
    for _ in range(5):
        env._state.tick()  # type: ignore[union-attr]
    assert text(ok(env, service, lookup.call.method, **lookup.call.arguments)) == results[0]
    early, late = pristine_world(SERVICES), pristine_world(SERVICES)
    late.now += timedelta(hours=5)
    assert run(service(early), lookup.call) == run(service(late), lookup.call)
    if lookup.pin is not None:
        assert lookup.pin.method != lookup.call.method
        for pinned in read(env, service, lookup.pin):
            assert lookup.shows[0] in pinned or lookup.topic in PIN_OPENS_ANOTHER
            assert all(str(value) in pinned for value in lookup.pin.arguments.values())
    if lookup.value_field is not None:
        assert f'"{lookup.value_field}": ' in results[0]


@pytest.mark.parametrize(("service", "write"), WRITES, ids=recipe_id)
def test_write_lands_only_after_the_write(service: type[Service], write: Write) -> None:
    kinds = {spec.binding["method"]: spec.binding["kind"] for spec in service.specs()}
    assert kinds == {spec.binding["method"]: spec.binding["kind"] for spec in service.specs()}
    assert kinds[write.call.method] == "write" and kinds[write.readback.method] == "readback"
    assert 1 <= len(write.landed) <= 2 and 1 <= len(write.answer) <= 3 and write.request.strip()
    for before_step in write.before:
        assert kinds[before_step.method] != "write", (service.name, write.topic, before_step.method)
        ok(episode(SERVICES), service, before_step.method, **before_step.arguments)
    # in an episode, and run straight on a pristine world
    env = episode(SERVICES)
    in_episode = [text(ok(env, service, c.method, **c.arguments)) for c in (write.readback, write.call, write.readback)]
    instance = fresh(service, SERVICES)
    outside = [text(run(instance, c)) for c in (write.readback, write.call, write.readback)]
    for before, echo, after in (in_episode, outside):
        for concept in write.landed:
            assert concept not in before and concept in after, (service.name, write.topic, concept)
        for concept in write.answer:
            assert concept in after or concept in echo, (service.name, write.topic, concept)
    # another episode of the same tool box never sees the write
    other = episode(SERVICES)
    assert text(ok(other, service, write.readback.method, **write.readback.arguments)) == in_episode[0]


@pytest.mark.parametrize(("service", "write"), PARTIAL_WRITES, ids=recipe_id)
def test_partial_batch_is_visible(service: type[Service], write: Write) -> None:
    """A partial write (the fault layer's first half of each list) leaves a landed string missing, so the readback
    tells a cut batch from a whole one."""
    cut = partial_arguments(dict(write.call.arguments))
    assert cut is not None
    env = episode(SERVICES)
    observation = call(env, service, write.call.method, **cut)
    after = text(ok(env, service, write.readback.method, **write.readback.arguments))
    assert not observation.ok or not all(c in after for c in write.landed), (service.name, write.topic)


def test_topics_pair_counterparts_with_the_same_facts() -> None:
    """Every topic is shared by two or more services of one category, which all ask the same and answer the same (so
    counterpart lookups agree too)."""
    by_topic: dict[str, list[tuple[type[Service], Lookup | Write]]] = defaultdict(list)
    for service, recipe in [*LOOKUPS, *WRITES]:
        by_topic[recipe.topic].append((service, recipe))
    for topic, entries in by_topic.items():
        assert len({service.name for service, _ in entries}) >= 2, f"topic {topic} has one service"
        assert len({service.category for service, _ in entries}) == 1, f"topic {topic} spans categories"
        assert len({recipe.request for _, recipe in entries}) == 1, f"topic {topic} asks different things"
        assert len({tuple(recipe.answer) for _, recipe in entries}) == 1, f"topic {topic} answers differently"


def test_each_category_has_a_list_write() -> None:
    for category in {s.category for s in SERVICES}:
        assert any(
            any(isinstance(v, list) for v in write.call.arguments.values())
            for s, write in WRITES
            if s.category == category
        ), category


def _junk(prop: dict[str, Any]) -> Any:
    kind = prop.get("type") or next(p["type"] for p in prop.get("anyOf", []) if p.get("type") != "null")
    if "enum" in prop:
        return prop["enum"][0]
    return {"string": "zz-unknown", "integer": 3, "number": 12.5, "boolean": True}.get(kind, [])


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_bad_arguments_are_tool_errors(spec: ToolSpec) -> None:
    """Unknown ids, empty lists and odd values come back as errors the agent reads, never as a crash."""
    props = spec.parameters.get("properties", {})
    for variant in range(3):
        arguments = {}
        for name, prop in props.items():
            value = _junk(prop)
            if isinstance(value, list) and variant == 1:
                value = [{"zz": 1}]
            elif isinstance(value, list) and variant == 2:
                value = ["zz-unknown"] if prop.get("items", {}).get("type") == "string" else [{}]
            arguments[name] = value
        observation = episode(SERVICES).step(
            Action(kind="tool_call", tool_call=ToolCall(id="x", name=spec.name, arguments=arguments))
        )
        assert observation.ok or observation.error is not None
