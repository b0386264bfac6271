"""`--model-args data_parallel=N`: N replicas on Ray (the session's local Ray, 2 CPUs, loopback only).

Answers equal one process's (greedy), each streamed back as it is ready, a killed replica loses
nothing, and data_parallel is a transport option (same cache identity, so a run resumes either way).
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from model_adapters import GenerationConfig, Request, load_model, model_identity
from model_adapters.parallel import ReplicaPool
from rolebench import evaluate
from tests.ray_cluster import fakes, log_lines, ray_cluster  # noqa: F401 - fixtures

QUESTIONS = [
    "Who are you?",
    "What is your favourite poem, and why do you like it so much?",
    "Hello!",
    "Tell me about the river that runs past your home town.",
    "What do you eat for breakfast?",
    "Why?",
    "Describe your best friend in three sentences, please.",
    "What would you never do?",
]


def requests(n: int = len(QUESTIONS)) -> list[Request]:
    return [
        Request(id=f"q{i}", messages=[{"role": "user", "content": f"{QUESTIONS[i % len(QUESTIONS)]} ({i})"}])
        for i in range(n)
    ]


def answers(adapter, reqs, config) -> dict[str, str | None]:
    return {request.id: generation.text for request, generation in adapter.generate(reqs, config)}


@pytest.mark.usefixtures("ray_cluster", "fakes")
def test_replicas_share_the_work_stream_each_answer_and_survive_a_killed_replica(tmp_path):
    reqs, config = requests(24), GenerationConfig(batch_size=3)
    expected = answers(load_model("slowecho:dp"), reqs, config)
    log = tmp_path / "calls.log"
    pool = load_model("slowecho:dp", data_parallel="2", delay="0.03", log=str(log))
    try:
        assert isinstance(pool, ReplicaPool) and pool.info()["name"] == "SlowEcho dp"
        started, arrivals, got = time.monotonic(), [], {}
        for request, generation in pool.generate(reqs, config):
            arrivals.append(time.monotonic() - started)
            got[request.id] = generation.text
        assert got == expected
        assert arrivals[0] < arrivals[-1] / 3  # streamed as answered, not at the end
        calls = log_lines(log)
        assert sorted(i for c in calls for i in c["ids"]) == sorted(r.id for r in reqs)
        assert {len(c["ids"]) for c in calls} == {3} and len(
            {c["pid"] for c in calls}
        ) == 2  # chunks = batches

        victim = pool.where()[0]["pid"]  # SIGKILL one replica after a few answers: nothing is lost
        got, killed = {}, False
        for request, generation in pool.generate(reqs, config):
            assert request.id not in got  # never delivered twice
            got[request.id] = generation.text
            if len(got) == 4 and not killed:
                os.kill(victim, signal.SIGKILL)
                killed = True
        assert got == expected
    finally:
        pool.close()


@pytest.mark.usefixtures("ray_cluster", "fakes")
def test_data_parallel_is_a_transport_option_and_a_run_resumes_either_way(tmp_path):
    log = tmp_path / "calls.log"
    assert model_identity("slowecho:x", {"data_parallel": "2"}) == model_identity("slowecho:x", {})
    base = dict(model="slowecho:x", tasks=("rolebench_demo_specific",), progress=False)
    parallel = evaluate(
        **dict(**base, output=tmp_path / "run", model_args={"data_parallel": "2", "log": str(log)})
    )
    asked = len(log_lines(log))
    single = evaluate(**dict(**base, output=tmp_path / "run", model_args={"log": str(log)}))
    assert len(log_lines(log)) == asked  # everything came from the store: the same identity
    fresh = evaluate(**dict(**base, output=tmp_path / "fresh"))
    task = "rolebench_demo_specific"
    assert parallel.results[task].n_generated == 9
    assert (
        single.results[task].model_dump()
        == fresh.results[task].model_dump()
        == parallel.results[task].model_dump()
    )


@pytest.mark.usefixtures("ray_cluster")
def test_greedy_answers_of_two_llamacpp_replicas_equal_one_process(smollm2_gguf):
    reqs, config = requests(4), GenerationConfig(max_new_tokens=8, batch_size=2)
    one = load_model("smollm2:135m", n_threads="1")  # as each replica: 1 CPU
    try:
        expected = answers(one, reqs, config)
    finally:
        one.close()
    pool = load_model("smollm2:135m", data_parallel="2")
    try:
        assert answers(pool, reqs, config) == expected
    finally:
        pool.close()


@pytest.mark.slow  # two fresh processes import torch and transformers: 10 to 25 s on 2 busy cores
@pytest.mark.usefixtures("ray_cluster")
def test_greedy_answers_of_two_hf_replicas_equal_one_process(tiny_model_dir: Path):
    reqs, config = requests(), GenerationConfig(max_new_tokens=8, batch_size=3)
    one = load_model(f"hf:{tiny_model_dir}", device="cpu")
    expected = answers(one, reqs, config)
    batches = one.batches(reqs, config)  # what each replica is given: one of these at a time
    assert [len(b) for b in batches] == [3, 3, 2] and sorted(sum(batches, [])) == list(range(len(reqs)))
    pool = load_model(f"hf:{tiny_model_dir}", device="cpu", data_parallel="2")
    try:
        assert answers(pool, reqs, config) == expected
    finally:
        pool.close()


def test_vllm_parallel_options_reach_the_engine(monkeypatch):
    """vLLM cannot run here (no GPU): its options are checked, not its generation."""
    pytest.importorskip("torch")
    from model_adapters.errors import ConfigError
    from model_adapters.parallel import gpus_per_replica
    from model_adapters.vllm import VLLMOptions, engine_arguments

    options = VLLMOptions.parse({"tensor_parallel_size": "2", "pipeline_parallel_size": "2"}, "vllm:")
    monkeypatch.setattr("torch.cuda.device_count", lambda: 4)
    arguments = engine_arguments(options)
    assert arguments["tensor_parallel_size"] == 2 and arguments["pipeline_parallel_size"] == 2
    assert "distributed_executor_backend" not in arguments  # 4 GPUs here: vLLM's own processes
    assert not {"chunk_size", "data_parallel"} & set(arguments)
    monkeypatch.setattr("torch.cuda.device_count", lambda: 2)
    assert engine_arguments(options)["distributed_executor_backend"] == "ray"  # more GPUs than here: Ray
    pinned = VLLMOptions.parse({"distributed_executor_backend": "mp", "tensor_parallel_size": "4"}, "vllm:")
    assert engine_arguments(pinned)["distributed_executor_backend"] == "mp"
    assert gpus_per_replica(options) == 4
    same = model_identity("vllm:org/model", {"data_parallel": "2", "distributed_executor_backend": "ray"})
    assert same == model_identity("vllm:org/model", {})
    assert model_identity("vllm:org/model", {"tensor_parallel_size": "2"}) != same
    with pytest.raises(ConfigError, match="distributed_executor_backend"):
        VLLMOptions.parse({"distributed_executor_backend": "slurm"}, "vllm:")


def test_replica_resources_follow_the_backend():
    from model_adapters.errors import ConfigError
    from model_adapters.hf import HFOptions
    from model_adapters.llamacpp import LlamaCppOptions
    from model_adapters.parallel import gpus_per_replica

    assert gpus_per_replica(HFOptions()) == 1 and gpus_per_replica(HFOptions(device="cpu")) == 0
    assert (
        gpus_per_replica(LlamaCppOptions()) == 0 and gpus_per_replica(LlamaCppOptions(n_gpu_layers=-1)) == 1
    )
    with pytest.raises(ConfigError, match="data_parallel=0"):
        load_model("smollm2:135m", data_parallel="0")
