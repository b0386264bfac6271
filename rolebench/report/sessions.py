"""The report's session tasks: each task's numbers (from results.json) and every session as a transcript
(from its log, `DIR/sessions/<task>.jsonl`).

A transcript shows the character's greeting, then each turn: the user's line, both answers (which was
the model under test, which the opponent, and where the judge saw each: model_a or model_b), the winner
and the judge's reason. A turn whose judge reply never parsed shows the replies the judge gave; a session
that stopped before its last turn without a failure is waiting on a call that failed (the next run asks
it again). Every text is shown as text: HTML is escaped by the template, and a character that is
invisible or moves the text around it (a bidi override, a zero-width space, a control) is written as its
escape, so an answer cannot hide or reorder what the page says.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from rolebench.leaderboard.rows import shown_name
from rolebench.results.schema import RunResults, SessionResult
from rolebench.run.folder import RunFolder
from rolebench.run.session_log import logged_tasks, read_log, session_over
from rolebench.sessions.data import GREETINGS, load_rpbench
from rolebench.tasks.sessions import RPBENCH_DIR, SESSION_TASKS

_HIDDEN = ("Cc", "Cf", "Cs", "Zl", "Zp")  # controls, format (bidi, zero-width), surrogates, line breaks
_KEPT = "\n\t"
OUTCOME_TEXT = {"candidate": "win", "opponent": "loss", "tie": "tie"}
SAID = {"win": "the model under test won", "loss": "the opponent won", "tie": "a tie"}


def shown_text(text: object) -> str:
    """A text as it reads: newlines and tabs kept, every other invisible or reordering character written
    as its escape (`\\u202e`); not cut (a transcript shows the whole answer)."""
    if not isinstance(text, str):
        return "" if text is None else str(text)
    return "".join(
        (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")
        if unicodedata.category(c) in _HIDDEN and c not in _KEPT
        else c
        for c in text
    )


def _percent(value: Any) -> str:
    return "–" if not isinstance(value, (int, float)) else f"{100 * value:.1f}"


def _rate(value: Any, interval: Any = None) -> str:
    if not isinstance(value, (int, float)):
        return "–"
    shown = f"{100 * value:.1f}"
    if isinstance(interval, Sequence) and len(interval) == 2:
        shown += f" [{100 * interval[0]:.1f}, {100 * interval[1]:.1f}]"
    return shown


@cache
def _rpbench_greetings(kind: str) -> dict[str, tuple[str, str]]:
    """RPBench-Auto's items shipped in the package: id -> (digest, greeting)."""
    return {item.id: (item.digest(), item.greeting) for item in load_rpbench(RPBENCH_DIR, kind)}  # type: ignore[arg-type]


def greeting_of(task: str, item: str, digest: str | None) -> str | None:
    """The greeting a session opened with, when it is known without the run's data: RPBench-Auto's (the
    item as shipped, if the session was played on it: the digests agree) or a RoleBench role's neutral
    opening; None otherwise."""
    spec = SESSION_TASKS.get(task)
    if spec is None:
        return None
    if spec.kind == "role":
        return GREETINGS.get(spec.language)
    found = _rpbench_greetings(spec.kind).get(item)
    return found[1] if found is not None and found[0] == digest else None


def _answer(turn: Mapping[str, Any], side: str) -> dict[str, Any]:
    placement = turn.get("placement") or {}
    slot = next((label for label, who in placement.items() if who == side), "?")
    text = (turn.get("answers") or {}).get(side)
    return {"side": side, "slot": slot, "text": shown_text(text), "won": turn.get("winner") == side}


def turn_view(turn: Mapping[str, Any]) -> dict[str, Any]:
    """One judged turn as the transcript shows it."""
    verdict = turn.get("verdict") or {}
    failure = turn.get("failure")
    winner = turn.get("winner")
    return {
        "turn": int(turn["turn"]),
        "user": shown_text(turn.get("user")),
        "answers": [_answer(turn, "candidate"), _answer(turn, "opponent")],
        "winner": "failure" if failure is not None else OUTCOME_TEXT.get(str(winner), "–"),
        "said": SAID.get(OUTCOME_TEXT.get(str(winner), ""), "–"),
        "reason": shown_text(verdict.get("decision_reason")),
        "failure": shown_text(failure) if failure is not None else None,
        "judge_raw": [shown_text(raw) for raw in turn.get("judge") or []] if failure is not None else [],
    }


def session_view(task: str, item: str, turns: Sequence[Mapping[str, Any]], last_turn: int) -> dict[str, Any]:
    """One session: its opening, its turns, and how it ended (complete, failed or stalled)."""
    opening = turns[0] if turns and int(turns[0]["turn"]) == 0 else None
    judged = [turn_view(t) for t in turns if int(t["turn"]) > 0]
    failed = any(t["failure"] is not None for t in judged) or (
        opening is not None and opening.get("failure") is not None
    )
    over = session_over([dict(t) for t in turns], last_turn) if last_turn else failed
    state = "failed" if failed else "complete" if over else "stalled"
    tally = [t["winner"] for t in judged]
    return {
        "item": shown_name(item),
        "greeting": shown_text(greeting_of(task, item, opening.get("item_sha") if opening else None)),
        "opening_failure": shown_text(opening.get("failure")) if opening and opening.get("failure") else None,
        "opening_raw": [shown_text(r) for r in opening.get("judge") or []]
        if opening and opening.get("failure")
        else [],
        "turns": judged,
        "state": state,
        "tally": " ".join({"win": "W", "loss": "L", "tie": "T", "failure": "F"}.get(w, "?") for w in tally),
    }


def _players(header: Mapping[str, Any]) -> dict[str, str]:
    specs = header.get("specs") or {}
    players = header.get("players") or {}
    found = {}
    for role in ("candidate", "opponent", "judge"):
        spec = specs.get(role) or (players.get(role) or {}).get("spec") or "–"
        found[role] = shown_name(str(spec))
    return found


def _judges(result: SessionResult | None) -> list[dict[str, Any]]:
    """A second judge's numbers on the same turns, and its agreement with the judge that played them."""
    rows = []
    for name, fields in (result.judges if result is not None else {}).items():
        nested = fields.get("agreement")  # {"n", "agreement", "kappa", ...}, or those fields beside the rest
        agreed = nested if isinstance(nested, Mapping) else fields
        kappa = agreed.get("kappa")
        rows.append(
            {
                "name": shown_name(name),
                "win_rate": _rate(fields.get("win_rate"), fields.get("win_rate_ci")),
                "n": agreed.get("n") or 0,
                "agreement": _percent(agreed.get("agreement")),
                "kappa": "–" if not isinstance(kappa, (int, float)) else f"{kappa:.2f}",
            }
        )
    return rows


def numbers(result: SessionResult | None) -> dict[str, Any] | None:
    """A task's numbers as the page shows them (None: results.json holds none for it yet)."""
    if result is None:
        return None
    position = result.position or {}
    as_a = position.get("candidate_as_model_a") or {}
    as_b = position.get("candidate_as_model_b") or {}
    return {
        "win_rate": _rate(result.win_rate, result.win_rate_ci),
        "ties_half": _rate(result.win_rate_ties_half),
        "wtl": f"{result.wins}/{result.ties}/{result.losses}",
        "failures": result.failures,
        "sessions": f"{result.n_complete} of {result.n_items}",
        "stalled": result.n_stalled,
        "turns": result.n_turns,
        "first_won": _percent(position.get("model_a_won")),
        "as_a": f"{_rate(as_a.get('win_rate'))} (n {as_a.get('n', 0)})",
        "as_b": f"{_rate(as_b.get('win_rate'))} (n {as_b.get('n', 0)})",
        "flags": list(result.flags),
    }


def session_tasks(run_dir: Path, results: RunResults) -> list[dict[str, Any]]:
    """Every session task the run holds (in results.json or as a log): its players, its numbers and its
    transcripts, in the order results.json lists them, then any log it does not list yet."""
    folder = RunFolder(run_dir)
    logs = logged_tasks(folder)
    names = list(dict.fromkeys([*results.sessions, *logs]))
    shown = []
    for task in names:
        header, records = read_log(folder.session_log_path(task))
        header = {**(header or {}), **((results.config.sessions or {}).get(task) or {})}
        last_turn = int((header.get("settings") or {}).get("turns") or 0)
        sessions: dict[str, list[dict[str, Any]]] = {}
        for record in records:
            sessions.setdefault(str(record["item"]), []).append(record)
        spec = SESSION_TASKS.get(task)
        shown.append(
            {
                "name": shown_name(task),
                "label": spec.label if spec else "",
                "players": _players(header),
                "turns": last_turn or "–",
                "numbers": numbers(results.sessions.get(task)),
                "judges": _judges(results.sessions.get(task)),
                "sessions": [
                    session_view(task, item, sorted(turns, key=lambda r: int(r["turn"])), last_turn)
                    for item, turns in sessions.items()
                ],
            }
        )
    return shown
