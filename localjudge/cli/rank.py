"""`localjudge rank`: rank the outputs of each group from pairwise comparisons (see `localjudge.rank`)."""

from __future__ import annotations

import json

import click

from localjudge.cli.flags import settings_flags
from localjudge.cli.options import (
    CASE_FILE_FLAGS,
    SectionedCommand,
    judge_inputs,
    judge_options,
    load_from_options,
    run_options,
)
from localjudge.cli.output import print_table
from localjudge.cli.reading import scoring_options
from localjudge.rank.options import RankOptions

FOLLOWS_POSITION = 0.5
"""Above this share of comparisons whose preference flips with the order shown, `rank` warns: the ranks follow
position (the 0.5B judge flipped 96% of SummEval summary pairs, benchmarks/quality/rank/)."""

_RANK_HELP = {
    "group": "Case field grouping the outputs ranked together (e.g. doc_id).",
    "budget": "Comparisons per output: a group of n gets ceil(budget*n/2) pairs, each judged in both orders.",
    "system": "Case field naming each output's system: adds a system-level ranking.",
    "level": "Coverage of every interval (the outputs' ranks and the systems').",
    "seed": "Seed of the first round, intervals, bootstrap.",
}


@click.command("rank", cls=SectionedCommand)
@click.argument("cases_file", metavar="CASES", type=click.Path(dir_okay=False))
@click.option("--metric", "metric_name", required=True, help="A pairwise metric: built-in name or metric file.")
@settings_flags(RankOptions, "ranking", help_text=_RANK_HELP)
@run_options(
    *CASE_FILE_FLAGS,
    out_required=True,
    out="Write one record per output here; the comparisons go to FILE's stem + .comparisons.jsonl.",
    resume="Continue the comparisons already made (a larger --budget only adds comparisons).",
    skip_invalid="Skip malformed rows of CASES, listing each one.",
)
@scoring_options("truncate", "min_valid_mass")
@click.option("--json", "as_json", is_flag=True, help="Print a machine-readable summary.")
@judge_options
def rank_cmd(
    cases_file, metric_name, ranking, run, scoring, as_json, **judge_kw,
) -> None:  # fmt: skip
    """Rank the outputs in CASES within each --group from pairwise comparisons chosen where the ranking is least
    certain (a Bradley-Terry fit on the judge's probabilities, both presentation orders)."""
    from localjudge.io.cases import load_cases
    from localjudge.io.files import is_file, refuse_overwriting
    from localjudge.metrics import resolve_metric
    from localjudge.rank.run import comparisons_path, rank_outputs

    out = str(run.out)
    refuse_overwriting(
        [out, str(comparisons_path(out))],
        [
            ("data file", cases_file),
            ("metric file", metric_name if is_file(metric_name) else None),
            *judge_inputs(judge_kw["judge_name"], judge_kw["registry"]),
        ],
    )
    run.check_output()
    metric = resolve_metric(metric_name)
    skipped: list[str] | None = [] if run.skip_invalid else None
    try:
        cases = load_cases(cases_file, skipped)
    finally:
        for msg in skipped or []:
            click.echo(f"skipped: {msg}", err=True)
    judge = load_from_options(**judge_kw, progress=run.progress)
    result = rank_outputs(cases, metric, judge, ranking, run=run, scoring=scoring)
    if as_json:
        click.echo(json.dumps({"judge": judge.info.model_dump(), "out": out, **result.summary.model_dump()}, indent=1))
        return
    s = result.summary
    click.echo(
        f"{s.outputs} outputs in {s.groups} groups: {s.scored} ranked; {s.comparisons} comparisons "
        f"({s.comparisons_unscored} unscored), {s.comparisons_per_output or 0:.2f} per output (budget {s.budget})"
    )
    for reason, count in s.unscored_reasons.items():
        click.echo(f"unscored: {count} outputs: {reason}")
    if s.flipped_share is not None and s.flipped_share > FOLLOWS_POSITION:
        click.echo(
            f"warning: in {s.flipped_share:.0%} of comparisons the judge's preference flipped with the order the "
            "outputs were shown in: it follows position more than content, and the ranks say little (a larger "
            "judge, or G-Eval or likelihood scoring, may read this metric better)",
            err=True,
        )
    if s.systems:
        click.echo(f"\nSystems by mean within-group score ({ranking.level:.0%} intervals, groups resampled):")
        rows = [
            (
                r.rank,
                f"{r.rank_low}-{r.rank_high}",
                r.system,
                f"{r.mean_score:.3f}",
                _interval(r.ci_low, r.ci_high),
                r.outputs,
            )
            for r in s.systems
        ]
        print_table(["rank", "interval", "system", "score", "interval", "outputs"], rows)
    click.echo(f"\nranks: {out}\ncomparisons: {comparisons_path(out)}")


def _interval(low: float | None, high: float | None) -> str:
    return "-" if low is None or high is None else f"[{low:.3f}, {high:.3f}]"
