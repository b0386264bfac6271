"""A second judge on the turns one judge's sessions played: the same histories and answers, its own verdicts.

Two judges who each play the user make two different conversations, so their verdicts share no turn.
To see how far judges agree (`stats.judge_agreement`), the second judge is shown the sessions as they
were played: the character's greeting, each earlier round as it went (the two replies as shown, the
winner and the user's next line, without the first judge's reasons), then the round to judge, in the
same placement. Every round of every session is one request, all asked as one batch; replies are read,
retried and kept as in `loop` (a kept turn is not asked again).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from model_adapters import Message
from rolebench.cached_model import CachedModel
from rolebench.run.session_log import SessionLog
from rolebench.sessions.data import SessionItem, render
from rolebench.sessions.loop import ask_judge
from rolebench.sessions.settings import Ask, Played, SessionSettings
from rolebench.sessions.verdict import parse_turn


def _as_played(turn: Mapping[str, Any]) -> str:
    """A kept turn as the judge's own reply in the history: the winner shown and the next user line."""
    if turn["turn"] == 0:
        return json.dumps({"next_round_user_speaks": turn["next_user"]}, ensure_ascii=False)
    slot = next((label for label, side in turn["placement"].items() if side == turn["winner"]), "tie")
    return json.dumps({"winner": slot, "next_round_user_speaks": turn["next_user"]}, ensure_ascii=False)


def _prompt(item: SessionItem, earlier: Sequence[Mapping[str, Any]], shown: str) -> list[Message]:
    messages: list[Message] = [
        {"role": "system", "content": item.judge_prompt},
        {"role": "user", "content": render("judge_opening.j2", greeting=item.greeting)},
    ]
    for turn in earlier:
        if turn["turn"] > 0:
            messages.append({"role": "user", "content": turn["shown"]})
        messages.append({"role": "assistant", "content": _as_played(turn)})
    return [*messages, {"role": "user", "content": shown}]


def rejudge(
    items: Sequence[SessionItem],
    played_log: SessionLog,
    judge: CachedModel,
    settings: SessionSettings,
    log: SessionLog,
) -> Played:
    """The second `judge`'s verdict on every round kept in `played_log`, kept in `log` as it arrives."""
    done = {(str(r["item"]), int(r["turn"])) for r in log.records}
    sessions = played_log.sessions()
    prompts: dict[Ask, list[Message]] = {}
    rounds: dict[Ask, Mapping[str, Any]] = {}
    for item in items:
        kept = sessions.get(item.id, [])
        for position, turn in enumerate(kept):
            ask = (item.id, int(turn["turn"]))
            if ask[1] > 0 and ask not in done:
                prompts[ask], rounds[ask] = _prompt(item, kept[:position], turn["shown"]), turn
    outcome = Played()
    last = settings.turns
    judged = ask_judge(
        judge, prompts, lambda ask, raw: parse_turn(raw, last=ask[1] == last), settings, outcome
    )
    for ask, (raws, verdict, problem) in judged.items():
        shown = rounds[ask]
        record: dict[str, Any] = {"item": ask[0], "turn": ask[1], "placement": shown["placement"]}
        record |= {"answers": shown["answers"], "judge": raws, "failure": problem}
        record |= {"verdict": verdict.as_dict() if verdict else None, "winner": None}
        if verdict is not None:
            record["winner"] = "tie" if verdict.winner == "tie" else shown["placement"][verdict.winner]
        log.append(record)
        outcome.turns += 1
        outcome.failures += problem is not None
    return outcome
