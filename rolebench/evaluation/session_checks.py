"""A run's session tasks checked: before any call, their players (an opponent and a judge given, each able to
play its part) and the sessions files in the folder (played by the same players and settings, `check_logs`);
after calls failed, a chat template that refuses the sessions' conversation order."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any

from model_adapters import Message
from model_adapters.baseline import GREETING
from rolebench.errors import ConfigError, DataError, first_line
from rolebench.evaluation.guard import model_change
from rolebench.run.definition import RunDefinition
from rolebench.run.folder import RunFolder
from rolebench.run.session_log import judge_logs, read_log
from rolebench.sessions.settings import Players, SessionSettings, session_header
from rolebench.tasks.sessions import split_tasks

PLAYERS_FIX = "give --opponent SPEC (answers each turn beside the model) and --judge SPEC (plays the user)"
SESSION_FLOOR = f"baseline:{GREETING}"  # the character's greeting every turn: a real model must beat it


def check_players(definition: RunDefinition, judge: str | None) -> None:
    """Session tasks need an opponent and a judge: one ConfigError line naming what is missing."""
    tasks = split_tasks(definition.tasks)[1]
    missing = [flag for flag, given in (("--opponent", definition.opponent), ("--judge", judge)) if not given]
    if tasks and missing:
        raise ConfigError(
            f"the session tasks ({', '.join(tasks)}) need {' and '.join(missing)}",
            where="--tasks",
            fix=PLAYERS_FIX,
        )
    given = (("--model", definition.model), ("--opponent", definition.opponent), ("--judge", judge))
    for flag, spec in given if tasks else ():
        # of the baselines, only the session floor plays turns (the greeting, every turn), and never judges
        if str(spec).startswith("baseline:") and (spec != SESSION_FLOOR or flag == "--judge"):
            raise ConfigError(
                f"{spec} cannot {'judge' if flag == '--judge' else 'answer'} a session's turns",
                where=flag,
                fix="give a model that generates (hf:, openai:, llamacpp:, vllm:, ...)"
                + ("" if flag == "--judge" else f"; the session floor is {SESSION_FLOOR}"),
            )


# the candidates' conversation opens with the character's greeting, an assistant turn after the system
# prompt; a chat template that demands a user turn first (Llama-2 / Mistral style) refuses it
ORDER_PROBE: list[Message] = [
    {"role": "system", "content": "You play a character."},
    {"role": "assistant", "content": "Hello."},
    {"role": "user", "content": "Hi."},
]


def check_chat_order(players: Players) -> None:
    """After calls failed: one ConfigError line naming the candidate or opponent whose chat template
    refuses the sessions' conversation order (the local backends that render prompts themselves)."""
    for flag, model in (("--model", players.candidate), ("--opponent", players.opponent)):
        render = getattr(model.adapter(), "render", None) if model.loaded else None
        if not callable(render):
            continue
        try:
            render(ORDER_PROBE)
        except Exception as error:  # noqa: BLE001 - a template's raise_exception (jinja2's TemplateError)
            raise ConfigError(
                f"the chat template of {model.spec} refuses the sessions' conversation, which opens with the "
                f"character's greeting as an assistant turn after the system prompt ({first_line(error)})",
                where=flag,
                fix="give it a chat template that accepts an assistant turn first (the sessions so far "
                "are kept), or use another model in session tasks",
            ) from None


_NAMES = {
    "turns": "--turns",
    "seed": "--seed",
    "judge_attempts": "the judge's attempts (--judge-config)",
    "answer_decoding": "the answers' decoding (--temperature, --top-p, --max-new-tokens, ...)",
    "judge_decoding": "the judge's decoding (--judge-config)",
}


def header_differences(stored: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    """What differs between a sessions file's header and the one this run would write, by flag."""
    lines = []
    flags = {"candidate": "the model", "opponent": "--opponent", "judge": "--judge"}
    for role, flag in flags.items():
        old, new = (stored.get("players") or {}).get(role), now["players"][role]
        if old != new:
            change = model_change(old, new) if isinstance(old, Mapping) else "another model"
            lines.append(f"{flag}: {change}")
    old_settings = stored.get("settings") or {}
    for name, value in now["settings"].items():
        if old_settings.get(name) != value:
            shown = f" {old_settings.get(name)} there, {value} now" if name in ("turns", "seed") else ""
            lines.append(f"{_NAMES.get(name, name)}{shown}")
    if stored.get("templates") != now["templates"]:
        lines.append("the session prompt templates (another rolebench version)")
    if stored.get("data") != now["data"]:
        lines.append("the data the sessions were played on")
    return lines or [f"{', '.join(sorted(set(stored) ^ set(now)))} (another rolebench version)"]


def check_logs(
    folder: RunFolder,
    data: Mapping[str, Mapping[str, Any]],
    players: Players,
    settings: SessionSettings,
    overwrite: bool,
) -> None:
    """Refuse (before any call) the sessions files of the tasks in `data` (each task's data, as its header
    holds it) played by other players or settings, naming what differs;
    with `overwrite`, remove them (and a second judge's verdicts on them) to play them again. An opponent
    that is the model under test, decoding greedily, is refused: its answers are the model's own."""
    if (
        data
        and players.opponent.identity == players.candidate.identity
        and not settings.answer_config.samples
    ):
        raise ConfigError(
            f"the opponent {players.opponent.spec} is the model under test, decoding greedily: both answers "
            "of every turn would be the same text, and the judge's verdicts would measure only its bias",
            where="--opponent",
            fix="give another model as --opponent (or sample, --temperature > 0, to play the model's samples "
            "against each other)",
        )
    for task, task_data in data.items():
        path = folder.session_log_path(task)
        now = json.loads(json.dumps(session_header(players, settings, task_data)))
        try:
            stored, _ = read_log(path)
            lines = [] if stored is None or stored == now else header_differences(stored, now)
        except DataError as damaged:  # a file edited or damaged: --overwrite plays its sessions again
            if not overwrite:
                raise
            lines = [f"{damaged.what} at {damaged.where}"]
        if not lines:
            continue
        if not overwrite:
            raise ConfigError(
                f"{path} holds sessions played with other settings: {'; '.join(lines)}",
                where="--output",
                fix="use the same settings to resume them, another output folder, or pass --overwrite to "
                "play them again",
            )
        path.unlink()
        for rejudged in judge_logs(folder, task).values():
            rejudged.unlink()
        print(f"rolebench: removed {path} ({'; '.join(lines)}): played again", file=sys.stderr)
