"""Playing sessions: a judge plays the user, two candidates answer each turn, the judge picks the better.

For each item: the character's greeting opens; the judge writes the user's first line (turn 0); then at
each turn 1..N both candidates (the model under test, "candidate", and the "opponent") answer the same
history, shown to the judge as "model_a" / "model_b" in an order drawn from (run seed, item id, turn)
(`settings.placement`: reproducible, and the same whatever else runs beside it); the judge's JSON
verdict names the winner and the user's next line, and the conversation goes on with the winner's
answer. On a tie it goes on with the answer shown as model_a (the drawn order decides, favouring neither
candidate). In a round, the candidate's and the opponent's batches are asked at the same time when one of
them answers from a server (`waits_on_server`), each model bounded by its own `concurrency`.

Every call goes through `CachedModel.complete` (stored as it arrives, never made twice). A judge reply
that does not parse is asked again, at most `judge_attempts` times in all, each attempt with its own
seed and the judge told what was wrong; then the turn is recorded as a failure (never a win) and the
session ends there (there is no user line to go on with). A call that fails outright (a server down) is
not a judgment: the session waits, stalled, and the next run asks again. Sessions advance together, one
turn each per round, so every round's calls go to the backends as one batch.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from tqdm.auto import tqdm

from model_adapters import GenerationConfig, Message, Request
from model_adapters.interface import item_seed
from rolebench.cached_model import CachedModel
from rolebench.errors import ConfigError
from rolebench.run.session_log import SessionLog, session_over
from rolebench.sessions.data import SessionItem, render
from rolebench.sessions.settings import SIDES, Ask, Played, Players, SessionSettings, placement
from rolebench.sessions.verdict import TurnVerdict, VerdictError, parse_opening, parse_turn

K = TypeVar("K")
T = TypeVar("T")


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
    model: CachedModel, chats: Mapping[K, tuple[list[Message], int]], config: GenerationConfig, desc: str
) -> dict[K, dict[str, Any]]:
    """One batch of calls (each ask -> its messages and seed): each ask's answer record."""
    keys = {
        ask: model.key("session", config.decoding_key(), messages, seed if config.samples else None)
        for ask, (messages, seed) in chats.items()
    }
    calls = {keys[ask]: Request(id=keys[ask], messages=m, seed=s) for ask, (m, s) in chats.items()}
    records = model.complete(calls, config, desc=desc, progress=False).records
    return {ask: records[key] for ask, key in keys.items()}


def ask_judge(
    judge: CachedModel,
    prompts: Mapping[Ask, list[Message]],
    parse: Callable[[Ask, str], T],
    settings: SessionSettings,
    played: Played,
) -> dict[Ask, tuple[list[str], T | None, str | None]]:
    """The judge's replies to each `(item id, turn)`'s messages: every attempt's text, the parsed answer,
    and the last attempt's problem when none parsed (see the module docstring). An ask whose call failed
    outright is left out, its session stalled."""
    found: dict[Ask, tuple[list[str], T | None, str | None]] = {ask: ([], None, None) for ask in prompts}
    problems: dict[Ask, list[str]] = {ask: [] for ask in prompts}
    waiting = list(prompts)
    for attempt in range(settings.judge_attempts):
        chats = {}
        for ask in waiting:
            messages = list(prompts[ask])
            # each failed attempt is shown, with why it could not be read
            for raw, problem in zip(found[ask][0], problems[ask], strict=True):
                messages += [
                    {"role": "assistant", "content": raw},
                    {"role": "user", "content": render("judge_retry.j2", problem=problem)},
                ]
            chats[ask] = (messages, item_seed(settings.seed, f"{ask[0]}/{ask[1]}/judge/{attempt}"))
        for ask, record in _ask(judge, chats, settings.judge_config, "sessions: judge").items():
            if record["output"] is None:
                played.stalled[ask[0]] = str(record["error"])
                del found[ask]
                continue
            raws = [*found[ask][0], record["output"]]
            try:
                found[ask] = (raws, parse(ask, record["output"]), None)
            except VerdictError as problem:
                found[ask] = (raws, None, str(problem))
                problems[ask].append(str(problem))
        waiting = [ask for ask in waiting if ask in found and found[ask][1] is None]
        if not waiting:
            break
    return found


def _open(
    sessions: Sequence[_Session], setup: tuple[Players, SessionSettings], log: SessionLog, played: Played
) -> None:
    """Turn 0 of each session: the judge's first user line."""
    players, settings = setup
    prompts = {(s.item.id, 0): _Session(s.item, []).judge_chat() for s in sessions}
    judged = ask_judge(players.judge, prompts, lambda _, raw: parse_opening(raw), settings, played)
    for session in sessions:
        if (session.item.id, 0) in judged:
            raws, line, problem = judged[(session.item.id, 0)]
            record = {"turn": 0, "item_sha": session.item.digest(), "judge": raws, "next_user": line}
            _keep(session, record | {"failure": problem}, log, played)


def waits_on_server(model: CachedModel) -> bool:
    """Whether the model answers from a server (its identity names the endpoint: an API backend), so
    that its calls spend their time waiting, not computing in this process."""
    return "endpoint" in model.identity


def _answers(
    sessions: Sequence[_Session], setup: tuple[Players, SessionSettings], played: Played, overlap: bool
) -> dict[str, dict[str, str]]:
    """Both candidates' answers to each session's history (item -> side -> text). With `overlap`, and one
    side at least answering from a server, the two sides' batches are asked at the same time (each model's
    requests in flight bounded by its `concurrency`); two models computing in this process take turns."""
    players, settings = setup
    sides = tuple(zip(SIDES, (players.candidate, players.opponent), strict=True))

    def ask(side: str, model: CachedModel) -> dict[str, dict[str, Any]]:
        chats = {
            s.item.id: (s.chat(), item_seed(settings.seed, f"{s.item.id}/{len(s.turns)}/{side}"))
            for s in sessions
        }
        return _ask(model, chats, settings.answer_config, f"sessions: {side}")

    if overlap and any(waits_on_server(model) for _, model in sides):
        with ThreadPoolExecutor(max_workers=len(sides), thread_name_prefix="sessions") as pool:
            asked = list(pool.map(lambda pair: ask(*pair), sides))
    else:
        asked = [ask(side, model) for side, model in sides]
    found: dict[str, dict[str, str]] = {s.item.id: {} for s in sessions}
    for (side, _), records in zip(sides, asked, strict=True):  # in SIDES order, whichever came first
        for item, record in records.items():
            if record["output"] is None:
                played.stalled.setdefault(item, str(record["error"] or "no answer"))
            else:
                found[item][side] = record["output"]
    return {item: answers for item, answers in found.items() if item not in played.stalled}


def _round(
    sessions: Sequence[_Session],
    setup: tuple[Players, SessionSettings],
    log: SessionLog,
    played: Played,
    overlap: bool,
) -> None:
    """One turn of each session: both answers, the judge's verdict, the turn kept."""
    settings = setup[1]
    answers = _answers(sessions, setup, played, overlap)
    going = [s for s in sessions if s.item.id in answers]
    shown: dict[str, tuple[dict[str, str], str]] = {}
    for session in going:
        turn, item = len(session.turns), session.item.id
        placed = placement(settings.seed, item, turn)
        text = {label: answers[item][side] for label, side in placed.items()}
        shown[item] = (placed, render("judge_turn.j2", turn=turn, turns=settings.turns, **text))
    prompts = {
        (s.item.id, len(s.turns)): [*s.judge_chat(), {"role": "user", "content": shown[s.item.id][1]}]
        for s in going
    }
    judged = ask_judge(
        setup[0].judge,
        prompts,
        lambda ask, raw: parse_turn(raw, last=ask[1] == settings.turns),
        settings,
        played,
    )
    for session in going:
        item = session.item.id
        if (item, len(session.turns)) not in judged:
            continue
        raws, verdict, problem = judged[(item, len(session.turns))]
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
    items: Sequence[SessionItem],
    players: Players,
    settings: SessionSettings,
    log: SessionLog,
    *,
    progress: bool = False,
    overlap: bool = True,
) -> Played:
    """Play (or resume) a session on each item, keeping every turn in `log` as it arrives; `progress`:
    a bar of the turns played; `overlap`: ask the candidate and the opponent at the same time where one
    answers from a server (False: one side after the other; the sessions are the same either way)."""
    kept = log.sessions()
    sessions = [_Session(item, kept.get(item.id, [])) for item in items]
    for session in sessions:
        if session.turns and session.turns[0].get("item_sha") != session.item.digest():
            raise ConfigError(
                f"the session on {session.item.id} was played on another version of the item (its data "
                "or prompt templates changed)",
                where=str(log.path),
                fix="use the data and rolebench the sessions were played with, or another run folder",
            )
    played = Played()
    setup = (players, settings)
    active = [s for s in sessions if not session_over(s.turns, settings.turns)]
    to_play = sum(settings.turns - (int(s.turns[-1]["turn"]) if s.turns else 0) for s in active)
    with tqdm(total=to_play, desc="sessions", unit="turn", disable=not progress) as bar:
        while active:
            _open([s for s in active if not s.turns], setup, log, played)
            active = [s for s in active if not session_over(s.turns, settings.turns)]
            active = [s for s in active if s.item.id not in played.stalled]
            before = played.turns
            _round(active, setup, log, played, overlap)
            bar.update(played.turns - before)
            active = [s for s in active if not session_over(s.turns, settings.turns)]
            active = [s for s in active if s.item.id not in played.stalled]
    return played
