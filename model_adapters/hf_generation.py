"""How `hf:` generates: requests in batches by prompt length, transformers' decoding settings, one
batch generated (left padded, in eval mode, each row's sampler) and its answers read back (cut at EOS)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from model_adapters.interface import Generation, GenerationConfig, Request, Usage
from model_adapters.row_sampling import RowSampler


def length_batches(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Indices by prompt length, longest first (a too-large batch fails at once), `batch_size` at a time."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    return [order[start : start + batch_size] for start in range(0, len(order), batch_size)]


def decoding_config(config: GenerationConfig, eos_ids: list[int], pad_id: int) -> Any:
    """transformers' GenerationConfig for `config`: the model's own defaults overridden, EOS the only stop."""
    from transformers import GenerationConfig as HFGenerationConfig

    # greedy, also under sampling: a RowSampler then leaves each row only the token it drew
    return HFGenerationConfig(  # type: ignore[no-untyped-call]
        max_new_tokens=config.max_new_tokens,
        do_sample=False,
        temperature=1.0,
        top_p=1.0,
        repetition_penalty=config.repetition_penalty,
        num_beams=1,
        eos_token_id=eos_ids,
        pad_token_id=pad_id,
    )


def generate_tokens(
    torch: Any, model: Any, pad_id: int, encoded: list[list[int]], hf_config: Any, sampler: RowSampler | None
) -> list[list[int]]:
    """The new tokens of each row of one batch, left padded on the model's input device. The model runs in
    eval mode and is put back in training mode if it was in it."""
    width = max(len(ids) for ids in encoded)
    padded = [[pad_id] * (width - len(ids)) + ids for ids in encoded]
    mask = [[0] * (width - len(ids)) + [1] * len(ids) for ids in encoded]
    device = input_device(model)
    training = bool(getattr(model, "training", False))
    model.eval()
    try:
        with torch.inference_mode():
            output = model.generate(
                input_ids=torch.tensor(padded, device=device),
                attention_mask=torch.tensor(mask, device=device),
                generation_config=hf_config,
                **({} if sampler is None else {"logits_processor": _processors(sampler)}),
            )
    finally:
        if training:
            model.train()
    new_tokens: list[list[int]] = output[:, width:].tolist()
    return new_tokens


def input_device(model: Any) -> Any:
    """The device of the model's input embeddings: where its inputs go."""
    return model.get_input_embeddings().weight.device


def _processors(sampler: RowSampler) -> Any:
    from transformers import LogitsProcessorList

    return LogitsProcessorList([sampler])


def answers(
    requests: list[Request],
    encoded: list[list[int]],
    new_tokens: list[list[int]],
    eos_ids: list[int],
    tokenizer: Any,
    seconds: float,
) -> Iterator[tuple[Request, Generation]]:
    """Each request's answer: its new tokens up to the first EOS, decoded, with their usage."""
    for request, ids, tokens in zip(requests, encoded, new_tokens, strict=True):
        stop = next((i for i, token in enumerate(tokens) if token in eos_ids), None)
        completion = tokens if stop is None else tokens[:stop]
        text = tokenizer.decode(completion, skip_special_tokens=True)
        usage = Usage(prompt_tokens=len(ids), completion_tokens=len(completion) + (stop is not None))
        yield (
            request,
            Generation(
                text=text,
                usage=usage,
                seconds=seconds,
                finish_reason="length" if stop is None else "stop",
            ),
        )
