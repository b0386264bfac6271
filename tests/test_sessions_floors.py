"""Floors and audit where sessions give them a meaning: `baseline:greeting` (an opponent that repeats the
character's greeting every turn, a floor a real model must beat) played through the real backend against
a scripted candidate and judged by a scripted judge that prefers content; and `rolebench data audit` on
the session data (RPBench-Auto's repeats, RoleBench's greetings and profiles in the test answers)."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from model_adapters import GenerationConfig, Request, load_model
from rolebench.cached_model import CachedModel
from rolebench.cli.main import main
from rolebench.run.session_log import SessionLog
from rolebench.scoring.session_stats import session_summary
from rolebench.sessions.audit import audit_items, profile_sentences
from rolebench.sessions.data import load_rpbench
from rolebench.sessions.loop import play
from rolebench.sessions.settings import Players, SessionSettings
from rolebench.storage.records import RecordStore
from rolebench.tasks.sessions import RPBENCH_DIR
from tests.sessions_scripted import Scripted, cached, candidate, header

SETTINGS = SessionSettings(turns=3, seed=3)


def content_judge() -> Scripted:
    """A judge that prefers the reply taking up what the user just said (a tie when both or neither do)."""

    def reply(request: Request) -> str:
        messages = request.messages
        rounds = [m["content"] for m in messages if m["role"] == "user" and m["content"].startswith("Round ")]
        if not rounds:
            return json.dumps({"next_round_user_speaks": "Tell me about your day."})
        said = json.loads(next(m for m in reversed(messages) if m["role"] == "assistant")["content"])
        texts = dict(re.findall(r"\[(model_[ab])\]\n(.*?)\n\[end of", rounds[-1], re.DOTALL))
        takes_up = [label for label, text in sorted(texts.items()) if said["next_round_user_speaks"] in text]
        number = int(rounds[-1].split()[1])
        return json.dumps(
            {
                "winner": takes_up[0] if len(takes_up) == 1 else "tie",
                "next_round_user_speaks": f"And then what, in round {number + 1}?",
                "decision_reason": "answers what the user said" if len(takes_up) == 1 else "alike",
            }
        )

    return Scripted("content-judge", reply)


def fresh_judge() -> Scripted:
    """A judge that prefers the reply that is not a verbatim repeat of something already said (the greeting,
    an earlier answer): a tie when both or neither repeat."""

    def reply(request: Request) -> str:
        messages = request.messages
        rounds = [m["content"] for m in messages if m["role"] == "user" and m["content"].startswith("Round ")]
        if not rounds:
            return json.dumps({"next_round_user_speaks": "Tell me about your day."})
        said = "\n".join(m["content"] for m in messages[:-1])
        texts = dict(re.findall(r"\[(model_[ab])\]\n(.*?)\n\[end of", rounds[-1], re.DOTALL))
        fresh = [label for label, text in sorted(texts.items()) if text.strip() not in said]
        number = int(rounds[-1].split()[1])
        return json.dumps(
            {
                "winner": fresh[0] if len(fresh) == 1 else "tie",
                "next_round_user_speaks": f"What happens next? ({number + 1})",
                "decision_reason": "says something new" if len(fresh) == 1 else "alike",
            }
        )

    return Scripted("fresh-judge", reply)


def _play(tmp_path: Path, greeting_as: str) -> tuple[list[dict], list]:
    store = RecordStore(tmp_path / "store.sqlite")
    items = load_rpbench(RPBENCH_DIR, "character")[:8]
    floor = CachedModel("baseline:greeting", {}, store)  # the real backend, by its spec
    model = cached(candidate("cand"), store)
    players = Players(
        *((floor, model) if greeting_as == "candidate" else (model, floor)),
        cached(content_judge(), store),
    )
    log = SessionLog(tmp_path / f"{greeting_as}.jsonl", header(SETTINGS, players))
    play(items, players, SETTINGS, log)
    return log.records, items


def test_a_model_that_answers_beats_the_greeting_every_turn(tmp_path: Path) -> None:
    records, items = _play(tmp_path, "opponent")
    greetings = {item.id: item.greeting for item in items}
    turns = [r for r in records if r["turn"] > 0]
    assert len(turns) == 8 * 3
    assert all(r["answers"]["opponent"] == greetings[r["item"]] for r in turns)  # the greeting, every turn
    assert all(r["winner"] == "candidate" for r in turns)
    summary = session_summary(records)
    assert (
        summary["win_rate"] == 1.0 and summary["wins"] == 24 and summary["ties"] == summary["failures"] == 0
    )
    assert tuple(summary["win_rate_ci"]) == (1.0, 1.0)


def test_the_greeting_as_the_candidate_loses_every_turn(tmp_path: Path) -> None:
    records, _ = _play(tmp_path, "candidate")
    summary = session_summary(records)
    assert summary["win_rate"] == 0.0 and summary["losses"] == 24


def test_the_greeting_floor_outside_a_session() -> None:
    adapter = load_model("baseline:greeting")
    assert adapter.info()["name"] == "floor: the character's greeting, every turn"
    chat = Request(
        id="s",
        messages=[
            {"role": "system", "content": "You are Ann."},
            {"role": "assistant", "content": "Well met, traveller."},
            {"role": "user", "content": "Who are you?"},
        ],
    )
    single = Request(id="q", messages=[{"role": "user", "content": "Who are you?"}])
    answers = dict((r.id, g) for r, g in adapter.generate([chat, single], GenerationConfig()))
    assert answers["s"].text == "Well met, traveller."
    assert answers["q"].text is None and "answers role-play sessions" in str(answers["q"].error)


def test_repeated_rpbench_items_are_counted() -> None:
    items = load_rpbench(RPBENCH_DIR, "scene")[:4]
    again = replace(items[1], id="scene/copy")
    same_greeting = replace(items[2], id="scene/hello", name="Someone else", system_prompt="other")
    audit = audit_items("rpbench_scene", [*items, again, same_greeting])
    assert audit.counts == {
        "same_name": ["scene/copy"],
        "same_greeting": ["scene/copy", "scene/hello"],
        "same_item": ["scene/copy"],
    }
    assert audit.to_json()["counts"] == {"same_name": 1, "same_greeting": 2, "same_item": 1}


def test_data_audit_covers_the_session_tasks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data"
    profile = "诗仙。我是唐代最有名的诗人，一生爱酒也爱月亮。"
    assert profile_sentences(profile) == ["我是唐代最有名的诗人，一生爱酒也爱月亮。"]  # "诗仙。" is too short
    rows = [
        {"role": "李白", "question": "你好吗？", "generated": ["你好。我很好。"]},
        {"role": "李白", "question": "你是谁？", "generated": ["我是唐代最有名的诗人，一生爱酒也爱月亮。"]},
        {"role": "李白", "question": "你会喝酒吗？", "generated": ["会"]},
    ]
    test_file = data / "rolebench-zh" / "role_specific" / "test.jsonl"
    test_file.parent.mkdir(parents=True)
    test_file.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    (data / "profiles-zh").mkdir(parents=True)
    (data / "profiles-zh" / "desc.json").write_text(json.dumps({"李白": profile}), encoding="utf-8")
    assert main(["data", "audit", str(data), "--json", str(tmp_path / "audit.json")]) == 0
    out = capsys.readouterr().out
    assert "rpbench_character (80 items): 0 repeats an earlier item's character name" in out
    assert "rolebench_eng_sessions: not audited: " in out
    assert (
        "rolebench_zh_sessions (1 items): 1 test items whose reference holds the greeting verbatim, 1" in out
    )
    zh = json.loads((tmp_path / "audit.json").read_text(encoding="utf-8"))["sessions"][
        "rolebench_zh_sessions"
    ]
    assert zh["ids"] == {
        "greeting_in_references": ["zh_specific/0"],
        "profile_in_references": ["zh_specific/1"],
    }


def test_the_real_session_data(rolebench_data: Path) -> None:
    from rolebench.data.resolve import resolve_source
    from rolebench.sessions.audit import audit_sessions

    audits = audit_sessions(resolve_source(str(rolebench_data)))
    assert all(
        not ids for name in ("rpbench_character", "rpbench_scene") for ids in audits[name].counts.values()
    )
    assert audits["rpbench_character"].items == audits["rpbench_scene"].items == 80
    zh = audits["rolebench_zh_sessions"].counts
    assert zh == {
        "greeting_in_references": ["zh_general/1113", "zh_general/1133"],
        "profile_in_references": ["zh_general/923"],
    }


@pytest.mark.slow
def test_smollm2_beats_the_greeting(smollm2_gguf: Path, tmp_path: Path) -> None:
    """The embedded SmolLM2-135M against `baseline:greeting` on two RPBench-Auto characters, judged by
    whether a reply says something new: it never loses (it may tie, repeating its own earlier answer)."""
    pytest.importorskip("llama_cpp")
    store = RecordStore(tmp_path / "store.sqlite")
    items = load_rpbench(RPBENCH_DIR, "character")[:2]
    settings = SessionSettings(turns=2, seed=1, answer_config=GenerationConfig(max_new_tokens=40))
    model = CachedModel(f"llamacpp:{smollm2_gguf}", {"n_ctx": 2048, "n_threads": 2}, store)
    floor = CachedModel("baseline:greeting", {}, store)
    players = Players(model, floor, cached(fresh_judge(), store))
    log = SessionLog(tmp_path / "smollm2.jsonl", header(settings, players))
    try:
        play(items, players, settings, log)
    finally:
        model.close()
    turns = [r for r in log.records if r["turn"] > 0]
    greetings = {item.id: item.greeting for item in items}
    assert len(turns) == 4 and all(r["answers"]["opponent"] == greetings[r["item"]] for r in turns)
    summary = session_summary(log.records)
    assert summary["losses"] == 0 and summary["wins"] >= 2 and summary["failures"] == 0
