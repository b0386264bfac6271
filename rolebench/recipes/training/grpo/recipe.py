"""GRPO with RoleBench's ROUGE-L as the reward: TRL's `GRPOTrainer`, guarded against length hacking,
then `rolebench evaluate` of the model before and after.

The start is a base (`model.base`: evaluated as `hf:BASE`) or a LoRA checkpoint such as a RoCIT run's
adapter (`model.adapter`: `peft:BASE+ADAPTER`, trained further). The prompts are `rolebench evaluate`'s
(`rolebench.rewards.load_prompts`; a system turn the chat template refuses is merged into the user
turn, as the `hf:` adapter does), the reward `rolebench.rewards.make_reward(reward.protocol)`
wrapped by the length guard (`rolebench.recipes.training.length_guard`).

OUTPUT (the config's `output_dir`) ends up holding
- `adapter/`: the trained LoRA adapter (`peft:BASE+OUTPUT/adapter`);
- `trainer/`: TRL's checkpoints (the same command resumes from the latest one); `run_config.json`:
  what a checkpoint must agree with to be resumed;
- `train_log.jsonl`: one line per optimizer step (reward, answer and reference lengths, cut share,
  the length rule, the guard's verdict); `train_summary.json`;
- `eval/step-N/`: `rolebench evaluate` of the trained adapter; `eval-before/`: of the start.
"""

from __future__ import annotations

import gc
import json
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rolebench.errors import ConfigError, MissingDependency, first_line
from rolebench.recipes.training.grpo.config import GrpoConfig
from rolebench.recipes.training.grpo.inputs import (
    TRAINER_DIR,
    for_template,
    load_start,
    resume_point,
    start_spec,
    training_prompts,
)
from rolebench.recipes.training.grpo.settings import TRL_DOCS
from rolebench.recipes.training.length_guard import LengthGuard
from rolebench.recipes.training.trained import (
    LOG_FILE,
    BaseSpec,
    evaluate_models,
    resolve_base,
    save_adapter,
    trim_log,
    write_summary,
)
from rolebench.rewards.prompts import parse_elicitation
from rolebench.rewards.reward import make_reward


@dataclass
class GrpoReport:
    start: str = ""  # the model spec of the start
    adapter: Path | None = None
    steps: int = 0
    prompts: int = 0
    guard: LengthGuard | None = None
    evaluations: dict[str, Any] = field(default_factory=dict)  # "before" / "after" -> RunResults
    folders: dict[str, Path] = field(default_factory=dict)  # "before" / "after" -> its run folder

    def reward_line(self) -> str:
        steps = self.guard.steps if self.guard else []
        rewards = [s.reward_mean for s in steps if s.reward_mean is not None]
        if not rewards:
            return f"trained {self.steps} steps on {self.prompts} prompts"
        first, last = steps[0], steps[-1]
        return (
            f"trained {self.steps} steps on {self.prompts} prompts: "
            f"reward {rewards[0]:.4f} -> {rewards[-1]:.4f}; "
            f"answers {first.answer_words_mean or 0:.1f} -> {last.answer_words_mean or 0:.1f} words/chars "
            f"(references {last.reference_words_mean or 0:.1f})"
        )


def trainer_arguments(config: GrpoConfig, path: Path | str, progress: bool) -> Any:
    """TRL's `GRPOConfig` from the `grpo` section (log every step, no reporting service unless asked)."""
    try:
        from trl.trainer.grpo_config import GRPOConfig
    except ImportError:
        raise MissingDependency("rolebench recipe grpo", "trl", "train") from None
    settings: dict[str, Any] = {"logging_steps": 1, "report_to": "none", "disable_tqdm": not progress}
    settings.update(config.grpo)
    settings["output_dir"] = str(Path(config.output_dir) / TRAINER_DIR)
    try:
        return GRPOConfig(**settings)
    except (ValueError, TypeError) as error:
        raise ConfigError(
            f"invalid GRPO setting: {first_line(error)}", where=f"{path}: grpo", fix=f"see {TRL_DOCS}"
        ) from None


def restore_guard(guard: LengthGuard, output: Path, step: int) -> None:
    """Forget log lines past the resumed step; a guard armed before the interruption stays armed."""
    trim_log(output, step)
    log = output / LOG_FILE
    lines = (
        [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()] if log.is_file() else []
    )
    guard.armed = any(line.get("guard") == "ok" for line in lines)


def make_trainer(config: GrpoConfig, path: Path | str, progress: bool) -> tuple[Any, LengthGuard, Any, bool]:
    """(GRPOTrainer, its length guard, the checkpoint to resume from, whether the tokenizer travels)."""
    from trl.trainer.grpo_trainer import GRPOTrainer

    output = Path(config.output_dir)
    arguments = trainer_arguments(config, path, progress)
    resume = resume_point(config)
    prompts = training_prompts(config)
    base = resolve_base(config.model.base, config.model.revision, config.model.gguf_file)
    model, tokenizer, peft_config, travels = load_start(config, base)
    dataset = for_template(prompts, tokenizer)
    guard = LengthGuard(
        make_reward(config.reward.protocol),
        action=config.length_guard.action,
        patience=config.length_guard.patience,
        log_path=output / LOG_FILE,
    )
    try:
        trainer = GRPOTrainer(
            model=model,
            reward_funcs=guard,
            args=arguments,
            train_dataset=dataset,
            processing_class=tokenizer,
            peft_config=peft_config,
            callbacks=[guard.callback()],
        )
    except ValueError as error:
        if "target modules" in str(error).lower():
            raise ConfigError(
                f"cannot add LoRA: {first_line(error)}",
                where=f"{path}: lora.target_modules",
                fix="name modules of this architecture (e.g. q_proj, v_proj)",
            ) from None
        raise ConfigError(
            f"invalid GRPO setting: {first_line(error)}", where=f"{path}: grpo", fix=f"see {TRL_DOCS}"
        ) from None
    guard.stop_ids = {*getattr(trainer, "eos_token_ids", [tokenizer.eos_token_id]), tokenizer.pad_token_id}
    restore_guard(guard, output, int(Path(resume).name.rsplit("-", 1)[-1]) if resume else 0)
    return trainer, guard, resume, travels


def train(
    config: GrpoConfig, path: Path | str, *, progress: bool = True
) -> tuple[GrpoReport, BaseSpec, bool]:
    """Train (or finish training) and save the adapter; (report, base, whether this is the main process)."""
    output = Path(config.output_dir)
    output.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with warnings.catch_warnings():  # transformers 5 deprecations TRL's own settings trigger; no GPU to pin
        warnings.filterwarnings("ignore", category=FutureWarning, module="transformers")
        warnings.filterwarnings("ignore", message=".*pin_memory.*")
        trainer, guard, resume, travels = make_trainer(config, path, progress)
        trainer.train(resume_from_checkpoint=resume)
    base = resolve_base(config.model.base, config.model.revision, config.model.gguf_file)
    report = GrpoReport(start=start_spec(config, base), steps=trainer.state.global_step, guard=guard)
    report.prompts = len(trainer.train_dataset)
    is_main = bool(trainer.is_world_process_zero())
    if is_main:
        report.adapter = save_adapter(
            trainer.model, trainer.processing_class if travels else None, output, ["default"]
        )
        write_summary(
            output,
            {
                "name": config.name,
                "start": report.start,
                "steps": report.steps,
                "prompts": report.prompts,
                "length_guard": {"stopped": guard.stopped, "armed": guard.armed},
                "reward": report.reward_line(),
                "seconds_this_run": round(time.perf_counter() - started, 1),
                "config": config.model_dump(),
            },
        )
    del trainer
    gc.collect()
    return report, base, is_main


def run_grpo(
    config: GrpoConfig, path: Path | str, *, progress: bool = True, evaluate: bool = True
) -> GrpoReport:
    """Train, save, then (main process only) evaluate the start and the trained adapter."""
    report, base, is_main = train(config, path, progress=progress)
    if evaluate and is_main and report.adapter is not None:
        output = Path(config.output_dir)
        runs = {
            "after": (
                f"peft:{base.spec_part}+{report.adapter.resolve()}",
                output / "eval" / f"step-{report.steps}",
            )
        }
        if config.evaluate.include_base:
            runs = {"before": (report.start, output / "eval-before"), **runs}
        report.folders = {label: folder for label, (_, folder) in runs.items()}
        elicitation = parse_elicitation(config.data.elicitation, config.data.shots)
        report.evaluations = evaluate_models(
            config.evaluate, config.data.data_dir, runs, base, elicitation=elicitation, progress=progress
        )
    return report
