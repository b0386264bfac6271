"""`openai:` adapter against hostile servers: nothing a server sends aborts a run or leaks the key.

Each test starts `tests.fake_openai`'s hostile server (`HOSTILE` modes: always 500, a body dripped a
byte a second, 200s that are not JSON, truncated, not a chat.completion, not HTTP, empty or
whitespace-only answers, content-filtered answers, the key echoed back) and checks the contract:
a whole-request deadline, retries like a 5xx and then one failed sample (`Generation(text=None,
error=...)`, never stored), the other samples kept, no traceback, the key hidden everywhere.
"""
# ruff: noqa: F811 - the imported fixtures are used as arguments, the pytest way

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from model_adapters import Generation, GenerationConfig, Request, load_model, openai_http
from model_adapters.openai_api import OpenAIAdapter
from rolebench import evaluate
from rolebench.errors import ConfigError, MissingDependency, ModelError
from tests.fake_openai import (  # noqa: F401 - `fake_openai`, `hostile_openai` are fixtures
    HOSTILE,
    FakeOpenAI,
    Reply,
    fake_openai,
    hostile_openai,
)

SECRET = "sk-fault-SECRET-4242"
FAST = {"backoff": 0.0, "max_retries": 2}  # 3 attempts, no waiting
OPEN: list[OpenAIAdapter] = []


@pytest.fixture(autouse=True)
def _fake_key_and_cleanup(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    yield
    while OPEN:
        OPEN.pop().close()


def requests_for(*questions: str) -> list[Request]:
    return [Request(id=q, messages=[{"role": "user", "content": q}]) for q in questions]


def adapter_for(server: FakeOpenAI, **options: Any) -> OpenAIAdapter:
    adapter = load_model(f"openai:fake-model@{server.base_url}", **options)
    assert isinstance(adapter, OpenAIAdapter)
    OPEN.append(adapter)
    return adapter


def run(adapter: OpenAIAdapter, requests: list[Request], **config: Any) -> dict[str, Generation]:
    return {r.id: g for r, g in adapter.generate(requests, GenerationConfig(**config))}


def assert_no_traceback(caplog: pytest.LogCaptureFixture) -> None:
    assert not any(record.exc_info for record in caplog.records)
    assert "Traceback" not in caplog.text


# --- status codes and waits -------------------------------------------------------------------


def test_always_500_fails_each_sample_after_its_retries(hostile_openai, caplog) -> None:
    server = hostile_openai("500")
    out = run(adapter_for(server, **FAST), requests_for("a", "b", "c"), concurrency=2)
    assert set(out) == {"a", "b", "c"} and server.count() == 3 * 3
    for generation in out.values():
        assert generation.failed and generation.text is None
        assert generation.error == (
            "gave up after 3 attempts: HTTP 500: The server had an error while processing your request."
        )
    assert_no_traceback(caplog)


def test_waits_honour_retry_after_and_retry_after_ms_but_never_past_the_cap(fake_openai) -> None:
    replies = iter(
        [Reply.rate_limited(retry_after="3600"), Reply.error(503, headers={"retry-after-ms": "400"})]
    )
    server = fake_openai(lambda body: next(replies, "finally"))
    started = time.perf_counter()
    out = run(adapter_for(server, backoff=0.0, max_backoff=0.3), requests_for("q"))
    first, second, third = (r.at for r in server.received)
    assert out["q"].text == "finally" and time.perf_counter() - started < 5
    assert 0.25 <= second - first < 2  # Retry-After: 3600 capped at max_backoff=0.3
    assert 0.25 <= third - second < 2  # retry-after-ms: 400, capped at 0.3 too


def test_an_unknown_4xx_fails_that_sample_at_once(fake_openai) -> None:
    server = fake_openai(
        lambda body: Reply.error(418, "I'm a teapot") if body["messages"][-1]["content"] == "t" else "ok"
    )
    out = run(adapter_for(server, **FAST), requests_for("t", "u"))
    assert out["t"].failed and out["t"].error == "HTTP 418: I'm a teapot" and out["u"].text == "ok"
    assert server.count() == 2


# --- the deadline ------------------------------------------------------------------------------


def test_a_dripping_body_fails_the_attempt_at_the_whole_request_deadline(hostile_openai) -> None:
    server = hostile_openai("drip")  # a byte every second: a per-read timeout of 2.5 s never trips
    started = time.perf_counter()
    out = run(adapter_for(server, timeout=2.5, backoff=0.0, max_retries=1), requests_for("q"))
    elapsed = time.perf_counter() - started
    assert out["q"].failed and out["q"].error == "gave up after 2 attempts: timed out"
    assert server.count() == 2 and 4.9 < elapsed < 8


def test_a_dripping_body_is_retried_like_a_5xx(hostile_openai) -> None:
    server = hostile_openai("drip", bad=1)
    out = run(adapter_for(server, timeout=1.0, **FAST), requests_for("q"))
    assert out["q"].text == "ok: q" and server.count() == 2


# --- 200s that are no answer -------------------------------------------------------------------

MALFORMED = {
    "not_json": "HTTP 200 with a body that is not JSON: b'<html>",
    "empty_body": "HTTP 200 with a body that is not JSON: b''",
    "truncated": "connection broken: ClientPayloadError",
    "not_a_completion": "HTTP 200 with a body that is not a chat.completion",
    "error_in_200": "HTTP 200 with an error: upstream overloaded",
    "not_http": "connection broken: ",
}
NO_ANSWER = {
    "empty": "the response has no content (finish_reason=stop)",
    "whitespace": "the response has only whitespace (finish_reason=stop)",
    "content_filter": "the response has no content (finish_reason=content_filter)",
    "content_filter_partial": "withheld by the server's content filter (finish_reason=content_filter)",
}


@pytest.mark.parametrize("mode", [*MALFORMED, *NO_ANSWER])
def test_a_200_without_a_usable_answer_is_retried_then_fails_that_sample(
    hostile_openai, caplog, mode: str
) -> None:
    caplog.set_level(logging.DEBUG)
    server = hostile_openai(mode)
    out = run(adapter_for(server, **FAST), requests_for("q"))
    generation = out["q"]
    assert generation.failed and generation.text is None and server.count() == 3
    assert generation.error is not None and generation.error.startswith("gave up after 3 attempts: ")
    assert {**MALFORMED, **NO_ANSWER}[mode] in generation.error
    assert_no_traceback(caplog)


@pytest.mark.parametrize("mode", [*MALFORMED, *NO_ANSWER])
def test_a_200_without_a_usable_answer_recovers_on_retry(hostile_openai, mode: str) -> None:
    server = hostile_openai(mode, bad=2)
    out = run(adapter_for(server, **FAST), requests_for("q"))
    assert out["q"].text == "ok: q" and out["q"].error is None and server.count() == 3
    assert out["q"].finish_reason == "stop"


def test_a_batch_of_every_misbehaviour_never_aborts_the_run(fake_openai, caplog) -> None:
    modes = sorted(set(HOSTILE) - {"drip"}) + ["good"] * 6

    def handler(body: dict[str, Any]) -> Reply:
        mode = body["messages"][-1]["content"].split("#")[0]
        return Reply(text=f"fine {mode}") if mode == "good" else HOSTILE[mode]()

    server = fake_openai(handler)
    questions = [f"{mode}#{i}" for i, mode in enumerate(modes)]
    out = run(adapter_for(server, **FAST), requests_for(*questions), concurrency=8)
    assert set(out) == set(questions)
    good = {q for q in questions if q.startswith(("good", "echo_key"))}
    assert all(out[q].text and not out[q].failed for q in good)
    assert all(out[q].failed and out[q].error for q in set(questions) - good)
    assert_no_traceback(caplog)


def test_a_length_finish_is_a_normal_answer(fake_openai) -> None:
    server = fake_openai(lambda body: Reply(text="cut in the mid", finish_reason="length"))
    out = run(adapter_for(server, **FAST), requests_for("q"))
    assert (out["q"].text, out["q"].finish_reason, out["q"].error) == ("cut in the mid", "length", None)
    assert server.count() == 1


def test_an_oversized_body_is_refused(fake_openai, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(openai_http, "MAX_BODY", 1000)
    server = fake_openai(lambda body: "x" * 5000)
    out = run(adapter_for(server, backoff=0.0, max_retries=0), requests_for("q"))
    assert out["q"].failed and "the response body is over 1000 bytes" in (out["q"].error or "")


def test_failed_answers_are_never_stored_and_the_rerun_retries_only_them(fake_openai, tmp_path: Path) -> None:
    broken = {"on": True}

    def handler(body: dict[str, Any]) -> Reply | str:
        question, system = body["messages"][-1]["content"], body["messages"][0]["content"]
        if broken["on"] and "Mira Vance" in system and question.startswith("Explain what a rainbow"):
            return Reply(text="   ", finish_reason="stop")
        return "Aye, " + question

    server = fake_openai(handler)
    options = dict(
        model=f"openai:fake-model@{server.base_url}",
        tasks=("rolebench_demo_general",),
        output=tmp_path,
        progress=False,
        model_args=FAST,
    )
    first = evaluate(**options).results["rolebench_demo_general"]
    assert (first.n_not_covered, first.n_failed) == (1, 1)
    broken["on"] = False
    server.reset()
    second = evaluate(**options).results["rolebench_demo_general"]
    assert (second.n_not_covered, second.n_failed) == (0, 0) and server.count() == 1


# --- the key -----------------------------------------------------------------------------------


def test_an_echoed_key_is_hidden_in_answers_identity_errors_and_logs(
    hostile_openai, fake_openai, caplog
) -> None:
    caplog.set_level(logging.DEBUG)
    server = hostile_openai("echo_key")
    adapter = adapter_for(server, **FAST)
    generation = run(adapter, requests_for("q"))["q"]
    assert generation.text == "here is (your key is ***)"
    info = adapter.info()
    assert (info["revision"], info["served_model"]) == ("fp-***", "m-***")
    assert server.received[0].headers["authorization"] == f"Bearer {SECRET}"
    assert all(SECRET not in json.dumps(r.body) for r in server.received)  # only in the header

    leaky = fake_openai(
        lambda body: Reply(raw=f"<html>bad key {SECRET}</html>".encode(), content_type="text/html")
    )
    failed = run(adapter_for(leaky, **FAST), requests_for("q"))["q"]
    assert failed.failed and "bad key ***" in (failed.error or "")
    for text in (repr(generation), repr(failed), str(info), repr(vars(adapter)), caplog.text):
        assert SECRET not in text


def test_an_echoed_key_in_a_fatal_error_is_hidden(fake_openai) -> None:
    server = fake_openai(lambda body: Reply.error(403, f"key {SECRET} may not use this model"))
    with pytest.raises(ModelError, match=r"access denied \(HTTP 403: key \*\*\* may not") as caught:
        run(adapter_for(server, **FAST), requests_for("q"))
    assert SECRET not in str(caught.value)


# --- the environment ---------------------------------------------------------------------------


def test_proxy_variables_are_honoured(fake_openai, monkeypatch: pytest.MonkeyPatch) -> None:
    proxy = fake_openai(lambda body: "via the proxy", models=None)
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.port}")
    adapter = load_model("openai:fake-model@http://api.example.invalid/v1", **FAST)
    OPEN.append(adapter)  # type: ignore[arg-type]
    out = run(adapter, requests_for("q"))  # type: ignore[arg-type]
    assert out["q"].text == "via the proxy"
    assert proxy.received[0].target == "http://api.example.invalid/v1/chat/completions"
    assert proxy.received[0].headers["authorization"] == f"Bearer {SECRET}"

    direct = fake_openai(lambda body: "direct")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    assert run(adapter_for(direct, **FAST), requests_for("q"))["q"].text == "direct"
    assert direct.count() == 1 and proxy.count() == 1


def test_a_netrc_entry_for_the_host_does_not_break_requests(
    fake_openai, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    netrc = tmp_path / "netrc"
    netrc.write_text("default login someone password something\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    server = fake_openai(lambda body: "fine")
    assert run(adapter_for(server, **FAST), requests_for("q"))["q"].text == "fine"
    assert server.received[0].headers["authorization"] == f"Bearer {SECRET}"


def test_a_key_no_header_can_carry_is_refused_before_any_request(monkeypatch: pytest.MonkeyPatch) -> None:
    broken = "sk-first-half\nsk-second-half"
    monkeypatch.setenv("OPENAI_API_KEY", broken)
    with pytest.raises(
        ConfigError, match="OPENAI_API_KEY has characters an HTTP header cannot carry"
    ) as caught:
        load_model("openai:gpt-4o-mini")
    assert "sk-first-half" not in str(caught.value)


def test_without_aiohttp_the_backend_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "aiohttp", None)  # `import aiohttp` now raises ImportError
    with pytest.raises(MissingDependency, match=r"needs aiohttp.*rolebench\[api\]"):
        load_model("openai:m@http://127.0.0.1:9/v1")


def test_a_proxy_aiohttp_cannot_use_is_refused_at_load(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALL_PROXY", f"socks5://user:{SECRET}@127.0.0.1:1080")
    with pytest.raises(
        ConfigError, match=r"proxy socks5://127.0.0.1:1080 .* is not an http\(s\) proxy"
    ) as caught:
        load_model("openai:m@http://127.0.0.1:9/v1")
    assert SECRET not in str(caught.value)
