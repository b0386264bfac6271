"""The one run definition: every setting that changes a run's numbers, typed, with one identity rule.

`RunDefinition` is what `rolebench evaluate` is asked to compute: the model (spec and options), the
tasks, the data (location, revision), the `--limit` sample, the headline protocol, the elicitation
method, the decoding settings and the bootstrap. Its fields are named as the command line's flags (in
snake_case), and the command line, `--config` files, sweep files, the recipes' evaluate sections and the
Python API all fill in this one record (`RunDefinition.read`); argparse only fills it in.

`SAME_RUN` is the one rule of which settings make two runs the same run; the run folder's guard (what a
rerun may change: `settings`), a sweep's "already done" test (`identity`) and the generation cache key
(the model's identity, `decoding` and `elicitation_method`) all follow it, and results.json's `config`
records the definition itself (`config.run`). A new setting is one new field here and its place in
`SAME_RUN`. How a run is carried out (the folder, batch size, concurrency, progress bars) does not
change its numbers: that is `Execution`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import field_validator

from model_adapters import GenerationConfig, ModelSpec, model_identity
from model_adapters.interface import MAX_SEED
from rolebench.errors import ConfigError
from rolebench.results.scoring_settings import DEFAULT_PROTOCOL, BootstrapSettings, check_protocol_name
from rolebench.run.elicitation import ZERO_SHOT, Elicitation
from rolebench.run.same_run import BY_VALUE, RESOLVED_ONLY, SAME_RUN
from rolebench.settings_model import (
    Float,
    Int,
    Location,
    PathText,
    SettingsModel,
    key_values,
    listed,
    setting,
)
from rolebench.storage.records import content_key

MAX_BOOTSTRAP = 100_000  # lm-eval's bootstrap_iters; 10**9 resamples would take tens of GB and hours


class RunDefinition(SettingsModel):
    """Every setting that changes a run's numbers (see the module docstring)."""

    model: str = setting(
        ...,
        "model spec: hf:ID[@REV], peft:BASE+ADAPTER, openai:MODEL[@URL], llamacpp:PATH, smollm2:135m (the "
        "embedded model), vllm:ID, lmeval:NAME,args, baseline:rolegpt, and the floors baseline:question, "
        "baseline:description",
    )
    tasks: tuple[str, ...] = setting(
        ..., "comma-separated task or group names (see `rolebench tasks`)", split_list=True
    )
    model_args: dict[str, str] = setting(
        {},
        "backend options as key=value,... (e.g. dtype=bfloat16,device=cuda)",
        group="generation",
        key_values=True,
    )
    data_dir: Location | None = setting(
        None,
        "local RoleBench folder in the Hub layout, a `rolebench data build` folder, or hf://ORG/NAME@VERSION "
        "(default: $ROLEBENCH_DATA, else the upstream Hub repo at a pinned revision)",
    )
    revision: str | None = setting(None, "Hub revision of ZenMoore/RoleBench (default: the pinned one)")
    limit: Int | None = setting(
        None, "evaluate N samples of each task: a seeded sample stratified over roles", ge=1, metavar="N"
    )
    limit_mode: Literal["stratified", "first"] = setting(
        "stratified", "how --limit picks samples: stratified (a seeded sample over roles) or the first N rows"
    )
    limit_seed: Int = setting(0, "seed of the stratified --limit sample", ge=0, le=MAX_SEED)
    protocol: str = setting(
        DEFAULT_PROTOCOL,
        "headline ROUGE-L protocol: rolellm (the paper's recall), rolebench (F-measure) or opencompass; "
        "rolellm and rolebench are always computed",
    )
    elicitation: str = setting(
        ZERO_SHOT,
        "how the role is prompted (the RoleLLM paper's RoleGPT methods): zero-shot, few-shot-prompt "
        "(demonstrations in the user turn) or few-shot-dialogue (demonstrations as earlier turns); "
        "demonstrations are dialogue pairs retrieved per question from the role's own script",
        metavar="METHOD",
    )
    shots: Int | None = setting(
        None,
        "demonstrations per question for a few-shot --elicitation (3 when not given; 0 is zero-shot)",
        ge=0,
        metavar="N",
    )
    max_new_tokens: Int | None = setting(
        None,
        "answer length cap in tokens (default: each task's own max_gen_toks, fitted to its references: 160 "
        "for English tasks, 256 Chinese general, 320 Chinese role-specific; see `rolebench tasks`)",
        group="generation",
        ge=1,
    )
    temperature: Float = setting(0.0, "sampling temperature; 0 = greedy", group="generation", ge=0)
    top_p: Float = setting(1.0, "nucleus sampling (1.0: every token)", group="generation", gt=0, le=1)
    repetition_penalty: Float = setting(
        1.0, "above 1 discourages repeats (1.0: none)", group="generation", gt=0
    )
    seed: Int = setting(
        0,
        "seed of sampling (each item draws with its own seed, from this one and its id) and of the "
        f"bootstrap intervals (0 to {MAX_SEED})",
        group="generation",
        ge=0,
        le=MAX_SEED,
    )
    bootstrap: Int = setting(
        1000,
        f"bootstrap resamples for confidence intervals (0: none; at most {MAX_BOOTSTRAP:,})",
        ge=0,
        le=MAX_BOOTSTRAP,
    )
    include_path: tuple[str, ...] = setting((), "extra folder of task YAMLs (repeatable)", metavar="DIR")
    opponent: str | None = setting(None, "session tasks: the opponent's model spec", group="sessions")
    opponent_args: dict[str, str] = setting(
        {},
        "session tasks: the opponent backend's options as key=value,...",
        group="sessions",
        key_values=True,
    )
    turns: Int = setting(5, "session tasks: judged turns per session", group="sessions", ge=1, metavar="N")

    _tasks = field_validator("tasks", "include_path", mode="before")(listed)

    @field_validator("model_args", mode="before")
    @classmethod
    def _model_args(cls, value: Any) -> dict[str, str]:
        return key_values(value)

    @field_validator("opponent_args", mode="before")
    @classmethod
    def _opponent_args(cls, value: Any) -> dict[str, str]:
        return key_values(value, where="--opponent-args")

    @field_validator("model")
    @classmethod
    def _spec(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("no model spec given")
        return value.strip()

    @field_validator("tasks")
    @classmethod
    def _some_task(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not value:
            raise ValueError("no task given: name tasks or groups (see `rolebench tasks`)")
        return value

    def checked(self, *, in_memory: bool = False) -> RunDefinition:
        """This definition with its names checked (spec, protocol, elicitation) and the elicitation
        normalised (`few-shot-dialogue` without shots: 3; any method with 0 shots: zero-shot); one
        ConfigError line naming the flag otherwise. `in_memory`: the model is given as an object (its
        spec is only a name)."""
        if not in_memory:
            ModelSpec.parse(self.model)
        if self.opponent is not None:
            self.opponent_identity()  # the spec and its options, checked
        check_protocol_name(self.protocol)
        method = Elicitation.parse(self.elicitation, self.shots)
        self.decoding()
        return self.model_copy(update={"elicitation": method.method, "shots": method.shots})

    # what the pipeline reads ---------------------------------------------------------------------

    def elicitation_method(self) -> Elicitation:
        return Elicitation.parse(self.elicitation, self.shots)

    def decoding(
        self, max_new_tokens: int | None = None, execution: Execution | None = None
    ) -> GenerationConfig:
        """The decoding settings (`max_new_tokens`: a task's cap), with the execution's batching."""
        how = execution or Execution()
        cap = {"max_new_tokens": max_new_tokens} if max_new_tokens is not None else {}
        return GenerationConfig(
            temperature=self.temperature,
            top_p=self.top_p,
            repetition_penalty=self.repetition_penalty,
            seed=self.seed,
            batch_size=how.batch_size,
            concurrency=how.concurrency,
            **cap,
        )

    def bootstrap_settings(self) -> BootstrapSettings:
        return BootstrapSettings(resamples=self.bootstrap, seed=self.seed)

    def model_identity(self, base_url: str | None = None) -> dict[str, Any]:
        """The model's cache identity (spec, output-changing options, local weights and tokenizer files, the
        server of an API model, `base_url` included; never transport settings)."""
        return model_identity(self.model, self.adapter_options(base_url))

    def adapter_options(self, base_url: str | None = None) -> dict[str, Any]:
        """The backend's options: `model_args`, and the execution's base URL."""
        return {**self.model_args, **({"base_url": base_url} if base_url else {})}

    def opponent_options(self, base_url: str | None = None) -> dict[str, Any]:
        return {**self.opponent_args, **({"base_url": base_url} if base_url else {})}

    def opponent_identity(self, base_url: str | None = None) -> dict[str, Any] | None:
        """The opponent's cache identity (as `model_identity`; None: no opponent); a bad spec or option is
        one ConfigError line naming `--opponent`."""
        if self.opponent is None:
            return None
        try:
            return model_identity(ModelSpec.parse(self.opponent), self.opponent_options(base_url))
        except ConfigError as exc:
            raise ConfigError(exc.what, where="--opponent", fix=exc.fix) from None

    # the one rule of what makes two runs the same run (`SAME_RUN`) --------------------------------

    def settings(self) -> dict[str, Any]:
        """The settings compared by value (`SAME_RUN`), named as the user sets them: what a rerun into
        the same folder must keep, and how the guard names a difference. A few-shot method and its shots
        are one setting, as are the `--limit` sample's mode and seed (none without a limit)."""
        found: dict[str, Any] = {}
        for name in type(self).model_fields:
            if SAME_RUN[name] == BY_VALUE and name not in (
                "elicitation",
                "shots",
                "limit_mode",
                "limit_seed",
            ):
                found[f"--{name.replace('_', '-')}"] = getattr(self, name)
        found["--elicitation/--shots"] = self.elicitation_method().label()
        found["--limit-mode/--limit-seed"] = f"{self.limit_mode}/{self.limit_seed}" if self.limit else None
        if self.opponent is None:  # no sessions: their settings say nothing
            found["--turns"] = None
        return found

    def identity(
        self, tasks: dict[str, Any], base_url: str | None = None, opponent_base_url: str | None = None
    ) -> str:
        """One digest of the rule (`SAME_RUN`), given the run's resolved tasks (name -> version, file
        digest, cap) and the execution's base URLs: the rest by value; the model and the opponent by their
        identities; the tasks by their facts (without an opponent, no sessions' settings: the identity a
        run had before sessions existed). A finished run with the same identity is the same run."""
        record = self.model_dump(mode="json", exclude=set(RESOLVED_ONLY))
        if self.limit is None:  # no --limit: no sample to pick, whatever its mode and seed
            record.pop("limit_mode"), record.pop("limit_seed")
        if self.opponent is None:
            record.pop("opponent"), record.pop("turns")
        opponent = () if self.opponent is None else (self.opponent_identity(opponent_base_url),)
        return content_key("run", record, self.model_identity(base_url), tasks, *opponent)

    def record(self) -> dict[str, Any]:
        """What results.json records as `config.run` (and run.json as the run's definition)."""
        return self.model_dump(mode="json")


class Execution(SettingsModel):
    """How a run is carried out; none of it changes the numbers."""

    output: PathText | None = setting(None, "the run folder (default: runs/<model>)", metavar="DIR")
    batch_size: Int = setting(
        8,
        "prompts per forward pass (local models; llama.cpp: sequences decoded together)",
        group="generation",
        ge=1,
    )
    concurrency: Int = setting(8, "requests in flight (API models)", group="generation", ge=1)
    base_url: str | None = setting(
        None,
        "OpenAI-compatible server URL for openai: specs (another server is another model: its answers are "
        "its own)",
        group="generation",
    )
    opponent_base_url: str | None = setting(
        None, "OpenAI-compatible server URL for an openai: --opponent", group="sessions", metavar="URL"
    )
    progress: bool = setting(True, "show progress bars")
    overwrite: bool = setting(
        False,
        "replace the run in --output when another model or other settings made it, or a smaller --limit "
        "(the generation store stays: its answers are keyed by everything that changes them)",
    )


def check_resampling(resamples: int, seed: int, where: str) -> None:
    """The bounds of the run definition's `bootstrap` and `seed` on values given elsewhere (`rolebench
    compare`'s flags, a run's recorded settings): one ConfigError line naming the value."""
    for name, value, high in (("--bootstrap", resamples, MAX_BOOTSTRAP), ("--seed", seed, MAX_SEED)):
        if not 0 <= value <= high:
            raise ConfigError(f"{name} {value} is out of range", where=where, fix=f"give 0 to {high:,}")


def default_output(model: str, elicitation: Elicitation | None = None) -> Path:
    """runs/<model>, and runs/<model>-<method>-<N> for a few-shot elicitation (one folder per method)."""
    import re

    name = re.sub(r"[^A-Za-z0-9._-]+", "_", model).strip("_") or "model"
    if elicitation is not None and elicitation.few_shot:
        name += f"-{elicitation.method}-{elicitation.shots}"
    return Path("runs") / name
