"""Chat conversations as backends render them: system turns, probes of chat templates, plain prompts.

Shared by every local backend (transformers, llama.cpp, vLLM, lm-eval): a template that rejects or
silently drops a system turn gets the system text merged into the first user turn; a model with no
chat template gets plain text, the turns joined by a blank line.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence

from model_adapters.errors import ModelError
from model_adapters.interface import Message

PROBE_TEXT = "rolebench-system-probe"
SYSTEM_PROBE: list[Message] = [{"role": "system", "content": PROBE_TEXT}, {"role": "user", "content": "Hi"}]


def merge_system(messages: Sequence[Message]) -> list[Message]:
    """For models without a system role: prepend the system text to the first user turn."""
    if not messages or messages[0]["role"] != "system":
        return list(messages)
    system, rest = messages[0]["content"], list(messages[1:])
    if rest and rest[0]["role"] == "user":
        rest[0] = {"role": "user", "content": f"{system}\n\n{rest[0]['content']}"}
        return rest
    return [{"role": "user", "content": system}, *rest]


def probe_system_role(
    render: Callable[[list[Message]], str], template: str = "the model's chat template"
) -> str:
    """'system' if a chat renderer places a system turn, 'merged' if it raises on it or silently drops it.
    A template that does not parse is a ModelError naming `template` (where it was read from)."""
    from jinja2.exceptions import TemplateError, TemplateSyntaxError

    try:
        text = render(SYSTEM_PROBE)
    except TemplateSyntaxError as error:
        line = f" (line {error.lineno})" if error.lineno else ""
        raise ModelError(
            f"{template} is not a valid Jinja template: {error.message}{line}",
            where="--model",
            fix="correct the template, or remove it for plain prompts (hf: apply_chat_template=false)",
        ) from None
    except (TemplateError, ValueError):
        return "merged"
    return "system" if PROBE_TEXT in text else "merged"


def plain_prompt(messages: Sequence[Message]) -> str:
    """The prompt for a model without a chat template: the turns (system merged) joined by a blank line."""
    return "\n\n".join(turn["content"] for turn in merge_system(messages))


def text_sha256(text: object) -> str | None:
    """sha256 of a chat template (a string, or a dict of named templates); None when there is none."""
    if not text:
        return None
    data = text if isinstance(text, str) else json.dumps(text, sort_keys=True)
    return hashlib.sha256(data.encode("utf-8")).hexdigest()
