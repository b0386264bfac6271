"""Prompt texts as Jinja2 templates (in `rolebench/prompts/templates/`) and the chat messages built from them.

Every protocol text (the RoleGPT system instruction, the judge's ranking prompt, the recipes'
generation prompts) is a template file read through `render`, so tasks, the judge and recipes
share one copy, and `template_hash` puts the exact texts used into every result.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from model_adapters.interface import Message
from rolebench.templating import text_environment

TEMPLATE_DIR = Path(__file__).parent / "templates"
SYSTEM_TEMPLATES = {"en": "rolegpt_system_en.j2", "zh": "rolegpt_system_zh.j2"}
FEW_SHOT_PROMPT_TEMPLATE = "rolegpt_few_shot_prompt.j2"  # the demonstrations inside the user turn
LAYOUTS = ("dialogue", "prompt")  # where demonstrations go: earlier turns, or the one user turn


def render(name: str, **values: object) -> str:
    """Render a template by file name, e.g. `render("rolegpt_system_en.j2", role=..., description=...)`."""
    return text_environment(TEMPLATE_DIR).get_template(name).render(**values).strip()


def template_hash(*names: str) -> str:
    """sha256 (first 16 hex digits) over the source of the named templates."""
    digest = hashlib.sha256()
    for name in names:
        digest.update(name.encode())
        digest.update((TEMPLATE_DIR / name).read_bytes())
    return digest.hexdigest()[:16]


def system_prompt(role: str, description: str, language: str) -> str:
    """The RoleGPT system instruction for a role, in the split's language."""
    return render(SYSTEM_TEMPLATES[language], role=role, description=description)


def role_messages(
    role: str,
    description: str,
    question: str,
    language: str,
    demonstrations: Sequence[tuple[str, str]] = (),
    layout: str = "dialogue",
) -> list[Message]:
    """System instruction, optional few-shot demonstrations, then the stripped question as the user turn.

    The paper's two few-shot layouts (PAPER_PROMPTS.md 1.4.3): `layout="dialogue"` ("dialogue
    engineering") makes each (question, answer) pair a user turn and an assistant turn before the real
    question; `layout="prompt"` ("prompt engineering") writes the pairs, a line each, into the one user
    turn before the question (`FEW_SHOT_PROMPT_TEMPLATE`). Without demonstrations both are zero-shot.
    """
    messages: list[Message] = [{"role": "system", "content": system_prompt(role, description, language)}]
    if layout not in LAYOUTS:
        raise ValueError(f"unknown demonstration layout {layout!r}")
    if layout == "prompt" and demonstrations:
        pairs = [(q.strip(), a.strip()) for q, a in demonstrations]
        content = render(FEW_SHOT_PROMPT_TEMPLATE, demonstrations=pairs, question=question.strip())
        messages.append({"role": "user", "content": content})
        return messages
    for demo_question, demo_answer in demonstrations:
        messages.append({"role": "user", "content": demo_question.strip()})
        messages.append({"role": "assistant", "content": demo_answer.strip()})
    messages.append({"role": "user", "content": question.strip()})
    return messages
