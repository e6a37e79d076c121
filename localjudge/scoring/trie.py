"""The tree of token paths that spell a valid score, built over the vocabulary by token id.

A score such as 10 may reach the judge's output as one token ("10", " 10"), as several
("1", "0"), or with the leading space as a token of its own (" ", "1", "0"). Every such path is a
node chain in one tree. The tree is the same for every prompt, so the engine can append it once
behind each prompt and read all of it in a single forward pass.

Everything here is pure: token surface texts in, a `TokenTree` out.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from localjudge.errors import ConfigError, clip


@dataclass(frozen=True)
class TokenTree:
    """Token paths spelling the valid outcomes, flattened in breadth-first order.

    Node 0 is the root (the position right after the prompt); nodes 1..N-1 each add one token.

    Attributes:
        token_ids: (N,) token fed at each node; -1 for the root.
        parents: (N,) parent node index; -1 for the root. Parents precede children.
        depths: (N,) number of tokens from the root (root = 0).
        texts: text spelled by the path from the root to each node.
        terminal_value: (N,) index into `values` of the outcome a node completes, or -1.
        values: the outcomes (scores or labels), in order.
        continue_ids: (C,) token ids that extend a completed outcome into another word or
            number (digits for numerals); their probability mass is what "the outcome did not
            end here" costs.
    """

    token_ids: np.ndarray
    parents: np.ndarray
    depths: np.ndarray
    texts: tuple[str, ...]
    terminal_value: np.ndarray
    values: tuple
    continue_ids: np.ndarray

    @property
    def n_nodes(self) -> int:
        return len(self.token_ids)

    @property
    def max_depth(self) -> int:
        return int(self.depths.max())

    def ancestors(self, node: int) -> list[int]:
        """Nodes from the first token to `node` inclusive (root excluded)."""
        path = []
        while node > 0:
            path.append(node)
            node = int(self.parents[node])
        return path[::-1]


def _pieces(spellings: Iterable[str]) -> set[str]:
    """Every substring of every spelling: the only surfaces a path token can have."""
    return {s[i:j] for s in spellings for i in range(len(s)) for j in range(i + 1, len(s) + 1)}


def build_tree(
    surfaces: Sequence[str],
    spellings: Mapping[str, int],
    n_values: int,
    values: tuple,
    is_continuation: Callable[[str], bool],
) -> TokenTree:
    """Builds the tree of token paths whose concatenated surface text is one of `spellings`.

    Args:
        surfaces: decoded text of every token, indexed by token id.
        spellings: spelling text -> index of the outcome it spells.
        n_values: number of outcomes.
        values: the outcomes themselves.
        is_continuation: whether a token surface continues a completed outcome.
    """
    prefixes = {s[:i] for s in spellings for i in range(len(s) + 1)}
    wanted = _pieces(spellings)
    by_surface: dict[str, list[int]] = defaultdict(list)
    continue_ids = []
    for tid, text in enumerate(surfaces):
        if text in wanted:
            by_surface[text].append(tid)
        if text and is_continuation(text):
            continue_ids.append(tid)

    token_ids, parents, depths, texts, terminal = [-1], [-1], [0], [""], [-1]
    frontier = [0]
    while frontier:
        nxt = []
        for node in frontier:
            prefix = texts[node]
            for piece in sorted(by_surface):
                extended = prefix + piece
                if extended not in prefixes:
                    continue
                for tid in by_surface[piece]:
                    token_ids.append(tid)
                    parents.append(node)
                    depths.append(depths[node] + 1)
                    texts.append(extended)
                    terminal.append(spellings.get(extended, -1))
                    nxt.append(len(token_ids) - 1)
        frontier = nxt
    assert max(terminal) < n_values
    return TokenTree(
        token_ids=np.asarray(token_ids, dtype=np.int64),
        parents=np.asarray(parents, dtype=np.int64),
        depths=np.asarray(depths, dtype=np.int64),
        texts=tuple(texts),
        terminal_value=np.asarray(terminal, dtype=np.int64),
        values=values,
        continue_ids=np.asarray(sorted(continue_ids), dtype=np.int64),
    )


def _starts_with_ascii_digit(text: str) -> bool:
    return text[0] in "0123456789"


def _starts_with_word_char(text: str) -> bool:
    return text[0].isalnum() or text[0] == "_"


def validate_scale(low: int, high: int) -> None:
    """Raises `ConfigError` unless low..high is a valid integer score scale (0 ≤ low < high ≤ 100)."""
    if isinstance(low, bool) or isinstance(high, bool) or not (isinstance(low, int) and isinstance(high, int)):
        raise ConfigError(f"score scale bounds must be integers, got low={low!r}, high={high!r}")
    if not 0 <= low < high <= 100:
        raise ConfigError(f"invalid score scale {low}..{high}: need 0 <= low < high <= 100 (e.g. low=1, high=5)")


def build_score_tree(surfaces: Sequence[str], low: int, high: int) -> TokenTree:
    """Tree for integer scores low..high, each spelled as its numeral with or without one space.

    Examples:
        >>> tree = build_score_tree(["1", "0", "10", " "], 0, 10)
        >>> sorted(set(t for t in tree.texts if t))
        [' ', ' 0', ' 1', ' 10', '0', '1', '10']
    """
    validate_scale(low, high)
    values = tuple(range(low, high + 1))
    spellings = {}
    for i, v in enumerate(values):
        spellings[str(v)] = i
        spellings[" " + str(v)] = i
    return build_tree(surfaces, spellings, len(values), values, _starts_with_ascii_digit)


def label_spellings(labels: Sequence[str]) -> dict[str, int]:
    """Spellings of each label: as given, lower, upper and capitalised, each with or without a space.

    Raises:
        ConfigError: labels are empty, repeated, or two labels share a spelling.
    """
    if len(labels) < 2:
        raise ConfigError(f"a label scale needs at least two labels, got {clip(list(labels))}")
    spellings: dict[str, int] = {}
    for i, label in enumerate(labels):
        if not isinstance(label, str) or not label.strip() or label != label.strip():
            raise ConfigError(f"labels must be non-empty strings without outer spaces, got {clip(label)}")
        for variant in {label, label.lower(), label.upper(), label.capitalize()}:
            for spelled in (variant, " " + variant):
                if spellings.get(spelled, i) != i:
                    raise ConfigError(
                        f"labels {clip(labels[spellings[spelled]])} and {clip(label)} share the spelling "
                        f"{clip(spelled)}; use labels that differ in more than case"
                    )
                spellings[spelled] = i
    return spellings


def build_label_tree(surfaces: Sequence[str], labels: Sequence[str]) -> TokenTree:
    """Tree for a label scale such as ("A", "B") or ("Yes", "No"), case and space variants included.

    A label ends where the next token does not continue the word (no letter, digit or underscore).
    """
    spellings = label_spellings(labels)
    return build_tree(surfaces, spellings, len(labels), tuple(labels), _starts_with_word_char)
