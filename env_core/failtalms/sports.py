"""FAIL-TaLMs Sports tools: two fictional six-team leagues (``data/tables/teams.jsonl``, ``players.jsonl``) whose
fixtures follow the circle method and whose scores are seeded draws from the teams' strengths."""

from __future__ import annotations

import math
from datetime import date, timedelta
from typing import Annotated, Any

from pydantic import Field

from undertow.env_core.failtalms.shared import Row, fail, find, grouped, in_range, iso_date, read_table, seeded
from undertow.env_core.tools import tool

_Day = date  # tools take an argument named ``date``, which shadows the class inside them

_SEASONS = (2021, 2025)


class Team(Row):
    league: str
    team: str
    strength: float  # its goals scale with its strength over the other team's


class Player(Row):
    player: str
    team: str
    goal_share: float  # of the team's goals
    assist_share: float  # of its assists


_LEAGUES = {
    league: {row.team: row.strength for row in rows}
    for league, rows in grouped(read_table("teams", Team), lambda row: row.league).items()
}
_TEAMS = {team: league for league, teams in _LEAGUES.items() for team in teams}
_PLAYERS = {row.player: row for row in read_table("players", Player)}
Season = Annotated[int, Field(description="The season (its year).", ge=_SEASONS[0], le=_SEASONS[1])]


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
        _goals(0.25 + 1.2 * strength[home] / strength[away], seeded(season, home, away, "h")),
        _goals(1.0 * strength[away] / strength[home], seeded(season, home, away, "a")),
    )


def _season(season: int) -> int:
    return in_range(season, "season", *_SEASONS)


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


@tool(
    "Sports",
    description=f"""Final league table of a season ({_SEASONS[0]} to {_SEASONS[1]}) of the Coastal League or the Metro
    Premier (six teams each, a double round robin from March): per team the position, games played, won, drawn and
    lost, goals for and against and points (3 a win, 1 a draw).""",
)
def team_standings(
    league: Annotated[str, Field(description="The league, 'Coastal League' or 'Metro Premier'.")], season: Season
) -> dict[str, Any]:
    name, _ = find(_LEAGUES, league, "league")
    return {"league": name, "season": _season(season), "table": _table(name, season)}


@tool("Sports")
def match_result(
    home: Annotated[str, Field(description="The home team, e.g. 'Harbor City Gulls'.")],
    away: Annotated[str, Field(description="The away team.")],
    date: Annotated[str, Field(description="The match day, YYYY-MM-DD.")],
) -> dict[str, Any]:
    """Result of a league match given the home team, the away team and the match date. Returns the score and the winner
    ('draw' for a tie). Each pair of teams meets twice a season, once at each ground."""
    home_team, league = find(_TEAMS, home, "team")
    away_team, away_league = find(_TEAMS, away, "team")
    if league != away_league:
        fail(f"{home_team} ({league}) and {away_team} ({away_league}) play in different leagues and never meet")
    if home_team == away_team:
        fail("home and away are the same team")
    day = iso_date(date, "date", _Day(_SEASONS[0], 1, 1), _Day(_SEASONS[1], 12, 31))
    fixture = next(d for d, h, a in _fixtures(league, day.year) if (h, a) == (home_team, away_team))
    if fixture != day:
        fail(
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


@tool(
    "Sports",
    description=f"""A player's league statistics for a season ({_SEASONS[0]} to {_SEASONS[1]}): team, appearances,
    goals and assists.""",
)
def player_stats(
    player: Annotated[str, Field(description="The player's full name, e.g. 'Marco Deluca'.")], season: Season
) -> dict[str, Any]:
    name, stats = find(_PLAYERS, player, "player")
    _season(season)
    row = next(r for r in _table(_TEAMS[stats.team], season) if r["team"] == stats.team)
    goals = round(row["goals_for"] * stats.goal_share * (0.7 + 0.6 * seeded(name, season, "g")))
    assists = round(row["goals_for"] * stats.assist_share * (0.7 + 0.6 * seeded(name, season, "a")))
    return {
        "player": name,
        "team": stats.team,
        "season": season,
        "appearances": 10 - int(3 * seeded(name, season) ** 2),
        "goals": goals,
        "assists": assists,
    }
