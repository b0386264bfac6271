"""A run's session tasks (`rolebench evaluate --tasks rpbench --opponent SPEC --judge SPEC`), one part of the
pipeline (`SessionPart`): their items, players and settings, and playing them into the run folder.

Task and group names of `rolebench.tasks.sessions` are split from the single-turn ones (`split_tasks`);
each session task's items come from the package (RPBench-Auto) or from the run's data source (RoleBench's
roles, the sha256 of the file read recorded), a `--limit N` taking a stable seeded subset (`--limit-seed`:
a larger N keeps every item of a smaller one). The candidate is the run's own cached model; the opponent
(`--opponent`, `--opponent-args`, `--opponent-base-url`) and the judge (`--judge`, `--judge-base-url`: it
plays the user) are cached models over the same generation store. The candidates decode with the run's
settings, the judge with its judge file's (`--judge-config`, whose retries bound the attempts at a reply
that parses). A folder whose sessions were played by other players or settings is refused before any
call, naming what differs (`rolebench.evaluation.session_checks.check_logs`); `--overwrite` plays them again.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from jinja2.exceptions import TemplateError

from model_adapters.files import file_sha256
from model_adapters.interface import item_seed
from model_adapters.secrets import hide_secrets
from rolebench.cached_model import CachedModel
from rolebench.data.source import DataSource
from rolebench.evaluation.session_checks import check_chat_order, check_logs
from rolebench.judging.config import load_judge_config
from rolebench.judging.settings import JudgeSettings
from rolebench.results.schema import RunConfig
from rolebench.run.definition import Execution, RunDefinition
from rolebench.run.folder import RunFolder
from rolebench.run.record import RunRecord
from rolebench.run.session_log import SessionLog
from rolebench.sessions.data import ROLE_FILES, RPBENCH_FILES, SessionItem, load_roles, load_rpbench
from rolebench.sessions.loop import play
from rolebench.sessions.settings import Played, Players, SessionSettings, session_header
from rolebench.storage.records import RecordStore
from rolebench.tasks.sessions import RPBENCH_DIR, SESSION_TASKS, SessionTask, split_tasks


@dataclass(frozen=True)
class SessionJudge:
    """The judge of a run's sessions: its spec and `evaluate --judge`'s settings (base URL, judge file)."""

    spec: str
    settings: JudgeSettings


@dataclass
class SessionPlan:
    """One session task of a run: its items (the `--limit` subset) and the data they came from."""

    task: SessionTask
    items: list[SessionItem]
    data: dict[str, Any]


def session_facts(task: str) -> dict[str, Any]:
    """What a session task is, as a sweep's "already done" key holds it beside the single-turn tasks'
    versions (its items' data enters through the sessions files' headers)."""
    return {"session": asdict(SESSION_TASKS[task])}


def _subset(items: list[SessionItem], limit: int | None, seed: int) -> list[SessionItem]:
    """`limit` items drawn by their seeded ranks (a larger limit keeps a smaller one's), in file order."""
    if limit is None or limit >= len(items):
        return items
    kept = {item.id for item in sorted(items, key=lambda item: item_seed(seed, item.id))[:limit]}
    return [item for item in items if item.id in kept]


def plan_sessions(definition: RunDefinition, names: Sequence[str], source: DataSource) -> list[SessionPlan]:
    """Each session task's items and data (a missing or broken file: one DataError line, before any model)."""
    plans = []
    for name in names:
        task = SESSION_TASKS[name]
        if task.kind == "character" or task.kind == "scene":
            file = RPBENCH_FILES[task.kind]
            items = load_rpbench(RPBENCH_DIR, task.kind)
            data: dict[str, Any] = {
                "source": "RPBench-Auto, shipped with rolebench",
                "files": {file: file_sha256(RPBENCH_DIR / file)},
            }
        else:
            relpath = ROLE_FILES[task.language]
            path = source.require(relpath, purpose=f"the roles of {name}")
            items = load_roles(path.parent.parent, task.language)
            data = {
                "source": "RoleBench",
                "kind": source.kind,
                "location": source.location,
                "revision": source.revision,
                "files": {relpath: source.files[relpath]},
            }
        plans.append(SessionPlan(task, _subset(items, definition.limit, definition.limit_seed), data))
    return plans


def session_settings(definition: RunDefinition, execution: Execution, judge: SessionJudge) -> SessionSettings:
    """The sessions' settings: the run's turns, seed and decoding for the candidates (its batching and
    concurrency too), the judge file's decoding and retries for the judge."""
    config = load_judge_config(judge.settings.judge_config)
    return SessionSettings(
        turns=definition.turns,
        seed=definition.seed,
        judge_attempts=config.max_attempts,
        answer_config=definition.decoding(definition.max_new_tokens, execution),
        judge_config=config.generation_config(
            0, concurrency=execution.concurrency, batch_size=execution.batch_size
        ),
    )


def session_players(
    candidate: CachedModel,
    definition: RunDefinition,
    execution: Execution,
    judge: SessionJudge,
    store: RecordStore,
) -> Players:
    """The candidate as the run holds it, the opponent and the judge, all over the run's generation store."""
    opponent = CachedModel(
        str(definition.opponent), definition.opponent_options(execution.opponent_base_url), store
    )
    return Players(candidate, opponent, CachedModel(judge.spec, judge.settings.adapter_options(), store))


def sessions_config(
    definition: RunDefinition, plans: Sequence[SessionPlan], judge: SessionJudge | None
) -> dict[str, Any]:
    """run.json's `config.sessions` as planned: per task, the players' specs as given and the items taken."""
    specs = {"candidate": definition.model, "opponent": definition.opponent, "judge": judge and judge.spec}
    return {plan.task.name: {"specs": specs, "items": [item.id for item in plan.items]} for plan in plans}


def play_sessions(
    plans: Sequence[SessionPlan],
    players: Players,
    settings: SessionSettings,
    folder: RunFolder,
    progress: bool,
) -> dict[str, Played]:
    """Play (or resume) each task's sessions into its sessions file, every turn kept as it arrives."""
    played = {}
    for plan in plans:
        log = SessionLog(
            folder.session_log_path(plan.task.name), session_header(players, settings, plan.data)
        )
        try:
            played[plan.task.name] = play(plan.items, players, settings, log, progress=progress)
        except TemplateError:  # a local backend renders the prompt: its template raised
            check_chat_order(players)
            raise
        stalled = played[plan.task.name].stalled
        if stalled:  # a backend that reports a failed call as an error
            check_chat_order(players)
            item, error = next(iter(stalled.items()))
            print(
                f"rolebench: {plan.task.name}: {len(stalled)} sessions wait on a failed call (first, "
                f"{item}: {hide_secrets((error.strip().splitlines() or ['?'])[0][:300])})",
                file=sys.stderr,
            )
    return played


@dataclass
class SessionPart:
    """The run's session tasks, one part of `rolebench evaluate` (`rolebench.evaluation.pipeline.RunPart`):
    their items planned, their players and sessions files checked before any call, their turns played."""

    definition: RunDefinition
    execution: Execution
    judge: SessionJudge | None
    plans: list[SessionPlan]
    groups: dict[str, list[str]] = field(default_factory=dict)  # none: their groups expand to their names
    players: Players | None = None
    settings: SessionSettings | None = None

    @classmethod
    def plan(
        cls, definition: RunDefinition, execution: Execution, source: DataSource, judge: SessionJudge | None
    ) -> SessionPart:
        """Each session task's items and data (read here, before any model loads)."""
        plans = plan_sessions(definition, split_tasks(definition.tasks)[1], source)
        return cls(definition, execution, judge, plans)

    def configure(self, config: RunConfig) -> None:
        if self.plans:
            config.sessions = sessions_config(self.definition, self.plans, self.judge)

    def check(self, folder: RunFolder, model: CachedModel) -> None:
        """The players made over the run's store, and the folder's sessions files checked against them."""
        if not self.plans or self.judge is None:
            return
        self.settings = session_settings(self.definition, self.execution, self.judge)
        self.players = session_players(model, self.definition, self.execution, self.judge, model.store)
        logs = {plan.task.name: plan.data for plan in self.plans}
        check_logs(folder, logs, self.players, self.settings, self.execution.overwrite)

    def run(self, folder: RunFolder, model: CachedModel, record: RunRecord) -> None:
        """The sessions played (or resumed); stalled sessions are counted from their files (`n_stalled`)
        and asked again by the next run."""
        if self.players is None or self.settings is None:
            return
        try:
            play_sessions(self.plans, self.players, self.settings, folder, self.execution.progress)
        finally:
            self.players.opponent.close()
            self.players.judge.close()

    def write(self, folder: RunFolder, record: RunRecord) -> None:
        """Nothing more: every turn was written to its sessions file as it was played."""

    def calls(self) -> dict[str, int]:
        """Each task's turns to play (a sweep's progress)."""
        return {plan.task.name: len(plan.items) * self.definition.turns for plan in self.plans}
