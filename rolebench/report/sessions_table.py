"""The session tasks as the end of a run prints them: one row per task (the win rate against the opponent
with its interval, wins/ties/losses, failures, the position bias), and who played and judged."""

from __future__ import annotations

from typing import Any

from tabulate import tabulate

from rolebench.results.schema import RunResults, SessionResult


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def _interval(ci: list[float] | None) -> str:
    return "-" if not ci else f"[{ci[0]:.4f}, {ci[1]:.4f}]"


def _placed(result: SessionResult) -> str:
    """The candidate's win rate shown as model_a / as model_b, and the share won by model_a."""
    position = result.position or {}
    sides = [position.get(f"candidate_as_{label}") or {} for label in ("model_a", "model_b")]
    parts = [f"{_rate(side.get('win_rate'))} (n {side.get('n', 0)})" for side in sides]
    return f"{' / '.join(parts)}; model_a won {_rate(position.get('model_a_won'))}"


def session_rows(results: RunResults) -> list[list[Any]]:
    return [
        [
            task,
            f"{result.n_complete}/{result.n_items}",
            result.n_turns,
            _rate(result.win_rate),
            _interval(result.win_rate_ci),
            f"{result.wins}/{result.ties}/{result.losses}",
            result.failures,
            _placed(result),
            ", ".join(result.flags),
        ]
        for task, result in results.sessions.items()
    ]


def session_notes(results: RunResults) -> list[str]:
    """Who played each task's sessions (opponent, judge, turns), and a second judge's agreement."""
    notes = []
    for task, result in results.sessions.items():
        header = (results.config.sessions or {}).get(task) or {}
        specs, settings = header.get("specs") or {}, header.get("settings") or {}
        notes.append(
            f"{task}: against {specs.get('opponent') or '?'}, judged by {specs.get('judge') or '?'} (who "
            f"plays the user), {settings.get('turns', '?')} turns per session; a tie counted as half a win: "
            f"{_rate(result.win_rate_ties_half)}"
        )
        if result.n_stalled:
            notes.append(
                f"{task}: {result.n_stalled} of {result.n_items} sessions are not over (a call failed or "
                "the run was cut short): the same command asks again"
            )
        for name, judged in result.judges.items():
            agreement = judged.get("agreement") or {}
            share, kappa = agreement.get("agreement"), agreement.get("kappa")
            notes.append(
                f"{task}: second judge {name}: win rate {_rate(judged.get('win_rate'))}; agrees on "
                f"{'-' if share is None else f'{share:.0%}'} of {agreement.get('n', 0)} turns"
                + ("" if kappa is None else f" (kappa {kappa:.2f})")
            )
    return notes


def sessions_table(results: RunResults) -> str:
    """The sessions' table and its notes ("" when the run has no session task)."""
    if not results.sessions:
        return ""
    headers = [
        "session task",
        "done",
        "turns",
        "win rate",
        "95% CI",
        "W/T/L",
        "failed",
        "as model_a / model_b",
    ]
    table = tabulate(
        session_rows(results), headers=[*headers, "flags"], tablefmt="github", disable_numparse=True
    )
    return "\n".join([table, LEGEND, "", *session_notes(results)])


LEGEND = (
    "done: sessions over (played to their last turn, or ended by a judge reply that never parsed) of those "
    "taken; turns: turns played; win rate: the model under test's wins over the turns decided either way "
    "(ties and failed turns apart), its 95% interval a bootstrap over sessions; W/T/L: wins, ties, losses; "
    "failed: judge replies that never parsed (never a win); as model_a / model_b: the win rate when shown "
    "first / second (n: decided turns), and the share of decided turns won by the answer shown first "
    "(position bias: 0.5 is none)"
)
