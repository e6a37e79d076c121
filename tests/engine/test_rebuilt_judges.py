"""Judges rebuilt over one loaded model and tokenizer reuse what does not depend on the engine options.

A judge with other options (token budget, prefix reuse, fp32 head) over the same model decodes
the vocabulary once and widens and prepacks the output layer once; what changed (a token added
to the tokenizer, weights replaced) is made again, and every judge reads the same scores.
"""

from __future__ import annotations

import copy

import pytest
import torch

from localjudge import Judge
from localjudge.engine import vocab
from localjudge.engine.options import EngineOptions
from localjudge.testing.tiny_models import tiny_info, tiny_llama

pytestmark = pytest.mark.usefixtures("torch_one_thread")
PROMPTS = ["the answer is good. Score:", "Rating 7/10 and the response is fluent. Score: "]


def _counting_decodes(tokenizer, decoded: list[int]):
    """`tokenizer` (a test's own copy) noting the size of every batch it decodes."""
    real = tokenizer.batch_decode
    tokenizer.batch_decode = lambda seqs, **kw: decoded.append(len(seqs)) or real(seqs, **kw)
    return tokenizer


def test_the_vocabulary_is_decoded_once_per_tokenizer(tiny_tokenizer):
    decoded: list[int] = []
    tokenizer = _counting_decodes(copy.deepcopy(tiny_tokenizer), decoded)  # the session's own stays untouched
    first = vocab.token_surfaces(tokenizer)
    again = vocab.token_surfaces(tokenizer)
    assert first == again and decoded == [len(tokenizer)]  # the whole vocabulary, once
    again.append("edited by the caller")
    assert vocab.token_surfaces(tokenizer) == first  # a copy each time
    tokenizer.add_tokens(["<new-token>"])
    grown = vocab.token_surfaces(tokenizer)
    assert len(decoded) == 2 and len(grown) == len(first) + 1 and grown[-1] == "<new-token>"
    other = _counting_decodes(copy.deepcopy(tiny_tokenizer), decoded)
    assert vocab.token_surfaces(other) == first and len(decoded) == 3  # another tokenizer object


def test_a_rebuilt_bf16_judge_shares_its_fp32_output_layer(tiny_tokenizer):
    model = tiny_llama(tiny_tokenizer).to(torch.bfloat16)
    info = tiny_info().model_copy(update={"dtype": "bfloat16"})
    judges = [
        Judge.from_model(
            model,
            tiny_tokenizer,
            info,
            EngineOptions(device="cpu", dtype="bfloat16", mixed_precision=False, **opts).resolve(False),
        )
        for opts in ({}, {"token_budget": 64}, {"reuse_prefix": False})
    ]
    heads = [j.backend.runner.head for j in judges]
    widened = heads[0].layer  # read in fp32 on fixed shapes: a layer of its own, made once for all three
    assert all(h.layer is widened for h in heads) and widened is not model.lm_head
    assert widened.weight.dtype == torch.float32
    scores = [[s.probs for s in j.score_texts(PROMPTS, 1, 10)] for j in judges]
    assert scores[0] == scores[1] == scores[2]

    with torch.no_grad():  # new weights in the same layer: widened again, and read
        model.lm_head.weight.mul_(2)
    options = EngineOptions(device="cpu", dtype="bfloat16", mixed_precision=False).resolve(False)
    rebuilt = Judge.from_model(model, tiny_tokenizer, info, options)
    assert rebuilt.backend.runner.head.layer is not widened
    assert [s.probs for s in rebuilt.score_texts(PROMPTS, 1, 10)] != scores[0]
