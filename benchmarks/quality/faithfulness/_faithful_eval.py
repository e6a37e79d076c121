"""The figures of the faithfulness benchmarks: AUCs, leave-one-domain-out thresholds, nested choice, verdicts.

Pure functions over {scorer: {item id: value}} and the items; no judge, no torch.

- ROC AUC per domain (pooled over its documents) and within-document AUC (per document, averaged):
  the first needs scores comparable across documents, the second only within one;
- leave-one-domain-out balanced accuracy (the SummEdits protocol): the threshold maximising balanced
  accuracy on four domains is applied to the fifth;
- nested choice: for each held-out domain the scorer is chosen by leave-one-domain-out on the
  other four alone, so the figure is what choosing a scorer on dev data earns on a new domain;
- verdicts: `localjudge.calibration.verdict` on half the documents (held-back accuracy, ECE), and
  a logistic model fitted on four domains and applied to the fifth (calibration under domain shift).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from benchmarks.quality.faithfulness._faithful_data import Item
from localjudge.calibration.logistic import fit_logistic
from localjudge.stats.classification import (
    accuracy,
    balanced_accuracy,
    best_threshold,
    ece,
    roc_auc,
    within_group_auc,
)


def arrays(values: dict[str, float], items: Sequence[Item]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(x, label, doc, domain) of the items that have a value."""
    its = [it for it in items if it.id in values]
    return (
        np.array([values[it.id] for it in its]),
        np.array([it.label for it in its]),
        np.array([it.doc_id for it in its]),
        np.array([it.domain for it in its]),
    )


def lodo(x: np.ndarray, y: np.ndarray, dom: np.ndarray) -> dict[str, float | None]:
    """Balanced accuracy on each domain with the threshold fitted on the other domains."""
    out: dict[str, float | None] = {}
    for d in np.unique(dom):
        train, test = dom != d, dom == d
        if len(np.unique(y[train])) < 2:
            out[str(d)] = None  # nothing to fit a threshold on (readings of one domain only)
            continue
        t = best_threshold(x[train], y[train])
        out[str(d)] = balanced_accuracy(x[test] >= t, y[test])
    return out


def _mean(xs) -> float | None:
    xs = [x for x in xs if x is not None]
    return float(np.mean(xs)) if xs else None


def scorer_figures(values: dict[str, float], items: Sequence[Item]) -> dict:
    """Per-domain and mean ROC AUC, within-document AUC and leave-one-domain-out balanced accuracy."""
    x, y, doc, dom = arrays(values, items)
    out: dict = {"n": len(x), "scored": len(x) / len(items), "domains": {}}
    ba = lodo(x, y, dom) if len(np.unique(dom)) > 1 else {}
    for d in np.unique(dom):
        sel = dom == d
        out["domains"][str(d)] = {
            "auc": roc_auc(x[sel], y[sel]),
            "within_auc": within_group_auc(x[sel], y[sel], doc[sel]),
            "lodo_bal_acc": ba.get(str(d)),
        }
    for key in ("auc", "within_auc", "lodo_bal_acc"):
        out[key] = _mean(v[key] for v in out["domains"].values())
    return out


def nested_choice(scores: dict[str, dict[str, float]], candidates: Sequence[str], items: Sequence[Item]) -> dict:
    """For each domain: the candidate with the best leave-one-domain-out balanced accuracy on the others, and its
    balanced accuracy on this domain with the threshold fitted on the others."""
    domains = sorted({it.domain for it in items})
    out: dict = {"domains": {}, "candidates": sum(c in scores for c in candidates)}
    for d in domains:
        inner = [it for it in items if it.domain != d]
        best, best_ba = None, -1.0
        for c in candidates:
            if c not in scores:
                continue
            x, y, _, dom = arrays(scores[c], inner)
            ba = _mean(lodo(x, y, dom).values())
            if ba is not None and ba > best_ba:
                best, best_ba = c, ba
        assert best is not None, "no candidate has readings"
        x, y, _, dom = arrays(scores[best], items)
        t = best_threshold(x[dom != d], y[dom != d])
        out["domains"][d] = {
            "chosen": best,
            "inner_bal_acc": best_ba,
            "bal_acc": balanced_accuracy(x[dom == d] >= t, y[dom == d]),
            "scored": int((dom == d).sum()),
        }
    out["bal_acc"] = _mean(v["bal_acc"] for v in out["domains"].values())
    return out


def lodo_verdict(scores: dict[str, dict[str, float]], names: Sequence[str], items: Sequence[Item]) -> dict:
    """A logistic verdict fitted on four domains (threshold on out-of-domain predictions of those four, by inner
    leave-one-domain-out), applied to the fifth: accuracy, balanced accuracy and ECE per held-out domain."""
    its = [it for it in items if all(it.id in scores[n] for n in names)]
    x = np.array([[scores[n][it.id] for n in names] for it in its])  # (n, K)
    y = np.array([it.label for it in its])
    dom = np.array([it.domain for it in its])
    out: dict = {"components": list(names), "domains": {}}
    for d in np.unique(dom):
        train = dom != d
        oof = np.empty(int(train.sum()))
        xt, yt, dt = x[train], y[train], dom[train]
        for e in np.unique(dt):  # out-of-domain predictions inside the training domains
            oof[dt == e] = fit_logistic(xt[dt != e], yt[dt != e]).prob(xt[dt == e])
        t = best_threshold(oof, yt)
        p = fit_logistic(xt, yt).prob(x[dom == d])
        yd = y[dom == d]
        out["domains"][str(d)] = {
            "threshold": t,
            "accuracy": accuracy(p >= t, yd),
            "bal_acc": balanced_accuracy(p >= t, yd),
            "ece": ece(p, yd),
            "positive_rate": float(yd.mean()),
        }
    for key in ("accuracy", "bal_acc", "ece"):
        out[key] = _mean(v[key] for v in out["domains"].values())
    return out


def document_verdict(scores: dict[str, dict[str, float]], names: Sequence[str], items: Sequence[Item], seed: int = 0):
    """`fit_verdict_arrays` on the items (half the documents to fit, half held back): its fit report."""
    from localjudge.calibration.options import CalibrationOptions
    from localjudge.calibration.verdict import fit_verdict_arrays

    its = [it for it in items if all(it.id in scores[n] for n in names)]
    x = np.array([[scores[n][it.id] for n in names] for it in its])
    y = np.array([it.label for it in its])
    g = np.array([it.doc_id for it in its])
    _, fit = fit_verdict_arrays(x, y, g, list(names), CalibrationOptions(seed=seed))
    return fit.model_dump(mode="json")


def by_edit_type(values: dict[str, float], items: Sequence[Item]) -> dict[str, float | None]:
    """Within-document AUC of the consistent summaries against those with each kind of edit (all domains)."""
    kinds = sorted({e for it in items for e in it.edits})
    out = {}
    for kind in kinds:
        sel = [it for it in items if it.id in values and (it.label == 1 or kind in it.edits)]
        x, y, doc, _ = arrays(values, sel)
        out[kind] = within_group_auc(x, y, doc)
    return out
