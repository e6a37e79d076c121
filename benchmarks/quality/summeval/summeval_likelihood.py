"""Likelihood scorers and hybrids of the SummEval benchmark (`summeval.py` runs them).

Scorers, per dimension, from the builtin `<dimension>_likelihood` metrics (an instruction naming
the dimension after the article, the summary scored token by token):

- ll-mean: mean log-probability per summary token (the metric's raw_score);
- ll-sum: the summed log-probability of the summary;
- ll-pmi: ll-mean minus the mean log-probability under the same instruction without the article
  (pointwise mutual information of summary and article).

The four dimensions' prompts share each article, so all of them go through the engine in one
call and an article is computed once for its 4 × 16 rows; the contrast prompts (no article) are
one more call. The values equal what `localjudge eval --metric <dimension>_likelihood` records.

Hybrids: per dimension, the judge's scorers of that dimension (G-Eval expected score, ll-mean,
ll-pmi) are combined by `localjudge.calibration.hybrid_fit.fit_arrays`, fitted and
cross-validated on half of the articles (seeded) and reported on the other half, beside each
part alone on the same half.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence

import numpy as np

from benchmarks.lib.common import DIMENSIONS, cell
from benchmarks.lib.summeval import likelihood_metric
from localjudge.kinds.likelihood import prompts as L

LL_SCORERS = ("ll-mean", "ll-sum", "ll-pmi")
HYBRID_PARTS = ("expected", "ll-mean", "ll-pmi")
SPLITS = 20
"""Random half splits over which the hybrids' held-back agreement is also averaged."""


def likelihood_scores(judge, cases) -> tuple[dict[str, dict[str, list[float]]], dict[str, float]]:
    """{scorer: {dimension: per-case score}} and wall seconds of the two engine passes."""
    prompts, conts, contrasts = [], [], []
    for dim in DIMENSIONS:
        m = likelihood_metric(dim, pmi=True)
        for c in cases:
            p = L.condition_prompt(judge, m, c)
            prompts.append(p)
            conts.append(L.continuation(p, c.actual_output))
            contrasts.append(L.contrast_prompt(judge, m, c))
    t0 = time.perf_counter()
    given = judge.loglikelihood(prompts, conts)
    t1 = time.perf_counter()
    without = judge.loglikelihood(contrasts, conts)
    t2 = time.perf_counter()
    n = len(cases)
    out: dict[str, dict[str, list[float]]] = {s: {} for s in LL_SCORERS}
    for k, dim in enumerate(DIMENSIONS):
        g, w = given[k * n : (k + 1) * n], without[k * n : (k + 1) * n]
        out["ll-mean"][dim] = [x.mean for x in g]
        out["ll-sum"][dim] = [x.sum for x in g]
        out["ll-pmi"][dim] = [x.mean - y.mean for x, y in zip(g, w)]
    return out, {"given_article": round(t1 - t0, 1), "without_article": round(t2 - t1, 1)}


def hybrids(
    items: dict[str, dict[str, list[float | None]]],
    cases,
    seed: int = 0,
    parts: Sequence[str] = HYBRID_PARTS,
    repeats: int | None = None,
) -> dict:
    """Per dimension: the hybrid of the available parts, fitted on half the articles, tested on the rest.

    The split of seed `seed` is the headline; `repeats` random half splits (seeds 0, 1, ...) say
    how much one split's verdict depends on which articles fell on which side (default `SPLITS`).
    """
    from localjudge.calibration.hybrid_fit import fit_arrays
    from localjudge.calibration.options import CalibrationOptions
    from localjudge.errors import LocalJudgeError

    repeats = SPLITS if repeats is None else repeats
    docs = np.array([c.extra["doc_id"] for c in cases])
    out = {}
    for dim in DIMENSIONS:
        have = [p for p in parts if dim in items.get(p, {})]
        if len(have) < 2:
            continue
        x = np.array([[items[p][dim][i] for p in have] for i in range(len(cases))], dtype=float)  # (n, K)
        y = np.array([c.extra[f"human_{dim}"] for c in cases])
        keep = ~np.isnan(x).any(axis=1)
        try:
            reps = [
                fit_arrays(x[keep], y[keep], docs[keep], have, CalibrationOptions(split=0.5, seed=s))[1]
                for s in dict.fromkeys([seed, *range(repeats)])
            ]
        except LocalJudgeError as exc:
            out[dim] = {"error": str(exc)}
            continue
        rep = reps[0]
        out[dim] = {
            "parts": have,
            "chosen": rep.chosen,
            "held_out": rep.held_out,
            "best_part": rep.best_part,
            "beats_best_part": rep.beats_best_part,
            "fit_articles": rep.fit_groups,
            "held_articles": rep.held_groups,
            "cross_validation": {c.label: c.cv_spearman for c in rep.cross_validation},
        }
        if repeats > 1:
            out[dim]["splits"] = {
                "n": len(reps),
                "mean_held_out": {k: _mean_defined([r.held_out[k] for r in reps]) for k in [*have, "hybrid"]},
                "hybrid_beats_best_part": sum(bool(r.beats_best_part) for r in reps),
                "chosen": dict(Counter(r.chosen for r in reps).most_common()),
            }
    return out


def _mean_defined(xs: list[float | None]) -> float | None:
    xs = [x for x in xs if x is not None]
    return float(np.mean(xs)) if xs else None


def render_hybrids(name: str, hyb: dict) -> list[str]:
    """Markdown rows: each part alone and the hybrid, Spearman ρ on the held-back articles."""
    dims = [d for d in DIMENSIONS if d in hyb and "held_out" in hyb[d]]
    if not dims:
        return []
    parts = list(dict.fromkeys(p for d in dims for p in hyb[d]["parts"]))
    first = hyb[dims[0]]
    lines = [
        f"Hybrid of {name or ' and '.join(parts)} (fitted with 5-fold grouped cross-validation on "
        f"{first['fit_articles']} articles, "
        f"ρ on the other {first['held_articles']}; each part alone is oriented as it fits there, so a part that "
        "disagrees with the experts on the fit articles is flipped):",
        "",
        "| scorer (held-back articles) | " + " | ".join(f"{d[:4]} ρ" for d in DIMENSIONS) + " | avg ρ |",
        "|---|" + "---|" * (len(DIMENSIONS) + 1),
    ]
    for p in [*parts, "hybrid"]:
        vals = [hyb[d]["held_out"].get(p) if d in dims else None for d in DIMENSIONS]
        avg = None if any(v is None for v in vals) else float(np.mean(vals))
        lines.append(f"| {f'{name} {p}'.strip()} | " + " | ".join(cell(v) for v in vals) + f" | {cell(avg)} |")
    chosen = ", ".join(f"{d[:4]}: {hyb[d]['chosen']}" for d in dims)
    beats = ", ".join(f"{d[:4]}: {'yes' if hyb[d]['beats_best_part'] else 'no'}" for d in dims)
    lines += ["", f"Chosen by cross-validation: {chosen}. Hybrid ≥ its best part: {beats}.", ""]
    split = [d for d in dims if "splits" in hyb[d]]
    if not split:
        return lines
    n = hyb[split[0]]["splits"]["n"]
    lines += [
        f"The same over {n} random half splits of the articles (seeds 0–{n - 1}), mean held-back ρ:",
        "",
        "| scorer (mean of splits) | " + " | ".join(f"{d[:4]} ρ" for d in DIMENSIONS) + " | avg ρ |",
        "|---|" + "---|" * (len(DIMENSIONS) + 1),
    ]
    for p in [*parts, "hybrid"]:
        vals = [hyb[d]["splits"]["mean_held_out"].get(p) if d in split else None for d in DIMENSIONS]
        avg = None if any(v is None for v in vals) else float(np.mean(vals))
        lines.append(f"| {f'{name} {p}'.strip()} | " + " | ".join(cell(v) for v in vals) + f" | {cell(avg)} |")
    wins = ", ".join(f"{d[:4]}: {hyb[d]['splits']['hybrid_beats_best_part']}/{n}" for d in split)
    picks = "; ".join(
        f"{d[:4]}: " + ", ".join(f"{k} ×{v}" for k, v in hyb[d]["splits"]["chosen"].items()) for d in split
    )
    return [*lines, "", f"Hybrid ≥ its best part on the held-back half: {wins}. Chosen: {picks}.", ""]
