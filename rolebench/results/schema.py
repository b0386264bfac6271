"""The typed records of a run: the result document (`DIR/results.json`), one samples line, and one line
of a judge's verdicts (`DIR/judgments/.../<task>.jsonl`).

Results are fractions in [0, 1] (None when a metric could not be computed). A task's and a
group's metric values sit at the top under the run's headline protocol (`protocol`), and every
protocol the run holds has its own key beside them (`rolellm`, `rolebench`, `opencompass`) with the
same fields, so readers of `results[task]["spe"]` keep working whatever else a run carries.
Metric keys come from `rolebench.scoring.metrics`; these models only type what every run has.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    NonNegativeInt,
    PrivateAttr,
    StrictBool,
    StrictStr,
    field_validator,
    model_validator,
)

from rolebench.results.checks import NAME, check_bootstrap, check_floors_and_flags, is_fraction

SCHEMA_VERSION = 2


class AnswerLengths(BaseModel):
    """How long the answers are, so that a model that buys recall with long answers is visible."""

    model_config = ConfigDict(extra="forbid")
    answer_tokens_mean: float | None = None  # the model's own tokens (usage), where it reported them
    answer_words_mean: float | None = None  # words (English) or characters (Chinese), as ROUGE-L counts them
    reference_words_mean: float | None = None  # the same count for the first reference
    cut_at_limit: float | None = None  # share of answers stopped by the token limit
    n_cut: int = 0
    looping: float | None = None  # share of answers that loop (rolebench.scoring.answers)
    n_looping: int = 0
    max_new_tokens: int | None = None


class ContextCost(BaseModel):
    """What the prompts cost (the paper's "context efficiency"): tokens read, time taken, demonstrations."""

    model_config = ConfigDict(extra="forbid")
    prompt_tokens_mean: float | None = None  # prompt tokens per answer, where the backend reported them
    n_prompt_tokens: int = 0  # answers that reported their prompt tokens
    seconds_mean: float | None = None  # the backend's seconds per answer (see rolebench.scoring.context)
    seconds_total: float | None = None
    n_timed: int = 0
    shots_mean: float = 0.0  # demonstrations per sample (0 zero-shot)
    # throughput: answers generated per second of wall-clock time, over the commands that generated them
    # (run.json's generation_time; answers read from the store add nothing); None: not measured
    answers_per_s: float | None = Field(default=None, ge=0.0, allow_inf_nan=False)
    wall_seconds: float | None = Field(default=None, ge=0.0, allow_inf_nan=False)
    n_wall: int = Field(default=0, ge=0)  # the answers generated in those wall_seconds


class Verbatim(BaseModel):
    """How many answers copy a test reference (`rolebench.scoring.copying`), and how many of RoleGPT's
    released answers to the items the run answered do (None: those items have none)."""

    model_config = ConfigDict(extra="forbid")
    share: float | None = Field(default=None, ge=0.0, le=1.0, allow_inf_nan=False)
    n_copied: int = Field(default=0, ge=0)
    n: int = Field(default=0, ge=0)  # answers measured
    rolegpt_share: float | None = Field(default=None, ge=0.0, le=1.0, allow_inf_nan=False)
    rolegpt_n: int = Field(default=0, ge=0)  # RoleGPT answers measured: the answered items joined to one
    # the run's share on those same rolegpt_n items (what `verbatim-references` holds against rolegpt_share)
    joined_share: float | None = Field(default=None, ge=0.0, le=1.0, allow_inf_nan=False)


class Unseen(BaseModel):
    """A task's numbers on its unseen items (question not in the split's train file), under the run's
    headline protocol: `n` items, and per metric its mean and its `_n` (extra fields)."""

    model_config = ConfigDict(extra="allow")
    n: int = Field(ge=0)

    @model_validator(mode="after")
    def _values(self) -> Unseen:
        for key, value in (self.model_extra or {}).items():
            valid = (
                isinstance(value, int) and not isinstance(value, bool) and value >= 0
                if key.endswith("_n")
                else is_fraction(value)
            )
            if not NAME.match(key) or not valid:
                raise ValueError(f"unseen {key[:40]} must be a number in [0, 1] (a count for *_n)")
        return self


class TaskResult(BaseModel):
    """Metrics of one task. Metric fields (`cus`, `cus_ci`, `cus_n`, ...), one key per protocol and the
    judge's fields (`win_rate`, ...) are extra fields named by `rolebench.scoring.metrics` and the judge."""

    model_config = ConfigDict(extra="allow")
    split: str
    n: int
    n_generated: int
    n_not_covered: int
    n_failed: int = 0  # requests that failed (not covered, but retried by the next run)
    n_baseline: int | None = (
        None  # items joined to a RoleGPT baseline answer (the judge's and baseline:rolegpt's)
    )
    protocol: str | None = None
    per_role: dict[str, dict[str, Any]] = {}
    lengths: AnswerLengths | None = None
    context: ContextCost | None = None
    verbatim: Verbatim | None = None  # answers that copy a test reference (`verbatim-references`)
    unseen: Unseen | None = None  # the numbers on the items not in the train file (None: no train file)
    samples_sha256: str | None = None  # of the samples file these numbers come from

    def value(self, key: str) -> Any:
        """An extra field (a metric, a protocol block, a judge field), or None."""
        return (self.model_extra or {}).get(key)

    @model_validator(mode="after")
    def _shapes(self) -> TaskResult:
        check_floors_and_flags(self.model_extra)
        return self


class GroupResult(BaseModel):
    """Metrics of a group of tasks (a RoleBench split): the mean of its members, and `avg`."""

    model_config = ConfigDict(extra="allow")
    tasks: list[str]
    n: int
    avg: float | None = None
    protocol: str | None = None

    def value(self, key: str) -> Any:
        return (self.model_extra or {}).get(key)

    @model_validator(mode="after")
    def _shapes(self) -> GroupResult:
        check_floors_and_flags(self.model_extra)
        return self


class SessionResult(BaseModel):
    """The numbers of one session task (`rolebench.sessions`): the model under test against one opponent,
    turn by turn, with one judge playing the user (who they were: `RunConfig.sessions[task]`). A turn is a
    win, a loss, a tie or a failure (a judge reply that never parsed: never a win); `win_rate` is wins over
    decided turns (ties apart), its interval a bootstrap over sessions; `position` the share of decided turns
    won by the answer shown first, and the win rate in each placement."""

    model_config = ConfigDict(extra="allow")
    kind: str  # "character", "scene" (RPBench-Auto) or "role" (RoleBench's roles)
    language: str
    n_items: int = Field(ge=0)  # sessions the task holds (under --limit: those taken)
    n_sessions: int = Field(ge=0)  # sessions with at least their opening kept
    n_complete: int = Field(ge=0)  # sessions played to their last turn, or ended by a failure
    n_stalled: int = Field(default=0, ge=0)  # waiting on a call that failed (asked again by the next run)
    n_turns: int = Field(ge=0)
    wins: int = Field(ge=0)
    losses: int = Field(ge=0)
    ties: int = Field(ge=0)
    failures: int = Field(ge=0)
    win_rate: float | None = None
    win_rate_ci: list[float] | None = None
    win_rate_ties_half: float | None = None  # a tie as half a win
    position: dict[str, Any] = {}
    judges: dict[str, dict[str, Any]] = {}  # a second judge on the same turns: its numbers, agreement
    flags: list[str] = []
    log_sha256: str | None = None  # of the sessions file these numbers come from


class RunConfig(BaseModel):
    """How the numbers were made (every field is recorded by `rolebench evaluate`)."""

    model_config = ConfigDict(extra="allow")
    run: dict[str, Any] | None = None  # the run definition (rolebench.run.definition.RunDefinition)
    model: dict[str, Any] = {}
    data: dict[str, Any] = {}
    tasks: dict[str, dict[str, Any]] = {}
    prompt: dict[str, Any] = {}
    elicitation: dict[str, Any] | None = None  # method, shots, retriever, scripts read (None: zero-shot)
    scoring: dict[str, Any] = {}
    generation: dict[str, Any] = {}
    judge: dict[str, Any] | None = None  # the judge of the win rate shown (the last one run)
    judges: dict[str, Any] | None = None  # every judge of the run against the RoleGPT baseline, by name
    versus: dict[str, Any] | None = None  # per opponent run (`rolebench judge --against`): how it was judged
    limit: int | None = None
    sampling: dict[str, Any] | None = None
    bootstrap: dict[str, Any] = {}
    packages: dict[str, str] = {}
    timings: dict[str, float] = {}
    command: str = ""
    rescored: dict[str, Any] | None = None
    sessions: dict[str, Any] | None = None  # per session task: who played and judged, turns, data, templates

    _bootstrap = field_validator("bootstrap")(check_bootstrap)


class RunResults(BaseModel):
    """The whole result document. `folder`: the run folder it was read from or written to (not part of
    the document)."""

    model_config = ConfigDict(extra="allow")
    schema_version: int = SCHEMA_VERSION
    created: str
    config: RunConfig
    results: dict[str, TaskResult]
    groups: dict[str, GroupResult] = {}
    sessions: dict[str, SessionResult] = {}  # the session tasks (`rolebench.sessions`)
    _folder: Path | None = PrivateAttr(default=None)

    @property
    def folder(self) -> Path | None:
        return self._folder

    def located(self, folder: Path) -> RunResults:
        """This document, as the one of the run folder `folder`."""
        self._folder = Path(folder)
        return self


class SampleRecord(BaseModel):
    """One line of `DIR/samples/<task>.jsonl`: the sample, the exact prompt, the answer and its scores."""

    model_config = ConfigDict(extra="allow")
    id: str
    index: int
    role: str
    question: str  # as written in the data (the join key); the prompt holds it stripped
    messages: list[dict[str, str]]
    output: str | None
    error: str | None = None
    failed: bool = False  # the request failed (an answer should exist): the next run asks again
    usage: dict[str, int] | None = None
    seconds: float | None = None  # the backend's time for this answer (when it was generated)
    shots: int = 0  # demonstrations in `messages` (a few-shot elicitation; fewer than asked: a short script)
    finish_reason: str | None = None
    references: list[str]
    raw_answer: str | None = None
    baseline: str | None = None
    in_train: bool | None = None  # its question is in the split's train file (None: that file was not read)
    train_answer: str | None = None  # the first train answer to it (the `baseline:train` floor's answer)
    types: list[str] = []
    language: Literal["en", "zh"]
    description: str
    scores: dict[str, float | None]  # under the run's headline protocol
    protocol_scores: dict[str, dict[str, float | None]] = {}  # every protocol the run holds


# Why a pair has (or lacks) a verdict; only "judged" pairs carry an outcome.
JudgmentStatus = Literal["judged", "parse_failure", "judge_error", "no_baseline", "no_output", "not_sampled"]


class JudgmentLine(BaseModel):
    """One line of a judgments file: one pair (the run's answer and its opponent's) and its outcome
    (`rolebench.judging.outcomes.pair_line` writes it). Types are strict: `"consistent": "yes"` is no bool."""

    model_config = ConfigDict(extra="allow")
    id: StrictStr
    status: JudgmentStatus
    outcome: Literal["win", "tie", "loss"] | None = None
    consistent: StrictBool | None = None
    len_model: NonNegativeInt | None = None
    len_baseline: NonNegativeInt | None = None
    output_sha: StrictStr | None = None
    opponent_sha: StrictStr | None = None
    orders: dict[str, dict[str, Any]] | None = None  # per order shown: verdict, raw texts, errors

    @model_validator(mode="after")
    def _outcome_only_when_judged(self) -> JudgmentLine:
        judged = self.status == "judged"
        if judged != (self.outcome is not None):
            raise ValueError(f"status {self.status!r} with outcome {self.outcome!r}")
        if judged and (self.len_model is None or self.len_baseline is None):
            raise ValueError("a judged pair without the lengths of its answers")
        return self
