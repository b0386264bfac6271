"""What answers look like beside their scores: lengths, cuts at the token limit, loops."""

from __future__ import annotations

import json

from rolebench.scoring.answers import loops, repeat_share

EN_CUS = "rolebench-eng/role-generalization/general/test.jsonl"


def test_looping_answers_are_told_apart_from_natural_ones(rolebench_data):
    assert loops("I am the king! " * 20) and loops("苹果！" * 40)
    assert not loops("I am the Monkey King, and I fear nothing under heaven.")
    assert repeat_share("la la") == 0.0  # too short to call
    references = [
        g for line in (rolebench_data / EN_CUS).open(encoding="utf-8") for g in json.loads(line)["generated"]
    ]
    assert sum(map(loops, references)) / len(references) < 0.01  # RoleBench's own answers do not loop
