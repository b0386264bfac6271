"""The library API fails the Python way: a bad argument of `rouge_l`, `rouge_l_reward`, `make_reward` or
`load_prompts` is a ValueError or TypeError whose message names the argument, while the command line still
prints the same errors as one line, exit 2.

Every argument is attacked the way a hostile caller would: wrong types, nested lists, None, NaN, lengths
that differ, unknown names. None of these needs the RoleBench files (each is refused before any is read).
"""

from __future__ import annotations

import math
import re
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


# A model object (the adapter protocol) that breaks the protocol, and the other arguments of `evaluate`:
# a ConfigTypeError / ConfigError naming what is wrong, never a TypeError from inside rolebench, and nothing
# it gave wrongly is stored (the run folder is used again as it was).


class Broken:
    """An adapter whose `generate` yields `answer(request)` for every request but the ones it `skips`."""

    spec = "broken:v1"

    def __init__(self, answer: Callable[[Any], object], info: object = None, skips: int = 0) -> None:
        self.answer, self._info, self.skips = answer, info or {"name": "broken", "revision": None}, skips

    def info(self) -> object:
        return self._info

    def generate(self, requests: Any, config: Any) -> Any:
        for request in requests[self.skips :]:
            yield self.answer(request)

    def close(self) -> None:
        return None


def answered(text: object, **fields: Any) -> Callable[[Any], object]:
    from model_adapters import Generation

    return lambda request: (request, Generation(text=text, **fields))  # type: ignore[arg-type]


def good(request: Any) -> object:
    from model_adapters import Generation

    return request, Generation(text=request.messages[-1]["content"].upper(), finish_reason="stop")


BROKEN = {
    "None": (lambda r: None, ConfigTypeError, "generate() yielded None"),
    "a 3-tuple": (lambda r: (r, answered("x")(r)[1], 1), ConfigTypeError, "yielded a 3-tuple"),
    "a bare string": (lambda r: "an answer", ConfigTypeError, "yielded a str"),
    "bytes": (lambda r: b"an answer", ConfigTypeError, "yielded a bytes"),
    "a dict for the request": (
        lambda r: ({"id": r.id}, answered("x")(r)[1]),
        ConfigTypeError,
        "a dict where",
    ),
    "no Generation": (lambda r: (r, "x"), ConfigTypeError, "a str where a Generation belongs"),
    "text an int": (answered(5), ConfigTypeError, "its text is an int"),
    "text bytes": (answered(b"x"), ConfigTypeError, "its text is a bytes"),
    "text a lone surrogate": (answered("a\ud800b"), ConfigError, "lone surrogate at character 1"),
    "error a list": (answered(None, error=["x"]), ConfigTypeError, "its error is a list"),
    "seconds a text": (answered("x", seconds="1"), ConfigTypeError, "its seconds is a str"),
    "a request not asked": (
        lambda r: answered("x")(__import__("model_adapters").Request(id="other", messages=[])),
        ConfigError,
        "answered request other that it was not given",
    ),
}


def test_a_generate_that_returns_no_iterator_is_named(tmp_path: Any) -> None:
    import rolebench

    class Returns(Broken):
        def generate(self, requests: Any, config: Any) -> Any:
            return None

    with pytest.raises(ConfigTypeError, match=re.escape("generate() returned None, not an iterator")):
        rolebench.evaluate(Returns(good), "rolebench_demo", output=tmp_path, limit=2, progress=False)


@pytest.mark.parametrize("case", list(BROKEN))
def test_a_model_breaking_the_protocol_is_named_and_stores_nothing(case: str, tmp_path: Any) -> None:
    import rolebench

    answer, kind, named = BROKEN[case]
    for overwrite in (False, True):  # the same error each time: nothing wrong was stored
        with pytest.raises(kind, match=re.escape(named)) as caught:
            rolebench.evaluate(
                Broken(answer),
                "rolebench_demo",
                output=tmp_path,
                limit=2,
                progress=False,
                overwrite=overwrite,
            )
        assert isinstance(caught.value, ValueError | TypeError) and "\n" not in str(caught.value)
    fixed = rolebench.evaluate(Broken(good), "rolebench_demo", output=tmp_path, limit=2, progress=False)
    assert all(task.n_failed == 0 and task.n_generated == task.n for task in fixed.results.values())


def test_a_stored_answer_that_does_not_read_back_is_set_aside(tmp_path: Any, capsys: Any) -> None:
    """A store poisoned before answers were checked (an int stored as an answer) is no dead end: the record
    is named, set aside, and asked again, with or without `overwrite`."""
    import json
    import sqlite3

    import rolebench

    options = {"output": tmp_path, "limit": 2, "progress": False}
    first = rolebench.evaluate(Broken(good), "rolebench_demo", **options)
    for overwrite in (False, True):
        with sqlite3.connect(tmp_path / "generations.sqlite") as db:
            key, text = db.execute("SELECT key, record FROM generations ORDER BY key LIMIT 1").fetchone()
            db.execute(
                "UPDATE generations SET record = ? WHERE key = ?",
                (json.dumps({**json.loads(text), "output": 5}), key),
            )
        capsys.readouterr()
        again = rolebench.evaluate(Broken(good), "rolebench_demo", overwrite=overwrite, **options)
        err = capsys.readouterr().err
        assert "set aside 1 stored answer(s) of broken:v1" in err and "its output is an int" in err
        assert again.results == first.results  # asked again: the same answer
    with sqlite3.connect(tmp_path / "generations.sqlite") as db:
        assert (
            db.execute("SELECT problem FROM generations_set_aside").fetchall()
            == [("its output is an int, not a str",)] * 2
        )


def test_a_model_that_answers_fewer_requests_than_given_is_an_error(tmp_path: Any) -> None:
    import rolebench

    with pytest.raises(ConfigError, match=r"answered \d+ of the \d+ requests it was given"):
        rolebench.evaluate(Broken(good, skips=1), "rolebench_demo", output=tmp_path, limit=2, progress=False)
    fixed = rolebench.evaluate(Broken(good), "rolebench_demo", output=tmp_path, limit=2, progress=False)
    assert all(task.n_failed == 0 for task in fixed.results.values())


@pytest.mark.parametrize(
    ("info", "kind", "named"),
    [
        (["name"], ConfigTypeError, "info() returned a list"),
        ({"name": b"x"}, ConfigTypeError, "cannot be recorded as JSON"),
        ({"name": "\ud800"}, ConfigTypeError, "not valid Unicode"),
        ({"n": math.nan}, ConfigTypeError, "cannot be recorded as JSON"),
    ],
)
def test_a_bad_info_is_named(info: object, kind: type[Exception], named: str, tmp_path: Any) -> None:
    import rolebench

    with pytest.raises(kind, match=re.escape(named)):
        rolebench.evaluate(Broken(good, info=info), "rolebench_demo", output=tmp_path / "run", progress=False)
    assert not (tmp_path / "run").exists()


def test_the_other_arguments_of_evaluate_fail_the_python_way(tmp_path: Any) -> None:
    import rolebench

    in_the_way = tmp_path / "a-file"
    in_the_way.write_text("x", encoding="utf-8")
    cases: list[tuple[Callable[[], object], type[Exception], str]] = [
        (
            lambda: rolebench.evaluate(("a", "b"), "rolebench_demo"),
            ConfigTypeError,
            "model of the (model, tokenizer) pair is a str",
        ),
        (lambda: rolebench.evaluate(("a", "b", "c"), "rolebench_demo"), ConfigTypeError, "not a tuple of 3"),
        (lambda: rolebench.evaluate(5, "rolebench_demo"), ConfigTypeError, "not an int"),
        (
            lambda: rolebench.evaluate(
                "baseline:rolegpt", "rolebench_demo", output=in_the_way / "run", progress=False
            ),
            ConfigError,
            f"{in_the_way} is a file, so no run folder can be made under it",
        ),
        (
            lambda: rolebench.evaluate(Broken(good), "rolebench_demo", model_args={"dtype": "float16"}),
            ConfigError,
            "model_args cannot apply to a model object",
        ),
        (lambda: rolebench.judge(5, "openai:x"), ConfigTypeError, "run is an int, not a folder path"),
        (lambda: rolebench.judge(tmp_path, "openai:x", against=[1]), ConfigTypeError, "against is a list"),
        (lambda: rolebench.score(None), ConfigTypeError, "run is None, not a folder path"),
        (lambda: rolebench.read_results(["x"]), ConfigTypeError, "run is a list, not a folder path"),
    ]
    for call, kind, named in cases:
        with pytest.raises(kind, match=re.escape(named)):
            call()
    assert in_the_way.read_text(encoding="utf-8") == "x"


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
