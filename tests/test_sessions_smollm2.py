"""A real small session run: the embedded SmolLM2 GGUF (llama.cpp) as the candidate, against a scripted
opponent and judge, on two RoleBench roles for two turns."""

from __future__ import annotations

from pathlib import Path

import pytest

from model_adapters import GenerationConfig
from rolebench.cached_model import CachedModel
from rolebench.run.folder import RunFolder
from rolebench.run.session_log import SessionLog
from rolebench.scoring.session_stats import session_summary
from rolebench.sessions.data import load_roles
from rolebench.sessions.loop import play
from rolebench.sessions.settings import Players, SessionSettings
from rolebench.storage.records import RecordStore
from tests.sessions_scripted import cached, candidate, header, judge


def _plan(name: str, number: int, attempt: int) -> str:
    return "candidate" if number == 1 else "opponent"


@pytest.mark.slow
def test_smollm2_plays_two_sessions(smollm2_gguf: Path, rolebench_data: Path, tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    items = load_roles(rolebench_data, "en")[:2]
    settings = SessionSettings(turns=2, seed=1, answer_config=GenerationConfig(max_new_tokens=40))

    def run() -> tuple[SessionLog, CachedModel]:
        store = RecordStore(tmp_path / "generations.sqlite")
        model = CachedModel(f"llamacpp:{smollm2_gguf}", {"n_ctx": 2048, "n_threads": 2}, store)
        players = Players(model, cached(candidate("opp"), store), cached(judge(_plan), store))
        log = SessionLog(RunFolder(tmp_path).session_log_path("roles_eng"), header(settings, players))
        try:
            play(items, players, settings, log)
        finally:
            model.close()
        return log, model

    log, model = run()
    turns = [r for r in log.records if r["turn"] > 0]
    assert len(turns) == 4 and model.loaded
    assert all(
        isinstance(t["answers"]["candidate"], str) and t["answers"]["candidate"].strip() for t in turns
    )
    assert [t["winner"] for t in turns] == ["candidate", "candidate", "opponent", "opponent"]
    for first in turns[:2]:  # the candidate won turn 1: its answer is the history of turn 2
        second = next(t for t in turns[2:] if t["item"] == first["item"])
        assert first["kept"] == first["answers"]["candidate"] and second["user"] == "user 2"
    summary = session_summary(log.records)
    assert (summary["wins"], summary["losses"], summary["win_rate"]) == (2, 2, 0.5)
    again, model = run()  # every turn kept: the model is not even loaded
    assert again.records == log.records and not model.loaded
