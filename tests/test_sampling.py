"""`--limit N`: a seeded sample stratified over roles, stable as N grows; first-N on request."""

from __future__ import annotations

from collections import Counter

from rolebench import evaluate
from rolebench.data.resolve import resolve_source
from rolebench.data.samples import load_samples
from rolebench.data.sampling import select, stratified_order


def test_stratified_limit_covers_every_role_in_proportion(rolebench_data):
    samples = load_samples("zh_general", resolve_source(str(rolebench_data)))
    sizes = Counter(s.role for s in samples)
    chosen = select(samples, 50)
    got = Counter(s.role for s in chosen)
    assert len(chosen) == 50 and set(got) == set(sizes)  # the first 50 rows are all one role
    for role, size in sizes.items():
        assert abs(got[role] - 50 * size / len(samples)) <= 1
    assert [s.index for s in chosen] == sorted(s.index for s in chosen)  # dataset order
    assert Counter(s.role for s in select(samples, 50, "first")) == Counter({samples[0].role: 50})


def test_a_larger_limit_keeps_every_sample_of_a_smaller_one(rolebench_data):
    samples = load_samples("eng_role_specific", resolve_source(str(rolebench_data)))
    for small, large in ((10, 11), (30, 60), (100, 1000)):
        assert {s.id for s in select(samples, small)} <= {s.id for s in select(samples, large)}
    assert select(samples, 40, seed=1) != select(samples, 40, seed=0)  # seeded
    assert len(stratified_order(samples)) == len(samples)


def test_the_sample_is_recorded(tmp_path, rolebench_data):
    results = evaluate(
        **dict(
            model="baseline:rolegpt",
            tasks=("rolebench_zh_specific",),
            output=tmp_path,
            data_dir=str(rolebench_data),
            limit=12,
            progress=False,
        )
    )
    assert results.config.sampling is not None and results.config.sampling["mode"] == "stratified"
    assert len(results.results["rolebench_zh_specific"].per_role) == 5
