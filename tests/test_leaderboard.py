"""Leaderboard: boards from real run folders, the paper's rows, every output format, escaping, and the page
in headless Chromium. Publishing is tested in test_hub_publish.py."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from pathlib import Path

import pytest

from rolebench import evaluate, score
from rolebench.cli.main import main
from rolebench.errors import DataError
from rolebench.judging.outcomes import judge_fields
from rolebench.leaderboard.boards import FLOOR, REPORTED, collect, reference_rows
from rolebench.leaderboard.build import build
from rolebench.leaderboard.tables import to_csv, to_latex, to_markdown
from rolebench.results.schema import GroupResult, TaskResult
from rolebench.run.folder import read_results, read_samples, write_results, write_samples

REPO_ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = REPO_ROOT / "test-artifacts"
XSS = "<script>alert(1)</script>"
EVIL_ROLE = "</script><script>alert(2)</script>"
NAMES = {"nested/xss": XSS}  # the name a user gives a run (`leaderboard build --name RUN=NAME`)


def scale_samples(run_dir: Path, scales: dict[str, float]) -> None:
    """Every per-item score of a run multiplied by its protocol's factor, and results.json pointed at the new
    samples files: the items behind a variant's numbers (rank intervals read them)."""
    results = read_results(run_dir)
    for task, entry in results.results.items():
        records = read_samples(run_dir, task)
        for record in records:
            for protocol, factor in scales.items():
                block = record.protocol_scores.get(protocol) or {}
                block.update({k: v * factor for k, v in block.items() if v is not None})
            headline = record.protocol_scores.get(entry.protocol or "") or {}
            record.scores.update({k: v for k, v in headline.items() if k in record.scores})
        entry.samples_sha256 = write_samples(run_dir, task, records)
    write_results(run_dir, results)


def variant(source: Path, target: Path, *, name: str, scale: float, spec: str | None = None) -> Path:
    """A copy of a real run as another model (spec `name` unless given): same shape, every metric and every
    per-item score multiplied by `scale`."""
    shutil.copytree(source, target)
    results = read_results(target)
    results.config.model = {**results.config.model, "name": name, "spec": spec or name}
    for entry in [*results.results.values(), *results.groups.values()]:
        for metric in ("cus", "raw", "spe", "avg"):
            if getattr(entry, metric, None) is not None:
                setattr(entry, metric, getattr(entry, metric) * scale)
            for protocol in ("rolellm", "rolebench"):
                block = entry.value(protocol) or {}
                if block.get(metric) is not None:
                    block[metric] *= scale
        for block in [entry.model_dump(), *(entry.value(p) or {} for p in ("rolellm", "rolebench"))]:
            for values in (block.get("per_role") or {}).values():
                values.update({k: v * scale for k, v in values.items() if k != "n" and v is not None})
    write_results(target, results)
    scale_samples(target, {"rolellm": scale, "rolebench": scale})
    return target


def add_judge(run_dir: Path, outcomes: list[str]) -> None:
    """Judge fields as rolebench.judging writes them (by its own judge_fields) on every task and group."""
    results = read_results(run_dir)
    lines = [
        {"status": "judged", "outcome": o, "consistent": True, "len_model": 10, "len_baseline": 12}
        for o in outcomes
    ]
    fields = judge_fields(lines, results.config.bootstrap)
    for task, entry in results.results.items():
        results.results[task] = TaskResult(**{**entry.model_dump(), **fields})
    for group, entry in results.groups.items():
        results.groups[group] = GroupResult(**{**entry.model_dump(), **fields})
    results.config.judge = {
        "spec": "openai:gpt-4o-mini",
        "template_hash": "0123456789abcdef",
        "protocol": "pairwise vs the RoleGPT baseline",
        "limit": None,
    }
    write_results(run_dir, results)


@pytest.fixture(scope="module")
def runs(tmp_path_factory, rolebench_data) -> Path:
    """Real runs of baseline:rolegpt (demo; Chinese with --limit), variants of the demo run as other models,
    one re-scored under the opencompass protocol, one judged, one with a hostile model name."""
    root = tmp_path_factory.mktemp("runs")
    demo = root / "demo-rolegpt"
    evaluate(**dict(model="baseline:rolegpt", tasks=("rolebench_demo",), output=demo, progress=False))
    evaluate(
        **dict(
            model="baseline:rolegpt",
            tasks=("rolebench_zh",),
            output=root / "zh-limit",
            data_dir=str(rolebench_data),
            limit=20,
            progress=False,
        )
    )
    evaluate(
        **dict(
            model="baseline:rolegpt",
            tasks=("rolebench_demo_general",),
            output=root / "nested" / "half",
            progress=False,
        )
    )
    variant(demo, root / "demo-weak", name="weak model", scale=0.5)
    variant(demo, root / "demo-mid", name="mid model", scale=0.8)
    variant(demo, root / "nested" / "xss", name=XSS, scale=0.3, spec="test:a_b & 100%")
    results = read_results(root / "nested" / "xss")
    results.results["rolebench_demo_general"].value("rolellm")["per_role"][EVIL_ROLE] = {
        "n": 1,
        "cus": 0.25,
        "raw": None,
    }
    write_results(root / "nested" / "xss", results)
    score(shutil.copytree(demo, root / "rescored"), "opencompass")
    variant(root / "rescored", root / "demo-opencompass", name="oc model", scale=0.7)
    shutil.rmtree(root / "rescored")
    legacy = variant(demo, root / "demo-legacy", name="legacy model", scale=1.0)
    old = read_results(legacy)  # a results.json from before runs carried every protocol
    old.config.scoring = {
        "protocol": "opencompass",
        "references": "first",
        "tokenizers": {"en": "x", "zh": "y"},
    }
    write_results(legacy, old)
    add_judge(
        variant(demo, root / "demo-judged", name="judged model", scale=0.9), ["win", "win", "tie", "loss"]
    )
    return root


@pytest.fixture(scope="module")
def boards(runs):
    return collect([runs], names=NAMES)


def board_of(boards, model: str):
    return next(b for b in boards if any(r.model == model for r in b.rows))


def test_rows_come_from_the_runs_group_results(runs, boards):
    board = board_of(boards, "weak model")
    assert board.split == "rolebench_demo" and not board.reference
    assert [r.model for r in board.rows][:3] == [
        "RoleGPT (released baseline answers)",
        "mid model",
        "oc model",
    ]
    assert [r.rank for r in board.rows][:3] == [1, 2, 3]
    top = board.rows[0]
    group = read_results(runs / "demo-rolegpt").groups["rolebench_demo"].model_dump()
    assert (top.cus, top.raw, top.spe, top.avg, top.n) == (
        group["rolellm"]["cus"],
        group["rolellm"]["raw"],
        group["rolellm"]["spe"],
        group["rolellm"]["avg"],
        27,
    )
    assert (top.f_cus, top.f_spe, top.f_avg) == tuple(group["rolebench"][m] for m in ("cus", "spe", "avg"))
    assert top.answer_words and top.cut_at_limit == 0.0
    assert top.n_full == 27 and top.n_not_covered == 1 and "not covered: 1 of 27" in top.warnings()
    assert top.protocol == "rolellm" and top.dataset.startswith("builtin-demo") and top.judge == ""
    assert set(top.per_role) == set(
        read_results(runs / "demo-rolegpt").results["rolebench_demo_general"].per_role
    )
    assert {"n", "cus", "raw", "spe"} <= set(next(iter(top.per_role.values())))


def test_protocols_and_judges_get_separate_boards(boards):
    plain, rescored, legacy, judged = (
        board_of(boards, m) for m in ("weak model", "oc model", "legacy model", "judged model")
    )
    assert rescored.id == plain.id  # a protocol added by `rolebench score` leaves the paper's numbers shown
    assert len({plain.id, legacy.id, judged.id}) == 3
    assert legacy.protocol == "opencompass" and [r.model for r in legacy.rows] == ["legacy model"]
    assert legacy.rows[0].rank == 1 and judged.rows[0].rank == 1  # ranked only among their own board
    row = judged.rows[0]
    assert row.judge == "openai:gpt-4o-mini" and row.win_rate == pytest.approx(0.625)
    assert (row.wins, row.ties, row.losses) == (2, 1, 1) and len(row.win_rate_ci) == 2
    assert "62.50 [" in to_markdown(boards) and "2/1/1" in to_markdown(boards)


def test_partial_runs_are_flagged_and_unranked(boards):
    demo = board_of(boards, "weak model")
    zh = next(b for b in boards if b.split == "rolebench_zh" and not b.reference)
    row = zh.rows[0]
    assert row.partial and row.rank is None and row.limit == 20
    assert (row.n, row.n_full) == (40, 1690)
    assert "partial: 40 of 1,690 (--limit 20)" in row.warnings()
    half = next(r for r in demo.rows if r.run == "nested/half")
    assert half.partial and half.rank is None and half.missing_tasks == ["rolebench_demo_specific"]
    assert half.spe is None and half.cus is not None and half.avg == pytest.approx((half.cus + half.raw) / 2)
    ours = [r for r in demo.rows if r.source != FLOOR]
    assert ours[-1] is half  # unranked rows come after the ranked ones, then the floors
    assert {r.spec for r in demo.rows[len(ours) :]} == {"baseline:question", "baseline:description"}


def test_paper_rows_as_printed_beside_matching_splits(boards):
    rows = reference_rows()
    assert len(rows) == 15 and all(
        r.source == REPORTED and r.protocol == "as printed (the paper's recall; rolellm reproduces it)"
        for r in rows
    )
    llama = next(r for r in rows if r.split == "rolebench_eng_role" and r.model == "LLaMA")
    assert (llama.cus, llama.raw, llama.spe, llama.avg) == (0.1316, 0.1232, 0.2551, 0.2238)
    assert any("avg as printed in the paper" in n for n in llama.notes)
    roleglm = next(r for r in rows if r.model == "RoleGLM")
    assert roleglm.win_rate == pytest.approx(0.3637) and roleglm.judge == "GPT-4 (paper)"
    paper = [b for b in boards if b.reference]
    assert [b.split for b in paper] == ["rolebench_zh"]  # only splits that have rows of ours
    assert all(r.source == REPORTED for b in paper for r in b.rows)
    assert all(r.source != REPORTED for b in boards if not b.reference for r in b.rows)


def test_hostile_names_print_as_text_everywhere(boards):
    markdown, latex = to_markdown(boards), to_latex(boards)
    assert XSS not in markdown and "&lt;script&gt;alert(1)&lt;/script&gt;" in markdown
    assert (
        XSS not in latex
        and r"\textless{}script\textgreater{}alert(1)\textless{}/script\textgreater{}" in latex
    )
    from rolebench.leaderboard.webpage import to_html

    page = to_html(boards)
    assert XSS not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "test:a_b &amp; 100%" in page
    assert page.count("</script>") == 2  # the JSON block and the page script: nothing embedded closes a tag
    data = re.search(r'<script type="application/json" id="roles-data">(.*?)</script>', page, re.S).group(1)
    assert any(EVIL_ROLE in entry["roles"] for entry in json.loads(data)["rows"].values())


def test_csv_has_every_row_and_defuses_formulas(runs, tmp_path):
    shutil.copytree(runs / "demo-rolegpt", tmp_path / "run")
    results = read_results(tmp_path / "run")
    boards = collect([tmp_path], names={"run": '=HYPERLINK("http://x")'})
    rows = list(csv.DictReader(io.StringIO(to_csv(boards))))
    assert rows[0]["model"] == '\'=HYPERLINK("http://x")' and rows[0]["source"] == "ours"
    assert [r["source"] for r in rows] == ["ours", "floor", "floor"]  # no paper board for the demo split
    assert float(rows[0]["avg"]) == pytest.approx(results.groups["rolebench_demo"].avg)


def test_latex_is_booktabs_with_best_in_bold(boards):
    latex = to_latex(boards)
    assert latex.count(r"\toprule") == latex.count(r"\bottomrule") == len(boards) and r"\hline" not in latex
    demo = board_of(boards, "weak model")
    best_avg = f"{demo.rows[0].avg:.4f}"
    assert rf"\textbf{{{best_avg}}}" in latex
    assert r"\textbf{0.4570}" in latex  # RoleGLM's avg, best of the paper's Chinese board


def test_build_command_writes_every_format(runs, tmp_path, capsys):
    assert main(["leaderboard", "build", str(runs), "--out", str(tmp_path)]) == 0
    names = {p.name for p in tmp_path.iterdir()}
    assert names == {
        "leaderboard.md",
        "leaderboard.csv",
        "leaderboard.tex",
        "index.html",
        "leaderboard.json",
        "results",
    }
    document = json.loads((tmp_path / "leaderboard.json").read_text(encoding="utf-8"))
    assert {b["split"] for b in document["boards"]} == {"rolebench_demo", "rolebench_zh"}
    assert "## Packaged demo (not RoleBench)" in (tmp_path / "leaderboard.md").read_text(encoding="utf-8")
    first = (tmp_path / "index.html").read_bytes()
    build([runs], tmp_path)
    assert (tmp_path / "index.html").read_bytes() == first  # rebuilding changes no byte
    assert "boards" in capsys.readouterr().out


def test_page_loads_nothing_from_elsewhere(boards):
    from rolebench.leaderboard.webpage import to_html

    page = to_html(boards)
    assert not re.search(r"""(?:src|href|action)\s*=\s*["']?\s*(?:https?:)?//""", page, re.I)
    assert "@import" not in page and "url(" not in page
    assert "default-src 'none'" in page


def test_build_errors_are_one_line(tmp_path, capsys):
    assert main(["leaderboard", "build", str(tmp_path), "--out", str(tmp_path / "out")]) == 2
    assert "no results.json found" in capsys.readouterr().err
    (tmp_path / "results.json").write_text('{"created": "x"}', encoding="utf-8")
    with pytest.raises(DataError, match="not a rolebench results file"):
        collect([tmp_path])


# ---- the page in a real browser --------------------------------------------------------------------


def chrome_driver(profile: Path):
    """Headless Chromium through the system chromedriver (nothing downloaded), its profile in `profile` (a
    test's own folder, removed with it); skip when absent."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver")
    if not chromium or not driver_path:
        pytest.skip(
            "needs Debian packages chromium and chromium-driver (apt-get install chromium chromium-driver)"
        )
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1400,1100",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(arg)
    return webdriver.Chrome(service=Service(driver_path), options=options)


def visible_models(driver, board_id: str | None = None) -> list[str]:
    scope = f'table[data-board="{board_id}"] ' if board_id else ""
    cells = driver.find_elements("css selector", f"{scope}tr.row td:nth-child(2) .model")
    return [c.text for c in cells if c.is_displayed()]


def test_page_sorts_filters_and_drills_down_in_chromium(runs, tmp_path):
    _, written = build([runs], tmp_path, names=NAMES)
    driver = chrome_driver(tmp_path / "chrome")
    try:
        driver.get((tmp_path / "index.html").as_uri())
        board = board_of(collect([runs], names=NAMES), "weak model")
        headers = driver.find_elements("css selector", f'table[data-board="{board.id}"] th')
        highest_first = [r.model for r in sorted(board.rows, key=lambda r: -r.avg)]
        assert visible_models(driver, board.id) == [r.model for r in board.rows]  # by rank, unranked last
        avg = next(h for h in headers if h.text == "avg")
        avg.click()  # numbers sort highest first on the first click
        assert visible_models(driver, board.id) == highest_first
        assert avg.get_attribute("aria-sort") == "descending"
        avg.click()
        assert visible_models(driver, board.id) == highest_first[::-1]
        assert XSS in visible_models(driver)  # shown as text, never run
        driver.find_element("css selector", "#split-filter option[value='rolebench_zh']").click()
        assert set(visible_models(driver)) == {
            "RoleGPT (released baseline answers)",
            "RoleGLM",
            "RoleGPT",
            "ChatGLM2",
            "ChatGLM2-script",
            "floor: the question as the answer",
            "floor: the role description as the answer",
            "floor: the train answer to the same instruction",  # the Chinese splits have their train files
        }
        assert len(visible_models(driver)) == 8
        driver.find_element("css selector", "#split-filter option[value='rolebench_demo']").click()
        xss_row = next(r for r in driver.find_elements("css selector", "tr.row") if XSS in r.text)
        xss_row.find_element("css selector", "button.roles").click()
        detail = xss_row.find_element("xpath", "following-sibling::tr[1]")
        assert "detail" in detail.get_attribute("class") and EVIL_ROLE in detail.text
        assert driver.execute_script("return document.querySelectorAll('script').length") == 2
        injected = "var s = document.createElement('script'); s.textContent = 'window.pwned = 1';"
        injected += " document.body.appendChild(s); return window.pwned;"
        assert driver.execute_script(injected) is None  # the page's CSP runs no script but its own
        ARTIFACTS.mkdir(exist_ok=True)
        driver.save_screenshot(str(ARTIFACTS / "leaderboard.png"))
    finally:
        driver.quit()


# ---- the project's own published leaderboard --------------------------------------------------------

PUBLISHED = REPO_ROOT / "leaderboard"


def test_published_leaderboard_is_built_from_its_results(tmp_path):
    """leaderboard/ holds real runs; its tables are exactly what `leaderboard/build.sh` makes from them."""
    if not (PUBLISHED / "results").is_dir():
        pytest.skip("leaderboard/results/ is not in this checkout")
    boards, _ = build([PUBLISHED / "results"], tmp_path)
    for name in ("leaderboard.md", "leaderboard.csv", "leaderboard.tex", "leaderboard.json", "index.html"):
        assert (tmp_path / name).read_bytes() == (PUBLISHED / name).read_bytes(), (
            f"run leaderboard/build.sh ({name})"
        )
    zh = next(b for b in boards if b.split == "rolebench_zh" and not b.reference)
    rolegpt = next(r for r in zh.rows if r.run == "zh-rolegpt")
    group = read_results(PUBLISHED / "results" / "zh-rolegpt").groups["rolebench_zh"]
    assert (rolegpt.cus, rolegpt.spe, rolegpt.avg, rolegpt.n, rolegpt.rank) == (
        group.cus,
        group.spe,
        group.avg,
        1690,
        1,
    )
    assert {b.split for b in boards if b.reference} == {
        "rolebench_eng_instruct",
        "rolebench_eng_role",
        "rolebench_zh",
    }
    demo = next(b for b in boards if b.split == "rolebench_demo" and not b.reference)
    assert demo.rank_note == "" and all(r.rank_interval for r in demo.rows if r.rank)
    # the released RoleGPT answers lack one of the demo's 27 items: its avg is over other items (issue 36)
    demo_rolegpt = next(r for r in demo.rows if r.run == "demo-rolegpt")
    assert demo_rolegpt.rank is None and "over 26 items" in demo_rolegpt.not_comparable
    assert (PUBLISHED / "results" / "demo-rolegpt" / "item_scores.json").is_file()  # what they come from
    limited = [r for b in boards for r in b.rows if r.run == "eng-role-smollm2-135m-limit30"]
    assert limited and all(r.partial and r.rank is None and r.limit == 30 for r in limited)
    assert all(p.stat().st_size < 2_000_000 for p in PUBLISHED.rglob("*") if p.is_file())


# ---- numbers no one can inflate: floors, flags, the F-measure rank ---------------------------------


def verbose_variant(source: Path, target: Path) -> Path:
    """A model that buys recall with length: the paper's recall above RoleGPT's, the F-measure far below,
    answers three times the references' length."""
    shutil.copytree(source, target)
    results = read_results(target)
    results.config.model = {**results.config.model, "name": "verbose model", "spec": "verbose model"}
    for entry in [*results.results.values(), *results.groups.values()]:
        for protocol, scale in (("rolellm", 1.1), ("rolebench", 0.3)):
            block = entry.value(protocol) or {}
            for metric in ("cus", "raw", "spe", "avg"):
                if block.get(metric) is not None:
                    block[metric] *= scale
                    if protocol == entry.protocol and getattr(entry, metric, None) is not None:
                        setattr(entry, metric, block[metric])
        if isinstance(entry, TaskResult) and entry.lengths is not None:
            entry.lengths.answer_words_mean = 3 * (entry.lengths.reference_words_mean or 1.0)
    write_results(target, results)
    scale_samples(target, {"rolellm": 1.1, "rolebench": 0.3})
    return target


@pytest.fixture(scope="module")
def inflated(runs, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("inflated")
    shutil.copytree(runs / "demo-rolegpt", root / "demo-rolegpt")
    verbose_variant(runs / "demo-rolegpt", root / "demo-verbose")
    variant(runs / "demo-rolegpt", root / "demo-weak", name="weak model", scale=0.1)
    return root


def test_a_rank_length_cannot_buy_and_the_floors(inflated):
    board = board_of(collect([inflated]), "verbose model")
    by_model = {r.model: r for r in board.rows}
    verbose, rolegpt = by_model["verbose model"], by_model["RoleGPT (released baseline answers)"]
    assert (verbose.rank, rolegpt.rank) == (1, 2)  # the paper's recall ranks the rambler first
    assert (verbose.rank_f, rolegpt.rank_f) == (2, 1)  # the F-measure does not
    assert "verbose model 1 → 2" in board.order_note() and "RoleGPT" in board.order_note()
    assert verbose.flags[0] == "length-inflated" and rolegpt.flags == []
    assert "below-floor" in by_model["weak model"].flags
    floors = [r for r in board.rows if r.source == FLOOR]
    assert {r.spec for r in floors} == {"baseline:question", "baseline:description"}
    assert all(r.rank is None and r.rank_f is None for r in floors) and board.rows[-len(floors) :] == floors
    group = read_results(inflated / "demo-rolegpt").groups["rolebench_demo"].value("floors")
    question = next(r for r in floors if r.spec == "baseline:question")
    assert question.avg == group["baseline:question"]["rolellm"]["avg"]
    assert question.f_avg == group["baseline:question"]["rolebench"]["avg"]


def test_flags_and_their_meanings_in_every_format(inflated, tmp_path):
    build([inflated], tmp_path)
    document = json.loads((tmp_path / "leaderboard.json").read_text(encoding="utf-8"))
    rows = {r["model"]: r for b in document["boards"] for r in b["rows"]}
    assert rows["verbose model"]["flags"] == ["length-inflated"] and rows["verbose model"]["rank_f"] == 2
    assert any(b["order_note"] for b in document["boards"])
    meaning = "answers over 2x the references' length"
    markdown = (tmp_path / "leaderboard.md").read_text(encoding="utf-8")
    assert f"- length-inflated: {meaning}" in markdown and re.search(r"\| F rank \(95% CI\) +\|", markdown)
    assert "Ranked by the F-measure instead of the paper's recall" in markdown
    table = list(csv.DictReader(io.StringIO((tmp_path / "leaderboard.csv").read_text(encoding="utf-8"))))
    verbose = next(r for r in table if r["model"] == "verbose model")
    assert verbose["flags"] == "length-inflated" and verbose["flag_meanings"].startswith(
        f"length-inflated: {meaning}"
    )
    assert {r["source"] for r in table} == {"ours", "floor"}
    latex = (tmp_path / "leaderboard.tex").read_text(encoding="utf-8")
    assert (
        "length-inflated" in latex
        and "Flags" in latex
        and "below-floor: at or below a null baseline" in latex
    )
    page = (tmp_path / "index.html").read_text(encoding="utf-8")
    assert f'title="{meaning}' in page.replace("&#39;", "'") and "floor: unranked" in page


LAYOUT_PROBE = """
const px = (r) => Math.round(r * 10) / 10;
const canvas = document.createElement("canvas").getContext("2d");
const out = {pageWidth: document.documentElement.scrollWidth, window: window.innerWidth,
             names: [], headers: [], scrolling: []};
for (const span of document.querySelectorAll("td .model")) {
  canvas.font = getComputedStyle(span).font;
  const longest = Math.max(...span.textContent.split(/\\s+/).map((w) => canvas.measureText(w).width));
  const width = px(span.getBoundingClientRect().width);
  out.names.push({name: span.textContent, width: width, longest: px(longest)});
}
for (const table of document.querySelectorAll("table.lb")) {
  const cells = table.tBodies[0].rows[0].cells;
  table.querySelectorAll("thead th").forEach((th, i) => {
    const a = th.getBoundingClientRect(), b = cells[i].getBoundingClientRect();
    out.headers.push({text: th.textContent, dl: px(a.left - b.left), dr: px(a.right - b.right)});
  });
  const box = table.parentElement;
  out.scrolling.push({scrolls: box.scrollWidth > box.clientWidth, page: box.getBoundingClientRect().right});
}
out.pictures = [];
for (const section of document.querySelectorAll("section.board")) {
  const rows = [...section.querySelectorAll("tr.row")];
  const ranked = rows.filter((tr) => /^[0-9]+$/.test(tr.cells[0].dataset.sort));
  const panels = [...section.querySelectorAll("svg.panel")].map((svg) => {
    const frame = svg.getBoundingClientRect();
    const texts = [...svg.querySelectorAll("text")].map((t) => {
      const r = t.getBoundingClientRect();
      return {text: t.textContent, left: px(r.left), right: px(r.right),
              top: px(r.top), bottom: px(r.bottom)};
    });
    return {left: px(frame.left), right: px(frame.right), top: px(frame.top), bottom: px(frame.bottom),
            dots: svg.querySelectorAll("circle.dot").length, texts: texts};
  });
  const key = section.querySelector("figcaption.names");
  out.pictures.push({board: section.id, ranked: ranked.length, panels: panels,
                     key: key ? key.textContent : "",
                     keyRight: key ? px(key.getBoundingClientRect().right) : 0});
}
return out;
"""


def overlapping(texts: list[dict]) -> list[tuple[str, str]]:
    """Pairs of labels whose drawn boxes overlap (by more than half a pixel)."""
    found = []
    for i, a in enumerate(texts):
        for b in texts[i + 1 :]:
            if (
                min(a["right"], b["right"]) - max(a["left"], b["left"]) > 0.5
                and min(a["bottom"], b["bottom"]) - max(a["top"], b["top"]) > 0.5
            ):
                found.append((a["text"], b["text"]))
    return found


@pytest.mark.parametrize("width", [390, 1280, 1920])
def test_page_reads_well_on_a_phone_and_on_desktops_in_chromium(runs, inflated, tmp_path, width):
    long_name = "HuggingFaceTB/SmolLM2-1.7B-Instruct fine-tuned on RoleBench with RoCIT (LoRA r=16)"
    variant(runs / "demo-rolegpt", tmp_path / "runs" / "long", name=long_name, scale=0.9)
    shutil.copytree(inflated, tmp_path / "runs" / "inflated")
    shutil.copytree(runs / "zh-limit", tmp_path / "runs" / "zh-limit")
    shutil.copytree(runs / "nested", tmp_path / "runs" / "nested")
    build([tmp_path / "runs"], tmp_path / "board", names=NAMES)
    driver = chrome_driver(tmp_path / "chrome")
    try:
        mobile = width < 600
        driver.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": mobile},
        )
        driver.get((tmp_path / "board" / "index.html").as_uri())
        layout = driver.execute_script(LAYOUT_PROBE)
        glances = driver.execute_script(
            "return [...document.querySelectorAll('.glance')].map(e => [e.getBoundingClientRect().right, "
            "getComputedStyle(e).display, e.textContent])"
        )
        ARTIFACTS.mkdir(exist_ok=True)
        driver.save_screenshot(str(ARTIFACTS / f"leaderboard-{width}.png"))
    finally:
        driver.quit()
    assert layout["window"] == width
    assert layout["pageWidth"] <= width  # the page itself is never wider than the window
    assert {n["name"] for n in layout["names"]} >= {long_name, XSS, "verbose model"}
    for name in layout["names"]:  # a name wraps between words, never letter by letter
        assert name["width"] >= min(name["longest"], 150) - 1, name
    for header in layout["headers"]:  # each header sits over its own column
        assert abs(header["dl"]) <= 1 and abs(header["dr"]) <= 1, header
    assert all(box["page"] <= width for box in layout["scrolling"])
    if mobile:  # wide boards scroll inside their own box; the avg and the flags show under each name
        assert any(box["scrolls"] for box in layout["scrolling"])
        assert glances and all(d == "block" and right <= width and "avg " in t for right, d, t in glances)
        assert any("length-inflated" in t for _, _, t in glances)
    else:
        assert not any(box["scrolls"] for box in layout["scrolling"])
        assert all(d == "none" for _, d, _ in glances)
    assert len(layout["pictures"]) >= 3 and all(p["panels"] for p in layout["pictures"])  # every board
    for picture in layout["pictures"]:
        scores = picture["panels"][0]
        assert scores["dots"] == picture["ranked"], picture["board"]  # each ranked row has its mark
        for panel in picture["panels"]:
            assert 0 <= panel["left"] and panel["right"] <= width, picture["board"]  # inside the page
            assert panel["right"] - panel["left"] >= min(width - 30, 360)  # a phone's full width, not less
            assert not overlapping(panel["texts"]), (picture["board"], overlapping(panel["texts"]))
            for text in panel["texts"]:  # no label cut off at the picture's edge
                assert panel["left"] - 1 <= text["left"] and text["right"] <= panel["right"] + 1, text
                assert panel["top"] - 1 <= text["top"] and text["bottom"] <= panel["bottom"] + 1, text
    # a name cut short in the picture is numbered there, spelled out whole under it (phones show no tooltip)
    long_board = next(p for p in layout["pictures"] if long_name in p["key"])
    assert long_board["keyRight"] <= width
    number = long_board["key"].split(long_name)[0].rsplit("[", 1)[1].split("]")[0]
    labels = [
        t["text"] for panel in long_board["panels"] for t in panel["texts"]
    ]  # a tooltip, then the label
    assert any(label.endswith("…") and f"[{number}] Hugging" in label for label in labels)
    demo = next(p for p in layout["pictures"] if "rolebench_demo" in p["board"] and p["ranked"] >= 3)
    assert demo["panels"][0]["dots"] == demo["ranked"] and len(demo["panels"]) == 2
