"""What a session is played on: RPBench-Auto's characters and scenes, and RoleBench's roles, as one record.

A `SessionItem` holds everything a session needs of its item: the system prompt each candidate gets (the
character to play), the character's opening line (the greeting), and the judge's system prompt (the user
to simulate and how to judge). The prompts are Jinja templates in `sessions/templates/`, written to the
protocol of RPBench-Auto (`SOURCES.md` beside its data; its own prompt files are not shipped with it);
`template_hashes` gives each template's SHA-256, to record with the numbers they make.

RPBench-Auto's files are read from a folder laid out as its release (`rpbench_character.jsonl`,
`rpbench_scene.jsonl`, 80 items each, Apache-2.0: its `LICENSE` travels with the data); RoleBench's roles
from a RoleBench folder's `profiles-eng/desc.json` and `profiles-zh/desc.json` (the description, which
holds the catchphrases, plays the character; the opening is a neutral greeting). A record that is not as
the release has it is one `DataError` naming `file:line` and the field.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

from rolebench.errors import DataError
from rolebench.storage.jsonl import numbered_jsonl, read_json
from rolebench.templating import text_environment

TEMPLATES_DIR = Path(__file__).parent / "templates"
TEMPLATES = (
    "character_system.j2",
    "scene_system.j2",
    "role_system.j2",
    "judge_system.j2",
    "judge_opening.j2",
    "judge_turn.j2",
    "judge_retry.j2",
)
RPBENCH_FILES = {"character": "rpbench_character.jsonl", "scene": "rpbench_scene.jsonl"}
ROLE_FILES = {"en": "profiles-eng/desc.json", "zh": "profiles-zh/desc.json"}
GREETINGS = {"en": "Hello.", "zh": "你好。"}  # the neutral opening of a RoleBench role
_SCENE_TEXTS = ("plot_recap", "objectives", "progression", "npc_status")
_FIX = "repair the file, or fetch it again from the RPBench-Auto release"

Kind = Literal["character", "scene", "role"]


@dataclass(frozen=True)
class SessionItem:
    """One character or scene to play a session on. `id`: `<kind>/<upstream id>` (`role/<lang>/<name>`
    for a RoleBench role), unique across every kind."""

    id: str
    kind: Kind
    name: str  # the character's name
    language: str  # "en" or "zh"
    system_prompt: str  # what each candidate is told (the character to play)
    greeting: str  # the character's opening line: the conversation's first assistant turn
    judge_prompt: str  # the judge's system prompt: the user to simulate and how to judge

    def digest(self) -> str:
        """SHA-256 of everything the item gives a session (a kept session is played on the same item)."""
        return hashlib.sha256(
            json.dumps(asdict(self), ensure_ascii=False, sort_keys=True).encode()
        ).hexdigest()


def render(template: str, **values: Any) -> str:
    return text_environment(TEMPLATES_DIR).get_template(template).render(**values).strip()


@cache
def template_hashes() -> dict[str, str]:
    """Each session template's SHA-256 (of its file's bytes), by file name."""
    return {name: hashlib.sha256((TEMPLATES_DIR / name).read_bytes()).hexdigest() for name in TEMPLATES}


def _item(kind: Kind, upstream_id: str, name: str, language: str, system: str, greeting: str) -> SessionItem:
    judge = render("judge_system.j2", name=name, character=system, language=language, kind=kind)
    return SessionItem(f"{kind}/{upstream_id}", kind, name, language, system, greeting, judge)


def _text(record: dict[str, Any], key: str, where: str, *, empty: bool = False) -> str:
    """A text field; with `empty`, an optional one ("" when absent, null or blank)."""
    value = record.get(key)
    if empty and value is None:
        return ""
    if not isinstance(value, str) or (not empty and not value.strip()):
        found = "missing" if value is None else f"{type(value).__name__} {str(value)[:40]!r}"
        raise DataError(
            f"`{key}` must be a {'' if empty else 'non-empty '}text, found {found}", where=where, fix=_FIX
        )
    return value


def _table(record: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    value = record.get(key)
    if not isinstance(value, dict):
        raise DataError(f"`{key}` must be a JSON object, found {type(value).__name__}", where=where, fix=_FIX)
    return value


def _greeting(record: dict[str, Any], where: str) -> str:
    """The NPC's opening: the sentences of the conversation's first turn, one a line."""
    turns = record.get("conversation")
    first = turns[0] if isinstance(turns, list) and turns else None
    sentences = first.get("sentences") if isinstance(first, dict) else None
    if (
        not isinstance(first, dict)
        or first.get("from") != "npc"
        or not isinstance(sentences, list)
        or not sentences
        or not all(isinstance(s, str) and s.strip() for s in sentences)
    ):
        raise DataError(
            '`conversation` must open with the NPC\'s turn: {"from": "npc", "sentences": [text, ...]}',
            where=where,
            fix=_FIX,
        )
    return "\n".join(s.strip() for s in sentences)


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _character(record: dict[str, Any], where: str) -> SessionItem:
    profile = _table(record, "npc_profile", where)
    name = _text(profile, "name_text", where)
    system = render(
        "character_system.j2",
        background=_text(record, "background", where),
        name=name,
        title=_text(profile, "title", where, empty=True).strip(),
        description=_text(profile, "description", where, empty=True).strip(),
        long_definition=_text(profile, "long_definition_text", where, empty=True).strip(),
        definition=_text(profile, "definition_text", where, empty=True).strip(),
    )
    return _item("character", str(record["id"]), name, "en", system, _greeting(record, where))


def _scene(record: dict[str, Any], where: str) -> SessionItem:
    profile = _table(record, "npc_profile", where)
    name = _text(profile, "name", where)
    shown = [(key, _shown(value)) for key, value in profile.items() if key != "name" and value is not None]
    texts = {key: _text(record, key, where) for key in _SCENE_TEXTS}
    system = render(
        "scene_system.j2", background=_text(record, "background", where), name=name, profile=shown, **texts
    )
    return _item("scene", str(record["id"]), name, "en", system, _greeting(record, where))


def load_rpbench(folder: str | Path, kind: Literal["character", "scene"]) -> list[SessionItem]:
    """RPBench-Auto's characters or scenes from a folder laid out as its release, in file order."""
    path = Path(folder) / RPBENCH_FILES[kind]
    if not path.is_file():
        raise DataError(
            f"RPBench-Auto's {kind} file is not there",
            where=str(path),
            fix="point at a folder holding the RPBench-Auto release's files (rpbench_character.jsonl, "
            "rpbench_scene.jsonl)",
        )
    items: list[SessionItem] = []
    seen: set[Any] = set()
    for number, record in numbered_jsonl(path):
        where = f"{path}:{number}"
        upstream = record.get("id")
        if not isinstance(upstream, int) or isinstance(upstream, bool) or upstream in seen:
            problem = "repeats an earlier id" if upstream in seen else "must be a whole number"
            raise DataError(f"`id` {upstream!r} {problem}", where=where, fix=_FIX)
        seen.add(upstream)
        items.append(_character(record, where) if kind == "character" else _scene(record, where))
    return items


def load_roles(folder: str | Path, language: str) -> list[SessionItem]:
    """RoleBench's roles in `language` ("en" or "zh") from a RoleBench folder's role descriptions."""
    if language not in ROLE_FILES:
        raise DataError(f"no RoleBench roles in language {language!r}", where="roles", fix="use en or zh")
    path = Path(folder) / ROLE_FILES[language]
    if not path.is_file():
        raise DataError(
            "RoleBench's role descriptions are not there",
            where=str(path),
            fix="point at a RoleBench folder in the Hub layout (ROLEBENCH_DATA)",
        )
    table = read_json(path)
    if not isinstance(table, dict) or not all(isinstance(v, str) and v.strip() for v in table.values()):
        raise DataError(
            "role descriptions must be a JSON object {role: description}",
            where=str(path),
            fix="repair or re-download the file",
        )
    greeting = GREETINGS[language]
    return [
        _item("role", f"{language}/{name}", name, language, system, greeting)
        for name, description in table.items()
        for system in [
            render("role_system.j2", name=name, description=description.strip(), language=language)
        ]
    ]
