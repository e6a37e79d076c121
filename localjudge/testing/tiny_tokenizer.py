"""A small byte-level BPE tokenizer trained on the fly: real merges, no download.

Its numerals merge as real vocabularies' do ("10", "100", " 10" are single tokens), so score tries
built from it have the multi-token and shared-prefix cases of real judges. Tests and the GPU
benchmark pair it with random-weight models. Needs `tokenizers` and `transformers`.
"""

from __future__ import annotations

import random

_WORDS = "the answer is good bad score rating quality fluent helpful response yes no maybe Yes No A B".split()


def _number_corpus(seed: int = 0) -> list[str]:
    """Synthetic text full of numbers so BPE learns merged numerals ("10", "100", " 10")."""
    rng = random.Random(seed)
    lines = []
    for _ in range(3000):
        n = rng.choice([rng.randint(0, 10), 10, 100, rng.randint(0, 100), 7])
        words = " ".join(rng.choices(_WORDS, k=rng.randint(2, 6)))
        lines += [f"{words} Score: {n}. Rating {rng.randint(0, 10)}/10 and {n}", str(n), f"Total {rng.randint(0, 100)}"]
    return lines


def build_tiny_tokenizer():
    """A byte-level BPE tokenizer trained on the fly, digits NOT split, as `PreTrainedTokenizerFast`.

    Examples:
        >>> tok = build_tiny_tokenizer()  # doctest: +SKIP
        >>> tok.decode(tok("Score: 10")["input_ids"])  # doctest: +SKIP
        'Score: 10'
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=600,
        min_frequency=2,
        special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(_number_corpus(), trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>", pad_token="<|endoftext|>")
