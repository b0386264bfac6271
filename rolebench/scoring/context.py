"""What a task's prompts cost, beside its scores: prompt tokens, generation time, demonstrations.

The RoleLLM paper weighs few-shot prompting against its "context efficiency": demonstrations buy
role-play with a longer prompt. Per task: the mean prompt tokens of the answers whose backend
reported them (hf, llama.cpp, vLLM, OpenAI-compatible APIs; not `baseline:`), and the backend's
seconds per answer as it measured them when the answer was generated (hf and vLLM share a batch's
time evenly among its answers; llama.cpp and API backends time each request from admission to its
last token, overlapping with the others in flight), so compare them across runs made with the same
backend and batch settings. An answer read back from the store keeps the seconds of its generation.
That is latency, not throughput: answers generated together overlap. The throughput is the answers a
run generated per second of wall-clock time (`with_throughput`, from run.json's `generation_time`: the
commands that generated answers, each task timed from its first request to its last answer, loading the
model included when that task loaded it).
"""

from __future__ import annotations

from collections.abc import Sequence

from rolebench.results.schema import ContextCost, SampleRecord
from rolebench.scoring.stats import mean


def with_throughput(cost: ContextCost, answers: int, seconds: float) -> ContextCost:
    """`cost` with the throughput of `answers` generated in `seconds` of wall-clock time."""
    rate = round(answers / seconds, 4) if answers > 0 and seconds > 0 else None
    return cost.model_copy(
        update={"answers_per_s": rate, "wall_seconds": round(seconds, 3), "n_wall": answers}
    )


def context_cost(records: Sequence[SampleRecord]) -> ContextCost:
    answered = [r for r in records if r.output is not None]
    prompt = [float(r.usage["prompt_tokens"]) for r in answered if r.usage and r.usage.get("prompt_tokens")]
    seconds = [float(r.seconds) for r in answered if r.seconds]  # 0 or None: the backend did not time it
    return ContextCost(
        prompt_tokens_mean=mean(prompt) if prompt else None,
        n_prompt_tokens=len(prompt),
        seconds_mean=mean(seconds) if seconds else None,
        seconds_total=round(sum(seconds), 3) if seconds else None,
        n_timed=len(seconds),
        shots_mean=mean([float(r.shots) for r in records]) or 0.0,
    )
