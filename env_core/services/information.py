"""Information services: weather (Weather.com, Yahoo Weather, AccuWeather, National Weather Service: in
:mod:`~undertow.env_core.services.weather`), reviews (Google Reviews, Yelp, Tripadvisor) and news (Google News,
Reuters).

Counterparts seed from the same records (one forecast table and one set of alerts; the same places with every
provider's id for them and the same reviews, ``data/review_places.jsonl`` and ``data/reviews.jsonl``; the same
stories, ``data/stories.jsonl``), so a fallback from one provider to another reaches the same answer. Each names its
tools and ids its own way over the shared tools of its category (:class:`_Reviews`, :class:`_News`).
"""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any, ClassVar

from pydantic import Field

from undertow.env_core.services import weather
from undertow.env_core.services.base import Category, Service, peers
from undertow.env_core.services.helpers import add_new, invalid, normalized, not_found
from undertow.env_core.services.histories import saved_of
from undertow.env_core.services.seeds import REVIEW_PLACES, TODAY, NewsSection, ReviewPlace, Story, tables
from undertow.env_core.services.states import NewsState, Review, ReviewsState
from undertow.env_core.tools import tool

DOMAIN = "information"


# -------------------------------------------------------------------------------------------------------------------
# Reviews


PLACE_BY_KEY = {place.key: place for place in REVIEW_PLACES}  # today's: a place's ids and name never change


def _places_matching(query: str, location: str, day: date) -> list[ReviewPlace]:
    """The places of ``day`` a search finds, best rated first."""
    words = normalized(query)
    if not words:
        raise invalid("query must not be empty")
    city = normalized(location).split(",")[0].strip()
    hits = []
    for place in tables(day).review_places:
        place_city = normalized(place.city).split(",")[0]
        if city and city not in place_city and place_city not in city:
            continue
        by_name = words in normalized(place.name)
        by_tag = any(w in place.tags or w == place.category.lower() for w in [words, *words.split()])
        if by_name or by_tag:
            hits.append(place)
    return sorted(hits, key=lambda p: -p.rating)


PlaceIdArg = Annotated[str, Field(description="Place id from search_places")]
CityArg = Annotated[str, Field(description="City, e.g. 'Nashville, TN'")]
ReviewId = Annotated[str, Field(description="Review id from get_reviews")]


class _Reviews(Category, domain=DOMAIN, category="reviews"):
    """A review provider; the tools' templates are Google's, and ``words``: ``place`` and ``places`` (what it calls
    a place), ``kind`` (its category field), ``price``, ``helpful`` (what a vote counts)."""

    state: ReviewsState
    provider: ClassVar[str]  # key into a place's ids
    review_prefix: ClassVar[str]
    listing: ClassVar[str]  # the search result's list
    words: ClassVar[dict[str, str]] = {
        "place": "place",
        "places": "places",
        "kind": "category",
        "price": "price level",
        "helpful": "helpful",
    }

    @classmethod
    def initial_state(cls, day: date = TODAY) -> ReviewsState:
        shown = {"author", "rating", "date", "text"}  # the seed's fields a review shows as they are
        reviews = [
            Review(
                review_id=f"{cls.review_prefix}_{r.place}_{r.n}",
                place_key=r.place,
                helpful_count=r.helpful,
                **r.model_dump(include=shown),
            )
            for r in tables(day).reviews
        ]
        return ReviewsState(reviews=reviews, votes=[], saved=saved_of(cls.name, day))

    @classmethod
    def pid(cls, key: str) -> str:
        return PLACE_BY_KEY[key].ids[cls.provider]

    def _place(self, place_id: str) -> ReviewPlace:
        for place in tables(self.world.as_of).review_places:
            if place.ids[self.provider] == place_id.strip():
                return place
        raise not_found(self.arg_of("place_id").removesuffix("_id"), place_id)

    def _card(self, key: str) -> dict[str, Any]:
        return {self.arg_of("place_id"): self.pid(key), "name": PLACE_BY_KEY[key].name}

    def _view(self, place: ReviewPlace) -> dict[str, Any]:
        return {
            self.arg_of("place_id"): place.ids[self.provider],
            "name": place.name,
            "address": place.address,
            "category": place.category,
            "rating": place.rating,
            "review_count": place.review_count,
            "price": place.price,
        }

    @tool("read", failure_hint="An empty list may mean the location did not match; try the city name alone.")
    def search_places(
        self,
        query: Annotated[str, Field(description="What to look for: a cuisine ('BBQ') or a place name")],
        location: CityArg,
    ) -> dict[str, Any]:
        """Search {places} by cuisine or name in a city; results carry {arg:place_id}, rating and {price}."""
        found = _places_matching(query, location, self.world.as_of)
        return {self.listing: [self._view(place) for place in found]}

    @tool("read", failure_hint="Ids are per provider; use a {arg:place_id} from {tool:search_places}.")
    def get_place(self, place_id: Annotated[str, Field(description="Place id, e.g. gp_martins")]) -> dict[str, Any]:
        """Details of one {place}: address, {kind}, rating, review count, {price}."""
        return self._view(self._place(place_id))

    @tool("read", failure_hint="Check the review dates: the request may ask for recent reviews only.")
    def get_reviews(self, place_id: PlaceIdArg) -> dict[str, Any]:
        """Recent reviews of a {place}, newest first, with author, rating, date, text and {helpful} count."""
        place = self._place(place_id)
        reviews = sorted(
            (r for r in self.state.reviews if r.place_key == place.key), key=lambda r: r.date, reverse=True
        )
        return {
            self.arg_of("place_id"): place_id.strip(),
            "name": place.name,
            "reviews": [r.model_dump(exclude={"place_key"}) for r in reviews],
        }

    def _save(self, place_ids: list[str]) -> list[str]:
        if not place_ids:
            raise invalid("give at least one id")
        places = [self._place(pid) for pid in place_ids]  # every id resolves before anything is saved
        return [PLACE_BY_KEY[key].name for key in add_new(self.state.saved, [place.key for place in places])]


class _Voting(_Reviews):
    """A provider where the user votes reviews helpful and keeps a list of places; more ``words``: ``marked``
    (what a vote does), ``post`` (what a new review is), ``saved`` (what the list does)."""

    save_status: ClassVar[str]
    words: ClassVar[dict[str, str]] = {"marked": "marked", "post": "post", "saved": "saved"}

    @tool(
        "write",
        failure_hint="A success response may not persist; confirm with {tool:list_helpful_votes}, and do not {post} a "
        "new review as a substitute.",
    )
    def mark_helpful(self, review_id: ReviewId) -> dict[str, Any]:
        """Mark a review as helpful."""
        for review in self.state.reviews:
            if review.review_id == review_id.strip():
                if review.review_id not in self.state.votes:
                    self.state.votes.append(review.review_id)
                    review.helpful_count += 1
                return self._voted(review)
        raise not_found("review", review_id)

    def _voted(self, review: Review) -> dict[str, Any]:
        return {"status": "marked", "review_id": review.review_id, "author": review.author}

    @tool("readback", failure_hint="A review missing here was not {marked}, whatever {tool:mark_helpful} answered.")
    def list_helpful_votes(self) -> dict[str, Any]:
        """List the reviews the user has marked helpful."""
        by_id = {review.review_id: review for review in self.state.reviews}
        votes = [
            {"review_id": i, "author": by_id[i].author, "place_name": PLACE_BY_KEY[by_id[i].place_key].name}
            for i in self.state.votes
        ]
        return {"votes": votes}

    @tool("write", failure_hint="Some {places} of a batch may not be {saved}; confirm with {tool:get_saved_places}.")
    def save_places(
        self, place_ids: Annotated[list[str], Field(description="Place ids to save to the 'Want to go' list")]
    ) -> dict[str, Any]:
        """Save one or more places to the user's 'Want to go' list."""
        return {"status": self.save_status, "added": self._save(place_ids)}

    @tool("readback", failure_hint="A {place} missing here was not {saved}.")
    def get_saved_places(self) -> dict[str, Any]:
        """The user's 'Want to go' list."""
        return self._saved_list([self._card(key) for key in self.state.saved])

    def _saved_list(self, cards: list[dict[str, Any]]) -> dict[str, Any]:
        return {"list": "Want to go", "places": cards}


class GoogleReviews(_Voting, name="google_reviews", title="Google Reviews"):
    provider = "google"
    review_prefix = "gr"
    listing = "places"
    save_status = "saved"
    hints: ClassVar[dict[str, str]] = {
        "get_reviews": "If review details fail persistently, answer from another review provider rather than from "
        "ratings alone."
    }


class Yelp(_Voting, name="yelp", title="Yelp"):
    provider = "yelp"
    review_prefix = "yr"
    listing = "businesses"
    save_status = "bookmarked"
    arg_names: ClassVar[dict[str, str]] = {"query": "term", "place_id": "business_id", "place_ids": "business_ids"}
    renames: ClassVar[dict[str, str]] = {
        "search_places": "search_businesses",
        "get_place": "get_business",
        "mark_helpful": "mark_useful",
        "list_helpful_votes": "list_my_votes",
        "save_places": "bookmark_businesses",
        "get_saved_places": "get_bookmarks",
    }
    arg_types: ClassVar[dict[str, Any]] = {
        "term": Annotated[str, Field(description="Search term: a cuisine ('BBQ') or a business name")],
        "business_id": Annotated[str, Field(description="Business id from search_businesses")],
        "business_ids": Annotated[list[str], Field(description="Business ids to bookmark")],
    }
    words: ClassVar[dict[str, str]] = {
        "place": "business",
        "places": "businesses",
        "kind": "category",
        "price": "price",
        "helpful": "useful",
        "marked": "voted",
        "post": "write",
        "saved": "bookmarked",
    }
    docs: ClassVar[dict[str, str]] = {
        "search_businesses": "Search businesses by term in a city; results carry business_id, rating and price.",
        "mark_useful": "Vote a review 'Useful'.",
        "list_my_votes": "List the reviews the user voted 'Useful'.",
        "bookmark_businesses": "Bookmark one or more businesses.",
        "get_bookmarks": "The user's bookmarked businesses.",
    }

    def _voted(self, review: Review) -> dict[str, Any]:
        return {"status": "ok", "review_id": review.review_id, "useful": review.helpful_count}

    def _saved_list(self, cards: list[dict[str, Any]]) -> dict[str, Any]:
        return {"bookmarks": cards}


TripId = Annotated[str, Field(description="Trip id from list_trips")]


class Tripadvisor(_Reviews, name="tripadvisor", title="Tripadvisor"):
    provider = "tripadvisor"
    review_prefix = "tr"
    listing = "restaurants"
    trip_id: ClassVar[str] = "trip_nashville"  # the trip is the saved list; it starts with hot chicken
    trip_name: ClassVar[str] = "Nashville weekend"
    renames: ClassVar[dict[str, str]] = {"search_places": "search_restaurants", "get_place": "get_restaurant"}
    arg_names: ClassVar[dict[str, str]] = {"place_id": "location_id"}
    arg_types: ClassVar[dict[str, Any]] = {
        "query": Annotated[str, Field(description="Cuisine ('BBQ') or restaurant name")],
        "location_id": Annotated[str, Field(description="Location id from search_restaurants")],
    }
    words: ClassVar[dict[str, str]] = {
        "place": "restaurant",
        "places": "restaurants",
        "kind": "cuisine",
        "price": "price",
    }
    docs: ClassVar[dict[str, str]] = {"get_reviews": "Recent traveller reviews of a restaurant, newest first."}

    def _check_trip(self, trip_id: str) -> None:
        if trip_id.strip() != self.trip_id:
            raise not_found("trip", trip_id)

    @tool("read", failure_hint="Only the user's own trips are listed; save to a trip id shown here.")
    def list_trips(self) -> dict[str, Any]:
        """The user's trips (saved-item collections)."""
        return {"trips": [{"trip_id": self.trip_id, "name": self.trip_name, "items": len(self.state.saved)}]}

    @tool("write", failure_hint="Some items of a batch may not be saved; confirm with get_trip.")
    def save_to_trip(
        self,
        trip_id: TripId,
        location_ids: Annotated[list[str], Field(description="Location ids to save to the trip")],
    ) -> dict[str, Any]:
        """Save one or more restaurants to one of the user's trips."""
        self._check_trip(trip_id)
        return {"status": "saved", "trip_id": self.trip_id, "added": self._save(location_ids)}

    @tool("readback", failure_hint="An item missing here was not saved to the trip.")
    def get_trip(self, trip_id: TripId) -> dict[str, Any]:
        """One trip with its saved items."""
        self._check_trip(trip_id)
        return {"trip_id": self.trip_id, "name": self.trip_name, "items": [self._card(key) for key in self.state.saved]}


# -------------------------------------------------------------------------------------------------------------------
# News


def _newest_first(stories: list[Story]) -> list[Story]:
    return sorted(stories, key=lambda s: s.published_at, reverse=True)


class _News(Category, domain=DOMAIN, category="news"):
    """A news provider; the tools' templates are Google News', and ``words``: ``story`` and ``A_story`` (what it
    calls a story) and ``stories``, ``listing`` (where else ids are found), ``saved`` (the user's list)."""

    state: NewsState
    article_prefix: ClassVar[str]

    @classmethod
    def initial_state(cls, day: date = TODAY) -> NewsState:
        return NewsState(saved=saved_of(cls.name, day))

    @classmethod
    def aid(cls, key: str) -> str:
        return f"{cls.article_prefix}{key}"

    def _stories(self) -> tuple[Story, ...]:
        """The stories of the world's day."""
        return tables(self.world.as_of).stories

    def _story(self, article_id: str) -> Story:
        for story in self._stories():
            if self.aid(story.key) == article_id.strip():
                return story
        raise not_found("article", article_id)

    def _brief(self, story: Story) -> dict[str, Any]:
        return {
            "article_id": self.aid(story.key),
            "title": story.title,
            "section": story.section,
            "published_at": story.published_at,
            "summary": story.summary,
        }

    @tool("read", failure_hint="An empty result may mean the words were too specific; retry with fewer words.")
    def search_news(
        self, query: Annotated[str, Field(description="Words that must all appear in the story")]
    ) -> dict[str, Any]:
        """Search recent news stories; every word must match. Newest first, with summary and source."""
        terms = normalized(query).split()
        if not terms:
            raise invalid("query must not be empty")
        hits = [s for s in self._stories() if all(t in normalized(f"{s.title} {s.summary} {s.body}") for t in terms)]
        return {self.arg_of("query"): query, "articles": [self._brief(s) for s in _newest_first(hits)]}

    @tool("read", failure_hint="Headlines are per section; check published_at to be sure a story is current.")
    def get_top_headlines(self, topic: Annotated[NewsSection, Field(description="News section")]) -> dict[str, Any]:
        """Top stories in one section, newest first."""
        stories = _newest_first([s for s in self._stories() if s.section == topic])
        return {self.arg_of("topic"): topic, "articles": [self._brief(s) for s in stories]}

    @tool("readback", failure_hint="Ids are per provider; use an article_id from {tool:search_news} or {listing}.")
    def get_article(self, article_id: Annotated[str, Field(description="Article id")]) -> dict[str, Any]:
        """One {story} in full: title, author, summary, body."""
        story = self._story(article_id)
        return {**self._brief(story), "author": story.author, "body": story.body}

    @tool("write", failure_hint="Part of a batch may not be saved; confirm with get_saved_articles.")
    def save_articles(
        self, article_ids: Annotated[list[str], Field(description="Article ids to save for later")]
    ) -> dict[str, Any]:
        """Save one or more {stories} to the user's {saved}."""
        if not article_ids:
            raise invalid("give at least one article id")
        stories = [self._story(aid) for aid in article_ids]  # every id resolves before anything is saved
        return {"status": "saved", "added": [self.aid(k) for k in add_new(self.state.saved, [s.key for s in stories])]}

    @tool("readback", failure_hint="{A_story} missing here was not saved, whatever save_articles answered.")
    def get_saved_articles(self) -> dict[str, Any]:
        """The user's saved stories."""
        titles = {story.key: story.title for story in self._stories()}
        return {"articles": [{"article_id": self.aid(k), "title": titles[k]} for k in self.state.saved]}


class GoogleNews(_News, name="google_news", title="Google News"):
    article_prefix = "gn_"
    words: ClassVar[dict[str, str]] = {
        "story": "story",
        "stories": "stories",
        "A_story": "A story",
        "listing": "the headlines",
        "saved": "'Saved stories'",
    }

    def _brief(self, story: Story) -> dict[str, Any]:
        # an aggregator names the outlet that published each story
        return {**super()._brief(story), "source": story.outlet}


class Reuters(_News, name="reuters", title="Reuters"):
    article_prefix = "reu_"
    renames: ClassVar[dict[str, str]] = {"search_news": "search_articles", "get_top_headlines": "list_section"}
    arg_names: ClassVar[dict[str, str]] = {"query": "keywords", "topic": "section"}
    arg_types: ClassVar[dict[str, Any]] = {
        "keywords": Annotated[str, Field(description="Words that must all appear in the article")],
        "section": Annotated[NewsSection, Field(description="Section")],
    }
    words: ClassVar[dict[str, str]] = {
        "story": "article",
        "stories": "articles",
        "A_story": "An article",
        "listing": "a section",
        "saved": "reading list",
    }
    docs: ClassVar[dict[str, str]] = {
        "search_articles": "Search Reuters coverage; every word must match. Newest first, with summary.",
        "list_section": "Latest articles in one section, newest first.",
        "get_saved_articles": "The user's reading list.",
    }
    hints: ClassVar[dict[str, str]] = {"list_section": "Check published_at to be sure a story is current."}


SERVICES: list[type[Service]] = [
    *weather.SERVICES,
    *peers(GoogleReviews, Yelp, Tripadvisor),
    *peers(GoogleNews, Reuters),
]
