"""`inspect_judge`: what to check before trusting a new judge.

Who the judge is (family, source, revision or file hash, dtype, device, context, chat template),
what it is made of (architecture, tokenizer, vocabulary and logit rows), how it spells every score
of a scale (the token paths of the score tree, by id and text), and how much probability short
probe prompts put on valid scores. A judge whose probes leave most of the mass elsewhere, or whose
tokenizer spells a score in a way the tree does not hold, is caught here rather than in a run.

Examples:
    >>> from localjudge.testing import fake_judge
    >>> report = inspect_judge(fake_judge(lambda prompt: {"4": 0.6, "5": 0.4}), low=1, high=5)
    >>> [[step.text for step in path] for path in report.spellings[3].paths]
    [['4'], [' ', '4']]
    >>> round(report.probes[0].valid_mass, 3), report.probes[0].mode
    (1.0, 4)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from localjudge.judges.judge import Judge, JudgeInfo
from localjudge.kinds.geval.prompts import SCORE_PREFILL, SYSTEM
from localjudge.scoring.distribution import DEFAULT_MIN_VALID_MASS
from localjudge.scoring.trie import TokenTree, label_spellings, validate_scale

PROBE_QUESTION = "What is the capital of France?"
PROBE_ANSWERS = ("The capital of France is Paris.", "The capital of France is Lyon.")
"""A right and a wrong answer: a judge worth trusting puts its mass on the scale for both, and apart."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TokenStep(_Strict):
    """One token of a path that spells a score."""

    id: int = Field(description="Token id.")
    text: str = Field(description="Text the token adds after other text.")


class Spelling(_Strict):
    """Every token path that spells one outcome of the scale."""

    value: int | str = Field(description="The score or label.")
    paths: list[list[TokenStep]] = Field(description="Token paths, with and without the leading space.")


class Probe(_Strict):
    """What the judge does at the score position of one probe prompt."""

    prompt: str = Field(description="The rendered prompt, ending where the score is read.")
    valid_mass: float = Field(description="Probability on valid outcomes, before normalising.")
    scored: bool = Field(description=f"Whether valid_mass reaches min_valid_mass ({DEFAULT_MIN_VALID_MASS:g}).")
    mode: int | str | None = Field(description="Most probable outcome; None when unscored.")
    expected: float | None = Field(description="Expected score (numeric scales, when scored); None otherwise.")
    probs: dict[str, float] = Field(description="Outcome -> probability, normalised over the scale.")
    greedy: str = Field(description="What the judge writes there when left to generate (8 tokens, greedy).")


class ModelFacts(_Strict):
    """What the judge is made of; None where the backend has no transformers model (a fake)."""

    architecture: str | None = Field(description="The config's model_type (llama, qwen2, gemma3...).")
    parameters: int | None = Field(description="Number of weights.")
    tokenizer: str | None = Field(description="Tokenizer class.")
    vocab_size: int = Field(description="Tokens with a text (the tokenizer's length).")
    logit_rows: int | None = Field(description="Rows of the output layer; rows past vocab_size are never a score.")
    bos_token: str | None = Field(description="Beginning-of-sequence token, if any.")
    adds_bos: bool | None = Field(description="Whether tokenizing a prompt adds the BOS token.")
    eos_token: str | None = Field(description="End-of-sequence (end-of-turn) token, if any.")
    chat_template: str | None = Field(description="The tokenizer's chat template (Jinja), if it has one.")


class JudgeInspection(_Strict):
    """The report of `inspect_judge`."""

    judge: JudgeInfo = Field(description="Who the judge is and how it runs (recorded with every result).")
    model: ModelFacts = Field(description="Architecture and tokenizer.")
    scale: str = Field(description="The scale inspected: 'low-high' or the labels joined by commas.")
    spellings: list[Spelling] = Field(description="Every outcome's token paths, in scale order.")
    tree_nodes: int = Field(description="Nodes of the score tree (root included), read in one pass per batch.")
    continuation_tokens: int = Field(description="Tokens that continue an outcome (digits, or word characters).")
    probes: list[Probe] = Field(description="The probe prompts and the judge's distribution at their end.")


def inspect_judge(
    judge: Judge,
    *,
    low: int | None = None,
    high: int | None = None,
    labels: Sequence[str] | None = None,
    probes: Sequence[str] | None = None,
) -> JudgeInspection:
    """Inspects a loaded judge on a score scale (`low`..`high`) or a label scale (`labels`).

    Args:
        judge: a loaded judge (`load_judge`) or a fake one.
        low: lowest score; with `high`, a numeric scale (default 1..10 when no labels are given).
        high: highest score.
        labels: a label scale such as ["A", "B"], instead of a numeric one.
        probes: rendered prompts to read the scale at; default two short G-Eval-style prompts
            (a right and a wrong answer), rendered with the judge's chat template.

    Raises:
        ConfigError: the scale is invalid, or both a numeric and a label scale are given.

    Examples:
        >>> report = inspect_judge(load_judge("smollm2-135m"), low=1, high=5)  # doctest: +SKIP
        >>> report.probes[0].valid_mass  # doctest: +SKIP
    """
    from localjudge.errors import ConfigError

    if labels is not None:
        if low is not None or high is not None:
            raise ConfigError("give either a scale (low, high) or labels, not both")
        labels = list(labels)
        label_spellings(labels)
        tree, scale = judge.label_tree(labels), ",".join(labels)
    else:
        low, high = (1, 10) if low is None and high is None else (low, high)
        if low is None or high is None:
            raise ConfigError("give both ends of the scale (low and high)")
        validate_scale(low, high)
        tree, scale = judge.score_tree(low, high), f"{low}-{high}"
    prompts = list(probes) if probes else [_probe(judge, a, low, high, labels) for a in PROBE_ANSWERS]
    if labels is not None:
        dists: list[Any] = judge.score_labels(prompts, labels)
    else:
        assert low is not None and high is not None
        dists = judge.score_texts(prompts, low, high)
    greedy = judge.generate(prompts, max_new_tokens=8)
    return JudgeInspection(
        judge=judge.info,
        model=_model_facts(judge),
        scale=scale,
        spellings=_spellings(tree, judge.backend.token_surfaces()),
        tree_nodes=tree.n_nodes,
        continuation_tokens=len(tree.continue_ids),
        probes=[
            Probe(
                prompt=p,
                valid_mass=d.valid_mass,
                scored=d.scored,
                mode=d.mode,
                expected=getattr(d, "expected", None) if d.scored else None,
                probs={str(k): v for k, v in d.probs.items()},
                greedy=g,
            )
            for p, d, g in zip(prompts, dists, greedy)
        ],
    )


def _probe(judge: Judge, answer: str, low: int | None, high: int | None, labels: list[str] | None) -> str:
    """A short scoring prompt in the judge's own format, ending where the score is read."""
    if labels is not None:
        ask = f"Is the response correct? Answer with one of: {', '.join(labels)}. Reply with the answer only."
        head = "Answer:"
    else:
        ask = f"Give the score, an integer from {low} (worst) to {high} (best). Reply with the score only."
        head = SCORE_PREFILL
    user = (
        "Evaluate how correctly the response answers the question.\n\n"
        f"Question: {PROBE_QUESTION}\nResponse: {answer}\n\n{ask}"
    )
    return judge.render(SYSTEM, user, head)


def _spellings(tree: TokenTree, surfaces: Sequence[str]) -> list[Spelling]:
    paths: list[list[list[TokenStep]]] = [[] for _ in tree.values]
    for node in range(1, tree.n_nodes):
        value = int(tree.terminal_value[node])
        if value >= 0:
            ids = [int(tree.token_ids[n]) for n in tree.ancestors(node)]
            paths[value].append([TokenStep(id=i, text=surfaces[i]) for i in ids])
    return [Spelling(value=v, paths=p) for v, p in zip(tree.values, paths)]


def _model_facts(judge: Judge) -> ModelFacts:
    backend = judge.backend
    model, tok = getattr(backend, "model", None), getattr(backend, "tokenizer", None)
    surfaces = backend.token_surfaces()
    if model is None or tok is None:
        return ModelFacts(
            architecture=None,
            parameters=None,
            tokenizer=None,
            vocab_size=len(surfaces),
            logit_rows=None,
            bos_token=None,
            adds_bos=None,
            eos_token=None,
            chat_template=None,
        )
    head = model.get_output_embeddings()
    bos_id = tok.bos_token_id
    return ModelFacts(
        architecture=getattr(model.config, "model_type", None),
        parameters=sum(p.numel() for p in model.parameters()),
        tokenizer=type(tok).__name__,
        vocab_size=len(surfaces),
        logit_rows=int(head.weight.shape[0]) if head is not None else None,
        bos_token=tok.bos_token,
        adds_bos=bos_id is not None and backend.encode("x")[:1] == [bos_id],
        eos_token=tok.eos_token,
        chat_template=tok.chat_template if isinstance(getattr(tok, "chat_template", None), str) else None,
    )
