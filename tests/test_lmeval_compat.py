"""The task files run inside lm-evaluation-harness and give `rolebench evaluate`'s numbers.

lm-eval (`simple_evaluate`, `TaskManager(include_path=tasks/)`, its `hf` backend) runs
rolebench_zh_general and rolebench_zh_specific on the tiny random model, with and without
`apply_chat_template`. Its per-sample metrics must equal rolebench's scorer applied to the same
generations; with the chat template, its prompts and greedy generations must also equal those of
`rolebench evaluate --model hf:...`, so the two tools' per-sample scores and task means coincide.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from model_adapters import load_model
from rolebench import evaluate
from rolebench.data.splits import get_split
from rolebench.scoring.metrics import Scorable, score_sample
from rolebench.scoring.protocols import get_protocol

TASKS = ("rolebench_zh_general", "rolebench_zh_specific")
TASK_DIR = Path(__file__).resolve().parent.parent / "tasks"
LIMIT, MAX_TOKENS, BATCH = 3, 16, 4

pytest.importorskip("lm_eval")


def run_lm_eval(
    model_dir: Path, data_dir: Path, chat: bool, tasks: tuple[str, ...] = ("rolebench_zh",)
) -> dict:
    import lm_eval
    from lm_eval.tasks import TaskManager

    metadata = {
        "data_dir": str(data_dir)
    }  # what `lm_eval --metadata '{"data_dir": ...}'` gives the TaskManager
    manager = TaskManager(include_path=str(TASK_DIR), include_defaults=False, metadata=metadata)
    return lm_eval.simple_evaluate(
        model="hf",
        model_args=f"pretrained={model_dir},dtype=float32",
        tasks=list(tasks),
        task_manager=manager,
        limit=LIMIT,
        apply_chat_template=chat,
        log_samples=True,
        gen_kwargs={"max_gen_toks": MAX_TOKENS},
        batch_size=BATCH,
        device="cpu",
        metadata={"data_dir": str(data_dir)},
    )


@pytest.fixture(scope="module")
def lm_eval_chat(tiny_model_dir, rolebench_data) -> dict:
    return run_lm_eval(tiny_model_dir, rolebench_data, chat=True)


@pytest.fixture(scope="module")
def lm_eval_plain(tiny_model_dir, rolebench_data) -> dict:
    return run_lm_eval(tiny_model_dir, rolebench_data, chat=False)


@pytest.fixture(scope="module")
def rolebench_run(tiny_model_dir, rolebench_data, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("rolebench-run")
    evaluate(
        **dict(
            model=f"hf:{tiny_model_dir}",
            tasks=TASKS,
            output=out,
            data_dir=str(rolebench_data),
            limit=LIMIT,
            limit_mode="first",  # lm-eval's --limit takes the first N rows
            max_new_tokens=MAX_TOKENS,
            batch_size=BATCH,
            progress=False,
        )
    )
    return out


def rescored(sample: dict) -> dict[str, float | None]:
    doc = sample["doc"]
    split = get_split(doc["split"])
    return score_sample(
        get_protocol("rolellm"),
        split.kind,
        split.language,
        Scorable(sample["filtered_resps"][0], doc["references"], doc["raw_answer"]),
    )


def check_lm_eval_scores_are_rolebench_scores(results: dict) -> None:
    for task in TASKS:
        samples = results["samples"][task]
        assert [s["doc"]["index"] for s in samples] == list(range(LIMIT))
        means: dict[str, list[float]] = {}
        for sample in samples:
            ours = rescored(sample)
            assert set(sample["metrics"]) == {name for name, value in ours.items() if value is not None}
            for name in sample["metrics"]:
                assert sample[name] == pytest.approx(ours[name], abs=1e-12)
                means.setdefault(name, []).append(ours[name])
        assert means, f"{task}: no metric computed"
        for name, values in means.items():
            assert results["results"][task][f"{name},none"] == pytest.approx(
                sum(values) / len(values), abs=1e-12
            )


def test_lm_eval_with_chat_template_scores_like_rolebench(lm_eval_chat):
    check_lm_eval_scores_are_rolebench_scores(lm_eval_chat)
    assert lm_eval_chat["results"]["rolebench_zh_specific"]["spe,none"] is not None


def test_lm_eval_without_chat_template_scores_like_rolebench(lm_eval_plain):
    check_lm_eval_scores_are_rolebench_scores(lm_eval_plain)
    sample = lm_eval_plain["samples"]["rolebench_zh_general"][0]
    prompt = sample["arguments"][0][0]
    assert prompt.startswith(sample["doc"]["system_prompt"]) and prompt.endswith(
        sample["doc"]["prompt_question"]
    )


def test_same_prompts_generations_and_scores_as_rolebench_evaluate(
    lm_eval_chat, rolebench_run, tiny_model_dir
):
    renderer = load_model(f"hf:{tiny_model_dir}")
    for task in TASKS:
        lines = (rolebench_run / "samples" / f"{task}.jsonl").read_text(encoding="utf-8").splitlines()
        ours = {record["id"]: record for record in map(json.loads, lines)}
        theirs = {sample["doc"]["id"]: sample for sample in lm_eval_chat["samples"][task]}
        assert sorted(ours) == sorted(theirs) and len(ours) == LIMIT
        for sample_id, record in ours.items():
            sample = theirs[sample_id]
            assert renderer.render(record["messages"]) == sample["arguments"][0][0]
            assert record["output"] == sample["filtered_resps"][0]
            for name in sample["metrics"]:
                assert record["scores"][name] == pytest.approx(sample[name], abs=1e-12)


def test_lm_eval_prints_the_group_row(lm_eval_chat):
    """The group YAMLs carry `aggregate_metric_list`: lm-eval reports a split's CUS and SPE in a group row."""
    results = lm_eval_chat["results"]
    group = results["rolebench_zh"]
    assert group["cus,none"] == pytest.approx(results["rolebench_zh_general"]["cus,none"], abs=1e-12)
    assert group["spe,none"] == pytest.approx(results["rolebench_zh_specific"]["spe,none"], abs=1e-12)


def test_lm_eval_without_data_says_what_to_do_in_one_line(tiny_model_dir, tmp_path):
    with pytest.raises(SystemExit) as caught:
        run_lm_eval(tiny_model_dir, tmp_path / "no-such-data", chat=True, tasks=("rolebench_zh_specific",))
    message = str(caught.value)
    assert message.startswith("rolebench: error:") and "\n" not in message and "does not exist" in message
