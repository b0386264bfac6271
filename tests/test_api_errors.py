"""The library API fails the Python way: a bad argument of `rouge_l`, `rouge_l_reward`, `make_reward` or
`load_prompts` is a ValueError or TypeError whose message names the argument, while the command line still
prints the same errors as one line, exit 2.

Every argument is attacked the way a hostile caller would: wrong types, nested lists, None, NaN, lengths
that differ, unknown names. None of these needs the RoleBench files (each is refused before any is read).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from rolebench import rouge_l
from rolebench.cli.main import main
from rolebench.errors import ConfigError, ConfigTypeError, DataError, MissingDependency, ModelError, RunFailed
from rolebench.rewards import load_prompts, make_reward, rouge_l_reward

NAN = math.nan


def reward(**kwargs: Any) -> Callable[[], object]:
    return lambda: rouge_l_reward(**{"completions": ["a"], "references": [["a"]], "language": "en", **kwargs})


def score(*args: Any) -> Callable[[], object]:
    given = [["a"], [["a"]], "en", "rolellm"]
    given[: len(args)] = args
    return lambda: rouge_l(*given)


# (call, the exception class it must be, a text the message must hold: the argument it names)
CASES: dict[str, tuple[Callable[[], object], type[Exception], str]] = {
    # rouge_l(predictions, references, language, protocol)
    "predictions None": (score(None), TypeError, "predictions is None"),
    "predictions one text": (score("an answer"), TypeError, "predictions is a str"),
    "predictions [1]": (score([1]), TypeError, "predictions[0] is an int"),
    "predictions [None]": (score([None]), TypeError, "predictions[0] is None"),
    "predictions [NaN]": (score([NAN]), TypeError, "predictions[0] is a float"),
    "predictions nested": (score([["a"]]), TypeError, "predictions[0] is a list"),
    "predictions a dict": (score({"a": 1}), TypeError, "predictions is a dict"),
    "references None": (score(["a"], None), TypeError, "references is None"),
    "references one text": (score(["a"], "a"), TypeError, "references is a str"),
    "references flat": (score(["a"], ["a"]), TypeError, "references[0] is one text"),
    "references [None]": (score(["a"], [None]), TypeError, "references[0] is None"),
    "references [[None]]": (score(["a"], [[None]]), TypeError, "references[0][0] is None"),
    "references [[NaN]]": (score(["a"], [[NAN]]), TypeError, "references[0][0] is a float"),
    "references nested": (score(["a"], [[["a"]]]), TypeError, "references[0][0] is a list"),
    "references [5]": (score(["a"], [5]), TypeError, "references[0] is an int"),
    "references empty list": (score(["a"], [[]]), ValueError, "references[0] is empty"),
    "lengths differ": (score(["a", "b"], [["a"]]), ValueError, "2 predictions but 1 reference lists"),
    "language nested": (score(["a"], [["a"]], [["en"]]), TypeError, "rouge_l(language=...)"),
    "language None": (score(["a"], [["a"]], None), TypeError, "rouge_l(language=...)"),
    "language NaN": (score(["a"], [["a"]], NAN), TypeError, "rouge_l(language=...)"),
    "language array": (score(["a"], [["a"]], np.array(["en", "zh"])), TypeError, "rouge_l(language=...)"),
    "language unknown": (score(["a"], [["a"]], "EN"), ValueError, "unknown scoring language 'EN'"),
    "protocol list": (score(["a"], [["a"]], "en", ["rolellm"]), TypeError, "rouge_l(protocol=...)"),
    "protocol None": (score(["a"], [["a"]], "en", None), TypeError, "rouge_l(protocol=...)"),
    "protocol unknown": (score(["a"], [["a"]], "en", "rouge"), ValueError, "rouge_l(protocol=...)"),
    # rouge_l_reward(prompts, completions, references, language, **kwargs)
    "reward language nested": (reward(language=[["en"]]), TypeError, "rouge_l_reward(language=...)"),
    "reward language [None]": (reward(language=[None]), TypeError, "rouge_l_reward(language=...)"),
    "reward language NaN": (reward(language=NAN), ValueError, "`language` must be one language"),
    "reward language array": (reward(language=np.array(["en"])), ValueError, "`language` must be"),
    "reward language None": (reward(language=None), ValueError, "needs each item's language"),
    "reward language unknown": (reward(language="fr"), ValueError, "unknown scoring language 'fr'"),
    "reward languages too few": (
        reward(completions=["a", "b"], references=[["a"], ["b"]], language=["en"]),
        ValueError,
        "one per completion (2)",
    ),
    "reward completions None": (reward(completions=None), ValueError, "completions is None"),
    "reward completions one text": (reward(completions="a"), ValueError, "completions is a str"),
    "reward completions [None]": (reward(completions=[None]), ValueError, "completions[0] is None"),
    "reward completions [NaN]": (reward(completions=[NAN]), ValueError, "completions[0] is a float"),
    "reward completions nested": (reward(completions=[[["a"]]]), ValueError, "completions[0]"),
    "reward content an int": (
        reward(completions=[[{"role": "assistant", "content": 5}]]),
        ValueError,
        "content of completions[0] is an int",
    ),
    "reward text part an int": (
        reward(completions=[[{"role": "assistant", "content": [{"type": "text", "text": 5}]}]]),
        ValueError,
        "a text part of completions[0]",
    ),
    "reward no assistant": (
        reward(completions=[[{"role": "user", "content": "q"}]]),
        ValueError,
        "completions[0] has no assistant message",
    ),
    "reward references None": (reward(references=None), ValueError, "needs the reference answers"),
    "reward references one text": (reward(references="a"), ValueError, "references is not a list of 1"),
    "reward references [NaN]": (reward(references=[NAN]), ValueError, "references[0] is a float"),
    "reward references [[None]]": (reward(references=[[None]]), ValueError, "references[0][0] is None"),
    "reward references nested": (reward(references=[[["a"]]]), ValueError, "references[0][0] is a list"),
    "reward references a dict": (reward(references=[{"a": 1}]), ValueError, "references[0] is a dict"),
    "reward lengths differ": (
        reward(completions=["a", "b"], references=[["a"]]),
        ValueError,
        "2 completions but references is not a list of 2",
    ),
    # make_reward(protocol)
    "make_reward list": (lambda: make_reward(["rolebench"]), TypeError, "make_reward(protocol=...)"),
    "make_reward None": (lambda: make_reward(None), TypeError, "make_reward(protocol=...)"),  # type: ignore[arg-type]
    "make_reward unknown": (lambda: make_reward("rolebnech"), ValueError, "did you mean 'rolebench'"),
    "make_reward's function": (
        lambda: make_reward("opencompass")(completions=["a"], references=[["a"]], language=[["en"]]),
        TypeError,
        "rouge_l_reward(language=...)",
    ),
    # load_prompts(split, part, data_dir, limit, elicitation, *, shots, allow_test, seed)
    "split a list": (lambda: load_prompts(["zh_general"]), TypeError, "load_prompts(split=...)"),  # type: ignore[arg-type]
    "split None": (lambda: load_prompts(None), TypeError, "load_prompts(split=...)"),  # type: ignore[arg-type]
    "split unknown": (lambda: load_prompts("zh_genral"), ValueError, "did you mean 'zh_general'"),
    "part a list": (lambda: load_prompts("zh_general", ["train"]), TypeError, "load_prompts(part=...)"),  # type: ignore[arg-type]
    "part unknown": (lambda: load_prompts("zh_general", "dev"), ValueError, "load_prompts(part=...)"),
    "part test": (lambda: load_prompts("zh_general", "test"), ValueError, "allow_test=True"),
    "data_dir an int": (
        lambda: load_prompts("zh_general", data_dir=5),
        TypeError,
        "load_prompts(data_dir=...)",
    ),  # type: ignore[arg-type]
    "data_dir a list": (
        lambda: load_prompts("zh_general", data_dir=["/data"]),  # type: ignore[arg-type]
        TypeError,
        "load_prompts(data_dir=...)",
    ),
    "limit a text": (lambda: load_prompts("zh_general", limit="3"), TypeError, "load_prompts(limit=...)"),  # type: ignore[arg-type]
    "limit NaN": (lambda: load_prompts("zh_general", limit=NAN), TypeError, "load_prompts(limit=...)"),  # type: ignore[arg-type]
    "limit 0": (lambda: load_prompts("zh_general", limit=0), ValueError, "load_prompts(limit=...)"),
    "elicitation a list": (
        lambda: load_prompts("zh_general", elicitation=["zero-shot"]),  # type: ignore[arg-type]
        TypeError,
        "load_prompts(elicitation=...)",
    ),
    "elicitation unknown": (
        lambda: load_prompts("zh_general", elicitation="few-shot"),
        ValueError,
        "unknown elicitation method 'few-shot'",
    ),
    "shots a text": (
        lambda: load_prompts("zh_general", elicitation="few-shot-dialogue", shots="3"),  # type: ignore[arg-type]
        TypeError,
        "load_prompts(shots=...)",
    ),
    "shots a float": (
        lambda: load_prompts("zh_general", elicitation="few-shot-dialogue", shots=2.5),  # type: ignore[arg-type]
        TypeError,
        "load_prompts(shots=...)",
    ),
    "shots NaN": (
        lambda: load_prompts("zh_general", elicitation="few-shot-dialogue", shots=NAN),  # type: ignore[arg-type]
        TypeError,
        "load_prompts(shots=...)",
    ),
    "shots True": (
        lambda: load_prompts("zh_general", elicitation="few-shot-dialogue", shots=True),
        TypeError,
        "load_prompts(shots=...)",
    ),
    "shots negative": (
        lambda: load_prompts("zh_general", elicitation="few-shot-dialogue", shots=-1),
        ValueError,
        "load_prompts(shots=...)",
    ),
    "shots without a few-shot method": (
        lambda: load_prompts("zh_general", shots=2),
        ValueError,
        "needs a few-shot method",
    ),
    "allow_test a truthy text": (
        lambda: load_prompts("zh_general", "test", allow_test="no"),  # type: ignore[arg-type]
        TypeError,
        "load_prompts(allow_test=...)",
    ),
    "seed a text": (lambda: load_prompts("zh_general", seed="0"), TypeError, "load_prompts(seed=...)"),  # type: ignore[arg-type]
    "seed NaN": (lambda: load_prompts("zh_general", seed=NAN), TypeError, "load_prompts(seed=...)"),  # type: ignore[arg-type]
    "seed None": (lambda: load_prompts("zh_general", seed=None), TypeError, "load_prompts(seed=...)"),  # type: ignore[arg-type]
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_bad_argument_is_a_value_or_type_error_naming_it(case: str) -> None:
    call, kind, named = CASES[case]
    with pytest.raises(kind) as caught:
        call()
    assert isinstance(caught.value, ValueError | TypeError)  # never AttributeError, KeyError, ...
    assert named in str(caught.value)
    assert "\n" not in str(caught.value)  # one line, as the command line prints it


def test_the_errors_are_value_errors_and_a_type_error_is_both() -> None:
    """A trainer's `except ValueError` catches every bad-argument error of the package."""
    for error in (ConfigError("x"), DataError("x"), ConfigTypeError("x")):
        assert isinstance(error, ValueError)
    assert isinstance(ConfigTypeError("x"), TypeError) and isinstance(ConfigTypeError("x"), ConfigError)
    # failures that are not about a value stay what they were
    for error in (ModelError("x"), MissingDependency("f", "p", "e"), RunFailed("x")):
        assert not isinstance(error, ValueError)


def test_the_command_line_still_prints_them_as_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluate", "--model", "baseline:rolegpt", "--tasks", "rolebench_nope"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("rolebench: error: unknown task") and "\n" not in err and "Traceback" not in err
    assert main(["score", "/nonexistent-run", "--protocol", "rouge"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("rolebench: error:") and "\n" not in err and "internal error" not in err


def test_good_arguments_still_score() -> None:
    """The checks refuse only what is wrong: tuples, generators and numpy texts are lists of texts."""
    assert rouge_l(("I am the Monkey King.",), [("I am the Monkey King.",)]) == [1.0]
    assert rouge_l((p for p in ["a b"]), iter([["a b"]]), "en", "rolebench") == [1.0]
    assert rouge_l([np.str_("a b")], [[np.str_("a b")]], "en", "rolebench") == [1.0]
    assert rouge_l_reward(completions=["a b"], references=[["a b"]], language=["en"]) == [1.0]


def test_api_errors_name_the_python_options_and_the_command_its_flags(tmp_path, capsys):
    """An error of the Python API names `overwrite=True` and `data_dir=`, the command `--overwrite` and
    `--data-dir`, from one message each (issue 36 item 7)."""
    import rolebench
    from rolebench.cli.main import main

    run = tmp_path / "run"
    rolebench.evaluate("baseline:rolegpt", "rolebench_demo", limit=2, output=run, progress=False)
    with pytest.raises(ValueError) as error:
        rolebench.evaluate(
            "baseline:rolegpt", "rolebench_demo", limit=2, temperature=0.7, output=run, progress=False
        )
    assert "pass overwrite=True to replace that run" in str(error.value) and "--" not in str(error.value)
    with pytest.raises(ValueError) as error:
        rolebench.evaluate(
            "baseline:rolegpt", "rolebench_zh", data_dir=str(tmp_path / "none"), progress=False
        )
    assert "(data_dir=)" in str(error.value) and "--data-dir" not in str(error.value), str(error.value)
    capsys.readouterr()
    command = ["evaluate", "--model", "baseline:rolegpt", "--tasks", "rolebench_demo", "--no-progress"]
    assert main([*command, "--limit", "2", "--temperature", "0.7", "--output", str(run)]) == 2
    assert "pass --overwrite to replace that run" in capsys.readouterr().err
