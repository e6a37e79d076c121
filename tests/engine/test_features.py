"""The engine's feature pass (`engine.features`): the model's own states, pooled, and bitwise whatever the batch."""

from __future__ import annotations

import numpy as np
import pytest
from pooled_states import pooled_stock

from localjudge.engine.options import EngineOptions
from localjudge.io.cases import TestCase
from localjudge.judges.loading import load_judge

pytestmark = pytest.mark.usefixtures("torch_one_thread")


@pytest.fixture(scope="module")
def files(tmp_path_factory, tiny_model_dir):
    root = tmp_path_factory.mktemp("features")
    (root / "model").symlink_to(tiny_model_dir)
    return root


def test_engine_features_are_the_models_own_states(files, tiny_tokenizer):
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(files / "model", dtype=torch.float32).eval()
    judge = load_judge(str(files / "model"), progress=False)
    assert judge.info.bitwise and judge.layer_count == 2
    prompt, outputs = "Input:\nDocument 1: apple river\n\nOutput:", ["stone cloud green", "seven table"]
    feats = judge.features([prompt] * 2, [" " + o for o in outputs], [1, 2])
    for f, o in zip(feats, outputs):
        assert f.pooled.shape == (2, 64)
        np.testing.assert_allclose(f.pooled[0], pooled_stock(model, judge, prompt, o, 1), atol=2e-5)
        np.testing.assert_allclose(f.pooled[1], pooled_stock(model, judge, prompt, o, 2), atol=2e-5)
        ll = judge.loglikelihood([prompt], [" " + o])[0]
        assert np.array_equal(f.logprobs, np.array(ll.logprobs))


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_features_are_bitwise_whatever_the_batch(files, dtype):
    judge = load_judge(str(files / "model"), options=EngineOptions(dtype=dtype), progress=False)
    assert judge.info.bitwise
    words = ["apple", "river", "stone", "cloud", "green", "quiet", "paper", "light", "seven", "table"]
    cases = [
        TestCase(
            id=str(i),
            input=f"Document {i // 6}: " + " ".join(words[i % 5 : i % 5 + 4]),
            actual_output=" ".join(words[(i * 3) % 7 : (i * 3) % 7 + 3]),
        )
        for i in range(24)
    ]
    prompts = [f"Input:\n{c.input}\n\nOutput:" for c in cases]
    outs = [" " + str(c.actual_output) for c in cases]
    together = judge.with_options(token_budget=4096).features(prompts, outs, [1, 2])
    for i in (0, 7, 23):
        alone = judge.with_options(token_budget=256, reuse_prefix=False).features(
            prompts[i : i + 1], outs[i : i + 1], [1, 2]
        )[0]
        assert np.array_equal(alone.pooled, together[i].pooled) and np.array_equal(alone.logprobs, together[i].logprobs)
