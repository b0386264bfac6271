"""Secrets are hidden by value where they enter, and nothing else is ever rewritten."""

from __future__ import annotations

import json
from pathlib import Path

from model_adapters.secrets import hide_secrets, register_secret, secret_from_env
from rolebench.storage.files import write_json_atomic
from rolebench.storage.records import RecordStore

ORDINARY = [
    "token=abc@def.example: what is your token?",  # looks like a secret, is a question
    "Secret: Agent",  # a role name
    "hf_checkpoints/my-model",  # a model folder
    "sk-not-a-key-just-text and Bearer of good news",
]


def test_registered_values_are_hidden_everywhere_they_would_be_written(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("MY_API_KEY", "sk-live-0123456789abcdef")
    assert secret_from_env("MY_API_KEY") == "sk-live-0123456789abcdef"
    echoed = "Your key is sk-live-0123456789abcdef, Captain."
    assert hide_secrets(echoed) == "Your key is ***, Captain."
    write_json_atomic(tmp_path / "r.json", {"answer": echoed, "ordinary": ORDINARY})
    written = (tmp_path / "r.json").read_text(encoding="utf-8")
    assert "sk-live-0123456789abcdef" not in written
    assert json.loads(written)["ordinary"] == ORDINARY  # ordinary text is never rewritten
    with RecordStore(tmp_path / "s.sqlite") as store:
        store.put("k", {"output": echoed})
        assert store.get("k") == {"output": "Your key is ***, Captain."}


def test_short_values_and_ordinary_text_are_left_alone() -> None:
    register_secret("EMPTY")  # a placeholder key is no secret
    assert hide_secrets("EMPTY handed over") == "EMPTY handed over"
    for text in ORDINARY:
        assert hide_secrets(text) == text
