"""llama.cpp (llama-cpp-python) on token ids: prompt processing and continuation log-probabilities.

Every method takes the token ids localjudge computed, so both engines see the very same tokens;
one sequence per decode, as llama.cpp's own perplexity and server paths do on a CPU. Four ways of
running it:

  last         `Llama.eval(row)` of the high-level API: logits of the last position only, the
               best prompt-processing rate llama.cpp reaches on these rows.
  all          `Llama(logits_all=True).eval(row)`, then its `scores` array read at the
               continuation positions: what the high-level API needs for log-probabilities
               (`create_completion(logprobs=..., echo=True)` goes this way).
  cont         a low-level batch that asks for logits only at the positions predicting a
               continuation token: the same output-layer work as localjudge's likelihood path.
  cont+prefix  as cont, with a prefix that the article's rows share decoded once and kept in the
               KV cache; each row then decodes only its remainder (cf. localjudge's prefix reuse).

llama-cpp-python is not a dependency of localjudge: `require_llama_cpp` says how to build it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from benchmarks.lib.llamacpp import require_llama_cpp
from benchmarks.speed._logprobs import target_logprobs


class LlamaCpp:
    """One GGUF file in llama.cpp: a context for `last`/`cont`, and one with `logits_all` for `all`."""

    def __init__(self, path: Path, n_ctx: int, n_batch: int, n_ubatch: int, threads: int, flash_attn: bool):
        lc = require_llama_cpp()
        self._lc = lc
        settings = dict(
            model_path=str(path),
            n_ctx=n_ctx,
            n_batch=n_batch,
            n_ubatch=n_ubatch,
            n_threads=threads,
            n_threads_batch=threads,
            flash_attn=flash_attn,
            verbose=False,
        )
        self.settings = {k: v for k, v in settings.items() if k != "model_path"}
        self.llm = lc.Llama(**settings)
        self.llm_all = lc.Llama(**settings, logits_all=True)
        self.n_vocab = self.llm.n_vocab()
        self.n_batch = n_batch
        self._batch = lc.llama_batch_init(n_batch, 0, 1)
        self._mem = lc.llama_get_memory(self.llm.ctx)

    def close(self) -> None:
        """Frees the batch and both contexts."""
        self._lc.llama_batch_free(self._batch)
        self.llm.close()
        self.llm_all.close()

    def system_info(self) -> str:
        """ggml's build line: the CPU features it was compiled for (AVX2, F16C, OpenMP...)."""
        return self._lc.llama_print_system_info().decode().strip()

    # -- tokenizer ------------------------------------------------------------------------------

    def tokenize_prompt(self, text: str) -> list[int]:
        """The prompt as llama.cpp tokenises it: the model's own BOS rule, special tokens parsed."""
        return self.llm.tokenize(text.encode(), add_bos=True, special=True)

    def tokenize_continuation(self, text: str) -> list[int]:
        """The continuation on its own: no BOS, special-token text taken literally."""
        return self.llm.tokenize(text.encode(), add_bos=False, special=False)

    # -- methods --------------------------------------------------------------------------------

    def last(self, row: Sequence[int]) -> None:
        """Prompt processing of one row, logits of its last position only (high-level API)."""
        self.llm.reset()
        self.llm.eval(row)

    def all(self, row: Sequence[int], n_cont: int) -> np.ndarray:
        """(n_cont,) log-probs of the row's last n_cont tokens through `logits_all=True`."""
        self.llm_all.reset()
        self.llm_all.eval(row)
        n = len(row)
        logits = self.llm_all.scores[n - n_cont - 1 : n - 1]  # (n_cont, V): slot t predicts token t + 1
        return target_logprobs(logits, row[n - n_cont :])

    def cont(self, row: Sequence[int], n_cont: int, keep: int = 0) -> np.ndarray:
        """(n_cont,) log-probs of the row's last n_cont tokens, after the first `keep` tokens kept in the cache.

        `keep` tokens must already be in the KV cache (`prefill`); the rest of the cache is dropped.
        """
        n = len(row)
        first = n - n_cont - 1  # the slot whose logits read the first continuation token
        assert 0 <= keep <= first, "the kept prefix ends before the first read position"
        self._lc.llama_memory_seq_rm(self._mem, 0, keep, -1)
        logits = self._decode(row, keep, range(first, n - 1))
        return target_logprobs(logits, row[n - n_cont :])

    def prefill(self, tokens: Sequence[int]) -> None:
        """Decodes `tokens` from position 0 into an emptied KV cache (a prefix `cont` keeps)."""
        self._lc.llama_memory_clear(self._mem, True)
        self._decode(tokens, 0, range(len(tokens) - 1, len(tokens)))

    def _decode(self, row: Sequence[int], start: int, read: range) -> np.ndarray:
        """Decodes row[start:] at positions start.., in n_batch chunks; (len(read), V) logits of `read`."""
        lc, b = self._lc, self._batch
        out = []
        for s in range(start, len(row), self.n_batch):
            e = min(len(row), s + self.n_batch)
            b.n_tokens = e - s
            wanted = 0
            for j, pos in enumerate(range(s, e)):
                b.token[j] = row[pos]
                b.pos[j] = pos
                b.n_seq_id[j] = 1
                b.seq_id[j][0] = 0
                b.logits[j] = pos in read
                wanted += pos in read
            if lc.llama_decode(self.llm.ctx, b) != 0:
                raise RuntimeError(f"llama_decode failed on positions {s}..{e - 1}")
            if wanted:
                # outputs come back in batch order, one row of n_vocab floats per flagged token
                ptr = lc.llama_get_logits(self.llm.ctx)
                out.append(np.ctypeslib.as_array(ptr, shape=(wanted, self.n_vocab)).copy())
        return np.concatenate(out) if out else np.zeros((0, self.n_vocab), np.float32)
