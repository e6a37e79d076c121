"""A continuation's hidden states pooled by transformers' own forward, the reference the engine's features match."""

from __future__ import annotations

import numpy as np


def pooled_stock(model, judge, prompt: str, output: str, layer: int) -> np.ndarray:
    """The state after `layer` averaged over the output's tokens, by transformers' own forward (no engine)."""
    import torch

    from localjudge.scoring.likelihood import split_boundary

    p, c = split_boundary(prompt, " " + output)
    ids_p, ids_c = judge.backend.encode(p), judge.backend.encode_continuation(c)
    with torch.no_grad():
        out = model(input_ids=torch.tensor([ids_p + ids_c]), output_hidden_states=True)
    return out.hidden_states[layer][0, len(ids_p) :].double().mean(0).numpy()
