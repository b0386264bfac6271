"""`rolebench judge RUN --judge OTHER` on a run's sessions: a second judge's verdicts on the turns the
sessions played (`rolebench.sessions.rejudge`), kept in `DIR/sessions/judges/<NAME>/<task>.jsonl`.

NAME is the judge's name as its single-turn judgments are named: `<spec as a file name>-<8 hex digits of
what decides its verdicts>` (its model identity, endpoint included, and its judge file's decoding). Each
call goes through the run folder's generation store (never asked twice), and each verdict is kept as it
arrives, so a killed pass resumes where it stopped. The judge that played the sessions is not asked again
(its verdicts are the log's own): the pass says so. The items are read again (RPBench-Auto's from the
package, RoleBench roles from the run's data) and must be the ones the sessions were played on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from model_adapters import GenerationConfig
from rolebench.cached_model import CachedModel
from rolebench.data.resolve import resolve_source
from rolebench.errors import DataError
from rolebench.judging.config import load_judge_config
from rolebench.judging.settings import JudgeSettings
from rolebench.run.folder import RunFolder
from rolebench.run.layout import SESSION_JUDGES_DIR, SESSIONS_DIR, slug
from rolebench.run.session_log import SessionLog, judge_logs, logged_tasks, read_log
from rolebench.sessions.data import ROLE_FILES, SessionItem, load_roles, load_rpbench, template_hashes
from rolebench.sessions.rejudge import rejudge
from rolebench.sessions.settings import SessionSettings
from rolebench.storage.records import content_key
from rolebench.tasks.sessions import RPBENCH_DIR, SESSION_TASKS


def session_tasks_of(folder: RunFolder) -> list[str]:
    """The session tasks whose logs the folder holds."""
    return [task for task in logged_tasks(folder) if task in SESSION_TASKS]


def judge_name(spec: str, model: CachedModel, settings: SessionSettings) -> str:
    """The second judge's folder name (see the module docstring)."""
    return f"{slug(spec)}-{content_key(model.identity, settings.judge_config.decoding_key())[:8]}"


def _items(folder: RunFolder, task: str, played: dict[str, list[dict[str, Any]]]) -> list[SessionItem]:
    """The items the task's sessions were played on, each checked against its session's opening."""
    spec = SESSION_TASKS[task]
    if spec.source == "rpbench":
        items = load_rpbench(RPBENCH_DIR, spec.kind)  # type: ignore[arg-type]
    else:
        definition = (folder.read_record_data() or {}).get("definition") or {}
        source = resolve_source(definition.get("data_dir"), revision=definition.get("revision"))
        descriptions = source.require(ROLE_FILES[spec.language], "the roles of the session task")
        items = load_roles(descriptions.parents[1], spec.language)
    found = [item for item in items if item.id in played]
    for item in found:
        if played[item.id][0].get("item_sha") != item.digest():
            raise DataError(
                f"{task}: the session on {item.id} was played on another version of the item than the "
                "data read now",
                where=str(folder.session_log_path(task)),
                fix="judge with the data the sessions were played on (--data-dir / --revision of the run)",
            )
    return found


def judge_sessions(folder: RunFolder, spec: str, settings: JudgeSettings) -> list[str]:
    """Judge every played turn of every session task again with `spec` (call under the folder's lock);
    one line per task saying what the pass did. The judge is loaded once, when a turn needs it."""
    tasks = session_tasks_of(folder)
    if not tasks:
        return []
    decoding = load_judge_config(settings.judge_config).generation_config(0, concurrency=settings.concurrency)
    with folder.generation_store() as store:
        model = CachedModel(spec, settings.adapter_options(), store)
        try:
            return [line for task in tasks if (line := _judge_task(folder, task, model, decoding))]
        finally:
            model.close()


def _judge_task(folder: RunFolder, task: str, model: CachedModel, decoding: GenerationConfig) -> str | None:
    """One task's pass (see `judge_sessions`): its line; None when its log holds no header yet."""
    path = folder.session_log_path(task)
    header, _ = read_log(path)
    if header is None:
        return None
    spec = str(model.spec)
    if model.identity == (header.get("players") or {}).get("judge"):
        return f"{task}: {spec} played these sessions as their judge: its verdicts are the log's"
    kept = header.get("settings") or {}
    settings = SessionSettings(
        turns=int(kept["turns"]),
        seed=int(kept["seed"]),
        judge_attempts=int(kept["judge_attempts"]),
        judge_config=decoding,
    )
    name = judge_name(spec, model, settings)
    log = SessionLog(
        folder.session_log_path(task, judge=name),
        {
            "judge": model.identity,
            "judge_decoding": decoding.decoding_key(),
            "played": content_key(header),
            "templates": template_hashes(),
        },
    )
    played = SessionLog(path, header)
    done = rejudge(_items(folder, task, played.sessions()), played, model, settings, log)
    return _line(task, name, done.turns, done.failures, done.stalled, len(log.records))


def _line(task: str, name: str, new: int, failures: int, stalled: dict[str, str], kept: int) -> str:
    stalled_text = (
        f"; {len(stalled)} sessions not judged, asked again by the next pass: {next(iter(stalled.values()))}"
        if stalled
        else ""
    )
    return (
        f"{task}: judge {name}: {new} turns judged in this pass ({failures} failures), {kept} kept in "
        f"{Path(SESSIONS_DIR) / SESSION_JUDGES_DIR / name / (task + '.jsonl')}{stalled_text}"
    )


def unjudged_turns(folder: RunFolder) -> int:
    """Played rounds that a second judge's log of the same task lacks (its calls failed: the next pass
    asks them again); 0 when no second judge was asked."""
    missing = 0
    for task in session_tasks_of(folder):
        _, records = read_log(folder.session_log_path(task))
        rounds = {(str(r["item"]), int(r["turn"])) for r in records if int(r["turn"]) > 0}
        for log in judge_logs(folder, task).values():
            done = {(str(r["item"]), int(r["turn"])) for r in read_log(log)[1]}
            missing += len(rounds - done)
    return missing
