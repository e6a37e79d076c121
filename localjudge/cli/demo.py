"""`localjudge demo`: the judge against SummEval's experts on three bundled articles, with ROUGE-L beside it."""

from __future__ import annotations

from pathlib import Path

import click

from localjudge.cli.options import SectionedCommand, judge_options, load_from_options
from localjudge.cli.output import print_table

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
DEMO_DATA = EXAMPLES / "summeval_demo.jsonl"
DIMENSIONS = ("coherence", "consistency", "fluency", "relevance")


@click.command("demo", cls=SectionedCommand)
@click.option(
    "--dimension",
    type=click.Choice(DIMENSIONS),
    default="consistency",
    show_default=True,
    help="SummEval dimension: the experts' score compared, and the likelihood metric used.",
)
@click.option("--out", type=click.Path(dir_okay=False), default=None, help="Also write the result records here.")
@click.option("--no-progress", is_flag=True, help="Hide the progress bar.")
@judge_options
def demo_cmd(dimension, out, no_progress, **judge_kw) -> None:
    """Score 48 expert-rated summaries (3 SummEval articles) and show how well the judge agrees.

    The judge reads how likely it finds each summary after its article and an instruction naming
    the dimension (the `<dimension>_likelihood` metric); the experts' mean score and ROUGE-L
    against the reference summary are printed beside it, and the agreement of both with the
    experts (Spearman ρ per article over its 16 summaries, averaged, as in G-Eval's Table 1).
    """
    import numpy as np

    from localjudge.io.cases import load_cases
    from localjudge.kinds.likelihood.spec import LikelihoodMetric
    from localjudge.lexical import rouge_l
    from localjudge.metrics import builtin_metric
    from localjudge.runs.evaluate import evaluate
    from localjudge.stats import summary_level

    cases = load_cases(DEMO_DATA)
    metric = builtin_metric(f"{dimension}_likelihood")
    assert isinstance(metric, LikelihoodMetric)
    judge = load_from_options(**judge_kw)
    result = evaluate(cases, [metric], judge, out=out, overwrite=out is not None, progress=not no_progress)
    judged = {r.case_id: r.raw_score for r in result.records}
    expert = np.array([c.extra[f"human_{dimension}"] for c in cases])
    scores = np.array([np.nan if judged[c.id] is None else judged[c.id] for c in cases])
    rouge_scores = []
    for c in cases:
        assert c.actual_output is not None and c.expected_output is not None  # the demo data has both
        rouge_scores.append(rouge_l(c.actual_output, c.expected_output))
    rouge = np.array(rouge_scores)
    docs = np.array([c.extra["doc_id"] for c in cases])
    names = {d: f"article {k + 1}" for k, d in enumerate(dict.fromkeys(docs))}
    click.echo(
        f"\n{metric.name}: mean log-probability per token of each summary after its article and "
        f"'{metric.instruction}'\n"
    )
    header = ["article", "summary by", f"experts ({dimension}, 1-5)", "judge", "judge rank", "ROUGE-L"]
    rows = []
    for doc in names:
        idx = [i for i in range(len(cases)) if docs[i] == doc]
        rank = {i: k + 1 for k, i in enumerate(sorted(idx, key=lambda i: -scores[i]))}
        for i in sorted(idx, key=lambda i: -expert[i]):
            rows.append(
                (
                    names[doc],
                    cases[i].extra["system_id"],
                    f"{expert[i]:.2f}",
                    f"{scores[i]:.3f}",
                    f"{rank[i]}/{len(idx)}",
                    f"{rouge[i]:.3f}",
                )
            )
    print_table(header, rows)
    ok = ~np.isnan(scores)
    judge_agree = summary_level(scores[ok], expert[ok], docs[ok])
    rouge_agree = summary_level(rouge, expert, docs)
    n_docs, n = len(names), int(ok.sum())
    click.echo(
        f"\nAgreement with the experts' {dimension} scores, Spearman ρ per article over its 16 summaries, "
        f"averaged over {judge_agree.n_used} of {n_docs} articles (n = {n} summaries):"
    )
    click.echo(
        f"  {judge.info.name} ({metric.name}): ρ = {_rho(judge_agree.means.spearman)}   "
        f"per article: {_per(judge_agree)}"
    )
    click.echo(
        f"  ROUGE-L vs the reference summary:       ρ = {_rho(rouge_agree.means.spearman)}   "
        f"per article: {_per(rouge_agree)}"
    )
    click.echo(
        "\nOn all 50 articles of the SummEval dev file the same scorer reaches the figures in "
        "benchmarks/quality/summeval/summeval_results.md. Three articles are a demonstration, not a benchmark: "
        "calibrate any judge on labels of your own (`localjudge calibrate`)."
    )
    if out:
        click.echo(f"results: {out}")


def _rho(x: float | None) -> str:
    return "undefined" if x is None else f"{x:+.3f}"


def _per(res) -> str:
    return ", ".join(f"{row[0]:+.2f}" for row in res.per_group)
