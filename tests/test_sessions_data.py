"""Session items: RPBench-Auto's characters and scenes, RoleBench's roles, their prompts and checks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rolebench.errors import DataError
from rolebench.sessions.data import GREETINGS, TEMPLATES, load_roles, load_rpbench, template_hashes
from rolebench.sessions.verdict import VerdictError, parse_opening, parse_turn
from rolebench.tasks.sessions import RPBENCH_DIR
from tests.sessions_scripted import RPBENCH


@pytest.fixture(scope="module")
def rpbench() -> Path:
    return RPBENCH_DIR  # shipped inside the package


def test_the_shipped_files_are_the_release_when_it_is_here() -> None:
    """The package ships RPBench-Auto's release unchanged (checked against ../shared/rpbench when present)."""
    if not (RPBENCH / "rpbench_character.jsonl").is_file():
        pytest.skip(f"RPBench-Auto's release not found at {RPBENCH} to compare the shipped copy with")
    for name in ("rpbench_character.jsonl", "rpbench_scene.jsonl", "LICENSE"):
        assert (RPBENCH_DIR / name).read_bytes() == (RPBENCH / name).read_bytes(), name


def test_rpbench_characters_and_scenes_read_whole(rpbench: Path) -> None:
    characters, scenes = load_rpbench(rpbench, "character"), load_rpbench(rpbench, "scene")
    assert len(characters) == len(scenes) == 80
    assert len({item.id for item in characters + scenes}) == 160
    marco = characters[0]
    assert marco.id == "character/0" and marco.name == "Your rival Marco" and marco.kind == "character"
    assert marco.system_prompt.startswith("You are role-playing a character based on the following profile.")
    assert "Antagonistic, possessive" in marco.system_prompt and "Let me in" in marco.greeting
    assert "Your rival Marco" in marco.judge_prompt and marco.system_prompt in marco.judge_prompt
    scene = scenes[3]
    assert scene.kind == "scene" and "Admiring. Curious. Respectful." in scene.system_prompt
    assert scene.greeting.count("\n") == 1  # two opening sentences, one a line
    assert "the scene's plot" in scene.judge_prompt and "the scene's plot" not in marco.judge_prompt


def test_rolebench_roles_in_both_languages(rolebench_data: Path) -> None:
    english, chinese = load_roles(rolebench_data, "en"), load_roles(rolebench_data, "zh")
    assert len(english) == 95 and len(chinese) == 5
    doctor = next(item for item in english if item.name == "Doctor Who")
    assert doctor.id == "role/en/Doctor Who" and doctor.greeting == GREETINGS["en"]
    assert '"Allons-y!"' in doctor.system_prompt and "catchphrases" in doctor.system_prompt
    monkey = next(item for item in chinese if item.name == "孙悟空")
    assert (
        "俺老孙" in monkey.system_prompt
        and monkey.greeting == "你好。"
        and "in Chinese" in monkey.judge_prompt
    )


def _write(path: Path, records: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def _character(number: int, **changes: object) -> dict:
    record = {
        "id": number,
        "background": "Play the character.",
        "npc_profile": {
            "name_text": "Ann",
            "title": "kind",
            "description": "Ann.",
            "long_definition_text": "",
        },
        "conversation": [{"from": "npc", "sentences": ["Hello there."]}],
    }
    return record | changes


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"id": "x"}, "`id` 'x' must be a whole number"),
        ({"id": 0}, "`id` 0 repeats an earlier id"),
        ({"background": ""}, "`background` must be a non-empty text"),
        ({"npc_profile": []}, "`npc_profile` must be a JSON object"),
        (
            {"conversation": [{"from": "user", "sentences": ["hi"]}]},
            "`conversation` must open with the NPC's turn",
        ),
    ],
)
def test_a_bad_record_is_one_line_naming_file_and_line(tmp_path: Path, bad: dict, message: str) -> None:
    _write(tmp_path / "rpbench_character.jsonl", [_character(0), _character(1, **bad)])
    with pytest.raises(DataError) as caught:
        load_rpbench(tmp_path, "character")
    text = str(caught.value)
    assert message in text and f"{tmp_path / 'rpbench_character.jsonl'}:2" in text and "\n" not in text


def test_missing_files_are_named(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="rpbench_scene.jsonl"):
        load_rpbench(tmp_path, "scene")
    with pytest.raises(DataError, match="profiles-zh"):
        load_roles(tmp_path, "zh")


def test_every_template_has_a_hash() -> None:
    hashes = template_hashes()
    assert set(hashes) == set(TEMPLATES) and all(len(digest) == 64 for digest in hashes.values())


def test_judge_replies_parse_or_say_why() -> None:
    fenced = (
        '```json\n{"winner": "Model A", "next_round_user_speaks": "go on", "decision_reason": "vivid"}\n```'
    )
    verdict = parse_turn(fenced, last=False)
    assert (verdict.winner, verdict.next_user, verdict.reason) == ("model_a", "go on", "vivid")
    assert parse_turn('Sure. {"winner": "tie"}', last=True).next_user is None
    assert parse_opening('{"next_round_user_speaks": " hi "}') == "hi"
    for text, why in [
        ("no json", "no JSON object"),
        ('{"winner": "model_c", "next_round_user_speaks": "x"}', "`winner` is 'model_c'"),
        ('{"winner": "model_b"}', "`next_round_user_speaks` is missing"),
    ]:
        with pytest.raises(VerdictError, match=why):
            parse_turn(text, last=False)
