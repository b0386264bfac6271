"""What the benchmark itself leaks: the data audit, the unseen view, the memorisation floor
`baseline:train`, and the `verbatim-references` flag on answers copied from the references.

On the real files (issue 28's figures): every one of the 1,451 Chinese general test instructions is a
train instruction (155 items with a reference equal to a train answer, 72 listing RoleGPT's answer);
7 of the 239 Chinese role-specific pairs are in train (5 with a train answer as reference); the train
floor scores .4860 CUS recall / .3673 F; RoleGPT's released answers are never flagged; a model (a real
OpenAI-compatible server) that answers with the references always is. A small folder in the Hub layout
checks each rule of the audit one item at a time, without the real files.
"""

# ruff: noqa: F811 - the imported `fake_openai` fixture is used as an argument, the pytest way

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from rolebench import evaluate
from rolebench.cli.main import main
from rolebench.data.audit import audit_split
from rolebench.data.samples import load_samples
from rolebench.data.source import DataSource, source_for
from rolebench.data.splits import get_split
from rolebench.report.summary import summary_text
from rolebench.run.folder import read_results, read_samples
from rolebench.scoring.aggregate import flags_of
from rolebench.scoring.copying import copies_references
from rolebench.scoring.flags import (
    BELOW_FLOOR,
    VERBATIM_REFERENCES,
    VERBATIM_SHARE,
    below_floor,
    describe,
    verbatim_flags,
)
from tests.fake_openai import fake_openai  # noqa: F401 - a fixture

TRAIN = "baseline:train"
NEAR = "你最喜欢在什么样的夜晚一个人举杯对月吟诗作赋"  # 21 characters


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


@pytest.fixture
def leaky(tmp_path: Path) -> Path:
    """A Chinese role-specific split in the Hub layout whose test item i shows rule i of the audit."""
    root = tmp_path / "leaky"
    split = root / "rolebench-zh" / "role_specific"
    (root / "profiles-zh").mkdir(parents=True)
    (root / "profiles-zh" / "desc.json").write_text(
        json.dumps({"孙悟空": "齐天大圣", "李白": "诗仙"}, ensure_ascii=False), encoding="utf-8"
    )
    write_jsonl(
        split / "train.jsonl",
        [
            {"role": "李白", "question": "孙悟空，你最喜欢的兵器是什么？", "generated": ["金箍棒！"]},
            {"role": "孙悟空", "question": "你的师父是谁？ ", "generated": [" 唐僧是也 "]},
            {"role": "孙悟空", "question": "你的师父是谁？", "generated": ["第二行的答案"]},
            {"role": "李白", "question": f"李白，{NEAR}呢", "generated": ["月夜"]},
            {"role": "李白", "question": "李白，你会喝酒吗？", "generated": ["人生得意须尽欢"]},
        ],
    )  # fmt: skip
    write_jsonl(
        split / "test.jsonl",
        [
            {"role": "孙悟空", "question": "孙悟空，你最喜欢的兵器是什么？", "generated": ["金箍棒。"]},
            {"role": "孙悟空", "question": " 你的师父是谁？", "generated": ["唐僧。"]},
            {"role": "李白", "question": "李白，你喜欢什么诗？", "generated": [" 人生得意须尽欢 "]},
            {"role": "李白", "question": f"李白，{NEAR}", "generated": ["满月"]},
            {"role": "孙悟空", "question": "孙悟空，你怕什么？", "generated": ["紧箍咒", "RoleGPT 的答案"]},
            {"role": "孙悟空", "question": "孙悟空，你怕什么？ ", "generated": ["别的"]},
            {"role": "李白", "question": "李白，你的家乡在哪里？", "generated": ["碎叶城"]},
        ],
    )  # fmt: skip
    write_jsonl(
        split / "rolegpt_baseline.jsonl",
        [{"role": "孙悟空", "question": "孙悟空，你怕什么？", "generated": ["RoleGPT 的答案"]}],
    )
    return root


# ---- the audit, rule by rule ----------------------------------------------------------------------------


def test_each_audit_rule_on_its_own_item(leaky):
    audit = audit_split("zh_specific", DataSource("local", str(leaky)))
    ids = {name: [int(i.rsplit("/", 1)[1]) for i in found] for name, found in audit.items.items()}
    assert ids == {
        "instruction_in_train": [0, 1],  # 0 under another role; 1 with surrounding spaces
        "pair_in_train": [1],
        "reference_in_train": [2],  # " 人生得意须尽欢 " is a train answer, stripped
        "instruction_near_train": [3],  # 21 characters shared, the role's name left out
        "reference_is_baseline": [4],
        "duplicates": [5],  # (role, question) of item 4 again, a trailing space apart
    }
    assert (audit.test_items, audit.train_rows) == (7, 5)


def test_the_role_name_alone_makes_no_near_duplicate(leaky):
    split = leaky / "rolebench-zh" / "role_specific"
    rows = [json.loads(line) for line in (split / "test.jsonl").read_text("utf-8").splitlines()]
    # 12 characters shared besides the role's name (14 with it): under lm-eval's 13
    rows[3]["question"] = "李白，你最喜欢在什么样的夜晚一起去江边"
    write_jsonl(split / "test.jsonl", rows)
    audit = audit_split("zh_specific", DataSource("local", str(leaky)))
    assert audit.items["instruction_near_train"] == []


def test_samples_know_whether_train_saw_them_and_its_first_answer(leaky):
    source = DataSource("local", str(leaky))
    samples = load_samples("zh_specific", source, train=True)
    assert [s.in_train for s in samples] == [True, True, False, False, False, False, False]
    assert samples[0].train_answer == "金箍棒！"  # asked under another role: still its answer
    assert samples[1].train_answer == "唐僧是也"  # the first row in file order, stripped
    assert samples[2].train_answer is None
    (leaky / "rolebench-zh" / "role_specific" / "train.jsonl").unlink()
    assert {(s.in_train, s.train_answer) for s in load_samples("zh_specific", source, train=True)} == {
        (None, None)
    }


def test_audit_command_table_and_json(leaky, tmp_path, capsys):
    out = tmp_path / "audit.json"
    assert main(["data", "audit", "--data-dir", str(leaky), "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    row = next(line for line in printed.splitlines() if line.startswith("zh_specific"))
    assert row.split()[1:4] == ["7", "5", "2"]  # test items, train rows, instruction in train
    assert "no test items" in next(line for line in printed.splitlines() if line.startswith("zh_general"))
    document = json.loads(out.read_text(encoding="utf-8"))
    assert set(document["splits"]) == {
        "eng_instruct_general",
        "eng_instruct_specific",
        "eng_role_general",
        "eng_role_specific",
        "zh_general",
        "zh_specific",
    }
    specific = document["splits"]["zh_specific"]
    assert specific["pair_in_train"] == {"count": 1, "ids": ["zh_specific/1"]}
    assert specific["duplicates"]["ids"] == ["zh_specific/5"]
    # no train file: the counts that need it say so instead of a number
    (leaky / "rolebench-zh" / "role_specific" / "train.jsonl").unlink()
    assert main(["data", "audit", "--data-dir", str(leaky), "--json", str(out)]) == 0
    assert "no train file" in capsys.readouterr().out
    specific = json.loads(out.read_text(encoding="utf-8"))["splits"]["zh_specific"]
    assert specific["instruction_in_train"] == {
        "count": None,
        "ids": None,
        "missing": "no train file (rolebench-zh/role_specific/train.jsonl is not in the data)",
    }
    assert specific["duplicates"]["count"] == 1 and specific["train_rows"] is None


def test_build_card_lists_the_leaks_and_keeps_the_items(leaky, tmp_path, capsys):
    pytest.importorskip("pyarrow")
    for clean in ([], ["--clean"]):
        out = tmp_path / ("build" + "".join(clean))
        assert main(["data", "build", str(leaky), "--out", str(out), "--no-progress", *clean]) == 0
        card = (out / "README.md").read_text(encoding="utf-8")
        assert (
            "instruction_generalization_zh (role_specific): 2 of the 7 test instructions are train "
            "instructions (1 of them under the same role); 1 test items have a reference equal to a train "
            "answer; 1 more share 13 tokens with a train instruction. Kept in every version"
        ) in card
        manifest = json.loads((out / "checksums.json").read_text(encoding="utf-8"))
        test = next(t for t in manifest["tables"] if t["split"] == "test")
        assert test["rows"] == 7  # the leaking items are kept in v1.1 too


# ---- the real files -------------------------------------------------------------------------------------


def test_audit_of_the_real_files_gives_the_figures(rolebench_data, tmp_path, capsys):
    out = tmp_path / "audit.json"
    assert main(["data", "audit", "--data-dir", str(rolebench_data), "--json", str(out)]) == 0
    splits = json.loads(out.read_text(encoding="utf-8"))["splits"]
    counts = {s: {k: v["count"] for k, v in d.items() if isinstance(v, dict)} for s, d in splits.items()}
    assert counts["zh_general"] == {
        "instruction_in_train": 1451,  # every test instruction, under another role
        "pair_in_train": 0,
        "reference_in_train": 155,
        "instruction_near_train": 0,
        "reference_is_baseline": 72,
        "duplicates": 0,
    }
    assert counts["zh_specific"] | {"instruction_near_train": None} == {
        "instruction_in_train": 7,
        "pair_in_train": 7,
        "reference_in_train": 5,
        "instruction_near_train": None,
        "reference_is_baseline": 0,
        "duplicates": 0,
    }
    assert len(splits["zh_general"]["reference_in_train"]["ids"]) == 155
    assert splits["zh_general"]["test_items"] == 1451 and splits["zh_general"]["train_rows"] == 5933
    # the English train files are on the Hub only: said, not counted
    english = splits["eng_role_general"]["instruction_in_train"]
    assert english["count"] is None and "no train file" in english["missing"]
    assert counts["eng_role_specific"]["duplicates"] == 213  # the same question asked again, a space apart
    printed = capsys.readouterr().out
    assert "1,451 (100%)" in printed and "no train file" in printed


def run(model: str, tasks: tuple[str, ...], out: Path, data: Path | None = None, **options):
    return evaluate(model, tasks, output=out, data_dir=str(data) if data else None, progress=False, **options)


def test_rolegpt_run_records_the_train_floor_and_the_unseen_view(rolebench_data, tmp_path, capsys):
    out = tmp_path / "rolegpt"
    assert main(["evaluate", "--model", "baseline:rolegpt", "--tasks", "rolebench_zh", "--output", str(out),
                 "--data-dir", str(rolebench_data), "--no-progress"]) == 0  # fmt: skip
    printed = capsys.readouterr().out
    results = read_results(out)
    general, specific = results.results["rolebench_zh_general"], results.results["rolebench_zh_specific"]
    floor = general.value("floors")[TRAIN]
    assert floor["rolellm"]["cus"] == pytest.approx(0.4860, abs=5e-5)  # 85% of RoleGPT's .5707
    assert floor["rolebench"]["cus"] == pytest.approx(0.3673, abs=5e-5)
    assert general.value("cus") == pytest.approx(0.5707, abs=5e-5)
    assert TRAIN in results.groups["rolebench_zh"].value("floors")
    assert general.unseen is not None and general.unseen.n == 0
    assert specific.unseen is not None and specific.unseen.n == 232
    own = [r.scores["spe"] for r in read_samples(out, "rolebench_zh_specific") if r.in_train is False]
    assert specific.unseen.model_extra["spe"] == pytest.approx(sum(own) / len(own))
    assert "baseline:train CUS 0.4860 / 0.3673" in printed
    assert (
        "rolebench_zh_general: unseen items: none, every test question is in rolebench-zh/general/" in printed
    )
    assert (
        "rolebench_zh_specific: unseen items (question not in rolebench-zh/role_specific/train.jsonl): "
        in printed
    )
    assert "232 of 239: SPE" in printed
    # the leaderboard shows the train floor with the others
    board = tmp_path / "board"
    assert main(["leaderboard", "build", str(out), "--out", str(board)]) == 0
    table = (board / "leaderboard.md").read_text(encoding="utf-8")
    assert "floor: the train answer to the same instruction" in table and "0.4860" in table
    # derived from the run folder: `score` on a damaged results.json gives them back, the same
    (out / "results.json").write_text("{", encoding="utf-8")
    assert main(["score", str(out)]) == 0
    again = read_results(out).results["rolebench_zh_specific"]
    assert again.unseen == specific.unseen and again.verbatim == specific.verbatim
    assert again.value("floors") == specific.value("floors")


def test_train_floor_as_a_model(rolebench_data, tmp_path):
    results = run(TRAIN, ("rolebench_zh_general", "rolebench_zh_specific"), tmp_path, rolebench_data)
    general = results.results["rolebench_zh_general"]
    assert general.value("cus") == pytest.approx(0.4860, abs=5e-5) and general.n_not_covered == 0
    assert general.value("cus") == general.value("floors")[TRAIN]["rolellm"]["cus"]  # its own floor
    assert general.value("flags") == []  # a floor is what others are held against
    specific = results.results["rolebench_zh_specific"]
    assert (specific.n_generated, specific.n_not_covered) == (7, 232)  # only where train asks it
    assert (
        "rolebench_zh_specific: 232 of 239 not covered: rolebench-zh/role_specific/train.jsonl asks 7 of the "
        "239 questions (joined on the stripped question, any role)"
    ) in summary_text(results)
    train = [
        json.loads(line)
        for line in (rolebench_data / "rolebench-zh/general/train.jsonl").open(encoding="utf-8")
    ]
    first: dict[str, str] = {}
    for row in train:
        first.setdefault(row["question"].strip(), row["generated"][0].strip())
    records = read_samples(tmp_path, "rolebench_zh_general")
    assert [r.output for r in records] == [first[r.question.strip()] for r in records]


def test_below_floor_holds_a_score_against_the_train_floor():
    floors = {
        "baseline:question": {"rolellm": {"cus": 0.40}},
        "baseline:description": {"rolellm": {"cus": 0.23}},
        TRAIN: {"rolellm": {"cus": 0.486}},
    }
    assert below_floor({"cus": 0.45}, floors, "rolellm") == ["cus"]  # above the question, below train
    task = {"cus": 0.45, "lengths": {}, "verbatim": {"share": 0.0}}
    assert flags_of(task, floors, "rolellm", "hf:some-model") == [BELOW_FLOOR]
    assert flags_of(task, floors, "rolellm", TRAIN) == []


def test_released_rolegpt_answers_are_never_verbatim(rolebench_data, tmp_path):
    tasks = (
        "rolebench_zh_general",
        "rolebench_zh_specific",
        "rolebench_eng_instruct_specific",
        "rolebench_eng_role_specific",
    )
    results = run("baseline:rolegpt", tasks, tmp_path, rolebench_data)
    shares = {t: results.results[t].verbatim.share for t in tasks}
    assert all(VERBATIM_REFERENCES not in results.results[t].value("flags") for t in tasks)
    assert max(shares.values()) == shares["rolebench_zh_general"] < VERBATIM_SHARE / 4  # 173 of 1,451
    assert results.results["rolebench_zh_general"].verbatim.n_copied == 173
    # judged by the share alone, too: the released answers stay far under the threshold
    assert all(verbatim_flags({"share": share}) == [] for share in shares.values())


def test_the_copy_rule():
    question = "请把这句话改正确：他们去得机场太晚了。"
    reference = "哈哈，俺老孙看来这句话应该这么说：他们去机场去得太晚了，结果错过了飞机。"
    assert copies_references([reference], [[reference]], [question]) == [True]
    assert copies_references(["俺老孙看来这句话应该这么说，不错"], [[reference]], [question]) == [
        True
    ]  # 13 chars
    assert copies_references(["俺老孙看来这句话应该这么"], [[reference]], [question]) == [False]  # 12
    # a run the question holds is not a copy: answers may restate the question
    quoted = "请把这句话改正确他们去得机场太晚了"
    assert copies_references([quoted], [[f"好的：{quoted}。"]], [question]) == [False]
    # a short reference copied whole counts; under 4 tokens never
    assert copies_references(["Yes, I did sail there."], [["I did sail there"]], ["Did you?"]) == [True]
    assert copies_references(["Aye."], [["Aye."]], ["Well?"]) == [False]


ROLE_IN_PROMPT = re.compile(r"^(?:You are (.+?), your description is|你是(.+?)，你的特征描述是)")


def reference_server(fake_openai, samples):
    """A real OpenAI-compatible server whose model learned the test split: it answers each question
    with its first reference, the role read from the RoleGPT system prompt."""
    answers: dict[tuple[str, str], str] = {}
    for s in samples:
        answers.setdefault((s.role, s.question.strip()), s.references[0])

    def answer(body):
        system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
        role = next(r for r in ROLE_IN_PROMPT.match(system).groups() if r)
        return answers[(role, user.strip())]

    return fake_openai(answer)


def test_a_model_that_answers_with_the_references_is_flagged(fake_openai, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    split = get_split("demo_general")
    source = source_for(split, DataSource("local", "."))
    samples = [*load_samples("demo_general", source), *load_samples("demo_specific", source)]
    server = reference_server(fake_openai, samples)
    out = tmp_path / "copier"
    assert main(["evaluate", "--model", f"openai:fake-model@{server.base_url}", "--tasks", "rolebench_demo",
                 "--output", str(out), "--no-progress"]) == 0  # fmt: skip
    printed = capsys.readouterr().out
    results = read_results(out)
    general, specific = results.results["rolebench_demo_general"], results.results["rolebench_demo_specific"]
    assert VERBATIM_REFERENCES in general.value("flags") and general.verbatim.share == 1.0
    assert VERBATIM_REFERENCES in results.groups["rolebench_demo"].value("flags")
    # the demo's own RoleGPT-style role-specific answers are mostly its references (6 of 9): copying
    # them all is not far more than RoleGPT does there
    assert (specific.verbatim.share, specific.verbatim.rolegpt_share) == (1.0, 6 / 9)
    assert VERBATIM_REFERENCES not in specific.value("flags")
    assert f"flag {describe(VERBATIM_REFERENCES)}" in printed and "copying a reference: 100%" in printed
    assert main(["report", str(out)]) == 0
    assert VERBATIM_REFERENCES in (out / "report.html").read_text(encoding="utf-8")
    board = tmp_path / "board"
    assert main(["leaderboard", "build", str(out), "--out", str(board)]) == 0
    assert VERBATIM_REFERENCES in (board / "leaderboard.md").read_text(encoding="utf-8")


def test_the_reference_copier_is_flagged_on_the_real_files(
    fake_openai, rolebench_data, tmp_path, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    source = DataSource("local", str(rolebench_data))
    samples = [*load_samples("zh_specific", source), *load_samples("eng_role_general", source)]
    server = reference_server(fake_openai, samples)
    tasks = ("rolebench_zh_specific", "rolebench_eng_role_general")
    results = run(f"openai:fake-model@{server.base_url}", tasks, tmp_path, rolebench_data, limit=300)
    for task in tasks:
        result = results.results[task]
        assert VERBATIM_REFERENCES in result.value("flags") and result.verbatim.share > 0.85, task


def test_a_run_answering_some_items_is_held_against_rolegpt_on_those_items(rolebench_data, tmp_path):
    """Issue 32.3: answering exactly as RoleGPT did on the 72 Chinese general items whose references list
    RoleGPT's answer copies 73.6%, as RoleGPT does there: like with like, that is not flagged (it was,
    against RoleGPT's 11.9% over all 1,451 items)."""
    from rolebench.evaluation.records import sample_record
    from rolebench.scoring.flags import verbatim

    samples = load_samples("zh_general", DataSource("local", str(rolebench_data)))
    listed = {s.id for s in samples if s.baseline is not None and s.baseline in s.references}
    assert len(listed) == 72
    records = [
        sample_record(s, [], {"output": s.baseline if s.id in listed else None}) for s in samples
    ]  # the other items unanswered (output None), as a run with failed requests leaves them
    measured = verbatim(records)
    assert (measured.n, measured.rolegpt_n) == (72, 72)  # RoleGPT counted on the answered items only
    assert measured.share == measured.joined_share == measured.rolegpt_share == pytest.approx(53 / 72)
    assert verbatim_flags(measured.model_dump()) == []
    # the same answers held against RoleGPT over every item (the old rule) would be flagged
    assert verbatim_flags({"share": measured.share, "rolegpt_share": 173 / 1451}) == [VERBATIM_REFERENCES]
    # a run copying the references on the other items, where RoleGPT seldom copies, is flagged
    copier = [sample_record(s, [], {"output": None if s.id in listed else s.references[0]}) for s in samples]
    copied = verbatim(copier)
    assert copied.rolegpt_n == 1451 - 72 and copied.rolegpt_share == pytest.approx(120 / 1379)
    assert verbatim_flags(copied.model_dump()) == [VERBATIM_REFERENCES]


def test_the_verbatim_rule_against_rolegpt():
    assert verbatim_flags({"share": 0.9, "rolegpt_share": None}) == [VERBATIM_REFERENCES]
    assert verbatim_flags({"share": 0.9, "rolegpt_share": 0.12}) == [VERBATIM_REFERENCES]
    assert verbatim_flags({"share": 0.9, "rolegpt_share": 0.45}) == []  # not over twice RoleGPT's
    assert verbatim_flags({"share": 0.5, "rolegpt_share": 0.0}) == []  # not over half
    assert verbatim_flags(None) == [] and verbatim_flags({"share": None}) == []


def test_remembered_floors_and_shares_are_the_computed_ones(tmp_path, monkeypatch, capsys):
    """Floors and copying shares are remembered across runs by content (`rolebench.scoring.remembered`):
    served again they are the numbers computed; a damaged or unusable cache changes nothing."""
    from rolebench.scoring.remembered import SCORES_FILE, SCORES_TABLE
    from rolebench.storage.records import RecordStore

    cache = tmp_path / "cache"
    monkeypatch.setenv("ROLEBENCH_CACHE", str(cache))
    out = tmp_path / "run"
    run("baseline:rolegpt", ("rolebench_demo",), out)

    def measured():
        results = read_results(out)
        return [(t.value("floors"), t.verbatim) for t in results.results.values()]

    computed = measured()
    with RecordStore(cache / SCORES_FILE, SCORES_TABLE) as store:
        assert len(store) == 2 * 2 * 2 + 2  # (question, description) x 2 protocols x 2 tasks, 2 shares
    with sqlite3.connect(cache / SCORES_FILE) as db:  # numbers no floor or share can be: computed again
        db.execute(f"UPDATE {SCORES_TABLE} SET record = ?", ('{"spe": 7.0, "cus": "high", "share": 2.0}',))
    assert main(["score", str(out), "--protocol", "rolebench"]) == 0
    assert measured() == computed
    (cache / SCORES_FILE).write_bytes(b"not a database" * 100)  # damaged
    assert main(["score", str(out), "--protocol", "rolebench"]) == 0
    assert measured() == computed
    blocked = tmp_path / "a-file"
    blocked.write_text("", encoding="utf-8")
    monkeypatch.setenv("ROLEBENCH_CACHE", str(blocked / "cache"))  # cannot be made: a file is in the way
    assert main(["score", str(out), "--protocol", "rolebench"]) == 0
    assert measured() == computed
    capsys.readouterr()
