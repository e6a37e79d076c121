"""`HeadKind`: scores a case by a head's linear reading of the judge's hidden states (see the package docstring)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from localjudge.errors import ConfigError, ModelUnavailableError, clip
from localjudge.io.cases import TestCase
from localjudge.judges.judge import Judge
from localjudge.kinds.base import CaseBatch, Explanation, Listing, Measure, MetricContext, MetricKind, Needs
from localjudge.kinds.head.features import matrix, prompt_of, read_outputs
from localjudge.kinds.head.linear import HeadWeights, normalised, read
from localjudge.kinds.head.spec import HeadMetric
from localjudge.kinds.records import ResultRecord

WEIGHTS = "head.safetensors"
"""The head folder's weights file: `<metric>.weight`, `.centre`, `.scale` per metric."""
HEAD_TEMPLATE_VERSION = "head-1"


class HeadDetail(BaseModel):
    """What a head's record carries besides its score."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    head_sha256: str = Field(description="SHA-256 of the head's weights file.")
    fitted_kind: str = Field(description="Kind of the metric the head was fit for (geval, entailment, pairwise...).")
    label: str = Field(description="rating, binary or preference.")
    output_tokens: list[int] = Field(description="Tokens of each output read.")
    mean_logprob: list[float] = Field(description="Mean token log-probability of each output (the likelihood reading).")


class HeadKind(MetricKind[HeadMetric]):
    """A metric answered through a head (`localjudge tune --method head`)."""

    name = "head"
    spec = HeadMetric
    detail = HeadDetail
    version = HEAD_TEMPLATE_VERSION

    def needs(self, metric: HeadMetric) -> Needs:
        src = metric.features.source_fields
        return Needs(required=[*src, *metric.output_fields], sort_by=list(src))

    def outputs_read(self, metric: HeadMetric) -> list[str]:
        return list(metric.output_fields)

    def measure(self, judge: Judge, ctx: MetricContext[HeadMetric], case: TestCase) -> Measure:
        m = ctx.metric
        prompt = prompt_of(m.features, case)
        longest = max(judge.count_tokens(" " + str(case.get(f))) for f in m.output_fields)
        tokens = judge.count_tokens(prompt) + longest
        return Measure(tokens, f"the {m.name} head's source and output have", list(m.features.source_fields), prompt)

    def score(self, batch: CaseBatch[HeadMetric]) -> list[ResultRecord]:
        judge, ctx, items = batch.judge, batch.ctx, batch.items
        m = ctx.metric
        w = head_weights(m.head, m.head_sha256, m.name)
        fields = m.output_fields
        prompts = [str(it.payload) for it in items for _ in fields]
        outputs = [str(it.case.get(f)).strip() for it in items for f in fields]
        blank = [not o for o in outputs]
        if any(blank):  # the kind's needs refuse missing fields; whitespace alone gets here
            bad = items[blank.index(True) // len(fields)].case.id
            raise ConfigError(
                f"case {clip(bad)}: an output of only whitespace; a head reads outputs of one token or more"
            )
        feats = read_outputs(judge, m.features, prompts, outputs)
        x = matrix(feats, m.features, m.reading.layers)  # (n * k, d), k outputs per case
        k = len(fields)
        raw = read(m.reading, w, x[::k], x[1::k] if k == 2 else None)  # (n,)
        score = normalised(m.reading, raw)
        out = []
        for i, it in enumerate(items):
            own = feats[i * k : (i + 1) * k]
            detail = HeadDetail(
                head_sha256=m.head_sha256,
                fitted_kind=str(m.fitted_for.get("kind", "")),
                label=m.reading.label,
                output_tokens=[len(f.logprobs) for f in own],
                mean_logprob=[float(f.logprobs.mean()) for f in own],
            )
            out.append(
                ctx.record(
                    judge,
                    it.case,
                    float(score[i]),
                    raw_score=float(raw[i]),
                    detail=detail,
                    truncated=it.cut,
                )
            )
        return out

    def describe(self, metric: HeadMetric) -> Listing:
        r = metric.reading
        scale = f"{r.scale[0]:g}-{r.scale[1]:g} (head)" if r.scale else f"P ({r.label}, head)"
        return Listing(scale, f"{', '.join(metric.features.source_fields)} -> {', '.join(metric.output_fields)}")

    def explain(self, record: ResultRecord) -> Explanation:
        d = record.detail
        if not isinstance(d, HeadDetail) or record.score is None or record.raw_score is None:
            return super().explain(record)
        what = {"rating": "rating", "binary": "P(label 1)", "preference": "P(output 1 better)"}[d.label]
        return Explanation(
            f"head {d.head_sha256[:12]} read the judge's hidden states: {what} {record.raw_score:.3f}, "
            f"score {record.score:.3f}"
        )


@lru_cache(maxsize=32)
def _load(path: str, sha256: str) -> dict[str, np.ndarray]:
    from safetensors.numpy import load_file

    from localjudge.weights.hashes import sha256_file

    digest = sha256_file(Path(path))
    if digest != sha256:
        raise ConfigError(f"{path} does not match its manifest's sha256; the head folder was changed: fit it again")
    return load_file(path)


def head_weights(folder: str, sha256: str, metric: str) -> HeadWeights:
    """One metric's weights from a head folder, checked against the manifest's sha256.

    Raises:
        ModelUnavailableError: the weights file is missing or lacks the metric.
        ConfigError: the file is not the one the manifest names.
    """
    path = Path(folder) / WEIGHTS
    if not path.is_file():
        raise ModelUnavailableError(f"{path} is missing; the head folder is incomplete: fit the head again")
    tensors = _load(str(path), sha256)
    try:
        return HeadWeights(tensors[f"{metric}.weight"], tensors[f"{metric}.centre"], tensors[f"{metric}.scale"])
    except KeyError:
        raise ModelUnavailableError(f"{path} holds no head for metric {clip(metric)}") from None


HEAD = HeadKind()
