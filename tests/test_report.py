"""`rolebench report`: one self-contained page per run: per-role charts, worst samples, config, escaping."""

from __future__ import annotations

import base64
import json
import re
import shutil
from pathlib import Path

import pytest

from rolebench import evaluate
from rolebench.cli.main import main
from rolebench.report.page import report_context, write_report
from rolebench.run.folder import read_results, read_samples, write_results, write_samples

XSS = "<script>alert(1)</script>"
EVIL_OUTPUT = "<img src=x onerror=alert(2)>"


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory) -> Path:
    run_dir = tmp_path_factory.mktemp("report") / "demo"
    evaluate(**dict(model="baseline:rolegpt", tasks=("rolebench_demo",), output=run_dir, progress=False))
    return run_dir


def charts(page: str) -> list[str]:
    return [
        base64.b64decode(m).decode("utf-8")
        for m in re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', page)
    ]


def test_report_has_charts_worst_samples_and_config(demo_run, tmp_path):
    out = write_report(demo_run, tmp_path / "report.html", worst=3)
    page = out.read_text(encoding="utf-8")
    svgs = charts(page)
    assert len(svgs) == 2 and all(svg.lstrip().startswith("<?xml") and "<svg" in svg for svg in svgs)
    roles = set(read_results(demo_run).results["rolebench_demo_general"].per_role)
    assert all(role in svgs[0] for role in roles)  # role names stay text in the SVG
    context = report_context(demo_run, worst=3)
    general = next(t for t in context["tasks"] if t["name"] == "rolebench_demo_general")
    scored = sorted(
        (r.scores["cus"], r.index, r.id)
        for r in read_samples(demo_run, "rolebench_demo_general")
        if r.scores["cus"] is not None
    )
    assert [row["id"] for row in general["worst"]["rows"]] == [i for _, _, i in scored[:3]]
    assert general["worst"]["unscored"] == 1 and general["primary"] == "CUS"
    assert "1 samples have no CUS score" in page
    assert "&#34;bootstrap&#34;: {" in page and "&#34;protocol&#34;: &#34;rolellm&#34;" in page


def test_report_is_self_contained(demo_run, tmp_path):
    page = write_report(demo_run, tmp_path / "r.html").read_text(encoding="utf-8")
    assert not re.search(r"""(?:src|href|action)\s*=\s*["']?\s*(?:https?:)?//""", page, re.I)
    assert "<script" not in page and "url(" not in page and "default-src 'none'" in page


def test_report_escapes_names_and_answers(demo_run, tmp_path):
    run_dir = tmp_path / "run"
    shutil.copytree(demo_run, run_dir)
    results = read_results(run_dir)
    results.config.model["name"] = XSS
    write_results(run_dir, results)
    records = read_samples(run_dir, "rolebench_demo_specific")
    records[0] = records[0].model_copy(update={"output": EVIL_OUTPUT, "scores": {"spe": 0.0}})
    write_samples(run_dir, "rolebench_demo_specific", records)
    page = write_report(run_dir).read_text(encoding="utf-8")
    assert XSS not in page and EVIL_OUTPUT not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "&lt;img src=x onerror=alert(2)&gt;" in page
    assert (run_dir / "report.html").is_file()  # default place: inside the run folder


def test_report_without_samples_files(demo_run, tmp_path):
    run_dir = tmp_path / "run"
    shutil.copytree(demo_run, run_dir, ignore=shutil.ignore_patterns("samples"))
    page = write_report(run_dir).read_text(encoding="utf-8")
    assert "No samples file for this task" in page and len(charts(page)) == 2


def test_report_of_a_chinese_run_keeps_role_names(rolebench_data, tmp_path):
    evaluate(
        **dict(
            model="baseline:rolegpt",
            tasks=("rolebench_zh_specific",),
            output=tmp_path,
            data_dir=str(rolebench_data),
            limit=12,
            progress=False,
        )
    )
    page = write_report(tmp_path).read_text(encoding="utf-8")
    roles = read_results(tmp_path).results["rolebench_zh_specific"].per_role
    assert roles and all(role in charts(page)[0] for role in roles)
    assert "partial run: --limit 12" in page


def test_report_command(demo_run, tmp_path, capsys):
    assert main(["report", str(demo_run), "--out", str(tmp_path / "page.html"), "--worst", "2"]) == 0
    assert "page.html" in capsys.readouterr().out and (tmp_path / "page.html").is_file()
    assert main(["report", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no such run folder" in err
    assert main(["report", str(demo_run), "--worst", "-1"]) == 2


def test_report_config_is_the_run_config(demo_run):
    shown = json.loads(report_context(demo_run)["config"])
    assert shown == read_results(demo_run).config.model_dump(mode="json")


def test_report_shows_every_protocol_lengths_flags_and_floors(demo_run, tmp_path):
    results = read_results(demo_run)
    task = results.results["rolebench_demo_specific"]
    task.lengths.answer_words_mean = 5 * (task.lengths.reference_words_mean or 1.0)  # as a rambler's
    task.value("flags").append("length-inflated")
    copy = tmp_path / "run"
    shutil.copytree(demo_run, copy)
    write_results(copy, results)
    context = report_context(copy)
    start = next(i for i, row in enumerate(context["summary"]) if row["name"] == "rolebench_demo_specific")
    protocols = [row["protocol"] for row in context["summary"][start : start + 2]]
    assert protocols == ["rolellm (recall)", "rolebench (F)"]  # both protocols, the headline first
    specific = next(row for row in context["summary"] if row["name"] == "rolebench_demo_specific")
    assert specific["flags"][0][0] == "length-inflated" and "references' length" in specific["flags"][0][1]
    answers = {row["name"]: row for row in context["answers"]}
    assert (
        answers["rolebench_demo_specific"]["ratio"] == "5.00x"
        and answers["rolebench_demo_general"]["cut"] == "0%"
    )
    assert answers["rolebench_demo_general"]["looping"] == "0%"
    floors = [(row["name"], row["spec"]) for row in context["floors"]]
    assert ("rolebench_demo_specific", "baseline:question") in floors and (
        "rolebench_demo",
        "baseline:description",
    ) in floors
    question = next(
        r for r in context["floors"] if r["name"] == "rolebench_demo" and r["spec"] == "baseline:question"
    )
    recorded = results.groups["rolebench_demo"].value("floors")["baseline:question"]
    assert (
        question["cells"][0][3] == f"{recorded['rolellm']['avg']:.4f}"
        and question["cells"][1][3] == f"{recorded['rolebench']['avg']:.4f}"
    )
    page = write_report(copy, tmp_path / "r.html").read_text(encoding="utf-8")
    for text in (
        "Answers",
        "Floors",
        "cut at the token limit",
        "looping",
        "LC win rate",
        "below-floor: at or below",
    ):
        assert text in page


def test_report_title_is_the_model_spec_the_user_gave_shown_as_it_is(demo_run, tmp_path):
    """Not the name in the model file's metadata (issue 36 item 7); invisible characters as escapes."""
    run_dir = tmp_path / "run"
    shutil.copytree(demo_run, run_dir)
    results = read_results(run_dir)
    results.config.model.update(name="Smollm2 135M 8k Lc100K Mix1 Ep2", spec="hf:./my-model\u202e")
    write_results(run_dir, results)
    context = report_context(run_dir)
    assert context["title"] == "RoleBench run report: hf:./my-model\\u202e"
    page = write_report(run_dir).read_text(encoding="utf-8")
    assert "<title>RoleBench run report: hf:./my-model\\u202e</title>" in page
    assert "\u202e" not in page.split("<h1>")[1].split("</h1>")[0]
