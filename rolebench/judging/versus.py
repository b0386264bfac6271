"""`rolebench judge RUN --against OTHER`: one run's answers against another run's, head to head.

The items both runs hold (a task of both, joined by sample id, with the same role and question) are
judged by `rolebench.judging.run.judge_pairs`, the machinery of the baseline win rate: the judge file's
prompt (the paper's ranking prompt by default), anonymised, both orders, retries, cached completions,
a seeded `--judge-limit`. OTHER's answer takes the place of the RoleGPT baseline answer, so a win is an
item where RUN's answer is preferred, and `win_rate`, its interval and counts are RUN's.

OTHER is named by its identity: its run definition and the digests of the samples files judged against
(`opponent_identity`), shown by a readable name (its model spec and elicitation). Its verdicts go into
their own folder of RUN (`rolebench.judging.sets`), so two opponents never mix, and results.json shows them
under `results[task]["versus"][NAME]` (`rolebench.judging.results`). An OTHER whose samples are not the ones
its results.json was computed from (a file that lost lines) is refused.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rolebench.errors import ConfigError, DataError
from rolebench.judging.outcomes import Pair
from rolebench.judging.run import Judged, judge_pairs, limit_pairs
from rolebench.judging.sets import judge_set, opponent_folder, write_pass
from rolebench.judging.settings import JudgeSettings
from rolebench.results.schema import RunResults, SampleRecord
from rolebench.run.elicitation import elicitation_label
from rolebench.run.folder import RunFolder
from rolebench.run.record import RunRecord
from rolebench.storage.records import content_key


def opponent_name(results: RunResults) -> str:
    """A run named as an opponent: its model spec and elicitation, e.g. `smollm2:135m (zero-shot)`."""
    spec = results.config.model.get("spec") or results.config.model.get("name") or "unknown model"
    return f"{spec} ({elicitation_label(results.config.elicitation)})"


def checked_opponent(other: RunFolder) -> tuple[RunResults, RunRecord | None]:
    """OTHER's results, refused in one line when a samples file is not the one they were computed from."""
    results = other.read_results()
    for task in other.stale_tasks(results):
        state = (
            "is missing"
            if other.samples_digest(task) is None
            else "is not the one its results.json was computed from"
        )
        raise DataError(
            f"the other run's samples file of {task} {state}",
            where=str(other.samples_path(task)),
            fix=f"repair the other run first (`rolebench score {other.path}`), then judge against it",
        )
    return results, RunRecord.read(other)


def opponent_identity(results: RunResults, record: RunRecord | None, tasks: Sequence[str]) -> str:
    """The opponent's identity: its run definition and the samples (by digest) judged against."""
    definition = (
        record.definition.record() if record is not None else results.config.run or results.config.model
    )
    samples = {task: results.results[task].samples_sha256 for task in tasks}
    return content_key("opponent", definition, samples)


def shared_pairs(
    run: Mapping[str, Sequence[SampleRecord]], other: RunFolder, other_results: RunResults, here: str
) -> dict[str, list[Pair]]:
    """Per task both runs hold, a Pair per item both hold (same id, role and question), in RUN's order.

    One ConfigError line when they share no task, or no item."""
    tasks = [task for task in run if task in other_results.results]
    if not tasks:
        raise ConfigError(
            f"{here} and {other.path} share no task ({', '.join(run) or 'none'} vs "
            f"{', '.join(other_results.results) or 'none'})",
            where="--against",
            fix="compare two runs of the same tasks",
        )
    pairs: dict[str, list[Pair]] = {}
    for task in tasks:
        theirs = {r.id: r for r in other.read_samples(task)}
        found = [
            Pair.of(mine, theirs[mine.id].output)
            for mine in run[task]
            if mine.id in theirs
            and (mine.role, mine.question) == (theirs[mine.id].role, theirs[mine.id].question)
        ]
        if found:
            pairs[task] = found
    if not pairs:
        raise ConfigError(
            f"{here} and {other.path} share no item of {', '.join(tasks)} (no sample id with the same "
            "role and question in both)",
            where="--against",
            fix="compare runs of the same data (a --limit sample is seeded: use the same --limit and seed)",
        )
    return pairs


def judge_versus(
    folder: RunFolder,
    records: Mapping[str, Sequence[SampleRecord]],
    other: RunFolder,
    judge_spec: str,
    settings: JudgeSettings,
) -> Judged:
    """Judge RUN's answers (`records`: task -> samples) against OTHER's on the items both hold, into the
    folder of (OTHER, judge) of RUN."""
    if folder.path.resolve() == other.path.resolve():
        raise ConfigError(
            "a run cannot be judged against itself", where="--against", fix="name another run folder"
        )
    other_results, other_record = checked_opponent(other)
    shared = shared_pairs(records, other, other_results, str(folder.path))
    pairs = {task: limit_pairs(task, task_pairs, settings) for task, task_pairs in shared.items()}
    judged = judge_pairs(pairs, judge_spec, settings)
    name = opponent_name(other_results)
    identity = opponent_identity(other_results, other_record, list(shared))
    judged.block["against"] = _against(other, other_results, name, identity, list(shared))
    judged.block["this_run_is"] = "model (a win: the judge prefers this run's answer)"
    judged.judgments = judge_set(
        folder, judge_spec, str(judged.block["key"]), opponent_folder(name, identity)
    )
    judged.lines = write_pass(judged.judgments, judged.lines, judged.block)
    return judged


def _against(
    other: RunFolder, results: RunResults, name: str, identity: str, tasks: list[str]
) -> dict[str, Any]:
    return {
        "name": name,
        "identity": identity,
        "run": str(other.path.resolve()),
        "model": results.config.model.get("spec"),
        "elicitation": results.config.elicitation or {"method": "zero-shot", "shots": 0},
        "samples_sha256": {task: results.results[task].samples_sha256 for task in tasks},
        "created": results.created,
    }
