"""`rolebench evaluate` and `rolebench score` end to end with the data-only baseline, resume, bad inputs."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import ClassVar

import pytest

from model_adapters.baseline import BaselineAdapter
from model_adapters.interface import Generation, GenerationConfig, Request
from model_adapters.options import AdapterOptions
from model_adapters.registry import BACKENDS, Backend
from rolebench import evaluate
from rolebench.cli.main import main
from rolebench.errors import ConfigError
from rolebench.run.folder import read_results
from rolebench.storage.records import RecordStore


def run_cli(*args: str) -> int:
    return main([*args, "--no-progress"] if args[0] == "evaluate" else list(args))


def test_demo_runs_with_no_download(tmp_path, capsys):
    assert (
        run_cli(
            "evaluate", "--model", "baseline:rolegpt", "--tasks", "rolebench_demo", "--output", str(tmp_path)
        )
        == 0
    )
    results = read_results(tmp_path)
    general = results.results["rolebench_demo_general"].model_dump()
    assert general["n"] == 18 and general["n_not_covered"] == 1  # one demo item has no baseline answer
    assert general["cus_n"] == 17 and 0 < general["cus"] <= 1 and general["raw"] is not None
    group = results.groups["rolebench_demo"].model_dump()
    assert group["avg"] == pytest.approx((group["cus"] + group["raw"] + group["spe"]) / 3)
    lines = (tmp_path / "samples" / "rolebench_demo_general.jsonl").read_text(encoding="utf-8").splitlines()
    uncovered = [json.loads(line) for line in lines if json.loads(line)["output"] is None]
    assert len(uncovered) == 1 and uncovered[0]["scores"] == {"cus": None, "raw": None}
    assert "rolebench_demo_general" in capsys.readouterr().out


def test_config_says_how_results_were_made(tmp_path):
    run_cli(
        "evaluate",
        "--model",
        "baseline:rolegpt",
        "--tasks",
        "rolebench_demo_specific",
        "--output",
        str(tmp_path),
    )
    config = read_results(tmp_path).config
    assert config.model["spec"] == "baseline:rolegpt"
    assert config.tasks["rolebench_demo_specific"]["version"] == 2.0
    assert config.scoring["protocol"] == "rolellm" and set(config.scoring["protocols"]) == {
        "rolellm",
        "rolebench",
    }
    assert len(config.prompt["template_hash"]) == 16
    assert config.data["files"] and config.packages["rolebench"]
    assert config.generation["max_new_tokens"] == 160 and config.generation["temperature"] == 0.0


def test_rolegpt_row_from_data_alone(rolebench_data, tmp_path):
    """The released baseline scored against the references: every Chinese sample covered, CJK scored."""
    results = evaluate(
        **dict(
            model="baseline:rolegpt",
            tasks=("rolebench_zh",),
            output=tmp_path,
            data_dir=str(rolebench_data),
            progress=False,
        )
    )
    zh = results.groups["rolebench_zh"].model_dump()
    assert results.results["rolebench_zh_general"].n_not_covered == 0
    assert 0.2 < zh["cus"] < 1 and 0.2 < zh["spe"] < 1  # a Chinese tokenizer that drops CJK would give 0
    assert zh["raw"] is None  # instructions-zh is not in the local copy: RAW is unavailable, not zero
    assert set(results.results["rolebench_zh_general"].per_role) == {"孙悟空", "皇帝", "华妃", "张飞", "李白"}


class InterruptingOptions(AdapterOptions):
    transport: ClassVar[frozenset[str]] = frozenset({"timeout", "max_retries"})
    timeout: float = 30.0
    max_retries: int = 6
    dtype: str = "auto"


class InterruptingAdapter(BaselineAdapter):
    """The real baseline adapter, interrupted (like Ctrl-C) after `budget` answers in a run."""

    Options = InterruptingOptions
    budget: int | None = None
    asked: list[int] = []

    @classmethod
    def from_spec(cls, spec, options):
        return cls(spec.name)

    def generate(
        self, requests: Sequence[Request], config: GenerationConfig
    ) -> Iterator[tuple[Request, Generation]]:
        type(self).asked.append(len(requests))
        for done, pair in enumerate(super().generate(requests, config)):
            if self.budget is not None and done == self.budget:
                raise KeyboardInterrupt
            yield pair


def test_interrupted_run_resumes_without_generating_twice(tmp_path, monkeypatch):
    monkeypatch.setitem(
        BACKENDS, "flaky", Backend("flaky", f"{__name__}:InterruptingAdapter", "name", "flaky:rolegpt")
    )
    options = dict(model="flaky:rolegpt", tasks=("rolebench_demo_specific",), output=tmp_path, progress=False)
    InterruptingAdapter.budget, InterruptingAdapter.asked = 4, []
    with pytest.raises(KeyboardInterrupt):
        evaluate(**options)
    with RecordStore(tmp_path / "generations.sqlite", "generations") as store:
        assert len(store) == 4 + 1  # four answers and the model's info
    InterruptingAdapter.budget = None
    resumed = evaluate(**options)
    assert InterruptingAdapter.asked == [9, 5]
    assert resumed.results["rolebench_demo_specific"].n_generated == 9
    evaluate(**options)  # a third run finds everything stored and loads no model
    assert InterruptingAdapter.asked == [9, 5]
    fresh = evaluate(
        **dict(
            model="baseline:rolegpt",
            tasks=("rolebench_demo_specific",),
            output=tmp_path / "fresh",
            progress=False,
        )
    )
    assert resumed.results["rolebench_demo_specific"].spe == fresh.results["rolebench_demo_specific"].spe


def test_baseline_answers_follow_the_data_not_the_store(tmp_path):
    """baseline:rolegpt answers from the data: a changed baseline file must not be served from the store."""
    root = tmp_path / "data"
    shutil.copytree(Path(__file__).parents[1] / "rolebench/data/demo", root)
    demo = root / "rolebench-demo/role_specific/rolegpt_baseline.jsonl"
    tasks = ("rolebench_demo_specific",)
    options = dict(model="baseline:rolegpt", tasks=tasks, output=tmp_path / "run", progress=False)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("rolebench.data.source.DEMO_ROOT", root)  # the packaged demo, read from a copy
        first = evaluate(**options).results["rolebench_demo_specific"].spe
        rows = [json.loads(line) for line in demo.read_text(encoding="utf-8").splitlines()]
        demo.write_text("".join(json.dumps({**r, "generated": ["Nothing to say."]}) + "\n" for r in rows))
        with pytest.raises(ConfigError, match="data file .* changed"):
            evaluate(**options)  # other data: another run
        second = evaluate(**options, overwrite=True).results["rolebench_demo_specific"].spe
    assert first > 0.3 and second < first


def test_transport_options_do_not_invalidate_stored_generations(tmp_path, monkeypatch):
    monkeypatch.setitem(
        BACKENDS, "flaky", Backend("flaky", f"{__name__}:InterruptingAdapter", "name", "flaky:rolegpt")
    )
    InterruptingAdapter.budget, InterruptingAdapter.asked = None, []
    base = dict(model="flaky:rolegpt", tasks=("rolebench_demo_specific",), output=tmp_path, progress=False)
    evaluate(**dict(**base, model_args={"timeout": "30"}))
    evaluate(**dict(**base, model_args={"timeout": "5", "max_retries": "2"}))
    assert InterruptingAdapter.asked == [9]
    changed = dict(**base, model_args={"timeout": "5", "dtype": "float32"})  # a real change
    with pytest.raises(ConfigError, match="holds a run of flaky:rolegpt"):
        evaluate(**changed)  # another model's run is never silently replaced
    evaluate(**dict(**{**base, "overwrite": True}, model_args=changed["model_args"]))
    assert InterruptingAdapter.asked == [9, 9]  # new outputs


def test_score_adds_a_protocol_and_keeps_everything_else(tmp_path):
    run_cli("evaluate", "--model", "baseline:rolegpt", "--tasks", "rolebench_demo", "--output", str(tmp_path))
    before = read_results(tmp_path)
    assert run_cli("score", str(tmp_path), "--protocol", "opencompass") == 0
    after = read_results(tmp_path)
    assert after.config.scoring["protocol"] == "rolellm"  # the headline stays the run's own
    assert list(after.config.scoring["protocols"]) == ["rolellm", "rolebench", "opencompass"]
    assert after.config.model == before.config.model and after.config.timings == before.config.timings
    general_before, general = (
        before.results["rolebench_demo_general"],
        after.results["rolebench_demo_general"],
    )
    assert general.value("cus") == general_before.value("cus")  # headline values kept
    assert general.value("rolebench") == general_before.value("rolebench")
    sample = json.loads((tmp_path / "samples/rolebench_demo_general.jsonl").read_text().splitlines()[0])
    assert set(sample["scores"]) == {"cus", "raw"} and set(sample["protocol_scores"]) == set(
        after.config.scoring["protocols"]
    )
    # opencompass keeps only the first of the references, so it can never beat the best-of-references F
    assert general.value("opencompass")["cus"] <= general.value("rolebench")["cus"]
    evaluate(**dict(model="baseline:rolegpt", tasks=("rolebench_demo",), output=tmp_path, progress=False))
    again = read_results(tmp_path)  # evaluating again keeps the added protocol and records fresh timings
    assert "opencompass" in again.config.scoring["protocols"] and again.results[
        "rolebench_demo_general"
    ].value("opencompass") == general.value("opencompass")


def test_opencompass_protocol_adds_its_pooled_split_number_and_rescoring_keeps_it(rolebench_data, tmp_path):
    from rolebench.scoring.opencompass import opencompass_order
    from rolebench.scoring.protocols import get_protocol

    evaluate(
        **dict(
            model="baseline:rolegpt",
            tasks=("rolebench_zh",),
            output=tmp_path,
            data_dir=str(rolebench_data),
            progress=False,
            protocol="opencompass",
        )
    )
    group = read_results(tmp_path).groups["rolebench_zh"].model_dump()
    general = [
        json.loads(x)["scores"]["cus"] for x in (tmp_path / "samples/rolebench_zh_general.jsonl").open()
    ]
    specific = [
        json.loads(x)["scores"]["spe"] for x in (tmp_path / "samples/rolebench_zh_specific.jsonl").open()
    ]
    pooled = general + specific
    expected = sum(pooled[i] for i in opencompass_order(len(pooled))) / len(pooled)
    assert group["opencompass_total"] == pytest.approx(expected, abs=1e-12)
    assert group["opencompass_total"] == get_protocol("opencompass").aggregate(
        [pooled[i] for i in opencompass_order(len(pooled))], "zh"
    )
    assert run_cli("score", str(tmp_path), "--protocol", "rolebench") == 0
    kept = read_results(tmp_path).groups["rolebench_zh"]
    assert kept.value("opencompass_total") == group["opencompass_total"]
    assert kept.value("opencompass")["opencompass_total"] == group["opencompass_total"]


def test_refuses_to_mix_models_in_one_folder(tmp_path, capsys):
    run_cli(
        "evaluate",
        "--model",
        "baseline:rolegpt",
        "--tasks",
        "rolebench_demo_specific",
        "--output",
        str(tmp_path),
    )
    capsys.readouterr()
    assert (
        run_cli(
            "evaluate",
            "--model",
            "hf:some/model",
            "--tasks",
            "rolebench_demo_specific",
            "--output",
            str(tmp_path),
        )
        == 2
    )
    assert "holds a run of baseline:rolegpt" in capsys.readouterr().err


def _bad_data_dir(tmp_path: Path) -> Path:
    root = tmp_path / "data"
    (root / "rolebench-zh/role_specific").mkdir(parents=True)
    (root / "rolebench-zh/role_specific/test.jsonl").write_text(
        '{"role": "李白", "question": "q", "generated": ["a"]}\n{oops\n'
    )
    (root / "profiles-zh").mkdir()
    (root / "profiles-zh/desc.json").write_text('{"李白": "诗仙"}')
    return root


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--model", "nope:x", "--tasks", "rolebench_demo"], "unknown model scheme 'nope'"),
        (["--model", "baseline", "--tasks", "rolebench_demo"], "has no scheme"),
        (["--model", "baseline:gpt5", "--tasks", "rolebench_demo"], "unknown baseline 'gpt5'"),
        (
            ["--model", "baseline:rolegpt", "--tasks", "rolebench_zh_generl"],
            "did you mean 'rolebench_zh_general'",
        ),
        (
            ["--model", "baseline:rolegpt", "--tasks", "rolebench_zh", "--data-dir", "/no/such/dir"],
            "does not exist",
        ),
        (
            ["--model", "baseline:rolegpt", "--tasks", "rolebench_zh_specific", "--data-dir", "BAD"],
            "test.jsonl:2",
        ),
        (
            ["--model", "baseline:rolegpt", "--tasks", "rolebench_eng_instruct", "--data-dir", "EMPTY"],
            "rolebench-eng/instruction-generalization/general/test.jsonl not found",
        ),
        (
            ["--model", "baseline:rolegpt", "--tasks", "rolebench_demo", "--limit", "0"],
            "--limit 0 must be at least 1",
        ),
        (["--model", "baseline:rolegpt", "--tasks", "x", "--include-path", "BADYAML"], "invalid YAML"),
        (
            ["--model", "baseline:rolegpt", "--tasks", "rolebench_demo", "--model-args", "novalue"],
            "bad model argument",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, args, expected):
    (tmp_path / "EMPTY").mkdir()
    (tmp_path / "BADYAML").mkdir()
    (tmp_path / "BADYAML/t.yaml").write_text("task: [unclosed\n")
    replace = {
        "BAD": str(_bad_data_dir(tmp_path)),
        "EMPTY": str(tmp_path / "EMPTY"),
        "BADYAML": str(tmp_path / "BADYAML"),
    }
    args = [replace.get(a, a) for a in args]
    code = run_cli("evaluate", *args, "--output", str(tmp_path / "run"))
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert expected in err and "Traceback" not in err and len(err.splitlines()) == 1


def test_unknown_backend_options_are_refused_before_any_work(tmp_path, capsys):
    code = run_cli(
        "evaluate",
        "--model",
        "baseline:rolegpt",
        "--tasks",
        "rolebench_demo_specific",
        "--output",
        str(tmp_path / "run"),
        "--model-args",
        "api_key=sk-secret-value-123456",
    )
    err = capsys.readouterr().err
    assert code == 2 and "unknown option 'api_key' for baseline: models" in err
    assert not (tmp_path / "run").exists()


def test_config_file_gives_the_flags_and_the_command_line_wins(tmp_path, capsys):
    config = tmp_path / "run.yaml"
    config.write_text(
        "model: baseline:rolegpt\ntasks: [rolebench_demo_specific]\nlimit: 3\nmax-new-tokens: 64\n"
        "model_args: {}\n",
        encoding="utf-8",
    )
    assert run_cli("evaluate", "--config", str(config), "--output", str(tmp_path / "a")) == 0
    made = read_results(tmp_path / "a").config
    assert made.limit == 3 and made.generation["max_new_tokens"] == 64
    assert run_cli("evaluate", "--config", str(config), "--limit", "2", "--output", str(tmp_path / "b")) == 0
    assert read_results(tmp_path / "b").config.limit == 2
    config.write_text("model: baseline:rolegpt\nlmit: 3\n", encoding="utf-8")
    capsys.readouterr()
    assert run_cli("evaluate", "--config", str(config)) == 2
    assert "unknown option 'lmit'" in capsys.readouterr().err
    assert run_cli("evaluate", "--tasks", "rolebench_demo") == 2
    assert "--model is required" in capsys.readouterr().err
