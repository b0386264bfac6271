"""A chat template that refuses the sessions' conversation order (system, the character's greeting as an
assistant turn, then user and assistant turns; Llama-2 / Mistral-style templates demand user first) stops
the run in one line naming the model and what to do, before any session is half played."""

from __future__ import annotations

from pathlib import Path

import pytest

import rolebench
from rolebench.errors import ConfigError
from tests.conftest import build_tiny_model
from tests.sessions_servers import judge_server, players_server, write_roles

# Llama-2 / Mistral style: a system prompt placed first, then turns that must go user, assistant, user...
STRICT_TEMPLATE = (
    "{% if messages[0]['role'] == 'system' %}{% set turns = messages[1:] %}"
    "{{ '<|im_start|>system\n' + messages[0]['content'] + '<|im_end|>\n' }}{% else %}"
    "{% set turns = messages %}{% endif %}"
    "{% for message in turns %}"
    "{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
    "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


@pytest.fixture(scope="module")
def strict_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("transformers")
    return build_tiny_model(tmp_path_factory.mktemp("tiny-strict"), STRICT_TEMPLATE)


@pytest.mark.parametrize("side", ["model", "opponent"])
def test_a_template_that_refuses_the_greeting_first_fails_in_one_line(strict_model_dir, tmp_path, side):
    players, judging = players_server(), judge_server()
    strict, scripted = f"hf:{strict_model_dir}", f"openai:opp@{players.base_url}"
    model, opponent = (strict, scripted) if side == "model" else (f"openai:cand@{players.base_url}", strict)
    try:
        with pytest.raises(ConfigError) as caught:
            rolebench.evaluate(
                model,
                "rolebench_eng_sessions",
                opponent=opponent,
                judge=f"openai:judge@{judging.base_url}",
                turns=1,
                data_dir=write_roles(tmp_path / "data"),
                output=tmp_path / "run",
                progress=False,
                max_new_tokens=4,
            )
    finally:
        players.stop()
        judging.stop()
    line = caught.value.line()
    assert "chat template" in line and "greeting" in line and str(strict_model_dir) in line
    assert ("opponent=" if side == "opponent" else "model") in line and "\n" not in line
    # the openings the judge wrote are kept
    assert (tmp_path / "run" / "sessions" / "rolebench_eng_sessions.jsonl").is_file()  # kept: it resumes
