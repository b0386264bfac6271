"""Playing sessions: a judge plays the user, two candidates answer each turn, the judge picks the better.

For each item: the character's greeting opens; the judge writes the user's first line (turn 0); then at
each turn 1..N both candidates (the model under test, "candidate", and the "opponent") answer the same
history, shown to the judge as "model_a" / "model_b" in an order drawn from (run seed, item id, turn)
(`placement`: reproducible, and the same whatever else runs beside it); the judge's JSON verdict names the
winner and the user's next line, and the conversation goes on with the winner's answer. On a tie it goes
on with the answer shown as model_a (the drawn order decides, favouring neither candidate).

Every call goes through `CachedModel.complete` (stored as it arrives, never made twice). A judge reply
that does not parse is asked again, at most `judge_attempts` times in all, each attempt with its own
seed and the judge told what was wrong; then the turn is recorded as a failure (never a win) and the
session ends there (there is no user line to go on with). A call that fails outright (a server down) is
not a judgment: the session waits, stalled, and the next run asks again. Sessions advance together, one
turn each per round, so every round's calls go to the backends as one batch.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from model_adapters import GenerationConfig, Message, Request
from model_adapters.interface import item_seed
from rolebench.cached_model import CachedModel
from rolebench.errors import ConfigError
from rolebench.sessions.data import SessionItem, render
from rolebench.sessions.store import SessionLog, session_over
from rolebench.sessions.verdict import TurnVerdict, VerdictError, parse_opening, parse_turn

SIDES = ("candidate", "opponent")
T = TypeVar("T")


@dataclass(frozen=True)
class Players:
    """The model under test, its opponent, and the judge (who also plays the user)."""

    candidate: CachedModel
    opponent: CachedModel
    judge: CachedModel


@dataclass(frozen=True)
class SessionSettings:
    turns: int = 5
    seed: int = 0
    judge_attempts: int = 3  # judge replies asked for per turn, in all, before the turn is a failure
    answer_config: GenerationConfig = field(default_factory=GenerationConfig)
    judge_config: GenerationConfig = field(default_factory=GenerationConfig)

    def __post_init__(self) -> None:
        for name, value in (("turns", self.turns), ("judge_attempts", self.judge_attempts)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(
                    f"{name} {value!r} is not allowed", where=name, fix="use a whole number >= 1"
                )

    def header(self) -> dict[str, Any]:
        """What of these settings decides the sessions (batching and concurrency do not)."""
        return {
            "turns": self.turns,
            "seed": self.seed,
            "judge_attempts": self.judge_attempts,
            "answer_decoding": self.answer_config.decoding_key(),
            "judge_decoding": self.judge_config.decoding_key(),
        }


@dataclass
class Played:
    """What one `play` call did: turns kept, failures among them, and the stalled sessions (item id ->
    the failed call's error; the next run asks again)."""

    turns: int = 0
    failures: int = 0
    stalled: dict[str, str] = field(default_factory=dict)


def placement(seed: int, item_id: str, turn: int) -> dict[str, str]:
    """Which candidate is shown as model_a and which as model_b at one turn of one session."""
    first, second = SIDES if item_seed(seed, f"{item_id}\x00{turn}") % 2 == 0 else SIDES[::-1]
    return {"model_a": first, "model_b": second}


@dataclass
class _Session:
    item: SessionItem
    turns: list[dict[str, Any]]

    def chat(self) -> list[Message]:
        """What the candidates answer: the character, the greeting, each turn, the next user line."""
        messages = [
            {"role": "system", "content": self.item.system_prompt},
            {"role": "assistant", "content": self.item.greeting},
        ]
        for turn in self.turns[1:]:
            messages += [
                {"role": "user", "content": turn["user"]},
                {"role": "assistant", "content": turn["kept"]},
            ]
        return [*messages, {"role": "user", "content": self.turns[-1]["next_user"]}]

    def judge_chat(self) -> list[Message]:
        """The judge's own conversation so far: its instructions, the opening, each round and its reply."""
        messages = [
            {"role": "system", "content": self.item.judge_prompt},
            {"role": "user", "content": render("judge_opening.j2", greeting=self.item.greeting)},
        ]
        for turn in self.turns:
            if turn["turn"] > 0:
                messages.append({"role": "user", "content": turn["shown"]})
            messages.append({"role": "assistant", "content": turn["judge"][-1]})
        return messages


def _ask(
    model: CachedModel, chats: Mapping[str, tuple[list[Message], int]], config: GenerationConfig, desc: str
) -> dict[str, dict[str, Any]]:
    """One batch of calls (item id -> messages and seed): each item's answer record."""
    keys = {
        item: model.key("session", config.decoding_key(), messages, seed if config.samples else None)
        for item, (messages, seed) in chats.items()
    }
    calls = {keys[item]: Request(id=keys[item], messages=m, seed=s) for item, (m, s) in chats.items()}
    records = model.complete(calls, config, desc=desc, progress=False).records
    return {item: records[key] for item, key in keys.items()}


def _judged(
    sessions: Sequence[_Session],
    prompts: Mapping[str, list[Message]],
    parse: Callable[[str, str], T],
    setup: tuple[Players, SessionSettings],
    played: Played,
) -> dict[str, tuple[list[str], T | None, str | None]]:
    """Each session's judge replies (every attempt), the parsed answer, and the last problem if none
    parsed; a session whose judge call failed outright is stalled instead."""
    players, settings = setup
    found: dict[str, tuple[list[str], T | None, str | None]] = {s.item.id: ([], None, None) for s in sessions}
    waiting = {s.item.id: len(s.turns) for s in sessions}  # item -> the turn being judged
    for attempt in range(settings.judge_attempts):
        chats = {}
        for item, turn in waiting.items():
            messages = list(prompts[item])
            for raw in found[item][0]:  # every failed attempt is shown, with what was wrong
                problem = found[item][2] or ""
                messages += [
                    {"role": "assistant", "content": raw},
                    {"role": "user", "content": render("judge_retry.j2", problem=problem)},
                ]
            chats[item] = (messages, item_seed(settings.seed, f"{item}/{turn}/judge/{attempt}"))
        answers = _ask(players.judge, chats, settings.judge_config, "sessions: judge")
        for item, record in answers.items():
            if record["output"] is None:
                played.stalled[item] = str(record["error"])
                del found[item]
                continue
            raws = [*found[item][0], record["output"]]
            try:
                found[item] = (raws, parse(item, record["output"]), None)
            except VerdictError as problem:
                found[item] = (raws, None, str(problem))
        waiting = {item: turn for item, turn in waiting.items() if item in found and found[item][1] is None}
        if not waiting:
            break
    return found


def _open(
    sessions: Sequence[_Session], setup: tuple[Players, SessionSettings], log: SessionLog, played: Played
) -> None:
    """Turn 0 of each session: the judge's first user line."""
    prompts = {s.item.id: _Session(s.item, []).judge_chat() for s in sessions}
    judged = _judged(sessions, prompts, lambda _, raw: parse_opening(raw), setup, played)
    for session in sessions:
        if session.item.id in judged:
            raws, line, problem = judged[session.item.id]
            _keep(session, {"turn": 0, "judge": raws, "next_user": line, "failure": problem}, log, played)


def _answers(
    sessions: Sequence[_Session], setup: tuple[Players, SessionSettings], played: Played
) -> dict[str, dict[str, str]]:
    """Both candidates' answers to each session's history (item -> side -> text)."""
    players, settings = setup
    found: dict[str, dict[str, str]] = {s.item.id: {} for s in sessions}
    for side, model in zip(SIDES, (players.candidate, players.opponent), strict=True):
        chats = {
            s.item.id: (s.chat(), item_seed(settings.seed, f"{s.item.id}/{len(s.turns)}/{side}"))
            for s in sessions
        }
        for item, record in _ask(model, chats, settings.answer_config, f"sessions: {side}").items():
            if record["output"] is None:
                played.stalled.setdefault(item, str(record["error"] or "no answer"))
            else:
                found[item][side] = record["output"]
    return {item: answers for item, answers in found.items() if item not in played.stalled}


def _round(
    sessions: Sequence[_Session], setup: tuple[Players, SessionSettings], log: SessionLog, played: Played
) -> None:
    """One turn of each session: both answers, the judge's verdict, the turn kept."""
    settings = setup[1]
    answers = _answers(sessions, setup, played)
    going = [s for s in sessions if s.item.id in answers]
    shown: dict[str, tuple[dict[str, str], str]] = {}
    for session in going:
        turn, item = len(session.turns), session.item.id
        placed = placement(settings.seed, item, turn)
        text = {label: answers[item][side] for label, side in placed.items()}
        shown[item] = (placed, render("judge_turn.j2", turn=turn, turns=settings.turns, **text))
    prompts = {s.item.id: [*s.judge_chat(), {"role": "user", "content": shown[s.item.id][1]}] for s in going}
    last = {s.item.id: len(s.turns) == settings.turns for s in going}
    judged = _judged(going, prompts, lambda item, raw: parse_turn(raw, last=last[item]), setup, played)
    for session in going:
        item = session.item.id
        if item not in judged:
            continue
        raws, verdict, problem = judged[item]
        placed, prompt = shown[item]
        record: dict[str, Any] = {"turn": len(session.turns), "user": session.turns[-1]["next_user"]}
        record |= {"placement": placed, "answers": answers[item], "shown": prompt, "judge": raws}
        record |= _outcome(verdict, problem, placed, answers[item])
        _keep(session, record, log, played)


def _outcome(
    verdict: TurnVerdict | None, problem: str | None, placed: dict[str, str], answers: dict[str, str]
) -> dict[str, Any]:
    """The verdict's fields of a turn record: the parsed verdict, the winning side, the kept answer."""
    if verdict is None:
        return {"verdict": None, "winner": None, "kept": None, "next_user": None, "failure": problem}
    winner = "tie" if verdict.winner == "tie" else placed[verdict.winner]
    kept = answers[placed["model_a"] if winner == "tie" else winner]
    return {
        "verdict": verdict.as_dict(),
        "winner": winner,
        "kept": kept,
        "next_user": verdict.next_user,
        "failure": None,
    }


def _keep(session: _Session, record: dict[str, Any], log: SessionLog, played: Played) -> None:
    record = {"item": session.item.id, **record}
    log.append(record)
    session.turns.append(record)
    played.turns += 1
    played.failures += record["failure"] is not None


def play(
    items: Sequence[SessionItem], players: Players, settings: SessionSettings, log: SessionLog
) -> Played:
    """Play (or resume) a session on each item, keeping every turn in `log` as it arrives."""
    kept = log.sessions()
    sessions = [_Session(item, kept.get(item.id, [])) for item in items]
    played = Played()
    setup = (players, settings)
    active = [s for s in sessions if not session_over(s.turns, settings.turns)]
    while active:
        _open([s for s in active if not s.turns], setup, log, played)
        active = [
            s for s in active if not session_over(s.turns, settings.turns) and s.item.id not in played.stalled
        ]
        _round(active, setup, log, played)
        active = [
            s for s in active if not session_over(s.turns, settings.turns) and s.item.id not in played.stalled
        ]
    return played
