"""results.json's session fields, from the sessions files a run folder holds (reading never writes).

For each session task the run planned (`config.sessions` of its record: the players' specs as given and
the items taken), the numbers come from its sessions file (`stats.session_summary` over the turns kept),
with how many items the task holds, how many sessions are over (played to their last turn, or ended by a
failure) and how many wait (a call that failed, or a run cut short: the next run asks again), and the
sha256 of the file they come from. A second judge's verdicts on the same turns
(`RunFolder.session_log_path(task, judge=NAME)`, written by `rejudge`) add its numbers and its agreement
with the first judge under `judges[NAME]`. `config.sessions[task]` is the file's header (who played and
judged, the settings, the templates' hashes, the data) and the specs.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from rolebench.results.schema import SessionResult
from rolebench.run.folder import RunFolder
from rolebench.run.session_log import judge_logs, read_log, session_over
from rolebench.scoring.session_stats import judge_agreement, session_summary
from rolebench.tasks.sessions import SESSION_TASKS


def _second_judges(folder: RunFolder, task: str) -> dict[str, list[dict[str, Any]]]:
    """Each second judge's verdicts on the task's turns, by the judge's folder name."""
    return {name: read_log(path)[1] for name, path in judge_logs(folder, task).items()}


def _flags(result: Mapping[str, Any]) -> list[str]:
    flags = []
    if result["n_stalled"]:
        flags.append("incomplete")  # sessions wait on a failed call or an interrupted run
    verdicts = result["wins"] + result["losses"] + result["ties"]
    if result["failures"] and result["failures"] >= verdicts:
        flags.append("judge_failures")  # the judge could not be read as often as it could, or more
    return flags


def session_result(
    task: str,
    planned: Mapping[str, Any],
    header: Mapping[str, Any],
    records: list[dict[str, Any]],
    **boot: Any,
) -> dict[str, Any]:
    """One task's `SessionResult` fields from its file's header and turns (`boot`: `resamples`, `seed`)."""
    items = [str(item) for item in planned.get("items") or []]
    taken = set(items)
    kept = [r for r in records if not taken or str(r["item"]) in taken]
    sessions: dict[str, list[dict[str, Any]]] = {}
    for record in kept:
        sessions.setdefault(str(record["item"]), []).append(record)
    turns = int((header.get("settings") or {}).get("turns") or 0)
    complete = sum(session_over(sorted(t, key=lambda r: int(r["turn"])), turns) for t in sessions.values())
    described = SESSION_TASKS.get(task)
    found: dict[str, Any] = {
        "kind": described.kind if described else "unknown",
        "language": described.language if described else "unknown",
        "n_items": len(items) or len(sessions),
        "n_complete": complete,
        "n_stalled": (len(items) or len(sessions)) - complete,
        **session_summary(kept, **boot),
    }
    found["flags"] = _flags(found)
    return found


def session_results(
    folder: RunFolder, planned: Mapping[str, Mapping[str, Any]], resamples: int, seed: int
) -> tuple[dict[str, SessionResult], dict[str, Any]]:
    """results.json's `sessions` and `config.sessions` of the tasks `planned` (see the module docstring);
    a task whose file is not there yet (an interrupted first run) is left out."""
    results, config = {}, {}
    for task, plan in planned.items():
        path = folder.session_log_path(task)
        header, records = read_log(path)
        if header is None:
            continue
        found = session_result(task, plan, header, records, resamples=resamples, seed=seed)
        found["log_sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
        for name, verdicts in _second_judges(folder, task).items():
            found["judges"] = found.get("judges") or {}
            found["judges"][name] = {
                **session_summary(verdicts, resamples=resamples, seed=seed),
                "agreement": judge_agreement(records, verdicts),
            }
        results[task] = SessionResult.model_validate(found)
        config[task] = {**header, "specs": dict(plan.get("specs") or {})}
    return results, config
