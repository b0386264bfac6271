"""`rolebench evaluate --elicitation`: the paper's zero-shot, few-shot prompt and few-shot dialogue methods.

Runs use the data-only `baseline:rolegpt` model (its answers follow the data, so prompts, keys,
records and config are what is checked) and the tiny random hf model (real prompt token counts). The
real Chinese RoleBench files are used with role scripts written in the Hub layout into a temporary
data folder, since the released script files are not in the local copy; the packaged demo ships its own.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path

import numpy as np
import pytest

from rolebench.cached_model import CachedModel
from rolebench.cli.main import main
from rolebench.data.resolve import resolve_source
from rolebench.data.retrieval import DemonstrationRetriever, words
from rolebench.data.scripts import dialogue_pairs
from rolebench.data.splits import DEMO_ROOT, get_split
from rolebench.evaluation.generate import generation_key
from rolebench.evaluation.plan import plan_tasks
from rolebench.leaderboard.boards import collect
from rolebench.leaderboard.tables import to_csv, to_markdown
from rolebench.leaderboard.webpage import to_html
from rolebench.run.definition import RunDefinition
from rolebench.run.elicitation import Elicitation
from rolebench.run.folder import read_results, read_samples
from rolebench.storage.records import RecordStore
from rolebench.tasks.catalogue import resolve

ZH_ROLES = ("孙悟空", "皇帝", "华妃", "张飞", "李白")
# One act per role: the role answers two others; 李白's script has a single usable pair.
ZH_SCRIPTS = {
    "孙悟空": [("唐僧", "悟空，前面可有妖怪？"), ("孙悟空", "师父放心，俺老孙火眼金睛，一看便知！")],
    "皇帝": [("甄嬛", "皇上，后宫争宠之事，您如何看待？"), ("皇帝", "后宫安宁，朝廷才能安宁。")],
    "华妃": [("颂芝", "娘娘，皇上今晚去了碎玉轩。"), ("华妃", "哼，一个小小的常在，也配？")],
    "张飞": [("刘备", "三弟，此去须小心行事。"), ("张飞", "大哥放心，俺张飞一杆丈八蛇矛，谁敢挡我！")],
    "李白": [("杜甫", "太白兄，何时再饮一杯？"), ("李白", "人生得意须尽欢，莫使金樽空对月！")],
}
EXTRA = {  # two more pairs for every role but 李白
    "孙悟空": [("八戒", "猴哥，你的金箍棒有多重？"), ("孙悟空", "一万三千五百斤，你搬得动吗？")],
    "皇帝": [("苏培盛", "皇上，权力之事可要小心。"), ("皇帝", "朕心中有数，权力从来都是双刃剑。")],
    "华妃": [("曹贵人", "娘娘，您对皇上的心意从未变过吧？"), ("华妃", "本宫的心，皇上自然知道。")],
    "张飞": [("关羽", "三弟，你为何如此性急？"), ("张飞", "二哥，俺就是这个脾气，改不了！")],
}
GOLDEN_KEYS = "131bf9b1bc1e2f36707f60971808dacc9d35582d050108066b4421f81186b735"  # demo, before --elicitation
GOLDEN_MESSAGES = "5fa7955f0345a544beb710001bb5893b2d83ea886f7b79d66b0f8e27943b89a6"
GOLDEN_TEMPLATE_HASH = "d83ee8e6c652c258"


def write_script(path: Path, lines: list[tuple[str, str]], act: int = 1) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        for diag, (speaker, text) in enumerate(lines, 1):
            record = {"act_id": act, "diag_id": diag, "role": speaker, "content": text}
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path


def zh_data(tmp_path: Path, rolebench_data: Path, *, roles: tuple[str, ...] = ZH_ROLES) -> Path:
    """The real Chinese files (linked) and scripts for `roles`, in the Hub layout."""
    root = tmp_path / "data"
    (root / "profiles-zh").mkdir(parents=True)
    (root / "rolebench-zh").symlink_to(rolebench_data / "rolebench-zh")
    (root / "profiles-zh" / "desc.json").symlink_to(rolebench_data / "profiles-zh" / "desc.json")
    for role in roles:
        script = root / "profiles-zh" / f"profiles-zh-{role}.jsonl"
        write_script(script, ZH_SCRIPTS[role])
        if role in EXTRA:
            write_script(script, EXTRA[role], act=2)
    return root


def run_cli(*args: str) -> int:
    return main([*args, "--no-progress"] if args[0] == "evaluate" else list(args))


def demo_run(tmp_path: Path, *extra: str, model: str = "baseline:rolegpt") -> Path:
    out = tmp_path / ("run-" + "-".join(extra).replace("-", "") if extra else "run-zero")
    assert (
        run_cli("evaluate", "--model", model, "--tasks", "rolebench_demo", "--output", str(out), *extra) == 0
    )
    return out


def test_zero_shot_is_todays_prompt_and_cache_keys(tmp_path):
    """The default, `--elicitation zero-shot` and `--shots 0` give the messages and store keys of runs
    made before the option existed (digests taken from the code before it), so stored answers serve."""
    specs, _ = resolve(["rolebench_demo"], ())
    for elicitation in (
        Elicitation(),
        Elicitation.parse("zero-shot", None),
        Elicitation.parse("few-shot-dialogue", 0),
    ):
        definition = RunDefinition(
            model="baseline:rolegpt",
            tasks=("rolebench_demo",),
            elicitation=elicitation.method,
            shots=elicitation.shots or None,
        )
        plans = plan_tasks(definition, specs, resolve_source(None))
        with RecordStore(Path(tempfile.mkdtemp(dir=tmp_path)) / "g.sqlite", "generations") as store:
            model = CachedModel("baseline:rolegpt", {}, store)
            keys = [generation_key(model, p.config, r, p.elicitation) for p in plans for r in p.requests]
        messages = [r.messages for p in plans for r in p.requests]
        assert hashlib.sha256("\n".join(keys).encode()).hexdigest() == GOLDEN_KEYS
        digest = hashlib.sha256(json.dumps(messages, ensure_ascii=False).encode()).hexdigest()
        assert digest == GOLDEN_MESSAGES
        assert elicitation.template_hash() == GOLDEN_TEMPLATE_HASH
    zero, explicit = (
        demo_run(tmp_path),
        demo_run(tmp_path, "--elicitation", "few-shot-prompt", "--shots", "0"),
    )
    for task in ("rolebench_demo_general", "rolebench_demo_specific"):
        assert read_samples(zero, task) == read_samples(explicit, task)
    results = read_results(zero)
    assert results.config.elicitation == {"method": "zero-shot", "shots": 0, "label": "zero-shot"}
    assert results.config.prompt["template_hash"] == GOLDEN_TEMPLATE_HASH


def script_pairs(role: str) -> list[tuple[str, str]]:
    return dialogue_pairs(DEMO_ROOT / "profiles-demo" / f"profiles-demo-{role}.jsonl", role)


def test_few_shot_dialogue_and_prompt_use_the_same_retrieved_script_pairs(tmp_path):
    dialogue = read_samples(
        demo_run(tmp_path, "--elicitation", "few-shot-dialogue"), "rolebench_demo_specific"
    )
    prompt_run = demo_run(tmp_path, "--elicitation", "few-shot-prompt", "--shots", "2")
    prompt = read_samples(prompt_run, "rolebench_demo_specific")
    for turns, single in zip(dialogue, prompt, strict=True):
        assert [m["role"] for m in turns.messages] == ["system", *["user", "assistant"] * 3, "user"]
        assert turns.shots == 3 and single.shots == 2
        demos = [(turns.messages[i]["content"], turns.messages[i + 1]["content"]) for i in range(1, 7, 2)]
        assert set(demos) <= set(script_pairs(turns.role))  # the role's own script, never a test item
        assert turns.messages[-1]["content"] == turns.question.strip()
        assert [m["role"] for m in single.messages] == ["system", "user"]
        assert single.messages[0] == turns.messages[0]
        lines = [text for pair in demos[:2] for text in pair]  # the same ranking, the two best
        assert single.messages[1]["content"] == "\n".join([*lines, single.question.strip()])
    first = dialogue[0]  # "Captain Vance, what happened to your first ship?": BM25+ over the script's prompts
    assert first.messages[1]["content"] == "Do you ever miss your first ship, the Kestrel?"
    config = read_results(prompt_run).config
    assert config.elicitation["method"] == "few-shot-prompt" and config.elicitation["shots"] == 2
    assert config.elicitation["retriever"]["name"] == "bm25plus-v1"
    scripts = config.elicitation["tasks"]["rolebench_demo_specific"]["scripts"]
    assert scripts["Professor Quill"] == {
        "file": "profiles-demo/profiles-demo-Professor Quill.jsonl",
        "pairs": 5,
    }
    assert "profiles-demo/profiles-demo-Grandma Tilda.jsonl" in config.data["files"]
    assert config.prompt["template_hash"] != GOLDEN_TEMPLATE_HASH  # the prompt layout's template is in it


def test_methods_never_share_stored_answers(tmp_path):
    """A few-shot request whose messages equal a zero-shot one (no pair retrieved) still has its own key."""
    from model_adapters import GenerationConfig, Request

    request = Request(id="x", messages=[{"role": "user", "content": "hi"}], meta={})
    with RecordStore(tmp_path / "g.sqlite", "generations") as store:
        model = CachedModel("baseline:rolegpt", {}, store)
        keys = {
            generation_key(model, GenerationConfig(), request, e)
            for e in (Elicitation(), Elicitation("few-shot-dialogue", 3), Elicitation("few-shot-prompt", 3))
        } | {generation_key(model, GenerationConfig(), request, Elicitation("few-shot-dialogue", 2))}
    assert len(keys) == 4


def test_real_split_with_hub_layout_scripts_and_a_short_script(tmp_path, rolebench_data, capsys):
    data = zh_data(tmp_path, rolebench_data)
    out = tmp_path / "run"
    args = ["--model", "baseline:rolegpt", "--tasks", "rolebench_zh_specific", "--output", str(out)]
    assert run_cli("evaluate", *args, "--data-dir", str(data), "--elicitation", "few-shot-dialogue") == 0
    records = read_samples(out, "rolebench_zh_specific")
    assert {r.shots for r in records if r.role == "李白"} == {1}  # its script has one pair: it gets that one
    assert {r.shots for r in records if r.role != "李白"} == {2}
    first = records[0]  # 皇帝: "皇上，您对后宫宫廷斗争...": the 后宫 pair ranks first
    assert first.messages[1]["content"] == "皇上，后宫争宠之事，您如何看待？"
    block = read_results(out).config.elicitation["tasks"]["rolebench_zh_specific"]
    assert block["fewer_pairs_than_shots"] == {"孙悟空": 2, "皇帝": 2, "华妃": 2, "张飞": 2, "李白": 1}
    assert block["scripts"]["李白"] == {"file": "profiles-zh/profiles-zh-李白.jsonl", "pairs": 1}
    out = capsys.readouterr().out
    assert "rolebench_zh_specific: fewer script pairs than shots, all of them used: 华妃 (2)," in out
    assert "李白 (1)" in out


def test_retriever_scores_are_rank_bm25s_and_ties_keep_file_order():
    from rank_bm25 import BM25Plus

    rng = np.random.default_rng(0)
    vocab = [f"w{i}" for i in range(40)] + ["the", "you", "what"] * 5
    pairs = [(" ".join(rng.choice(vocab, rng.integers(1, 12))), f"a{i}") for i in range(300)]
    pairs += [("", "empty prompt"), ("the the the", "all stopwords")]
    retriever = DemonstrationRetriever(pairs, "en")
    reference = BM25Plus([words(q, "en") or ["_"] for q, _ in pairs])
    for _ in range(50):
        query = " ".join(rng.choice([*vocab, "unseen"], rng.integers(1, 15)))
        expected = reference.get_scores(words(query, "en"))
        assert np.array_equal(retriever.scores(query), expected)
        order = sorted(range(len(pairs)), key=lambda i: (-expected[i], i))
        assert retriever.top(query, 5) == [pairs[i] for i in order[:5]]
    same = DemonstrationRetriever([("rum", "1"), ("sea", "2"), ("rum", "3")], "en")
    assert same.top("rum?", 3) == [("rum", "1"), ("rum", "3"), ("sea", "2")]
    assert same.top("nothing matches", 2) == [("rum", "1"), ("sea", "2")]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--elicitation", "few-shot"],
            "unknown elicitation method 'few-shot' (--elicitation): did you mean",
        ),
        (["--elicitation", "few-shot-dialogue", "--shots", "-1"], "--shots -1 must be at least 0"),
        (["--shots", "2"], "--shots 2 needs a few-shot method"),
        (["--elicitation", "zero-shot", "--shots", "2"], "--shots 2 needs a few-shot method"),
    ],
)
def test_bad_elicitation_options_are_one_line(tmp_path, capsys, args, message):
    code = run_cli(
        "evaluate",
        "--model",
        "baseline:rolegpt",
        "--tasks",
        "rolebench_demo",
        "--output",
        str(tmp_path),
        *args,
    )
    err = capsys.readouterr().err.strip()
    assert code == 2 and message in err and len(err.splitlines()) == 1
    assert not (tmp_path / "results.json").exists()


def test_missing_or_corrupt_script_is_one_line_before_any_work(tmp_path, rolebench_data, capsys):
    data = zh_data(tmp_path, rolebench_data, roles=("孙悟空", "皇帝", "华妃", "张飞"))
    args = ["--model", "baseline:rolegpt", "--tasks", "rolebench_zh_specific", "--data-dir", str(data)]
    out = tmp_path / "run"
    assert run_cli("evaluate", *args, "--output", str(out), "--elicitation", "few-shot-prompt") == 2
    err = capsys.readouterr().err.strip()
    assert "role '李白' has no script file profiles-zh/profiles-zh-李白.jsonl" in err
    assert "rolebench data download" in err and "--shots 0" in err and len(err.splitlines()) == 1
    assert not out.exists()  # nothing was claimed or generated
    script = data / "profiles-zh" / "profiles-zh-李白.jsonl"
    script.write_text(
        '{"act_id": 1, "role": "杜甫", "content": "太白兄"}\n{"act_id": 1, "role": "李白"\n', "utf-8"
    )
    assert run_cli("evaluate", *args, "--output", str(out), "--elicitation", "few-shot-prompt") == 2
    err = capsys.readouterr().err.strip()
    assert f"{script}:2" in err and "malformed JSON" in err and len(err.splitlines()) == 1
    script.write_text('{"act_id": 1, "speaker": "杜甫", "content": "太白兄"}\n', "utf-8")
    assert run_cli("evaluate", *args, "--output", str(out), "--elicitation", "few-shot-prompt") == 2
    assert f"{script}:1" in capsys.readouterr().err
    assert run_cli("evaluate", *args, "--output", str(out), "--shots", "0") == 0  # zero-shot needs no script


LI_BAI = "李白"


@pytest.mark.parametrize(
    ("lines", "why"),
    [
        ([], "the file is empty"),
        (
            [("杜甫", "太白兄，何时再饮一杯？"), ("杜甫", "明日再会。")],
            "it holds no line of '李白' (1 other speakers)",
        ),
        ([(LI_BAI, "x" * 5_000_000)], "no line of '李白' answers another speaker's line in the same act"),
        ([("杜甫", "太白兄？"), (LI_BAI, "x" * 5_000_000)], "every pair is over 1,000 characters"),
    ],
    ids=["empty", "no-line-of-the-role", "one-5MB-line", "a-5MB-reply"],
)
def test_a_script_with_no_usable_pair_is_refused_before_any_model_loads(
    lines, why, tmp_path, rolebench_data, capsys
):
    """Without a refusal, the role's items were answered zero-shot inside a run labelled few-shot."""
    data = zh_data(tmp_path, rolebench_data, roles=("孙悟空", "皇帝", "华妃", "张飞"))
    script = data / "profiles-zh" / f"profiles-zh-{LI_BAI}.jsonl"
    script.write_text("", encoding="utf-8")
    write_script(script, lines)
    out = tmp_path / "run"
    args = ["--model", "baseline:rolegpt", "--tasks", "rolebench_zh_specific", "--data-dir", str(data)]
    assert run_cli("evaluate", *args, "--output", str(out), "--elicitation", "few-shot-dialogue") == 2
    err = capsys.readouterr().err.strip()
    assert f"role '{LI_BAI}' has no usable dialogue pair for few-shot demonstrations: {why}" in err
    assert str(script) in err and "--shots 0" in err and len(err.splitlines()) == 1 and len(err) < 1000
    assert not out.exists()  # refused while planning: nothing claimed, no model loaded


def test_demo_few_shot_offline_with_a_real_model_records_context_cost(
    tmp_path, tiny_model_dir, monkeypatch, capsys
):
    """No data folder, no network: the packaged demo ships its scripts. Demonstrations cost prompt tokens."""
    monkeypatch.delenv("ROLEBENCH_DATA", raising=False)  # no data folder: the Hub, which is offline here
    model = f"hf:{tiny_model_dir}"
    flags = ["--max-new-tokens", "4"]
    zero = demo_run(tmp_path, *flags, model=model)
    few = demo_run(tmp_path, *flags, "--elicitation", "few-shot-dialogue", model=model)
    out = capsys.readouterr().out
    assert "elicitation: few-shot-dialogue, 3 shots" in out and "prompt tok" in out and "latency s" in out
    for task in ("rolebench_demo_general", "rolebench_demo_specific"):
        cost = {run: read_results(run).results[task].context for run in (zero, few)}
        assert cost[zero].shots_mean == 0 and cost[few].shots_mean == 3
        assert cost[zero].n_prompt_tokens == cost[few].n_prompt_tokens == read_results(zero).results[task].n
        assert cost[few].prompt_tokens_mean > cost[zero].prompt_tokens_mean + 50
        assert cost[few].seconds_mean is not None and cost[few].seconds_mean > 0
        records = read_samples(few, task)
        assert all(r.usage and r.usage["prompt_tokens"] > 0 and r.seconds for r in records)
    boards = collect([zero, few], reference=False)
    [board] = [b for b in boards if any(r.source == "ours" for r in b.rows)]  # the methods ranked together
    rows = {r.elicitation: r for r in board.rows if r.source == "ours"}
    assert set(rows) == {"zero-shot", "few-shot-dialogue, 3 shots"}
    assert rows["few-shot-dialogue, 3 shots"].prompt_tokens > rows["zero-shot"].prompt_tokens
    markdown, table = to_markdown(boards), to_csv(boards)
    assert "Prompting" in markdown and "| few-shot-dialogue, 3 shots |" in markdown
    tokens = rows["few-shot-dialogue, 3 shots"].prompt_tokens
    assert f"{tokens:.0f} · " in markdown and "prompt_tokens" in table.splitlines()[0]
    assert "few-shot-dialogue, 3 shots" in to_html(boards)


def test_default_output_folder_names_the_method(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert run_cli("evaluate", "--model", "baseline:rolegpt", "--tasks", "rolebench_demo_specific") == 0
    assert (
        run_cli(
            "evaluate",
            "--model",
            "baseline:rolegpt",
            "--tasks",
            "rolebench_demo_specific",
            "--elicitation",
            "few-shot-dialogue",
        )
        == 0
    )
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == [
        "baseline_rolegpt",
        "baseline_rolegpt-few-shot-dialogue-3",
    ]
    assert get_split("zh_general").script_file("李白") == "profiles-zh/profiles-zh-李白.jsonl"


def test_another_method_in_the_same_folder_is_refused_unless_overwrite(tmp_path, capsys):
    out = demo_run(tmp_path)
    args = ["--model", "baseline:rolegpt", "--tasks", "rolebench_demo", "--output", str(out)]
    assert run_cli("evaluate", *args, "--elicitation", "few-shot-dialogue") == 2
    err = capsys.readouterr().err
    assert "--elicitation/--shots zero-shot there, few-shot-dialogue, 3 shots now" in err
    assert run_cli("evaluate", *args) == 0  # the same run again: resumed
    assert run_cli("evaluate", *args, "--elicitation", "few-shot-dialogue", "--overwrite") == 0
    assert read_results(out).config.elicitation["method"] == "few-shot-dialogue"
