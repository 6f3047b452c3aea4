"""The soak's checks (benchmarks/soak.py): no lost match, no server error, and ratings that
recompute from the stored matches."""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.append(str(ROOT))  # after installed packages


from benchmarks.soak_chaos import Garbage  # noqa: E402
from benchmarks.soak_processes import Bot  # noqa: E402
from bullring.referee.core import RefereeError  # noqa: E402
from bullring.referee.replay import verify  # noqa: E402
from bullring.server import ratings  # noqa: E402
from bullring.server.ratings import Skill  # noqa: E402
from bullring.server.store import Store  # noqa: E402

TOLERANCE = 1e-9
"""The largest rating difference (mu or sigma) the recomputation may show."""
ERROR_LINE = re.compile(r"\bERROR\b|Traceback|[Ee]xception")
Recomputed = tuple[dict[tuple[str, str], Skill], dict[tuple[str, str], int],
                   dict[tuple[str, str], Skill]]
"""The recomputed rating and match count per (bot, game), and the rating each (match, bot)
started from."""


def recompute(store: Store) -> Recomputed:
    """Every (bot, game) rating and match count, from the stored finished ladder matches'
    ranks in match order, starting from ``ratings.NEW`` and widened once per new version;
    and the rating each (match, bot) started from."""
    current = {b.name: b.version for b in store.bots()}
    started: dict[tuple[str, str], Skill] = {}
    skills: dict[tuple[str, str], Skill] = {}
    versions: dict[tuple[str, str], int] = {}
    games: dict[tuple[str, str], int] = Counter()
    finished = sorted((m for m in store.matches(status="finished") if m.ladder),
                      key=lambda m: (m.created_at, m.id))
    seats = store.seats([m.id for m in finished])
    for match in finished:
        rows = seats[match.id]
        keys = [(str(s.bot), match.game) for s in rows]
        before = []
        for key, row in zip(keys, rows, strict=True):
            version = row.bot_version or 1
            skill = skills.get(key)
            if skill is None:
                skill = ratings.NEW
            else:
                for _ in range(version - versions[key]):
                    skill = ratings.widen(skill)
            versions[key] = version
            before.append(skill)
            started[(match.id, key[0])] = skill
        ranks = [int(r) for r in json.loads(match.replay_json or "{}")["ranks"]]
        for key, skill in zip(keys, ratings.rate(before, ranks), strict=True):
            skills[key] = skill
            games[key] += 1
    for key, skill in list(skills.items()):  # versions started after the last match
        for _ in range(current[key[0]] - versions[key]):
            skill = ratings.widen(skill)
        skills[key] = skill
    return skills, dict(games), started


def first_divergence(store: Store, bot: str, started: dict[tuple[str, str], Skill]) -> str:
    """Where ``bot``'s stored rating changes first start from another rating than the
    recomputation's."""
    for change in store.rating_changes(bot=bot):
        skill = started.get((change.match_id, bot))
        if skill is None:
            return f"match {change.match_id} is rated but not finished"
        if max(abs(skill.mu - change.mu_before), abs(skill.sigma - change.sigma_before)) \
                > TOLERANCE:
            return (f"first in match {change.match_id} (version {change.version}, recorded "
                    f"{change.recorded_at}): stored before {change.mu_before:.6f} "
                    f"{change.sigma_before:.6f}, recomputed {skill.mu:.6f} {skill.sigma:.6f}")
    return "every stored change starts where the recomputation does"


def check(store: Store, bots: list[Bot], stopped_at: datetime, log: Path,
          garbage: Garbage) -> dict[str, Any]:
    """Run the three checks; return the figures and the problems found."""
    problems: list[str] = []
    matches = store.matches()
    status = Counter(m.status for m in matches)
    for m in matches:
        if m.status not in ("finished", "aborted"):
            problems.append(f"match {m.id} is left {m.status}")
        elif m.status == "aborted" and (m.finished_at is None or
                                        m.finished_at.replace(tzinfo=UTC) < stopped_at):
            problems.append(f"match {m.id} was aborted before shutdown ({m.finished_at})")
    finished = {m.id: m for m in matches if m.status == "finished"}
    for m in finished.values():
        replay = json.loads(m.replay_json or "{}")
        try:
            verify(replay)
        except (RefereeError, KeyError, ValueError) as exc:
            problems.append(f"match {m.id}'s replay does not verify: {exc}")
        if m.ladder and len(store.rating_changes(match_id=m.id)) != m.seat_count:
            problems.append(f"match {m.id} is not rated once per seat")
    seen: dict[str, tuple[list[int], str]] = {}
    for bot in bots:
        seen.update(bot.seen())
    for match_id, (ranks, termination) in seen.items():
        stored = finished.get(match_id)
        status_of = next((m.status for m in matches if m.id == match_id), "nowhere")
        if termination != "normal":
            if status_of != "aborted":
                problems.append(f"a bot saw match {match_id} end {termination}; it is "
                                f"stored {status_of}")
        elif stored is None:
            problems.append(f"a bot saw match {match_id} end; it is stored {status_of}")
        elif json.loads(stored.replay_json or "{}")["ranks"] != ranks:
            problems.append(f"match {match_id}: the bots saw ranks {ranks}, stored differ")
    registered = {b.name for b in bots}
    with_a_bot = {mid for mid, rows in store.seats(list(finished)).items()
                  if any(s.bot in registered for s in rows)}
    unseen = with_a_bot - set(seen)

    errors = [line for line in log.read_text(errors="replace").splitlines()
              if ERROR_LINE.search(line)]
    problems += [f"server log: {line}" for line in errors[:20]]
    problems += [f"garbage client got {bad}" for bad in garbage.bad[:20]]

    skills, games, started = recompute(store)
    gap = 0.0
    compared = 0
    for game in ("six_nimmt", "no_thanks"):
        board = {e.bot: e for e in store.leaderboard(game)}
        for (name, g), skill in skills.items():
            if g != game:
                continue
            entry = board.get(name)
            if entry is None:
                problems.append(f"{name} has no stored {game} rating")
                continue
            compared += 1
            off = max(abs(entry.mu - skill.mu), abs(entry.sigma - skill.sigma))
            gap = max(gap, off)
            if off > TOLERANCE:
                problems.append(f"{name} {game}: stored mu {entry.mu:.9f} sigma "
                                f"{entry.sigma:.9f}, recomputed {skill.mu:.9f} "
                                f"{skill.sigma:.9f}; {first_divergence(store, name, started)}")
            if entry.games != games[(name, g)]:
                problems.append(f"{name} {game}: {entry.games} games stored, "
                                f"{games[(name, g)]} recomputed")
        for name in set(board) - {n for n, g in skills if g == game}:
            problems.append(f"{name} has a stored {game} rating but no rated match")
    if gap > TOLERANCE:
        problems.append(f"recomputed ratings differ from the stored ones by up to {gap:.3g}")
    return {"matches": dict(status), "finished_seen_by_bots": len(set(seen) & set(finished)),
            "finished_with_a_bot_unseen": len(unseen), "server_error_lines": len(errors),
            "ratings_compared": compared, "max_rating_gap": gap, "problems": problems}


