"""The generation store read from outside (`count_records`, `RunFolder.stored_answers`) and a sweep job's
progress counted from it, without planning the run again (`rolebench.sweep.job.StoredCounter`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rolebench.run.folder import RunFolder
from rolebench.storage.records import RecordStore, count_records


def _answer(text: str | None) -> dict[str, Any]:
    return {
        "output": text,
        "error": None,
        "seconds": 0.1,
        "usage": {},
        "finish_reason": "stop",
        "failed": False,
    }


def test_a_store_is_counted_read_only_by_the_field_its_records_set(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    with RecordStore(path, "generations") as store:
        store.put("info", {"name": "a model's description"})
        store.put("a", _answer("hello"))
        store.put("b", _answer(None))  # an item answered with no text
        store.put("c", _answer("bad"))
        store.set_aside({"c": "does not read back"})
        assert count_records(path, "output", "generations") == 1
        assert count_records(path, "output", "generations", null_too=True) == 2
        assert count_records(path, "output") == 2  # every table: the record set aside too


def test_the_folder_counts_its_stored_answers_none_before_a_store(tmp_path: Path) -> None:
    folder = RunFolder(tmp_path / "run")
    assert folder.stored_answers() is None
    with folder.generation_store() as store:
        store.put("info", {"name": "a model's description"})
        assert folder.stored_answers() == 0 and not folder.holds_answers()
        store.put("a", _answer(None))
        assert folder.stored_answers() == 1 and not folder.holds_answers()
        store.put("b", _answer("hello"))
        assert folder.stored_answers() == 2 and folder.holds_answers()


class _Stored:
    def __init__(self) -> None:
        self.reports: list[dict[str, int]] = []

    def remote(self, name: str, counts: dict[str, int]) -> None:
        self.reports.append(counts)


class _Monitor:
    def __init__(self) -> None:
        self.stored = _Stored()


def test_a_job_counts_each_task_in_the_order_evaluate_generates_them(tmp_path: Path) -> None:
    from rolebench.sweep.job import StoredCounter
    from rolebench.sweep.plan import ModelRun

    run: Any = ModelRun.__new__(ModelRun)
    object.__setattr__(run, "name", "m")
    object.__setattr__(run, "tasks", ("first", "second"))
    object.__setattr__(run, "execution", type("E", (), {"output": tmp_path / "m"})())
    monitor = _Monitor()
    counter = StoredCounter(run, {"first": 2, "second": 3}, monitor)
    counter.count()
    assert monitor.stored.reports == [] and counter.generated == {}  # no store yet: nothing said
    with RunFolder(tmp_path / "m").generation_store() as store:
        for key in ("a", "b", "c"):
            store.put(key, _answer(key))
        counter.count()
        assert monitor.stored.reports == [{"first": 2, "second": 1}] and set(counter.generated) == {"first"}
        counter.count()
        assert len(monitor.stored.reports) == 1  # said again only when it changes
        store.put("d", _answer("d"))
        store.put("e", _answer("e"))
        counter.count()
    assert monitor.stored.reports[-1] == {"first": 2, "second": 3} and set(counter.generated) == {
        "first",
        "second",
    }
