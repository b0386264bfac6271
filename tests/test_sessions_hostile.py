"""Session tasks attacked as a hostile user would, through the real command line: hand-edited or damaged
sessions files, a judge that lies, absurd flags. Each is one line saying what, where and what to do, and
a non-zero exit; never a traceback, a wrong number or a lost turn.

The run is the standard one of tests/test_sessions_evaluate.py (scripted servers, roles Ann and Bob, 3
turns: 2 wins, 1 tie, 2 losses, 1 failure), played once per module and copied for each attack.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from rolebench.cli.main import main
from rolebench.errors import ConfigError, DataError
from rolebench.run.session_log import SessionLog, read_log
from rolebench.sessions.settings import MAX_TURNS, SessionSettings
from rolebench.sessions.verdict import VerdictError, parse_turn
from tests.fake_openai import FakeOpenAI
from tests.sessions_servers import evaluate_argv, judge_server, players_server, write_roles

TASK = "rolebench_eng_sessions"
LOG = Path("sessions") / f"{TASK}.jsonl"
Servers = tuple[FakeOpenAI, FakeOpenAI]


@pytest.fixture(scope="module")
def servers() -> Iterator[Servers]:
    players, judging = players_server(), judge_server()
    yield players, judging
    players.stop()
    judging.stop()


def _argv(servers: Servers, base: Path, run: Path, *more: str, judge: str | None = None) -> list[str]:
    """The standard run's command (its roles written under `base`), into `run`."""
    argv = evaluate_argv(*servers, write_roles(base / "data"), run, *more)
    return _flag(argv, "--judge", judge) if judge else argv


@pytest.fixture(scope="module")
def played(servers: Servers, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The standard run, played once (copy it before changing it)."""
    base = tmp_path_factory.mktemp("hostile")
    assert main(_argv(servers, base, base / "good")) == 0
    return base / "good"


def _copy(played: Path, tmp_path: Path, edit: Callable[[list[str]], list[str]] | None = None) -> Path:
    run = tmp_path / "run"
    shutil.copytree(played, run)
    if edit is not None:
        log = run / LOG
        log.write_text("".join(edit(log.read_text(encoding="utf-8").splitlines(keepends=True))), "utf-8")
    return run


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1, lines
    assert "internal error" not in lines[0] and "Traceback" not in lines[0]
    return lines[0]


def _turn(lines: list[str], number: int, **change: Any) -> str:
    return json.dumps({**json.loads(lines[number]), **change}) + "\n"


DAMAGES: dict[str, tuple[Callable[[list[str]], list[str]], str, int]] = {
    # name: (edit of the file's lines, what the error says, the line it names)
    "not JSON in the middle": (lambda ls: [*ls[:3], "garbage\n", *ls[3:]], "a line is not JSON", 4),
    "a turn kept twice": (lambda ls: [*ls, ls[3]], "is kept twice", 10),
    "a line that is a list": (lambda ls: [*ls, "[1, 2]\n"], "not a JSON object", 10),
    "a turn without its item": (lambda ls: [*ls, '{"turn": 1}\n'], "no text `item`", 10),
    "a turn that is not a number": (lambda ls: [*ls, _turn(ls, 3, turn="x")], "whole-number `turn`", 10),
    "a winner nobody plays": (lambda ls: [*ls, _turn(ls, 3, turn=2, winner="me")], "`winner` 'me'", 10),
    "a turn skipped": (lambda ls: [ls[0], *ls[2:]], "Ann goes on at turn 1 after 0", 3),
    "a turn past the last": (lambda ls: [*ls, _turn(ls, 7, turn=4)], "past the 3 turns", 10),
    "a judge's replies edited": (lambda ls: [*ls[:3], _turn(ls, 3, judge="won"), *ls[4:]], "`judge`", 4),
    "an answer deleted": (
        lambda ls: [*ls[:3], _turn(ls, 3, answers={"candidate": "x"}), *ls[4:]],
        "`answers`",
        4,
    ),
    "a placement edited": (
        lambda ls: [*ls[:3], _turn(ls, 3, placement={"model_a": "opponent", "model_b": "opponent"}), *ls[4:]],
        "does not place the candidate",
        4,
    ),
}


@pytest.mark.parametrize("damage", DAMAGES, ids=list(DAMAGES))
@pytest.mark.parametrize("command", ["report", "evaluate", "judge"])
def test_a_damaged_sessions_file_is_one_line_naming_its_line(
    servers, played, tmp_path, capsys, damage, command
):
    edit, says, number = DAMAGES[damage]
    run = _copy(played, tmp_path, edit)
    before = (run / LOG).read_bytes(), (run / "results.json").read_bytes()
    calls = servers[0].count(), servers[1].count()
    argv = {
        "report": ["report", str(run)],
        "evaluate": _argv(servers, played.parent, run),
        "judge": ["judge", str(run), "--judge", f"openai:judge2@{servers[1].base_url}"],
    }[command]
    assert main(argv) == 2
    line = _one_line(capsys)
    assert says in line and f"{run / LOG}:{number}" in line and "--overwrite" in line
    # nothing asked, nothing written over
    assert (servers[0].count(), servers[1].count()) == calls
    assert ((run / LOG).read_bytes(), (run / "results.json").read_bytes()) == before


def test_a_line_that_is_not_utf8_is_named(played, tmp_path, capsys):
    run = _copy(played, tmp_path)
    with (run / LOG).open("ab") as log:
        log.write(b'{"item": "\xff"}\n')
    assert main(["report", str(run)]) == 2
    assert f"not UTF-8 text ({run / LOG}:10)" in _one_line(capsys)


def test_overwrite_plays_a_damaged_file_again_from_the_store(servers, played, tmp_path, capsys):
    run = _copy(played, tmp_path, DAMAGES["a turn kept twice"][0])
    calls = servers[0].count(), servers[1].count()
    assert main(_argv(servers, played.parent, run, "--overwrite")) == 0
    assert "is kept twice" in capsys.readouterr().err
    # every call answered from the run's generation store; the same sessions, the same numbers
    assert (servers[0].count(), servers[1].count()) == calls
    assert (run / LOG).read_bytes() == (played / LOG).read_bytes()
    found = json.loads((run / "results.json").read_text("utf-8"))["sessions"][TASK]
    assert (found["wins"], found["ties"], found["losses"], found["failures"]) == (2, 1, 2, 1)


def test_a_torn_last_line_is_played_again_and_nothing_else(servers, played, tmp_path):
    run = _copy(played, tmp_path)
    whole = (run / LOG).read_bytes()
    (run / LOG).write_bytes(whole[:-25])
    assert main(_argv(servers, played.parent, run)) == 0
    assert (run / LOG).read_bytes() == whole


def test_a_second_judges_damaged_file_is_named_too(servers, played, tmp_path, capsys):
    run = _copy(played, tmp_path)
    judge = ["judge", str(run), "--judge", f"openai:judge2@{servers[1].base_url}"]
    assert main(judge) == 0
    capsys.readouterr()
    (verdicts,) = (run / "sessions" / "judges").glob(f"*/{TASK}.jsonl")
    lines = verdicts.read_text("utf-8").splitlines(keepends=True)
    verdicts.write_text("".join([*lines, lines[1]]), "utf-8")
    assert main(["report", str(run)]) == 2
    assert f"kept twice ({verdicts}:{len(lines) + 1})" in _one_line(capsys)


def _flag(argv: list[str], flag: str, value: str) -> list[str]:
    argv[argv.index(flag) + 1] = value
    return argv


@pytest.mark.parametrize(
    "flag, value, says",
    [
        ("--opponent", "openai:cand@{players}", "is the model under test, decoding greedily"),
        ("--opponent", "baseline:rolegpt", "cannot answer a session's turns (--opponent)"),
        ("--model", "baseline:rolegpt", "cannot answer a session's turns (--model)"),
        ("--opponent", "baseline:greting", "cannot answer a session's turns (--opponent)"),
        ("--judge", "baseline:greeting", "cannot judge a session's turns (--judge)"),
        ("--turns", "10000", f"past the {MAX_TURNS} allowed (every turn"),
    ],
)
def test_absurd_flags_are_one_line_before_any_call(servers, tmp_path, capsys, flag, value, says):
    run = tmp_path / "run"
    calls = servers[0].count(), servers[1].count()
    argv = _flag(_argv(servers, tmp_path, run), flag, value.format(players=servers[0].base_url))
    assert main(argv) == 2
    assert says in _one_line(capsys)
    assert (servers[0].count(), servers[1].count()) == calls and not (run / LOG).exists()


def test_a_secret_in_the_judges_url_is_never_printed(servers, tmp_path, capsys):
    for url in ("http://me:s3cr3t-key@127.0.0.1:9/v1", "http://127.0.0.1:9/v1?api_key=s3cr3t-key"):
        assert main(_argv(servers, tmp_path, tmp_path / "run", judge=f"openai:judge@{url}")) == 2
        captured = capsys.readouterr()
        assert "s3cr3t" not in captured.err + captured.out and "query string" in captured.err


@pytest.mark.parametrize(
    "reply, says",
    [
        ('{"winner": "me", "next_round_user_speaks": "x"}', "`winner` is 'me'"),
        ('{"winner": ["model_a"], "next_round_user_speaks": "x"}', "not one of model_a"),
        ('{"winner": "model_a"}', "`next_round_user_speaks` is missing"),
        ('{"winner": "model_a", "next_round_user_speaks": 5}', "`next_round_user_speaks` is 5, not a text"),
        ('{"winner": "tie", "next_round_user_speaks": "  "}', "is missing or empty"),
        ("", "no JSON object"),
        ("{" * 100_000, "no JSON object"),
        ("x" * 1_000_000, "no JSON object"),
    ],
)
def test_a_lying_judge_reply_is_a_failure_never_a_win(reply, says):
    with pytest.raises(VerdictError) as raised:
        parse_turn(reply, last=False)
    assert says in str(raised.value)


def test_a_hand_built_log_refuses_a_damaged_file_before_appending(tmp_path):
    path = tmp_path / LOG
    log = SessionLog(path, {"players": {}, "settings": {"turns": 1}})
    log.append({"item": "a", "turn": 0, "judge": ["{}"], "next_user": "hi", "failure": None})
    with path.open("a", encoding="utf-8") as file:
        file.write('{"item": "a", "turn": 0, "judge": [], "next_user": "hi", "failure": null}\n')
    size = path.stat().st_size
    with pytest.raises(DataError, match="kept twice"):
        SessionLog(path, {"players": {}, "settings": {"turns": 1}})
    assert path.stat().st_size == size


def test_settings_refuse_turns_past_the_bound():
    assert SessionSettings(turns=MAX_TURNS).turns == MAX_TURNS
    with pytest.raises(ConfigError, match="--turns"):
        SessionSettings(turns=MAX_TURNS + 1)


def test_the_session_floor_plays_as_the_opponent_through_evaluate(servers, tmp_path):
    """`--opponent baseline:greeting` (the floor: the greeting every turn) plays through evaluate."""
    run = tmp_path / "run"
    argv = _flag(_argv(servers, tmp_path, run), "--opponent", "baseline:greeting")
    assert main(argv) == 0
    turns = [r for r in read_log(run / LOG)[1] if r["turn"] > 0]
    assert len(turns) == 6 and all(r["answers"]["opponent"] == "Hello." for r in turns)  # a role's greeting
    # the scripted judge's plan decides, as against the scripted opponent: 2 wins, a tie, 2 losses, a failure
    result = json.loads((run / "results.json").read_text(encoding="utf-8"))["sessions"][TASK]
    assert (result["wins"], result["ties"], result["losses"], result["failures"]) == (2, 1, 2, 1)
