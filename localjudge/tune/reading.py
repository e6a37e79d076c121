"""The judge's reading of a score as a differentiable function: logits at the tree nodes to a distribution.

The same quantities the engine reads (`engine.tree_head`, `scoring.distribution`), in torch with
gradients: the log-probability of each node's token at its parent, of the outcome ending at each
node, and each outcome's mass as the sum over its terminal nodes. Training through this reading
trains the judge on the very number `eval` reports, numerals of several tokens included.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from localjudge.kinds.training import soft_target
from localjudge.scoring.trie import TokenTree

__all__ = ["TreeIndex", "outcome_logmass", "soft_target"]  # soft_target: G-Eval's taught distribution


@dataclass(frozen=True)
class TreeIndex:
    """A tree as tensors, built once per tree.

    Attributes:
        parents: (N,) parent node of each node; the root's is 0 (unused).
        tokens: (N,) token of each node; the root's is 0 (unused).
        terminal: (N,) outcome a node completes, -1 for none.
        ends: (V,) True where a token does not continue the outcome.
        n_values: number of outcomes V'.
    """

    parents: torch.Tensor
    tokens: torch.Tensor
    terminal: torch.Tensor
    ends: torch.Tensor
    n_values: int

    @classmethod
    def of(cls, tree: TokenTree, vocab: int) -> TreeIndex:
        ends = torch.ones(vocab, dtype=torch.bool)
        ends[torch.from_numpy(tree.continue_ids[tree.continue_ids < vocab])] = False
        return cls(
            parents=torch.from_numpy(np.maximum(tree.parents, 0)),
            tokens=torch.from_numpy(np.maximum(tree.token_ids, 0)),
            terminal=torch.from_numpy(tree.terminal_value.copy()),
            ends=ends,
            n_values=len(tree.values),
        )


def outcome_logmass(index: TreeIndex, logits: torch.Tensor) -> torch.Tensor:
    """log of each outcome's unnormalised probability, from the logits at every node.

    Args:
        index: the tree, N nodes.
        logits: (M, N, V) logits at the root (column 0) and each node, fp32.

    Returns:
        (M, V') log-mass of each outcome; logsumexp over V' is log of the valid mass.
    """
    m, n, _ = logits.shape
    logp = torch.log_softmax(logits.float(), dim=-1)  # (M, N, V)
    end = torch.logsumexp(logp.masked_fill(~index.ends, float("-inf")), dim=-1)  # (M, N)
    at_parent = logp[:, index.parents[1:]]  # (M, N-1, V)
    edge = at_parent.gather(2, index.tokens[1:].expand(m, -1).unsqueeze(2)).squeeze(2)  # (M, N-1)
    path = [torch.zeros(m, dtype=logp.dtype)]  # path log-probability of each node; parents precede children
    for node in range(1, n):
        path.append(path[int(index.parents[node])] + edge[:, node - 1])
    node_logp = torch.stack(path, dim=1) + end  # (M, N) the outcome ends at the node
    out = torch.full((m, index.n_values), float("-inf"), dtype=logp.dtype)
    for v in range(index.n_values):
        where = torch.nonzero(index.terminal == v).flatten()
        if len(where):
            out[:, v] = torch.logsumexp(node_logp[:, where], dim=1)
    return out
