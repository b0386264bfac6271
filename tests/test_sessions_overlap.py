"""In a round, the candidate's and the opponent's calls go out at the same time when they answer from a
server (the real `openai:` adapter against the local fake server, which counts the requests in flight:
a timing-free proof), each model bounded by its concurrency; the sessions are the same either way."""
# ruff: noqa: F811 - the imported `fake_openai` fixture is used as an argument, the pytest way

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from model_adapters import GenerationConfig
from rolebench.cached_model import CachedModel
from rolebench.run.session_log import SessionLog
from rolebench.sessions.loop import play, waits_on_server
from rolebench.sessions.settings import Players, SessionSettings
from rolebench.storage.records import RecordStore
from tests.fake_openai import Reply, fake_openai  # noqa: F401 - `fake_openai` is a fixture
from tests.sessions_scripted import cached, header, judge, role_items, standard_plan

NAMES = ["Ann", "Bob", "Cy", "Di"]


def answer(body: dict[str, Any]) -> Reply:
    """`<model> k: <the user's last line>`, as the scripted candidates answer, after 0.3 s."""
    users = [m["content"] for m in body["messages"] if m["role"] == "user"]
    return Reply(text=f"<{body['model']}> {len(users)}: {users[-1]}", delay=0.3)


def _play(tmp_path: Path, server: Any, overlap: bool, concurrency: int) -> list[dict[str, Any]]:
    store = RecordStore(tmp_path / f"store-{overlap}.sqlite")
    config = GenerationConfig(concurrency=concurrency)
    players = Players(
        CachedModel(f"openai:cand@{server.base_url}", {"max_retries": "0"}, store),
        CachedModel(f"openai:opp@{server.base_url}", {"max_retries": "0"}, store),
        cached(judge(lambda name, number, attempt: "candidate"), store),
    )
    settings = SessionSettings(turns=2, seed=1, answer_config=config)
    log = SessionLog(tmp_path / f"{overlap}.jsonl", header(settings, players))
    try:
        play(role_items(tmp_path / "data", NAMES), players, settings, log, overlap=overlap)
    finally:
        players.candidate.close()
        players.opponent.close()
    return log.records


@pytest.mark.parametrize("concurrency", [2, 8])
def test_both_sides_at_once_each_within_its_bound(tmp_path: Path, fake_openai: Any, concurrency: int) -> None:
    together = fake_openai(answer, models=None)
    both = _play(tmp_path, together, overlap=True, concurrency=concurrency)
    one_by_one = fake_openai(answer, models=None)
    apart = _play(tmp_path, one_by_one, overlap=False, concurrency=concurrency)
    per_side = min(concurrency, len(NAMES))  # a side's batch: one request per session
    assert one_by_one.max_in_flight == per_side  # one side after the other
    assert together.max_in_flight == 2 * per_side  # both sides, each within its own bound
    assert together.count() == one_by_one.count() == 2 * 2 * len(NAMES)
    assert both == apart  # the same sessions either way
    assert [r["winner"] for r in both if r["turn"] > 0] == ["candidate"] * 2 * len(NAMES)


def test_models_computing_here_take_turns(tmp_path: Path) -> None:
    """Models in this process (a model given in memory; HF, llama.cpp, vLLM) are not asked at once."""
    store = RecordStore(tmp_path / "store.sqlite")
    scripted = cached(judge(standard_plan), store)
    remote = CachedModel("openai:m@http://127.0.0.1:9/v1", {}, store)
    assert not waits_on_server(scripted) and waits_on_server(remote)
    assert not waits_on_server(CachedModel("baseline:greeting", {}, store))
