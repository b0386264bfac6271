"""The players of a run's session tasks checked: before any call (an opponent and a judge given, each able to
play its part), and after calls failed (a chat template that refuses the sessions' conversation order)."""

from __future__ import annotations

from model_adapters import Message
from model_adapters.baseline import GREETING
from rolebench.errors import ConfigError, first_line
from rolebench.run.definition import RunDefinition
from rolebench.sessions.settings import Players
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
