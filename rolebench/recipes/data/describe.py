"""Role profile construction for new roles: a description in two steps, then the catchphrases.

Step 1 asks for a third-person description ("The role's description is: ..."), step 2 (a follow-up
turn in the same conversation) turns it into the second person ("Your description is: ...");
a separate request asks for the catchphrases ("a" / "b", or "no"). The entry is written the way the
released `desc.json` files are: the description without its "Your description is:" lead, then
English ` Your catchphrase is: "a"` / ` Your catchphrases are: "a" / "b"`, or Chinese
`常用口头禅是：“a”、“b”`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rolebench.errors import ConfigError, DataError
from rolebench.prompts.roleplay import render
from rolebench.recipes.data.dialogues import detect_language
from rolebench.recipes.data.generation import CachedGenerator, GeneratorSettings, Job
from rolebench.storage.files import write_json_atomic

STAGE = "describe-role"
TEMPLATES = ("role_description.j2", "role_description_second_person.j2", "catchphrases.j2")
_LEAD = re.compile(
    r"^\s*[\"“'「]?\s*(?:your description is|the role's description is|你的描述是|你的特征描述是|"
    r"该角色的描述是|角色的描述是)\s*[:：]?\s*",
    re.IGNORECASE,
)
_NONE = re.compile(r"^[\"“'`「\s]*(?:no|none|没有|无)[\"”'`」\s.。!！]*$", re.IGNORECASE)
_QUOTES = "\"“”'`「」‘’"


@dataclass(frozen=True)
class DescribeOptions:
    roles: tuple[str, ...]
    generator: GeneratorSettings
    out: Path | None = None  # a desc.json to add the entries to
    language: str | None = None  # None: detected from the role name
    work: str | None = None  # the film, series or book, to disambiguate the role


def clean_description(text: str) -> str:
    """The second-person description without its lead phrase or wrapping quotes."""
    text = _LEAD.sub("", text.strip(), count=1).strip()
    if len(text) > 1 and text[0] in _QUOTES and text[-1] in _QUOTES:
        text = text[1:-1].strip()
    return text


def parse_catchphrases(text: str) -> list[str]:
    """Catchphrases from `"a" / "b"`; none for "no"."""
    text = text.strip()
    if not text or _NONE.match(text):
        return []
    phrases = []
    for part in re.split(r"\s*[/／]\s*", text):
        phrase = part.strip().strip(_QUOTES).strip().rstrip(".。").strip(_QUOTES).strip()
        if phrase and not _NONE.match(phrase) and phrase not in phrases:
            phrases.append(phrase)
    return phrases


def entry_text(description: str, catchphrases: Sequence[str], language: str) -> str:
    """One desc.json value, in the released format."""
    if language == "zh":
        return description + (
            "常用口头禅是：" + "、".join(f"“{p}”" for p in catchphrases) if catchphrases else ""
        )
    if not catchphrases:
        return description
    if description and description[-1] not in ".!?":
        description += "."
    label = "Your catchphrase is" if len(catchphrases) == 1 else "Your catchphrases are"
    return f"{description} {label}: " + " / ".join(f'"{p}"' for p in catchphrases)


def user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def describe_roles(options: DescribeOptions) -> dict[str, str]:
    """The desc.json entry of every role (written into `options.out` when given)."""
    if not options.roles:
        raise ConfigError("no role given", where="--role")
    languages = {role: options.language or detect_language(role) for role in options.roles}
    with CachedGenerator(options.generator, STAGE, TEMPLATES) as generator:
        first = {
            role: [
                user(render("role_description.j2", role=role, work=options.work, language=languages[role]))
            ]
            for role in options.roles
        }
        jobs = [Job(f"describe/{role}", first[role]) for role in options.roles]
        jobs += [
            Job(f"catchphrases/{role}", [user(render("catchphrases.j2", role=role, work=options.work))])
            for role in options.roles
        ]
        texts = generator.run(jobs, desc="describe-role")
        second = []
        for role in options.roles:
            step1 = texts.get(f"describe/{role}")
            if not step1:
                raise DataError(f"the generator gave no description for {role!r}", fix="run again to retry")
            turn = [
                *first[role],
                {"role": "assistant", "content": step1},
                user(render("role_description_second_person.j2")),
            ]
            second.append(Job(f"second/{role}", turn))
        texts.update(generator.run(second, desc="describe-role (second person)"))
    entries = {}
    for role in options.roles:
        description = clean_description(texts.get(f"second/{role}") or "")
        if not description:
            raise DataError(f"the generator gave no second-person description for {role!r}", fix="run again")
        phrases = parse_catchphrases(texts.get(f"catchphrases/{role}") or "no")
        entries[role] = entry_text(description, phrases, languages[role])
    if options.out is not None:
        write_entries(options.out, entries)
    return entries


def write_entries(path: Path, entries: dict[str, str]) -> None:
    """Add (or replace) entries in a desc.json, keeping the others and their order."""
    table: dict[str, str] = {}
    if path.is_file():
        try:
            table = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise DataError(
                f"malformed JSON: {exc.msg}", where=str(path), fix="repair or remove the file"
            ) from None
        if not isinstance(table, dict):
            raise DataError("a desc.json must be a JSON object {role: description}", where=str(path))
    table.update(entries)
    write_json_atomic(path, table)
