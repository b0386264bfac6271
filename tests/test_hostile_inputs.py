"""A hostile user's inputs: every bad file, flag or folder ends in one line (what, where, what to do) and
a non-zero exit, before any model loads; nothing is written outside the run folder; nothing is lost."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rolebench.cli.main import main
from rolebench.run import folder as run_folder
from rolebench.run.folder import read_results, write_results

ZH_SPECIFIC = "rolebench-zh/role_specific/test.jsonl"


def run(capsys, *args: str) -> tuple[int, str]:
    """Exit code and stderr of one command; stderr must be exactly one line when the command fails."""
    capsys.readouterr()
    code = main([*args, "--no-progress"] if args[0] == "evaluate" else list(args))
    err = capsys.readouterr().err
    if code != 0:
        lines = [line for line in err.splitlines() if line.startswith("rolebench: error:")]
        assert len(lines) == 1 and "Traceback" not in err, err
    return code, err


def evaluate_zh(capsys, data: Path, out: Path, *extra: str) -> tuple[int, str]:
    return run(
        capsys,
        "evaluate",
        "--model",
        "baseline:rolegpt",
        "--tasks",
        "rolebench_zh_specific",
        "--data-dir",
        str(data),
        "--output",
        str(out),
        *extra,
    )


@pytest.fixture
def data(rolebench_data: Path, tmp_path: Path) -> Path:
    """A private copy of the Chinese files, to damage."""
    root = tmp_path / "data"
    for relpath in (
        ZH_SPECIFIC,
        "rolebench-zh/role_specific/rolegpt_baseline.jsonl",
        "profiles-zh/desc.json",
    ):
        (root / relpath).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(rolebench_data / relpath, root / relpath)
    return root


DAMAGED_LINES = {
    "bad bytes": b'{"role": "\xff\xfe", "question": "q", "generated": ["a"]}\n',
    "an array": b'["not", "an", "object"]\n',
    "null": b"null\n",
    "a number": b"42\n",
    "references as a number": '{"role": "李白", "question": "q", "generated": 7}\n'.encode(),
    "references as a dict": '{"role": "李白", "question": "q", "generated": {"a": 1}}\n'.encode(),
    "role as a list": '{"role": ["李白"], "question": "q", "generated": ["a"]}\n'.encode(),
    "type as a dict": '{"role": "李白", "question": "q", "generated": ["a"], "type": {"x": 1}}\n'.encode(),
    "no reference": '{"role": "李白", "question": "q", "generated": []}\n'.encode(),
    "deep nesting": b'{"role": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n",
    "unknown role": b'{"role": "nobody", "question": "q", "generated": ["a"]}\n',
}


@pytest.mark.parametrize("damage", list(DAMAGED_LINES))
def test_a_damaged_data_line_is_one_line_naming_it(damage, data, tmp_path, capsys):
    path = data / ZH_SPECIFIC
    path.write_bytes(path.read_bytes() + DAMAGED_LINES[damage])
    code, err = evaluate_zh(capsys, data, tmp_path / "out")
    assert code == 2 and ("test.jsonl" in err or "desc.json" in err or "profiles-zh" in err)
    assert not (tmp_path / "out").exists()  # a failed run leaves no folder behind


@pytest.mark.parametrize("content", [b"", b"\n  \n"])
def test_an_empty_test_file_is_refused(content, data, tmp_path, capsys):
    (data / ZH_SPECIFIC).write_bytes(content)
    code, err = evaluate_zh(capsys, data, tmp_path / "out")
    assert code == 2 and "has no records" in err


def test_a_folder_where_the_test_file_should_be(data, tmp_path, capsys):
    (data / ZH_SPECIFIC).unlink()
    (data / ZH_SPECIFIC).mkdir()
    assert evaluate_zh(capsys, data, tmp_path / "out")[0] == 2


def test_bom_and_crlf_files_score_like_the_clean_ones(data, tmp_path, capsys):
    assert evaluate_zh(capsys, data, tmp_path / "clean")[0] == 0
    for relpath in (ZH_SPECIFIC, "profiles-zh/desc.json"):
        text = (data / relpath).read_text(encoding="utf-8")
        (data / relpath).write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode("utf-8"))
    assert evaluate_zh(capsys, data, tmp_path / "bom")[0] == 0
    clean, bom = read_results(tmp_path / "clean"), read_results(tmp_path / "bom")
    assert clean.results["rolebench_zh_specific"].value("spe") == bom.results["rolebench_zh_specific"].value(
        "spe"
    )


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (["--max-new-tokens", "0"], "--max-new-tokens 0 must be at least 1"),
        (["--max-new-tokens", "-5"], "--max-new-tokens -5 must be at least 1"),
        (["--temperature", "nan"], "--temperature nan must be a finite number"),
        (["--temperature", "-1"], "--temperature -1.0 must be at least 0"),
        (["--top-p", "0"], "--top-p 0.0 must be above 0"),
        (["--bootstrap", "-5"], "--bootstrap -5 must be at least 0"),
        (["--limit", "0"], "--limit"),
        (["--batch-size", "0"], "--batch-size 0 must be at least 1"),
        (["--model-args", "api_key=sk-123456789"], "unknown option 'api_key' for baseline: models"),
        (["--judge", "nope:x"], "unknown model scheme 'nope'"),
        (["--judge", "openai:gpt-4o-mini", "--judge-config", "no_such_judge"], "unknown judge"),
        (
            ["--judge", "openai:gpt-4o-mini@http://127.0.0.1:9/v1", "--price-table", "/no/such.yaml"],
            "price table",
        ),
    ],
)
def test_absurd_flags_are_refused_before_any_work(flags, expected, rolebench_data, tmp_path, capsys):
    code, err = run(
        capsys,
        "evaluate",
        "--model",
        "baseline:rolegpt",
        "--tasks",
        "rolebench_demo",
        "--output",
        str(tmp_path / "out"),
        *flags,
    )
    assert code == 2 and expected in err
    assert not (tmp_path / "out").exists()


def test_a_file_to_write_that_cannot_be_is_named_as_given(tmp_path, capsys):
    """`--json` (and every result file, written atomically through a temporary file beside it): a target
    that is a folder, or under a file, is one line naming the user's path, never the temporary file."""
    data = tmp_path / "data"
    assert run(capsys, "data", "audit", str(data.parent))[0] == 2  # no test file: refused
    split = data / "rolebench-zh" / "role_specific"
    split.mkdir(parents=True)
    (split / "test.jsonl").write_text(
        json.dumps({"role": "李白", "question": "你会喝酒吗？", "generated": ["会"]}) + "\n", encoding="utf-8"
    )
    (data / "profiles-zh").mkdir()
    (data / "profiles-zh" / "desc.json").write_text(json.dumps({"李白": "诗仙"}), encoding="utf-8")
    in_the_way = tmp_path / "a-file"
    in_the_way.write_text("x", encoding="utf-8")
    for target, named in [
        (tmp_path, f"Is a directory ({tmp_path})"),
        (in_the_way / "audit.json", f"Not a directory ({in_the_way})"),
        (in_the_way / "deeper" / "audit.json", f"Not a directory ({in_the_way})"),
    ]:
        code, err = run(capsys, "data", "audit", str(tmp_path / "data"), "--json", str(target))
        assert code == 2 and named in err and err.count("\n") == 1, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file", "data"]  # no temporary file left


def test_no_task_and_an_output_that_is_a_file(tmp_path, capsys):
    assert (
        run(capsys, "evaluate", "--model", "baseline:rolegpt", "--tasks", ",")[1].count("no task given") == 1
    )
    target = tmp_path / "a-file"
    target.write_text("x", encoding="utf-8")
    code, err = run(
        capsys,
        "evaluate",
        "--model",
        "baseline:rolegpt",
        "--tasks",
        "rolebench_demo",
        "--output",
        str(target),
    )
    assert code == 2 and "is a file" in err and target.read_text(encoding="utf-8") == "x"


@pytest.fixture
def demo_run(tmp_path: Path, capsys) -> Path:
    out = tmp_path / "run"
    assert (
        run(
            capsys,
            "evaluate",
            "--model",
            "baseline:rolegpt",
            "--tasks",
            "rolebench_demo",
            "--output",
            str(out),
        )[0]
        == 0
    )
    return out


@pytest.mark.parametrize("command", ["score", "report", "evaluate"])
@pytest.mark.parametrize(
    "damage",
    [b"\xff\xfe not json", b"[]", b'{"schema_version": 2}', b"{" * 50_000],
)
def test_a_damaged_results_file_is_derived_again(command, damage, demo_run, capsys):
    """results.json is derived from the run's files: any command on the run derives it again."""
    (demo_run / "results.json").write_bytes(damage)
    if command == "evaluate":  # the same run again: nothing to generate, results.json derived anew
        args = ["--model", "baseline:rolegpt", "--tasks", "rolebench_demo", "--no-progress", "--output"]
        code, err = run(capsys, command, *args, str(demo_run))
    else:
        code, err = run(capsys, command, str(demo_run))
        assert "results.json was damaged" in err and "derived again" in err
    assert code == 0 and "Traceback" not in err
    assert set(read_results(demo_run).results) == {"rolebench_demo_general", "rolebench_demo_specific"}


@pytest.mark.parametrize("damage", [b"\xff\xfe\n", b"[1, 2]\n", b'{"id": 3}\n'])
def test_a_damaged_samples_file_is_rebuilt_from_the_store(damage, demo_run, capsys):
    expected = read_results(demo_run).results["rolebench_demo_general"].value("cus")
    (demo_run / "samples" / "rolebench_demo_general.jsonl").write_bytes(damage)
    code, err = run(capsys, "leaderboard", "build", str(demo_run), "--out", str(demo_run.parent / "board"))
    assert code in (0, 2) and "Traceback" not in err  # the leaderboard reads results.json only
    code, err = run(capsys, "report", str(demo_run))
    assert code == 0 and "rebuilt samples/rolebench_demo_general.jsonl" in err
    assert read_results(demo_run).results["rolebench_demo_general"].value("cus") == expected


def test_task_names_from_results_never_become_paths_outside_the_run(demo_run, capsys):
    results = read_results(demo_run)
    results.results["../../escaped"] = results.results.pop("rolebench_demo_general")
    write_results(demo_run, results)
    code, err = run(capsys, "leaderboard", "build", str(demo_run), "--out", str(demo_run.parent / "board"))
    assert code == 2 and "unsafe task name" in err and f"rolebench score {demo_run}" in err
    code, err = run(capsys, "report", str(demo_run))  # derived again from run.json and the samples files
    assert code == 0 and "../../escaped" not in read_results(demo_run).results
    assert not (demo_run.parent.parent / "escaped.jsonl").exists()


def test_an_interrupted_write_is_repaired_by_the_next_command(demo_run, capsys):
    path = demo_run / "samples" / "rolebench_demo_specific.jsonl"
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    lines[0]["output"] = lines[0]["references"][0]  # the samples were rewritten, results.json was not
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
    (demo_run / ".results.json.tmp1234").write_text("half a file", encoding="utf-8")  # a killed atomic write
    before = read_results(demo_run).results["rolebench_demo_specific"].value("spe")
    code, err = run(capsys, "report", str(demo_run))
    assert code == 0 and "did not match the samples of rolebench_demo_specific" in err
    assert read_results(demo_run).results["rolebench_demo_specific"].value("spe") > before
    assert not (demo_run / ".results.json.tmp1234").exists()


def test_a_busy_run_folder_is_refused_after_a_short_wait(demo_run, capsys, monkeypatch):
    from filelock import FileLock

    monkeypatch.setattr(run_folder, "WAIT_S", 0.2)
    with FileLock(str(demo_run / run_folder.LOCK_FILE), is_singleton=False, thread_local=False):
        code, err = run(capsys, "score", str(demo_run))
    assert code == 2 and "another rolebench command is using this run folder" in err
    assert run(capsys, "score", str(demo_run))[0] == 0  # free again


def test_a_role_name_that_looks_like_math_is_text_in_the_report(demo_run, capsys):
    results = read_results(demo_run)
    results.results["rolebench_demo_general"].value("rolellm")["per_role"]["$\\frac{1}{$"] = {
        "n": 1,
        "cus": 0.5,
    }
    results.results["rolebench_demo_general"].per_role["$\\frac{1}{$"] = {"n": 1, "cus": 0.5, "raw": None}
    results.results["rolebench_demo_general"].samples_sha256 = None
    write_results(demo_run, results)
    pytest.importorskip("matplotlib")
    assert run(capsys, "report", str(demo_run))[0] == 0
