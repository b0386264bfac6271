"""The RoCIT training loop: LoRA on a causal LM, plain PyTorch driven by `accelerate`.

One process on a CPU or a GPU (`rolebench recipe rocit`), or several GPUs with
`accelerate launch -m rolebench.cli recipe rocit ...` (data parallel; only the main process
writes). An optimizer step is `gradient_accumulation` micro-batches of `batch_size` examples. The
data order of epoch e is a permutation seeded by (seed, e), so a resumed run sees the batches it
would have seen. Every `save_every` steps a checkpoint (LoRA weights + optimizer + scheduler + step)
is written atomically to OUTPUT/checkpoints/step-NNNNNN/ (the last two are kept); a new run with the
same config resumes from the latest one. Losses go to OUTPUT/train_log.jsonl.
"""

from __future__ import annotations

import json
import math
import os
import random
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from rolebench.errors import ConfigError
from rolebench.recipes.training.rocit.config import RocitConfig
from rolebench.recipes.training.rocit.data import Example, collate
from rolebench.recipes.training.trained import LOG_FILE, trim_log

CHECKPOINTS = "checkpoints"
STATE_FILE = "trainer_state.pt"
KEEP_CHECKPOINTS = 2


@dataclass
class TrainState:
    step: int = 0
    losses: list[float] = field(default_factory=list)  # this process's step losses in this run, in order
    model: Any = None  # the trained model, unwrapped
    is_main: bool = True


def latest_checkpoint(output: Path) -> Path | None:
    found = sorted((output / CHECKPOINTS).glob("step-*/" + STATE_FILE))
    return found[-1].parent if found else None


def plan_steps(config: RocitConfig, n_batches: int) -> tuple[int, int]:
    """(optimizer steps per epoch, total optimizer steps)."""
    per_epoch = math.ceil(n_batches / config.training.gradient_accumulation)
    total = config.training.max_steps or math.ceil(config.training.epochs * per_epoch)
    return per_epoch, total


def make_scheduler(optimizer: Any, config: RocitConfig, total: int) -> Any:
    """Linear warm-up over `warmup_ratio` of the steps, then linear decay to zero."""
    import torch

    warmup = int(config.training.warmup_ratio * total)

    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / (warmup + 1)
        return max(0.0, (total - step) / max(1, total - warmup))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


def epoch_batches(examples: list[Example], config: RocitConfig, epoch: int, pad_id: int) -> Any:
    """A DataLoader over epoch `epoch`'s seeded permutation (no further shuffling)."""
    from torch.utils.data import DataLoader

    order = random.Random(f"{config.training.seed}/epoch/{epoch}").sample(range(len(examples)), len(examples))
    return DataLoader(
        [examples[i] for i in order],  # type: ignore[arg-type]  # a list is a map-style dataset
        batch_size=config.training.batch_size,
        shuffle=False,
        collate_fn=lambda batch: collate(batch, pad_id),
    )


def save_checkpoint(
    accelerator: Any,
    model: Any,
    optimizer: Any,
    scheduler: Any,
    output: Path,
    step: int,
    identity: dict[str, Any],
) -> None:
    """Write OUTPUT/checkpoints/step-NNNNNN atomically (temp folder, then rename); keep the last two."""
    import torch

    accelerator.wait_for_everyone()
    if not accelerator.is_main_process:
        return
    root = output / CHECKPOINTS
    final = root / f"step-{step:06d}"
    temp = root / f".step-{step:06d}.tmp{os.getpid()}"
    shutil.rmtree(temp, ignore_errors=True)
    accelerator.unwrap_model(model).save_pretrained(temp)
    torch.save(
        {
            "step": step,
            "identity": identity,
            "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict(),
            "torch_rng": torch.get_rng_state(),
        },
        temp / STATE_FILE,
    )
    shutil.rmtree(final, ignore_errors=True)
    os.replace(temp, final)
    for old in sorted(root.glob("step-*"))[:-KEEP_CHECKPOINTS]:
        shutil.rmtree(old, ignore_errors=True)


def restore_checkpoint(
    model: Any, optimizer: Any, scheduler: Any, output: Path, identity: dict[str, Any]
) -> int:
    """Load the latest checkpoint into the (unprepared) model/optimizer/scheduler; the step it reached."""
    import torch
    from peft import set_peft_model_state_dict
    from safetensors.torch import load_file

    folder = latest_checkpoint(output)
    if folder is None:
        return 0
    state = torch.load(folder / STATE_FILE, map_location="cpu", weights_only=False)
    if state["identity"] != identity:
        raise ConfigError(
            f"{folder} was written by a different config",
            where="output_dir",
            fix="use another output_dir, or delete its checkpoints/ to start over",
        )
    set_peft_model_state_dict(model, load_file(str(folder / "adapter_model.safetensors")))
    optimizer.load_state_dict(state["optimizer"])
    scheduler.load_state_dict(state["scheduler"])
    # the step budget may have changed: the learning rate of the next step follows the new schedule
    lrs = [
        base * fn(scheduler.last_epoch)
        for base, fn in zip(scheduler.base_lrs, scheduler.lr_lambdas, strict=True)
    ]
    for group, lr in zip(optimizer.param_groups, lrs, strict=True):
        group["lr"] = lr
    scheduler._last_lr = lrs
    torch.set_rng_state(state["torch_rng"])
    return int(state["step"])


def optimizer_step(
    accelerator: Any, model: Any, optimizer: Any, scheduler: Any, batch: Any, max_grad_norm: float
) -> tuple[float, bool]:
    """One micro-batch under `accumulate`; (its loss, whether an optimizer step happened)."""
    with accelerator.accumulate(model):
        loss = model(**batch).loss
        accelerator.backward(loss)
        if accelerator.sync_gradients:
            accelerator.clip_grad_norm_(model.parameters(), max_grad_norm)
        optimizer.step()
        if accelerator.sync_gradients:
            scheduler.step()
        optimizer.zero_grad()
    return float(loss.detach()), accelerator.sync_gradients


def run_loop(
    config: RocitConfig, model: Any, examples: list[Example], pad_id: int, progress: bool
) -> TrainState:
    """Train (resuming from the latest checkpoint); returns the final step and the logged losses."""
    import torch
    from accelerate import Accelerator

    output = Path(config.output_dir)
    accelerator = Accelerator(
        gradient_accumulation_steps=config.training.gradient_accumulation,
        mixed_precision=config.training.mixed_precision,
    )
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(
        params, lr=config.training.learning_rate, weight_decay=config.training.weight_decay
    )
    n_batches = math.ceil(len(examples) / (config.training.batch_size * accelerator.num_processes))
    per_epoch, total = plan_steps(config, n_batches)
    scheduler = make_scheduler(optimizer, config, total)
    identity = config.identity()
    state = TrainState(step=restore_checkpoint(model, optimizer, scheduler, output, identity))
    if accelerator.is_main_process:
        trim_log(output, state.step)
    model, optimizer = accelerator.prepare(model, optimizer)
    model.train()
    bar = tqdm(
        total=total,
        initial=state.step,
        desc=f"rocit {config.name}",
        unit="step",
        disable=not (progress and accelerator.is_main_process),
    )
    micro: list[float] = []
    while state.step < total:
        epoch, done = divmod(state.step, per_epoch)
        loader = accelerator.prepare(epoch_batches(examples, config, epoch, pad_id))
        for batch in accelerator.skip_first_batches(loader, done * config.training.gradient_accumulation):
            lr = scheduler.get_last_lr()[0]
            loss, stepped = optimizer_step(
                accelerator, model, optimizer, scheduler, batch, config.training.max_grad_norm
            )
            micro.append(loss)
            if not stepped:
                continue
            state.step += 1
            step_loss, micro = sum(micro) / len(micro), []
            state.losses.append(step_loss)
            log_step(accelerator, output, state.step, step_loss, lr, epoch, config.training.log_every)
            bar.update(1)
            bar.set_postfix(loss=f"{step_loss:.4f}")
            if state.step % config.training.save_every == 0 or state.step == total:
                save_checkpoint(accelerator, model, optimizer, scheduler, output, state.step, identity)
            if state.step >= total:
                break
    bar.close()
    accelerator.wait_for_everyone()
    state.model, state.is_main = accelerator.unwrap_model(model), accelerator.is_main_process
    return state


def log_step(
    accelerator: Any, output: Path, step: int, loss: float, lr: float, epoch: int, every: int
) -> None:
    if not accelerator.is_main_process or step % every:
        return
    record = {"step": step, "epoch": epoch, "loss": round(loss, 6), "lr": lr}
    with open(output / LOG_FILE, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")
