"""The few-shot methods inside lm-evaluation-harness give `rolebench evaluate --elicitation`'s prompts.

`--num_fewshot N --apply_chat_template` (lm-eval sends the shots as turns) is few-shot dialogue
engineering, and the same with `--fewshot_as_multiturn false` (the shots in one user turn) is few-shot
prompt engineering: the task files' sampler (`hooks.ScriptSampler`) draws the role's own script pairs
that rolebench draws. lm-eval runs rolebench_zh_specific on the tiny random model with Chinese role
scripts in the Hub layout; its prompts, greedy answers and scores must be rolebench's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from model_adapters import load_model
from rolebench import evaluate
from tests.test_elicitation import zh_data

TASK = "rolebench_zh_specific"
TASK_DIR = Path(__file__).resolve().parent.parent / "tasks"
LIMIT, MAX_TOKENS, SHOTS = 3, 8, 2

pytest.importorskip("lm_eval")


def lm_eval_run(model_dir: Path, data_dir: Path, multiturn: bool) -> dict:
    import lm_eval
    from lm_eval.tasks import TaskManager

    metadata = {"data_dir": str(data_dir)}
    manager = TaskManager(include_path=str(TASK_DIR), include_defaults=False, metadata=metadata)
    return lm_eval.simple_evaluate(
        model="hf",
        model_args=f"pretrained={model_dir},dtype=float32",
        tasks=[TASK],
        task_manager=manager,
        limit=LIMIT,
        num_fewshot=SHOTS,
        apply_chat_template=True,
        fewshot_as_multiturn=multiturn,
        log_samples=True,
        gen_kwargs={"max_gen_toks": MAX_TOKENS},
        batch_size=4,
        device="cpu",
        metadata=metadata,
    )


def rolebench_run(model_dir: Path, data_dir: Path, out: Path, method: str) -> dict[str, dict]:
    evaluate(
        **dict(
            model=f"hf:{model_dir}",
            tasks=(TASK,),
            output=out,
            data_dir=str(data_dir),
            limit=LIMIT,
            limit_mode="first",  # lm-eval's --limit takes the first N rows
            max_new_tokens=MAX_TOKENS,
            elicitation=method,
            shots=SHOTS,
            batch_size=4,
            progress=False,
        )
    )
    lines = (out / "samples" / f"{TASK}.jsonl").read_text(encoding="utf-8").splitlines()
    return {record["id"]: record for record in map(json.loads, lines)}


@pytest.fixture(scope="module")
def scripted_data(rolebench_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return zh_data(tmp_path_factory.mktemp("zh-scripts"), rolebench_data)


@pytest.mark.parametrize(
    ("multiturn", "method"),
    [(True, "few-shot-dialogue"), (False, "few-shot-prompt")],
    ids=["turns", "one-turn"],
)
def test_lm_eval_few_shot_is_rolebench_elicitation(
    tiny_model_dir, scripted_data, tmp_path, multiturn, method
):
    theirs = {
        s["doc"]["id"]: s for s in lm_eval_run(tiny_model_dir, scripted_data, multiturn)["samples"][TASK]
    }
    ours = rolebench_run(tiny_model_dir, scripted_data, tmp_path / "run", method)
    renderer = load_model(f"hf:{tiny_model_dir}")
    assert sorted(ours) == sorted(theirs) and len(ours) == LIMIT
    for sample_id, record in ours.items():
        sample = theirs[sample_id]
        assert record["shots"] == SHOTS
        if multiturn:
            assert [m["role"] for m in record["messages"]] == [
                "system",
                "user",
                "assistant",
                "user",
                "assistant",
                "user",
            ]
        else:
            assert [m["role"] for m in record["messages"]] == ["system", "user"]
        assert renderer.render(record["messages"]) == sample["arguments"][0][0]
        assert record["output"] == sample["filtered_resps"][0]
        assert record["scores"]["spe"] == pytest.approx(sample["spe"], abs=1e-12)
    first = ours["zh_specific/0"]  # 皇帝, asked about 后宫 struggles: that pair of his script comes first
    assert "皇上，后宫争宠之事，您如何看待？" in first["messages"][1]["content"]
