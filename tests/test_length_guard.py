"""The GRPO length guard: it passes the reward through, measures answers in the protocol's tokens, arms
once answers are within the `length-inflated` rule, and warns or stops after `patience` inflated steps."""

from __future__ import annotations

import json

import pytest

from rolebench.recipes.training.length_guard import LengthGuard
from rolebench.rewards import rouge_l_reward
from rolebench.scoring.answers import words

REFERENCE = "I am the Monkey King of the mountain."  # 8 words
SHORT = "I am the Monkey King."  # 5 words: within the rule
LONG = " ".join(["I am the Monkey King of the mountain, hear me roar."] * 3)  # 33 words: over 2x
EOS = 9


def step(guard: LengthGuard, answer: str, *, ended: bool = True, n: int = 4) -> list[float | None]:
    """One batch of `n` chat completions, as TRL passes it to a reward function."""
    return guard(
        prompts=[[{"role": "user", "content": "Who are you?"}]] * n,
        completions=[[{"role": "assistant", "content": answer}]] * n,
        completion_ids=[[1, 2, EOS] if ended else [1, 2, 3]] * n,
        references=[[REFERENCE, "another, longer reference that is not the first one"]] * n,
        language=["en"] * n,
        trainer_state=None,
    )


def make(tmp_path, **kwargs) -> tuple[LengthGuard, list[str]]:
    said: list[str] = []
    guard = LengthGuard(rouge_l_reward, log_path=tmp_path / "log.jsonl", echo=said.append, **kwargs)
    guard.stop_ids = {EOS}
    return guard, said


def test_the_guard_passes_the_reward_through_and_logs_lengths_in_protocol_tokens(tmp_path):
    guard, _ = make(tmp_path)
    assert guard.__name__ == "rouge_l_reward"  # TRL logs the reward under the wrapped function's name
    assert step(guard, SHORT) == rouge_l_reward(
        completions=[SHORT] * 4, references=[[REFERENCE]] * 4, language="en"
    )
    assert not guard.end_step(1)
    assert not guard.end_step(2)  # no completions since the last step (a reused generation): nothing judged
    [line] = [json.loads(x) for x in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert line["answer_words_mean"] == words(SHORT, "en") == 5
    assert line["reference_words_mean"] == words(REFERENCE, "en") == 8  # the first reference, as evaluate
    assert line["cut_share"] == 0.0 and line["length_ratio"] == 5 / 8 and line["guard"] == "ok"


def test_an_armed_guard_stops_after_patience_inflated_steps_in_a_row(tmp_path):
    from transformers import TrainerControl, TrainerState

    guard, said = make(tmp_path, action="stop", patience=2)
    callback, state, control = guard.callback(), TrainerState(), TrainerControl()
    verdicts = []
    for number, answer in enumerate([SHORT, LONG, SHORT, LONG, LONG], 1):
        step(guard, answer)
        state.global_step = number
        callback.on_step_end(None, state, control)
        verdicts.append(json.loads((tmp_path / "log.jsonl").read_text().splitlines()[-1])["guard"])
        if control.should_training_stop:
            break
    assert verdicts == ["ok", "inflated", "ok", "inflated", "stop"]  # one long step alone is not enough
    assert guard.stopped and "for 2 steps in a row" in guard.stopped and "step 5" in guard.stopped
    assert said == [f"length guard: {guard.stopped}; stopping"]


def test_answers_cut_at_the_limit_count_as_length_inflated(tmp_path):
    guard, _ = make(tmp_path, patience=1)
    step(guard, SHORT)
    assert not guard.end_step(1)
    step(guard, SHORT, ended=False)  # short texts, but every one stopped by max_completion_length
    assert guard.end_step(2)
    assert guard.steps[-1].cut_share == 1.0 and guard.steps[-1].inflated


def test_a_start_that_already_rambles_is_reported_once_and_arms_the_guard_later(tmp_path):
    guard, said = make(tmp_path, action="stop", patience=1)
    for number in (1, 2):
        step(guard, LONG)
        assert not guard.end_step(number)
    assert len(said) == 1 and "already length-inflated" in said[0] and not guard.armed
    step(guard, SHORT)
    assert not guard.end_step(3) and guard.armed
    step(guard, LONG)
    assert guard.end_step(4)


@pytest.mark.parametrize(
    ("action", "verdicts"), [("warn", ["ok", "inflated", "warn", "warn"]), ("off", ["off"] * 4)]
)
def test_warn_goes_on_and_off_only_logs(tmp_path, action, verdicts):
    guard, said = make(tmp_path, action=action, patience=2)
    for number, answer in enumerate([SHORT, LONG, LONG, LONG], 1):
        step(guard, answer)
        assert not guard.end_step(number)
    assert [json.loads(x)["guard"] for x in (tmp_path / "log.jsonl").read_text().splitlines()] == verdicts
    assert len(said) == (1 if action == "warn" else 0)  # warned once per run of inflated steps
    assert guard.stopped is None
