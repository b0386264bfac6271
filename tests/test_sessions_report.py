"""The run report's session tasks: the numbers from results.json and every session as a transcript from
its log (played by the engine with scripted players: known wins, a tie, a failure, a stalled session, a
hostile opponent), checked in the page's text and in Chromium at a phone's and a desktop's width."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rolebench.cli.main import main
from rolebench.report.page import render_report, report_context, write_report
from rolebench.report.sessions import shown_text
from rolebench.run.folder import RunFolder
from tests.sessions_runs import HOSTILE, TASK, session_run
from tests.test_leaderboard import ARTIFACTS, chrome_driver


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return session_run(tmp_path_factory.mktemp("sessions") / "run")


def _task(run: Path) -> dict:
    (task,) = report_context(run)["sessions"]
    return task


def test_numbers_players_and_every_session(run: Path) -> None:
    task = _task(run)
    assert task["name"] == TASK and task["label"] == "RoleBench roles, English" and task["turns"] == 3
    assert task["players"] == {
        "candidate": "scripted:cand",
        "opponent": "scripted:opp",
        "judge": "scripted:judge",
    }
    numbers = task["numbers"]
    # Ann: win, tie, loss; Bob: loss, win, failure; Cy: loss, then stalled
    assert numbers["wtl"] == "2/1/3" and numbers["failures"] == 1 and numbers["stalled"] == 1
    assert numbers["win_rate"].startswith("40.0 [") and numbers["sessions"] == "2 of 3"
    assert numbers["as_a"].endswith("(n 1)") and numbers["as_b"].endswith("(n 4)")
    sessions = {s["item"]: s for s in task["sessions"]}
    assert {k: (s["state"], s["tally"]) for k, s in sessions.items()} == {
        "role/en/Ann": ("complete", "W T L"),
        "role/en/Bob": ("failed", "L W F"),
        "role/en/Cy": ("stalled", "L"),
    }
    ann = sessions["role/en/Ann"]
    assert ann["greeting"] == "Hello." and [t["user"] for t in ann["turns"]] == ["hi Ann", "user 2", "user 3"]
    first = ann["turns"][0]
    assert [a["side"] for a in first["answers"]] == ["candidate", "opponent"]
    assert {a["slot"] for a in first["answers"]} == {"model_a", "model_b"}
    assert first["answers"][0]["text"] == "<cand> 1: hi Ann" and first["answers"][0]["won"]
    assert first["winner"] == "win" and first["reason"] == "round 1: candidate"
    failed = sessions["role/en/Bob"]["turns"][2]
    assert failed["winner"] == "failure" and failed["failure"] == "no JSON object in the reply"
    assert failed["judge_raw"] == ["I cannot decide."] * 2 and not any(a["won"] for a in failed["answers"])


def test_the_page_shows_transcripts_as_text(run: Path) -> None:
    page = render_report(run)
    assert "<script" not in page and "<img src=x" not in page and "\u202e" not in page
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in page and "\\u202eevil" in page
    assert page.count('<details class="session') == 3 and page.count("open>") == 1  # the first one open
    assert "Stalled: a call failed before the session's last turn" in page
    assert "no JSON object in the reply (after 2 replies; not counted as a win)" in page
    assert "model under test · shown as model_" in page and "opponent · shown as model_" in page


def test_shown_text_keeps_lines_and_writes_hidden_characters() -> None:
    assert shown_text("a\nb\tc") == "a\nb\tc"
    assert shown_text("gnp\u202eexe\u200b\x00") == "gnp\\u202eexe\\u200b\\x00"
    assert shown_text("你好，世界") == "你好，世界" and shown_text(None) == ""


def test_a_log_without_numbers_in_results_json_is_still_shown(run: Path, tmp_path: Path) -> None:
    """`rolebench report` derives results.json again first; the transcripts come from the log either way."""
    copy = session_run(tmp_path / "run")
    results = RunFolder(copy).read_results()
    results.sessions = {}
    results.config.sessions = None
    RunFolder(copy).write_results(results)
    task = _task(copy)
    assert task["numbers"] is None and len(task["sessions"]) == 3
    assert task["players"]["opponent"] == "scripted:opp"  # from the log's header
    assert main(["report", str(copy)]) == 0
    page = RunFolder(copy).report_path.read_text(encoding="utf-8")
    assert page.count('<details class="session') == 3 and "round 2: candidate" in page


@pytest.mark.parametrize("width", [390, 1280])
def test_transcripts_in_chromium(run: Path, tmp_path: Path, width: int) -> None:
    page = write_report(run, tmp_path / "report.html")
    driver = chrome_driver(tmp_path / "chrome")
    try:
        driver.set_window_size(width, 1000)
        driver.get(page.as_uri())
        overflow = "return document.documentElement.scrollWidth - document.documentElement.clientWidth"
        assert driver.execute_script(overflow) <= 0  # nothing wider than the screen (tables scroll inside)
        sessions = driver.find_elements("css selector", "details.session")
        assert [s.get_attribute("open") is not None for s in sessions] == [True, False, False]
        sessions[1].find_element("css selector", "summary").click()
        assert sessions[1].get_attribute("open") is not None
        answers = (
            sessions[0].find_elements("css selector", ".turn")[0].find_elements("css selector", ".answer")
        )
        tops = [a.rect["y"] for a in answers]
        assert (tops[0] == tops[1]) == (
            width > 700
        )  # side by side on a desktop, one above the other on a phone
        text = sessions[0].text
        assert re.search(r"model under test · shown as model_[ab] · won", text)
        assert (
            HOSTILE.replace("\u202e", "\\u202e") in text
        )  # the HTML shown as text, the override as its escape
        assert driver.execute_script("return document.querySelectorAll('script, img[src=x]').length") == 0
        ARTIFACTS.mkdir(exist_ok=True)
        driver.save_screenshot(str(ARTIFACTS / f"report-sessions-{width}.png"))
    finally:
        driver.quit()


def test_a_second_judge_is_shown_beside_the_first(tmp_path: Path) -> None:
    """results.json's `sessions[task].judges[NAME]` (the second judge's numbers and its agreement, as the
    derivation writes them from `sessions/judges/NAME/`) in the task's table of other judges."""
    from rolebench.run.session_log import SessionLog, read_log
    from rolebench.scoring.session_stats import judge_agreement, session_summary
    from rolebench.sessions.rejudge import rejudge
    from tests.sessions_runs import SETTINGS
    from tests.sessions_scripted import cached, judge, role_items

    run = session_run(tmp_path / "run")
    folder = RunFolder(run)
    header, _ = read_log(folder.session_log_path(TASK))
    played = SessionLog(folder.session_log_path(TASK), header or {})
    second = cached(judge(lambda name, number, attempt: "candidate", label="j2"), folder.generation_store())
    log = SessionLog(folder.session_log_path(TASK, judge="j2"), {"judge": "j2"})
    items = role_items(tmp_path / "run-data", ["Ann", "Bob", "Cy"])
    rejudge(items, played, second, SETTINGS, log)
    results = folder.read_results()
    agreement = judge_agreement(played.records, log.records)
    results.sessions[TASK].judges = {"j2": {**session_summary(log.records), "agreement": agreement}}
    folder.write_results(results)
    (row,) = _task(run)["judges"]
    # the second judge: the candidate every turn (7 of 7); agreement on the 6 turns both decided: 2 of 6
    assert row["name"] == "j2" and row["win_rate"].startswith("100.0") and row["n"] == 6
    assert row["agreement"] == "33.3" and row["kappa"] == "0.00"
    assert "Other judges on the same turns" in render_report(run)
