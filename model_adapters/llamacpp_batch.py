"""Several sequences decoded together on one GGUF model: continuous batching and prompt-prefix reuse.

A `Worker` is one llama.cpp context with `n_parallel` sequence slots, each with its own sampler chain (the
chain llama-cpp-python's `create_completion` builds: penalties over the generated tokens, then greedy, or
top-p, temperature and a draw seeded with the request's own seed, `Prompt.seed`). A finished slot takes the
next request at once. Each step decodes the prompt chunks of newly admitted slots in one `llama_batch`, then
one token for every generating slot in another: keeping the two apart makes every answer bit-identical to
decoding the requests one at a time (checked in tests): in a mixed batch llama.cpp computes the first prompt
token of a new sequence in a one-token micro-batch, with a different summation order, and greedy choices
flip.

Prefix reuse: requests are sorted by prompt tokens, so the questions of one role (the same RoleGPT
system prompt, about 85% of the prompt) are neighbours; a new request starts from the longest common
prefix held in its own slot's cache or copied from another slot, and waits a step when another slot
is computing that prefix right now. The cache outlives a call (the next task reuses the role
prefixes); an interrupted call forgets it.

Every sequence has its own KV stream (llama.cpp's default, non-unified cache: attention over its
own cells only). llama.cpp splits a batch into micro-batches of consecutive sequence ids, so the
generating slots are kept contiguous (`_compact`). Workers run in Python threads: `llama_decode`
releases the GIL.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import replace
from threading import Event
from typing import Any

from model_adapters.errors import ModelError
from model_adapters.llamacpp_gguf import GGUFModel
from model_adapters.llamacpp_slots import Answer, Prompt, Sampling, Slot, common_prefix, new_sampler

MIN_SHARED = 16  # a cached prefix is reused from this many tokens on
# Prompt tokens are decoded in chunks of at least 2 (unless the prompt is shorter): llama.cpp computes a
# lone row's attention over the cache with another summation order than a chunk's, and greedy choices
# would then depend on how much of the prompt came from the cache.
MIN_CHUNK = 2
CELL_ROUNDING = 256  # llama.cpp rounds a sequence's KV stream up to this many cells


class Worker:
    """One llama.cpp context on `model` with `n_parallel` slots of `n_cells` KV cells each."""

    def __init__(
        self, model: GGUFModel, *, n_parallel: int, n_cells: int, n_batch: int, n_threads: int
    ) -> None:
        import llama_cpp as C

        self.model, self.n_parallel, self.n_batch = model, n_parallel, n_batch
        self.n_cells = -(-n_cells // CELL_ROUNDING) * CELL_ROUNDING
        params = C.llama_context_default_params()
        params.n_ctx = n_parallel * self.n_cells  # split evenly: one stream of n_cells per sequence
        params.n_batch = params.n_ubatch = n_batch
        params.n_seq_max = n_parallel
        params.n_threads = params.n_threads_batch = n_threads
        params.flash_attn_type = C.LLAMA_FLASH_ATTN_TYPE_DISABLED  # as llama-cpp-python's Llama by default
        params.no_perf = True
        self.ctx: Any = C.llama_init_from_model(model.ptr, params)
        if not self.ctx:
            raise ModelError(
                f"llama.cpp cannot make a context of {params.n_ctx} cells",
                where="--model-args",
                fix="lower n_ctx or the batch size (--batch-size)",
            )
        self.memory = C.llama_get_memory(self.ctx)
        self.batch = C.llama_batch_init(n_batch, 0, 1)
        self.slots = [Slot(seq_id=i) for i in range(n_parallel)]
        self.prompt_tokens_decoded = 0

    def close(self) -> None:
        import llama_cpp as C

        if self.ctx:
            C.llama_batch_free(self.batch)
            C.llama_free(self.ctx)
            self.ctx = None

    # -- the cache
    def _forget(self) -> None:
        import llama_cpp as C

        C.llama_memory_clear(self.memory, True)
        for slot in self.slots:
            slot.cached = []

    def _truncate(self, slot: Slot, keep: int) -> None:
        import llama_cpp as C

        C.llama_memory_seq_rm(self.memory, slot.seq_id, keep, -1)
        del slot.cached[keep:]

    def _copy(self, source: Slot, target: Slot, keep: int) -> None:
        """Give `target` the first `keep` cached tokens of `source` (streams are copied whole)."""
        import llama_cpp as C

        C.llama_memory_seq_rm(self.memory, target.seq_id, -1, -1)
        C.llama_memory_seq_cp(self.memory, source.seq_id, target.seq_id, -1, -1)
        C.llama_memory_seq_rm(self.memory, target.seq_id, keep, -1)
        target.cached = source.cached[:keep]

    def _admit(self, slot: Slot, prompt: Prompt, sampling: Sampling) -> bool:
        """Put `prompt` in the free `slot` from the best cached prefix; False: wait a step for one."""
        limit = max(0, len(prompt.tokens) - MIN_CHUNK)  # see MIN_CHUNK
        own = min(common_prefix(slot.cached, prompt.tokens), limit)
        best, best_keep, wait = None, own, False
        for other in self.slots:
            if other is slot or (other.prompt is None and not other.cached):
                continue
            held = other.prompt.tokens if other.prefilling and other.prompt else other.cached
            share = min(common_prefix(held, prompt.tokens), limit)
            if other.prefilling and share > len(other.cached) and share - own >= MIN_SHARED:
                wait = True  # that slot is computing this prefix now
            keep = min(share, len(other.cached))
            if keep - best_keep >= MIN_SHARED:
                best, best_keep = other, keep
        if wait and best is None:
            return False
        if best is not None:
            self._copy(best, slot, best_keep)
        else:
            self._truncate(slot, own)
        slot.prompt, slot.generated, slot.text, slot.pending = prompt, [], b"", -1
        slot.started = time.perf_counter()
        import llama_cpp as C

        if sampling.temperature > 0 and prompt.seed is not None:  # sampling: a chain seeded for this request
            C.llama_sampler_free(slot.sampler)
            slot.sampler = new_sampler(self.model, replace(sampling, seed=prompt.seed))
        else:
            C.llama_sampler_reset(slot.sampler)  # a fresh penalty window and, when sampling, the seed again
        return True

    def _compact(self) -> None:
        """Move the highest busy sequence into the lowest free slot while a gap lies between them."""
        import llama_cpp as C

        while True:
            busy = [s for s in self.slots if s.prompt is not None]
            free = [s for s in self.slots if s.prompt is None]
            if not busy or not free:
                return
            high, low = max(busy, key=lambda s: s.seq_id), min(free, key=lambda s: s.seq_id)
            if low.seq_id > high.seq_id:
                return
            C.llama_memory_seq_rm(self.memory, low.seq_id, -1, -1)
            C.llama_memory_seq_cp(self.memory, high.seq_id, low.seq_id, -1, -1)
            C.llama_memory_seq_rm(self.memory, high.seq_id, -1, -1)
            high.seq_id, low.seq_id = low.seq_id, high.seq_id
            low.cached = []
            self.slots.sort(key=lambda s: s.seq_id)

    # -- decoding
    def _fill(self, slots: list[Slot]) -> int:
        """Write `slots`' next tokens into the batch; the number of tokens written."""
        b, n = self.batch, 0

        def add(token: int, slot: Slot, wants_logits: bool) -> None:
            nonlocal n
            b.token[n], b.pos[n], b.n_seq_id[n], b.logits[n] = token, len(slot.cached), 1, wants_logits
            b.seq_id[n][0] = slot.seq_id
            slot.cached.append(token)
            if wants_logits:
                slot.row = n
            n += 1

        for slot in slots:
            slot.row = -1
        for slot in slots:
            if slot.pending >= 0:
                add(slot.pending, slot, True)
                continue
            assert slot.prompt is not None
            tokens = slot.prompt.tokens
            left = len(tokens) - len(slot.cached)
            take = min(left, self.n_batch - n)
            if take < left:  # a cut chunk: at least MIN_CHUNK tokens now and for the rest
                take = min(take, left - MIN_CHUNK)
                if take < MIN_CHUNK:
                    continue
            for _ in range(take):
                add(tokens[len(slot.cached)], slot, len(slot.cached) + 1 == len(tokens))
            self.prompt_tokens_decoded += take
            if n >= self.n_batch:
                break
        return n

    def _step(self, slots: list[Slot], sampling: Sampling) -> Iterator[tuple[int, Answer]]:
        """Decode one batch for `slots` (by seq id), sample the slots with logits, yield finished answers."""
        import llama_cpp as C

        n = self._fill(slots)
        if n == 0:
            return
        self.batch.n_tokens = n
        code = C.llama_decode(self.ctx, self.batch)
        if code != 0:
            raise ModelError(f"llama_decode failed with code {code}", where="--model", fix="raise n_ctx")
        for slot in slots:
            if slot.row < 0 or slot.prompt is None:
                continue
            token = C.llama_sampler_sample(slot.sampler, self.ctx, slot.row)
            slot.row = -1
            finish = self._accept(slot, token, sampling)
            if finish is None:
                slot.pending = token
                continue
            yield (
                slot.prompt.index,
                Answer(
                    text=slot.text.decode("utf-8", errors="ignore"),
                    prompt_tokens=len(slot.prompt.tokens),
                    completion_tokens=len(slot.generated),
                    finish_reason=finish,
                    seconds=time.perf_counter() - slot.started,
                ),
            )
            slot.prompt, slot.pending = None, -1  # its KV stays for the next request's prefix

    def _accept(self, slot: Slot, token: int, sampling: Sampling) -> str | None:
        """Add a sampled token to the slot's answer; the finish reason when the answer is complete."""
        if self.model.is_end(token):
            return "stop"
        slot.generated.append(token)
        before = len(slot.text)
        slot.text += self.model.piece(token)
        assert slot.prompt is not None
        # only a stop string ending in the new piece can be new: search from just before it
        found = (slot.text.find(s, max(0, before - len(s) + 1)) for s in slot.prompt.stop)
        hits = [at for at in found if at >= 0]
        if hits:
            slot.text = slot.text[: min(hits)]
            return "stop"
        return "length" if len(slot.generated) >= sampling.max_tokens else None

    def run(
        self, prompts: Sequence[Prompt], sampling: Sampling, cancel: Event
    ) -> Iterator[tuple[int, Answer]]:
        """Answer `prompts` (each must fit), yielding each answer when it is complete."""
        import llama_cpp as C

        todo = list(reversed(prompts))
        for slot in self.slots:
            slot.sampler, slot.prompt, slot.pending = new_sampler(self.model, sampling), None, -1
        completed = False
        try:
            while not cancel.is_set():
                for slot in self.slots:  # lowest seq ids first: keeps the busy slots contiguous
                    if slot.prompt is None and todo:
                        if not self._admit(slot, todo[-1], sampling):
                            break
                        todo.pop()
                if not todo:
                    self._compact()
                if all(slot.prompt is None for slot in self.slots):
                    completed = True
                    break
                yield from self._step([s for s in self.slots if s.prefilling], sampling)
                yield from self._step([s for s in self.slots if s.generating], sampling)
        finally:
            for slot in self.slots:
                C.llama_sampler_free(slot.sampler)
                slot.sampler, slot.prompt, slot.pending = None, None, -1
            if not completed:  # interrupted: the slots' caches may be half written
                self._forget()
