"""A benchmark and a metric are each defined once: the task files, the leaderboard and its rows read them."""

from __future__ import annotations

import pytest

from rolebench.data.splits import BENCHMARKS, SPLITS, benchmark_of, get_benchmark
from rolebench.leaderboard.columns import CSV_COLUMNS, HEADERS
from rolebench.leaderboard.comparable import family_of
from rolebench.leaderboard.rows import SCORES, SPLIT_LABELS, Row, split_members
from rolebench.scoring.metrics import LABELS, METRIC_KEYS, METRICS, metrics_for
from rolebench.tasks.catalogue import _read_yaml, catalogue


def test_every_split_belongs_to_one_benchmark_and_the_leaderboard_reads_it():
    assert list(SPLITS) == [s.id for b in BENCHMARKS for s in b.splits]
    assert list(SPLIT_LABELS) == [b.group for b in BENCHMARKS]
    for benchmark in BENCHMARKS:
        assert get_benchmark(benchmark.group) is benchmark
        assert split_members(benchmark.group) == tuple(s.id for s in benchmark.splits)
        for split in benchmark.splits:
            assert benchmark_of(split.id) is benchmark and family_of(split.id) == benchmark.group
    assert [b.group for b in BENCHMARKS if b.builtin] == ["rolebench_demo"]
    assert get_benchmark("rolebench") is None and family_of("no_such_split") == ""
    assert split_members("rolebench") == ()


def test_task_files_list_the_metrics_of_their_split_kind():
    """lm-eval reads a task's metrics from its file: the kind's template names those of metrics.py."""
    tasks, groups = catalogue()
    for task in tasks.values():
        listed = [m["metric"] for m in _read_yaml(task.path)["metric_list"]]
        assert listed == [m.key for m in metrics_for(task.split.kind)], task.name
    for group in groups.values():
        listed = [m["metric"] for m in _read_yaml(group.path)["aggregate_metric_list"]]
        assert listed == list(METRIC_KEYS), group.name


def test_tables_name_every_metric_from_its_definition():
    assert [LABELS[m.key] for m in METRICS] == [m.label for m in METRICS]
    assert all(m.label in HEADERS and m.key in CSV_COLUMNS and f"f_{m.key}" in CSV_COLUMNS for m in METRICS)


def test_a_row_holds_its_scores_by_name():
    row = Row(model="m", spec="s", source="ours", split="rolebench_zh", scores={"cus": 0.5})
    for name, value in (("spe", 0.25), ("f_avg", 0.125)):  # set by name, kept with the others
        setattr(row, name, value)
    assert (row.cus, row.spe, row.raw, row.avg, row.f_avg) == (0.5, 0.25, None, None, 0.125)
    assert row.scores == {"cus": 0.5, "spe": 0.25, "f_avg": 0.125}
    fields = list(row.to_dict())
    assert fields[fields.index("split") + 1 : fields.index("split") + 1 + len(SCORES)] == list(SCORES)
    with pytest.raises(AttributeError):
        _ = row.no_such_score
