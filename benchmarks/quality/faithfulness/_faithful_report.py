"""Markdown of the faithfulness benchmarks' results (no judge, no torch)."""

from __future__ import annotations

from benchmarks.lib.common import cell

DOMAINS = ("ectsum", "qmsumm", "sales_call", "sales_email", "scitldr")
TIMING_OF = {
    "ll": ("given",),
    "pmi": ("given", "nodoc"),
    "spmi": ("given", "shuffled"),
    "lead": ("given", "lead"),
    "entail": ("entail",),
    "entail_sent": ("entail_sent",),
}
"""Readings each scorer family needs (their wall seconds add up to the scorer's)."""

METRIC_OF = {
    "ll:mean": "`consistency_likelihood`",
    "pmi:mean": "`consistency_likelihood` + `pmi: {without: [input]}`",
    "pmi:stmin": "`consistency_tokens`",
    "entail": "`consistency_entailment`",
    "entail_sent": "`consistency_entailment` + `unit: sentence`",
}


def _wall(timing: dict, scorer: str) -> str:
    fam = scorer.split(":")[0]
    conds = TIMING_OF.get(fam)
    if not conds or not all(c in timing for c in conds):
        return "–"
    return f"{sum(timing[c] for c in conds):.0f}"


def render_summedits(res: dict) -> str:
    m = res["machine"]
    lines = [
        "# SummEdits: consistency of summaries with their documents, token-level signals",
        "",
        "Made by `benchmarks/quality/faithfulness/summedits.py` (method in its docstring; "
        "scorers in `_faithful_scores.py`). "
        f"Machine: {m['cpu']}, {m['cores']} cores, shared with other jobs; each judge read with "
        f"{m.get('torch_threads')} torch thread(s), fp32, batch-invariant engine, prefix reuse on.",
        "",
        "Commands: `.venv/bin/python -m benchmarks.quality.faithfulness.summedits --judge smollm2-135m gemma3-270m` "
        "(readings of all "
        "94 documents, then scores and this report); `--judge qwen2.5-coder-0.5b qwen2.5-coder-1.5b --docs 2` "
        "(the larger judges on the first two documents of each domain, and their size contrast); `--report` "
        "rebuilds it from `summedits_scores/`.",
        "",
        "Figures: AUC = ROC AUC per domain, averaged over the five; within = AUC inside each document, averaged; "
        "BA = balanced accuracy with the threshold fitted on the other four domains (leave-one-domain-out), "
        "per domain and averaged. Reference points (Laban et al., 2023, on all ten domains): a 7B general model "
        "zero-shot 0.58, the best non-LLM detector 0.655 balanced accuracy.",
        "",
    ]
    for judge, r in res["judges"].items():
        lines += [f"## {judge}", ""]
        n_read = max((f["n"] for s, f in r["figures"].items() if s != "lexical"), default=0)
        if r["figures"] and n_read < r.get("items", n_read):
            lines += [
                f"Read {n_read} of the {r['items']} summaries, some scorers fewer (the `scored` column); the judges "
                "are compared on the same summaries below.",
                "",
            ]
        lines += [
            "| scorer | as a metric | scored | AUC | within | BA | "
            + " | ".join(f"BA {d}" for d in DOMAINS)
            + " | wall s |",
            "|---|---|---|---|---|---|" + "---|" * len(DOMAINS) + "---|",
        ]
        for s, f in r["figures"].items():
            doms = [cell(f["domains"].get(d, {}).get("lodo_bal_acc")) for d in DOMAINS]
            lines.append(
                f"| {s} | {METRIC_OF.get(s, '')} | {f['scored']:.0%} | {cell(f['auc'])} | {cell(f['within_auc'])} | "
                f"{cell(f['lodo_bal_acc'])} | " + " | ".join(doms) + f" | {_wall(r['timing'], s)} |"
            )
        n = r["nested"]
        lines += [
            "",
            f"Scorer chosen on four domains (inner leave-one-domain-out among the {n['candidates']} candidates of "
            "`summedits.CANDIDATES` this judge has), tested on the fifth: "
            + ", ".join(f"{d} {v['chosen']} {cell(v['bal_acc'])}" for d, v in n["domains"].items())
            + f"; mean balanced accuracy **{cell(n['bal_acc'])}**.",
            "",
        ]
        for key, title in (("verdict_lodo", "Verdict fitted on four domains, applied to the fifth"),):
            v = r.get(key)
            if v:
                lines += [
                    f"{title} (logistic on {', '.join(v['components'])}; threshold on out-of-domain predictions): "
                    + ", ".join(
                        f"{d} acc {cell(x['accuracy'])} / BA {cell(x['bal_acc'])} / ECE {cell(x['ece'])}"
                        for d, x in v["domains"].items()
                    )
                    + f"; mean accuracy {cell(v['accuracy'])}, BA {cell(v['bal_acc'])}, ECE {cell(v['ece'])}.",
                    "",
                ]
        v = r.get("verdict_documents")
        if v:
            h = v["held_out"]
            ci = h.get("accuracy_ci")
            lines += [
                f"Verdict as `calibrate fit-verdict --metrics {','.join(v['components'])} --group doc_id` fits it "
                "(half the "
                f"documents of all five domains to fit, half held back): kept {v['chosen']}, pass at "
                f"P(acceptable) ≥ {v['threshold']:.3f}; held back ({h['items']} summaries, "
                f"{h['positive_rate']:.0%} consistent): accuracy {h['accuracy']:.3f}"
                + (f" (95% {ci[0]:.2f}–{ci[1]:.2f})" if ci else "")
                + f", balanced accuracy {cell(h['balanced_accuracy'])}, AUC {cell(h['auc'])}, ECE {h['ece']:.3f}.",
                "",
            ]
        if r.get("by_edit_type"):
            kinds = sorted({k for v in r["by_edit_type"].values() for k in v})
            lines += [
                "Within-document AUC by kind of edit (consistent summaries against those with that edit):",
                "",
                "| scorer | " + " | ".join(k.replace("_", " ") for k in kinds) + " |",
                "|---|" + "---|" * len(kinds),
            ]
            for s, v in r["by_edit_type"].items():
                lines.append(f"| {s} | " + " | ".join(cell(v.get(k)) for k in kinds) + " |")
            lines.append("")
        if r.get("timing"):
            lines += [
                "Wall seconds per reading: " + ", ".join(f"{k} {v:.0f}" for k, v in r["timing"].items()) + ".",
                "",
            ]
        if r.get("examples"):
            lines += [
                "What a `consistency_tokens` record names (its lowest tokens by PMI, nats, and their words), on the "
                "first inconsistent summaries of each domain:",
                "",
            ]
            for e in r["examples"][:10]:
                worst = (
                    "; ".join(f"“{t}” in “{w}” {v:+.2f}" for t, w, v in e["worst"]) or "nothing read (no salient word)"
                )
                lines.append(f"- {e['domain']} `{e['id']}` ({', '.join(e['edits']) or 'no edit type'}): {worst}")
            lines.append("")
    same = res.get("same_items")
    if same:
        lines += [
            f"## The judges on the same summaries ({same['n']} summaries of {same['documents']} documents)",
            "",
            "The judges above did not read the same summaries; here every scorer is on those they all read "
            "(`both`: the two small judges' readings averaged), so the larger judges' figures stand beside the "
            "smaller ones' on the same subset.",
            "",
            "| judge | scorer | AUC | within | BA | " + " | ".join(f"BA {d}" for d in DOMAINS) + " |",
            "|---|---|---|---|---|" + "---|" * len(DOMAINS),
        ]
        for judge, figs in same["judges"].items():
            for s, f in figs.items():
                doms = [cell(f["domains"].get(d, {}).get("lodo_bal_acc")) for d in DOMAINS]
                lines.append(
                    f"| {judge} | {s} | {cell(f['auc'])} | {cell(f['within_auc'])} | {cell(f['lodo_bal_acc'])} | "
                    + " | ".join(doms)
                    + " |"
                )
        lines.append("")
        for judge, n in same.get("nested", {}).items():
            lines.append(
                f"- {judge}: scorer chosen on four domains among its {n['candidates']} candidates, tested on the "
                "fifth: "
                + ", ".join(f"{d} {v['chosen']} {cell(v['bal_acc'])}" for d, v in n["domains"].items())
                + f"; mean balanced accuracy **{cell(n['bal_acc'])}**."
            )
        lines.append("")
    return "\n".join(lines)
