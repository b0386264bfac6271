"""`openai:` adapter: retries, rate limits, fatal errors, concurrency, usage and key hygiene.

Behaviour is tested against `fake_openai` (a real HTTP server on 127.0.0.1 whose replies each test
scripts); one test talks to a real OpenAI-compatible server, llama.cpp's, serving SmolLM2-135M.
"""
# ruff: noqa: F811 - the imported `fake_openai` fixture is used as an argument, the pytest way

from __future__ import annotations

import logging
import socket
import subprocess
import sys
import threading
import time
import traceback
import urllib.request
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from model_adapters import GenerationConfig, Request, load_model
from model_adapters.openai_api import OpenAIAdapter, RetryPolicy, parse_retry_after
from rolebench import evaluate
from rolebench.errors import ConfigError, ModelError
from rolebench.prompts.roleplay import role_messages
from tests.fake_openai import FakeOpenAI, Reply, fake_openai  # noqa: F401 - `fake_openai` is a fixture

SECRET = "sk-test-SECRET123"
FAST = {"backoff": 0.0, "max_retries": 3}  # no waiting between retries unless a test asks for it


OPEN: list[OpenAIAdapter] = []


@pytest.fixture(autouse=True)
def _fake_key_and_cleanup(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    yield
    while OPEN:
        OPEN.pop().close()


def requests_for(*questions: str) -> list[Request]:
    return [
        Request(
            id=q, messages=[{"role": "system", "content": "You are Li Bai."}, {"role": "user", "content": q}]
        )
        for q in questions
    ]


def question(body: dict[str, Any]) -> str:
    return body["messages"][-1]["content"]


def adapter_for(server: FakeOpenAI, model: str = "fake-model", **options: Any) -> OpenAIAdapter:
    adapter = load_model(f"openai:{model}@{server.base_url}", **options)
    assert isinstance(adapter, OpenAIAdapter)
    OPEN.append(adapter)
    return adapter


def run(adapter: OpenAIAdapter, requests: list[Request], **config: Any) -> dict[str, Any]:
    return {
        request.id: generation
        for request, generation in adapter.generate(requests, GenerationConfig(**config))
    }


# --- pure parts --------------------------------------------------------------------------------


def test_retry_delay_backs_off_with_jitter_and_caps() -> None:
    policy = RetryPolicy(max_retries=5, backoff=1.0, max_backoff=10.0)
    for attempt, ceiling in [(0, 1.0), (1, 2.0), (2, 4.0), (3, 8.0), (4, 10.0), (9, 10.0)]:
        delays = [policy.delay(attempt) for _ in range(50)]
        assert all(ceiling / 2 <= d <= ceiling for d in delays)
    assert policy.delay(0, retry_after=7.0) == 7.0  # the server's longer wait wins
    assert policy.delay(0, retry_after=3600.0) == 10.0  # ... but never past the cap


def test_parse_retry_after_seconds_millis_and_http_date() -> None:
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=timezone.utc)
    assert parse_retry_after({"retry-after": "3"}) == 3.0
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert parse_retry_after({"retry-after": "Thu, 01 Jan 2026 12:00:30 GMT"}, now=now) == 30.0
    assert parse_retry_after({"retry-after": "Thu, 01 Jan 2026 11:00:00 GMT"}, now=now) == 0.0
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None


def test_spec_options_and_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    adapter = load_model("openai:my-model@http://127.0.0.1:9/v1/chat/completions/")
    assert (adapter.model, adapter.base_url) == ("my-model", "http://127.0.0.1:9/v1")
    assert load_model("openai:m", base_url="http://localhost:8000").base_url == "http://localhost:8000/v1"
    assert load_model("openai:m", base_url=None).base_url == "https://api.openai.com/v1"
    with pytest.raises(ConfigError, match="two base URLs"):
        load_model("openai:m@http://127.0.0.1:9/v1", base_url="http://127.0.0.1:10/v1")
    with pytest.raises(ConfigError, match="unknown option.*dtype"):
        load_model("openai:m", dtype="bf16")
    with pytest.raises(ConfigError, match="max_retries"):
        load_model("openai:m", max_retries="-1")
    with pytest.raises(ConfigError, match="not an http"):
        load_model("openai:m@127.0.0.1:9")
    with pytest.raises(ConfigError, match="bad OpenAI model spec"):
        load_model("openai:@http://127.0.0.1:9/v1")
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(ConfigError, match="OPENAI_API_KEY is not set"):
        load_model("openai:gpt-4o")
    load_model("openai:m@http://127.0.0.1:9/v1")  # a local server needs no key


# --- against the fake server -------------------------------------------------------------------


def test_maps_generation_config_and_records_usage(fake_openai) -> None:
    server = fake_openai(lambda body: Reply(text="ahoy", usage=(11, 7), system_fingerprint="fp_42"))
    adapter = adapter_for(server)
    assert adapter.info()["revision"] is None
    config = {"max_new_tokens": 33, "temperature": 0.7, "top_p": 0.9, "seed": 5}
    out = run(adapter, requests_for("a", "b"), **config)
    assert [g.text for g in out.values()] == ["ahoy", "ahoy"]
    assert all((g.usage.prompt_tokens, g.usage.completion_tokens) == (11, 7) for g in out.values())
    assert (adapter.total_usage.prompt_tokens, adapter.total_usage.completion_tokens) == (22, 14)
    assert out["a"].finish_reason == "stop" and out["a"].error is None
    body = server.received[0].body
    sent = {k: body[k] for k in ("model", "max_tokens", "temperature", "top_p", "seed")}
    assert sent == {"model": "fake-model", "max_tokens": 33, "temperature": 0.7, "top_p": 0.9, "seed": 5}
    assert body["messages"][0] == {"role": "system", "content": "You are Li Bai."}
    assert server.received[0].headers["authorization"] == f"Bearer {SECRET}"
    info = adapter.info()
    assert (info["revision"], info["name"], info["base_url"]) == ("fp_42", "fake-model", server.base_url)
    assert run(adapter, requests_for("c"))["c"].text == "ahoy"  # the same adapter serves a second batch
    assert adapter.total_usage.prompt_tokens == 33


def test_requests_really_run_concurrently(fake_openai) -> None:
    barrier = threading.Barrier(8, timeout=30)  # passes only when 8 requests are in the server at once

    def handler(body: dict[str, Any]) -> Reply | int:
        try:
            barrier.wait()
        except threading.BrokenBarrierError:
            return 500
        return Reply(text="ok " + question(body))

    server = fake_openai(handler)
    out = run(adapter_for(server, max_retries=0), requests_for(*map(str, range(16))), concurrency=8)
    assert {k: g.text for k, g in out.items()} == {str(i): f"ok {i}" for i in range(16)}
    assert server.max_in_flight == 8


def test_concurrency_makes_delayed_requests_fast(fake_openai) -> None:
    server = fake_openai(lambda body: Reply(text="ok", delay=0.2))
    n = 32
    started = time.perf_counter()
    out = run(adapter_for(server), requests_for(*map(str, range(n))), concurrency=8)
    elapsed = time.perf_counter() - started
    assert all(g.text == "ok" for g in out.values()) and len(out) == n
    assert elapsed < n * 0.2 / 2  # sequential would take 6.4 s; 8 at a time about 0.8 s


def test_results_are_yielded_as_they_complete(fake_openai) -> None:
    release = threading.Event()

    def handler(body: dict[str, Any]) -> str:
        if question(body) == "slow":
            release.wait(30)
        return "done " + question(body)

    server = fake_openai(handler)
    stream = adapter_for(server).generate(requests_for("slow", "a", "b"), GenerationConfig(concurrency=3))
    first_request, first = next(stream)
    assert first_request.id != "slow" and first.text == f"done {first_request.id}"
    release.set()
    rest = {request.id: generation.text for request, generation in stream}
    assert rest["slow"] == "done slow" and len(rest) == 2


def test_abandoning_the_results_stops_sending(fake_openai) -> None:
    server = fake_openai(lambda body: Reply(text="ok", delay=0.1))
    stream = adapter_for(server).generate(requests_for(*map(str, range(40))), GenerationConfig(concurrency=2))
    next(stream)
    stream.close()  # e.g. the runner failed while storing: nothing more should be sent
    time.sleep(0.5)  # would be ~10 more requests if sending went on
    assert server.count() <= 4


def test_rate_limit_retry_after_is_honoured(fake_openai) -> None:
    def handler(body: dict[str, Any]) -> Reply | str:
        return Reply.rate_limited(retry_after="1") if server.count() == 1 else "finally"

    server = fake_openai(handler)
    out = run(adapter_for(server, backoff=0.001), requests_for("q"))
    assert out["q"].text == "finally" and server.count() == 2
    first, second = server.received
    assert second.at - first.at >= 0.95  # waited for Retry-After, not the 1 ms back-off


def test_server_error_is_retried_then_succeeds(fake_openai) -> None:
    server = fake_openai(lambda body: 500 if server.count() <= 2 else "recovered")
    out = run(adapter_for(server, **FAST), requests_for("q"))
    assert out["q"].text == "recovered" and server.count() == 3


def test_permanent_failure_gives_an_error_result_and_keeps_the_others(fake_openai) -> None:
    server = fake_openai(lambda body: 503 if question(body) == "bad" else "fine")
    out = run(
        adapter_for(server, backoff=0.0, max_retries=2), requests_for("a", "bad", "b", "c"), concurrency=2
    )
    assert {k: g.text for k, g in out.items()} == {"a": "fine", "bad": None, "b": "fine", "c": "fine"}
    assert "gave up after 3 attempts" in out["bad"].error and "HTTP 503" in out["bad"].error
    assert server.count() == 3 + 3


def test_other_client_errors_fail_one_sample_without_retry(fake_openai) -> None:
    too_long = Reply.error(400, "This model's maximum context length is 2048 tokens.")
    server = fake_openai(lambda body: too_long if question(body) == "long" else "fine")
    out = run(adapter_for(server, **FAST), requests_for("long", "short"))
    assert out["short"].text == "fine" and out["long"].text is None
    assert "HTTP 400" in out["long"].error and "maximum context length" in out["long"].error
    assert server.count() == 2


def test_timeouts_are_retried_then_reported(fake_openai) -> None:
    server = fake_openai(lambda body: Reply(text="late", delay=1.5))
    out = run(adapter_for(server, timeout=0.2, backoff=0.0, max_retries=1), requests_for("q"))
    assert out["q"].text is None and out["q"].error == "gave up after 2 attempts: timed out"
    assert server.count() == 2


def test_missing_content_is_not_an_answer(fake_openai) -> None:
    server = fake_openai(lambda body: Reply(text=None, finish_reason="content_filter"))
    out = run(adapter_for(server, **FAST), requests_for("q"))
    assert out["q"].text is None and "no content (finish_reason=content_filter)" in out["q"].error
    assert out["q"].failed and server.count() == 4  # retried like a 5xx (no answer is no answer)


@pytest.mark.parametrize("status, words", [(401, "API key rejected"), (403, "access denied")])
def test_auth_errors_stop_at_once(
    fake_openai, caplog: pytest.LogCaptureFixture, status: int, words: str
) -> None:
    server = fake_openai(lambda body: Reply.error(status, f"Incorrect API key provided: {SECRET}."))
    adapter = adapter_for(server, **FAST)
    caplog.set_level(logging.DEBUG)
    with pytest.raises(ModelError) as caught:
        run(adapter, requests_for("a", "b", "c", "d"), concurrency=1)
    message = str(caught.value)
    assert words in message and f"HTTP {status}" in message
    assert "fake-model" in message and server.base_url in message
    assert server.count() == 1  # no retry, and no further request started
    shown = "".join(traceback.format_exception(caught.value))
    assert_no_secret(message, shown, str(adapter.info()), caplog.text)


def test_unknown_model_is_a_clear_error(fake_openai) -> None:
    server = fake_openai(lambda body: "never")
    with pytest.raises(ModelError, match=r"model 'gpt-nope' not found \(HTTP 404.*does not exist") as caught:
        run(adapter_for(server, "gpt-nope", **FAST), requests_for("a"))
    assert server.base_url in str(caught.value) and server.count() == 1


def test_unreachable_server_is_a_clear_error(fake_openai) -> None:
    server = fake_openai()
    adapter = adapter_for(server, backoff=0.0, max_retries=1)
    server.stop()  # nothing listens on that port any more
    with pytest.raises(ModelError, match="cannot reach the server after 2 attempts"):
        run(adapter, requests_for("a"))


def test_key_never_leaks_into_info_or_errors(fake_openai, caplog: pytest.LogCaptureFixture) -> None:
    server = fake_openai(lambda body: Reply.error(500, f"upstream said key={SECRET}"))
    caplog.set_level(logging.DEBUG)
    adapter = adapter_for(server, backoff=0.0, max_retries=1)
    out = run(adapter, requests_for("q"))
    assert out["q"].text is None and "key=***" in out["q"].error  # a server echoing the key is redacted
    assert server.received[0].headers["authorization"] == f"Bearer {SECRET}"
    assert_no_secret(out["q"].error, str(adapter.info()), repr(vars(adapter)), caplog.text)
    for url in (f"http://user:{SECRET}@127.0.0.1:{server.port}/v1", f"{server.base_url}?key={SECRET}"):
        with pytest.raises(ConfigError, match="user info or a query string") as caught:
            load_model(f"openai:fake-model@{url}")
        assert_no_secret(str(caught.value))


def assert_no_secret(*texts: str) -> None:
    for text in texts:
        assert SECRET not in text


def test_evaluate_keeps_other_answers_and_resume_retries_only_the_failure(
    fake_openai, tmp_path: Path
) -> None:
    broken = {"on": True}

    def handler(body: dict[str, Any]) -> Reply | str:
        system = body["messages"][0]["content"]
        if broken["on"] and "Mira Vance" in system and question(body).startswith("Explain what a rainbow"):
            return Reply.error(500)
        return "Aye, " + question(body)

    server = fake_openai(handler)
    options = dict(
        model=f"openai:fake-model@{server.base_url}",
        tasks=("rolebench_demo_general",),
        output=tmp_path,
        progress=False,
        model_args={"backoff": 0.0, "max_retries": 1},
    )
    first = evaluate(**options).results["rolebench_demo_general"]
    assert (first.n, first.n_not_covered) == (18, 1) and server.count() == 17 + 2
    broken["on"] = False
    server.reset()
    second = evaluate(**options).results["rolebench_demo_general"]
    assert (second.n, second.n_not_covered) == (18, 0) and server.count() == 1


# --- against a real OpenAI-compatible server: llama.cpp serving SmolLM2-135M-Instruct ----------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_models(url: str, process: subprocess.Popen[bytes], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and process.poll() is None:
        try:
            with urllib.request.urlopen(url + "/models", timeout=2) as response:
                return response.status == 200
        except OSError:
            time.sleep(0.25)
    return False


@pytest.fixture(scope="session")
def llama_server(smollm2_gguf: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`python -m llama_cpp.server` with SmolLM2 on 127.0.0.1:<free port>; yields its base URL."""
    pytest.importorskip("llama_cpp.server.app", reason="llama-cpp-python[server] is not installed")
    port = free_port()
    log_path = tmp_path_factory.mktemp("llama-server") / "server.log"
    command = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(smollm2_gguf),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "2048",
        "--n_threads",
        "2",
        "--seed",
        "0",
    ]
    with open(log_path, "wb") as log_file:
        process = subprocess.Popen(command, stdout=log_file, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        if not wait_for_models(base_url, process, seconds=120):
            pytest.fail(
                f"llama_cpp.server did not come up on {base_url}; log:\n{log_path.read_text()[-2000:]}"
            )
        yield base_url
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.mark.slow
def test_real_llama_cpp_server_answers_rolegpt_prompts(
    llama_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")  # a local server needs no key
    adapter = load_model("openai:smollm2", base_url=llama_server, max_retries=2)
    conversations = {
        "en": ("Jack Sparrow", "A witty pirate captain.", " Who are you? ", "en"),
        "zh": ("李白", "唐代浪漫主义诗人，好饮酒。", "你最喜欢什么？", "zh"),
        "en2": ("Sherlock Holmes", "A brilliant detective.", "Describe London.", "en"),
    }
    requests = [Request(id=key, messages=role_messages(*fields)) for key, fields in conversations.items()]
    out = run(adapter, requests, max_new_tokens=24, concurrency=2)
    assert set(out) == {"en", "zh", "en2"}
    for generation in out.values():
        assert generation.error is None and generation.text and generation.text.strip()
        assert generation.usage.prompt_tokens > 20 and 0 < generation.usage.completion_tokens <= 24
        assert generation.finish_reason in ("stop", "length")
    assert adapter.total_usage.completion_tokens == sum(g.usage.completion_tokens for g in out.values())
    adapter.close()
