"""Information services (env_core.services.information): card tools and facts, particular tool behaviours and
errors, and isolation (the contract every service keeps is in test_services_catalog.py)."""

from __future__ import annotations

import inspect
from typing import Any

import pytest
from simulated_services import episode, fresh, params, step, text

from undertow.env_core.services.base import World
from undertow.env_core.services.information import SERVICES
from undertow.env_core.services.tools import pristine_world
from undertow.env_core.tools import ToolExecutionError

BY_NAME = {service.name: service for service in SERVICES}


BBQ = ["Martin's Bar-B-Que Joint", "Peg Leg Porker"]
MAUI_BALI = ["Maui, HI", "Bali, Indonesia"]
STORIES = [
    "Fed holds rates steady, signals two cuts later this year",
    "Northwind Semiconductor picks Ohio for $4 billion",
]


@pytest.mark.parametrize(
    ("write", "arguments", "readback", "saved"),
    [
        ("yahoo_weather_add_favorites", {"locations": ["Maui", "Bali"]}, "yahoo_weather_get_favorites", MAUI_BALI),
        ("accuweather_add_favorites", {"locations": ["Maui", "Bali"]}, "accuweather_get_favorites", MAUI_BALI),
        (
            "google_reviews_save_places",
            {"place_ids": ["gp_martins", "gp_peg_leg"]},
            "google_reviews_get_saved_places",
            BBQ,
        ),
        (
            "yelp_bookmark_businesses",
            {"business_ids": ["martins-bar-b-que-joint-nashville", "peg-leg-porker-nashville"]},
            "yelp_get_bookmarks",
            BBQ,
        ),
        (
            "google_news_save_articles",
            {"article_ids": ["gn_fed", "gn_chip"]},
            "google_news_get_saved_articles",
            STORIES,
        ),
        ("reuters_save_articles", {"article_ids": ["reu_fed", "reu_chip"]}, "reuters_get_saved_articles", STORIES),
    ],
)
def test_list_arguments_serve_batch_writes(
    write: str, arguments: dict[str, Any], readback: str, saved: list[str]
) -> None:
    """One call with a list argument saves every item of the batch, and the readback lists them all."""
    env = episode(SERVICES)
    before = text(step(env, readback, {}).result)
    assert not any(item in before for item in saved)
    assert step(env, write, arguments).ok
    after = text(step(env, readback, {}).result)
    assert all(item in after for item in saved)


def test_card_tools_exist_with_their_arguments() -> None:
    empty = inspect.Parameter.empty
    weathercom = BY_NAME["weathercom"]
    for weather in (weathercom, BY_NAME["yahoo_weather"]):
        assert params(weather, "get_daily_forecast") == {"location": empty, "days": 7}
        assert params(weather, "get_hourly_forecast") == {"location": empty, "date": empty}
    assert params(weathercom, "add_saved_location") == {"location": empty}
    assert params(weathercom, "remove_saved_location") == {"location": empty}
    assert params(weathercom, "get_saved_locations") == {}
    assert params(weathercom, "get_alerts") == {"location": empty}
    assert params(weathercom, "get_alert_details") == {"alert_id": empty}
    assert "get_alert_bulletin" in BY_NAME["nws"].tool_methods()
    google, yelp = BY_NAME["google_reviews"], BY_NAME["yelp"]
    assert params(google, "search_places") == {"query": empty, "location": empty}
    assert params(google, "get_reviews") == {"place_id": empty}
    assert params(google, "get_place") == {"place_id": empty}
    assert params(google, "mark_helpful") == {"review_id": empty}
    assert params(yelp, "search_businesses") == {"term": empty, "location": empty}
    assert params(yelp, "get_reviews") == {"business_id": empty}
    assert params(yelp, "get_business") == {"business_id": empty}


def test_card_facts_are_seeded() -> None:
    world = pristine_world(SERVICES)
    weathercom = BY_NAME["weathercom"](world)
    daily = weathercom.run("get_daily_forecast", {"location": "Napa Valley, CA", "days": 10})
    assert daily["generated_at"] == "2026-03-20T05:00:00Z" and len(daily["days"]) == 10
    saturday = next(day for day in daily["days"] if day["date"] == "2026-03-21")
    assert (saturday["weekday"], saturday["condition"], saturday["precip_chance"]) == ("Saturday", "Thunderstorms", 80)
    assert set(daily["days"][0]) >= {"date", "condition", "high_f", "low_f", "precip_chance"}
    assert weathercom.run("get_saved_locations", {}) == {"locations": ["San Francisco, CA"]}
    for place in ("Maui", "Bali"):
        assert weathercom.run("add_saved_location", {"location": place})["status"] == "added"
    assert weathercom.run("get_saved_locations", {})["locations"] == [
        "San Francisco, CA",
        "Maui, HI",
        "Bali, Indonesia",
    ]
    alerts = weathercom.run("get_alerts", {"location": "Memphis, TN"})["alerts"]
    flood = next(a for a in alerts if a["alert_id"] == "alert_memphis_flood")
    assert set(flood) == {"alert_id", "event", "severity", "area", "summary", "expires"}
    assert flood["severity"] == "Severe" and "Wolf River" in flood["summary"] and "Mississippi" in flood["summary"]
    bulletin = BY_NAME["nws"](world).run("get_alert_bulletin", {"area": "Memphis"})
    assert "TNZ088" in text(bulletin["zones"]) and "39.2 ft" in bulletin["crest"]
    # the counterparts tell the same story
    yahoo = BY_NAME["yahoo_weather"](world).run("get_daily_forecast", {"location": "napa", "days": 2})
    assert yahoo["days"] == daily["days"][:2]
    hourly = BY_NAME["yahoo_weather"](world).run("get_hourly_forecast", {"location": "Napa", "date": "2026-03-21"})
    assert max(h["precip_chance"] for h in hourly["hours"]) == 80 and len(hourly["hours"]) == 24
    places = BY_NAME["google_reviews"](world).run("search_places", {"query": "BBQ", "location": "Nashville, TN"})
    assert [(p["place_id"], p["name"]) for p in places["places"]] == [
        ("gp_martins", "Martin's Bar-B-Que Joint"),
        ("gp_peg_leg", "Peg Leg Porker"),
    ]
    google_text = [
        r["text"] for r in BY_NAME["google_reviews"](world).run("get_reviews", {"place_id": "gp_martins"})["reviews"]
    ]
    yelp_id = BY_NAME["yelp"](world).run("search_businesses", {"term": "bbq", "location": "Nashville"})["businesses"][0]
    yelp_reviews = BY_NAME["yelp"](world).run("get_reviews", {"business_id": yelp_id["business_id"]})["reviews"]
    assert [r["text"] for r in yelp_reviews] == google_text and any("brisket" in t for t in google_text)


def test_two_worlds_never_share_a_write() -> None:
    first, second = episode(SERVICES), episode(SERVICES)
    assert step(first, "weathercom_add_saved_location", {"location": "Maui"}).ok
    assert step(first, "yelp_bookmark_businesses", {"business_ids": ["peg-leg-porker-nashville"]}).ok
    assert "Maui, HI" in text(step(first, "weathercom_get_saved_locations", {}).result)
    assert step(second, "weathercom_get_saved_locations", {}).result == {"locations": ["San Francisco, CA"]}
    assert "Peg Leg Porker" not in text(step(second, "yelp_get_bookmarks", {}).result)


def test_schema_checks_reach_the_agent() -> None:
    env = episode(SERVICES)
    too_many = step(env, "weathercom_get_daily_forecast", {"location": "Napa", "days": 30})
    assert not too_many.ok and too_many.error is not None and too_many.error.type == "invalid_arguments"
    bad_topic = step(env, "google_news_get_top_headlines", {"topic": "gossip"})
    assert not bad_topic.ok
    unknown = step(env, "weathercom_get_alert_details", {"alert_id": "alert_nowhere"})
    assert not unknown.ok and unknown.error is not None and unknown.error.type == "not_found"


@pytest.mark.parametrize(
    ("service", "method", "arguments", "error_type"),
    [
        ("weathercom", "get_daily_forecast", {"location": "Atlantis"}, "not_found"),
        ("weathercom", "get_hourly_forecast", {"location": "Napa", "date": "2026-04-30"}, "invalid_request"),
        ("weathercom", "remove_saved_location", {"location": "Maui"}, "not_found"),
        ("yahoo_weather", "get_forecast_by_woeid", {"woeid": "000"}, "not_found"),
        ("yahoo_weather", "add_favorites", {"locations": []}, "invalid_request"),
        ("yahoo_weather", "add_favorites", {"locations": ["Maui", "Atlantis"]}, "not_found"),
        ("accuweather", "get_alert", {"alert_id": "alert_memphis_flood"}, "not_found"),
        ("nws", "get_forecast", {"location": "Bali"}, "invalid_request"),
        ("nws", "get_alert_bulletin", {}, "invalid_request"),
        ("nws", "get_alert_bulletin", {"area": "Seattle, WA"}, "not_found"),
        ("google_reviews", "get_reviews", {"place_id": "martins-bar-b-que-joint-nashville"}, "not_found"),
        ("google_reviews", "search_places", {"query": " ", "location": "Nashville"}, "invalid_request"),
        ("yelp", "mark_useful", {"review_id": "gr_martins_1"}, "not_found"),
        ("tripadvisor", "save_to_trip", {"trip_id": "trip_paris", "location_ids": ["ta_4367121"]}, "not_found"),
        ("google_news", "get_article", {"article_id": "reu_fed"}, "not_found"),
        ("reuters", "save_articles", {"article_ids": ["reu_fed", "reu_nope"]}, "not_found"),
    ],
)
def test_errors_reach_the_agent_as_tool_errors(
    service: str, method: str, arguments: dict[str, Any], error_type: str
) -> None:
    instance = fresh(BY_NAME[service], SERVICES)
    before = instance.state.model_dump()
    with pytest.raises(ToolExecutionError) as raised:
        instance.run(method, arguments)
    assert raised.value.error_type == error_type
    assert instance.state.model_dump() == before  # a refused batch saves nothing


def test_votes_and_saves_are_idempotent() -> None:
    world: World = pristine_world(SERVICES)
    google = BY_NAME["google_reviews"](world)
    first = google.run("mark_helpful", {"review_id": "gr_martins_1"})
    google.run("mark_helpful", {"review_id": "gr_martins_1"})
    assert first["author"] == "Dana K."
    assert google.run("list_helpful_votes", {})["votes"] == [
        {"review_id": "gr_martins_1", "author": "Dana K.", "place_name": "Martin's Bar-B-Que Joint"}
    ]
    reviews = google.run("get_reviews", {"place_id": "gp_martins"})["reviews"]
    assert next(r for r in reviews if r["review_id"] == "gr_martins_1")["helpful_count"] == 13
    news = BY_NAME["reuters"](world)
    assert news.run("save_articles", {"article_ids": ["reu_grid"]})["added"] == []
    accu = BY_NAME["accuweather"](world)
    key = accu.run("search_locations", {"query": "bali"})["locations"][0]["location_key"]
    accu.run("add_favorites", {"locations": [key, "Bali, Indonesia"]})
    assert [f["name"] for f in accu.run("get_favorites", {})["favorites"]] == ["Chicago, IL", "Bali, Indonesia"]
