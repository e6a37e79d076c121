"""`eval` with several --judge: the judges as a panel (see `localjudge.panel`), and what it prints."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Literal

import click

from localjudge.cli.flags import Flag, settings_flags
from localjudge.cli.output import print_table
from localjudge.panel.options import PanelOptions

PANEL_HELP = (
    "How several --judge are pooled on every case: mean (of the members' expected scores; a comparison's "
    "P(output 1 better)), agreement (weights from each member's correlation with the other members' mean, no "
    "labels), or a weights FILE fitted by `calibrate panel-weights` [default: mean]."
)
panel_option = click.option("--panel", "panel", default=None, metavar="[mean|agreement|FILE]", help=PANEL_HELP)
quorum_option = settings_flags(
    PanelOptions,
    "pooling",
    ["quorum"],
    {
        "quorum": "With several --judge: a case some members leave unscored (their answer not a valid score, or too "
        "long for them) is pooled from the members that scored it when they are N or more (N: 1 or more), their "
        "weights renormalised [default: every member must score it]."
    },
    {"quorum": Flag(metavar="N")},
)
"""--quorum N, passed to the command as a `PanelOptions` named `pooling` (--panel is read by `panel_settings`)."""


def panel_settings(panel: str | None, quorum: int | None = None):
    """The `PanelOptions` of --panel and --quorum (read before any judge loads)."""
    from localjudge.panel.records import load_panel_weights

    if panel is None or panel == "mean":
        return PanelOptions(method="mean", quorum=quorum)
    if panel == "agreement":
        return PanelOptions(method="agreement", quorum=quorum)
    return PanelOptions(method="fitted", weights=load_panel_weights(panel), quorum=quorum)


def score_panel_options(panel: str | None, quorum: int | None):
    """The `PanelOptions` of `score`'s --panel and --quorum: mean or agreement (fitted weights are per metric)."""
    from localjudge.errors import ConfigError

    if panel not in (None, "mean", "agreement"):
        raise ConfigError("score pools with --panel mean or agreement; weights fitted on labels are per metric (eval)")
    return PanelOptions(method="agreement" if panel == "agreement" else "mean", quorum=quorum)


def run_panel(cases, metrics, names: Sequence[str], panel, run, scoring, judge_kw, as_json: bool, out) -> None:
    """Loads every member, judges the cases as a panel, prints the pooled records and summaries."""
    from localjudge.cli.options import judge_inputs, load_from_options
    from localjudge.errors import ConfigError, repeated
    from localjudge.io.files import refuse_overwriting
    from localjudge.panel.run import evaluate_panel, member_path

    if len(set(names)) != len(names):
        raise ConfigError(f"--judge {repeated(names)} given twice; give each panel member once")
    if out:
        inputs = [i for n in names for i in judge_inputs(n, judge_kw["registry"])]
        refuse_overwriting([out], inputs)  # the members' files are refused once their names are known
    judges = [load_from_options(**{**judge_kw, "judge_name": n}, progress=run.progress) for n in names]
    if out:
        refuse_overwriting([member_path(out, j.info.name) for j in judges], inputs)
    result = evaluate_panel(cases, metrics, judges, panel, run=run, scoring=scoring)
    if as_json:
        click.echo(
            json.dumps(
                {
                    "judges": [j.info.model_dump() for j in judges],
                    "out": out,
                    "summaries": [s.model_dump() for s in result.summaries],
                },
                indent=1,
            )
        )
        return
    rows = []
    for r in result.records:
        score = "unscored" if r.score is None else f"{r.score:.3f}"
        members = " ".join("-" if m.score is None else f"{m.score:.2f}" for m in r.members)
        rows.append((r.case_id, r.metric, score, members, "" if r.spread is None else f"{r.spread:.2f}"))
    print_table(["case", "metric", "panel", "members", "spread"], rows)
    for s in result.summaries:
        click.echo(f"\n{s.metric} ({s.method} of {len(s.members)} judges): {s.scored} of {s.n} scored, mean "
                   f"{'-' if s.mean_score is None else f'{s.mean_score:.3f}'}; members span more than {s.spread:g} on "
                   f"{s.disagreed} cases")  # fmt: skip
        print_table(
            ["member", "weight", "agreement", "mean score", "scored"],
            [
                (
                    m.judge,
                    f"{m.weight:.3f}",
                    "-" if m.agreement is None else f"{m.agreement:.2f}",
                    "-" if m.mean_score is None else f"{m.mean_score:.3f}",
                    m.scored,
                )
                for m in s.members
            ],
        )
        for reason, count in s.unscored_reasons.items():
            click.echo(f"unscored: {count}: {reason}")
        for note in s.notes:
            click.echo(f"Note on {s.metric}: {note}")
    if out:
        click.echo(f"\nresults: {out} (each member's: {', '.join(str(member_path(out, n)) for n in names)})")


def score_panel(prompts: list[str], scale, threshold: float, names: Sequence[str], panel, judge_kw, progress) -> None:
    """`score` with several --judge: every member's distribution of each prompt, and their pooled score.

    A member's score is its normalised expected score (0–1), or with --labels its probability
    of the first label; the weights are chosen over the prompts given (`panel`: the `PanelOptions` of
    `score_panel_options`, mean or agreement, and the quorum).
    """
    import numpy as np

    from localjudge.cli.options import load_from_options
    from localjudge.cli.reading import read_distributions
    from localjudge.errors import ConfigError, repeated
    from localjudge.panel.pool import choose_weights
    from localjudge.panel.weights import case_weights, pool
    from localjudge.stats.numbers import finite, finite_json

    if len(set(names)) != len(names):
        raise ConfigError(f"--judge {repeated(names)} given twice; give each panel member once")
    method: Literal["mean", "agreement"] = "agreement" if panel.method == "agreement" else "mean"
    quorum = panel.quorum
    readings = []
    for name in names:
        judge = load_from_options(name, **judge_kw, progress=progress)
        readings.append((judge.info.name, read_distributions(judge, prompts, scale, threshold)))
        del judge  # one member in memory at a time

    def member_score(d) -> float:
        if not d.scored:
            return float("nan")
        return d.probs[scale.labels[0]] if scale.labels is not None else d.normalized

    scores = np.array([[member_score(d) for d in dists] for _, dists in readings]).T  # (prompts, members)
    chosen = choose_weights(scores, method)
    if chosen.equal_because:
        click.echo(f"Note: {method} weights could not be learned ({chosen.equal_because}); equal weights", err=True)
    pooled = pool(scores, chosen.weights, quorum)  # (prompts,) NaN where fewer than the quorum scored
    for k, p in enumerate(prompts):
        w = case_weights(np.isfinite(scores[k]), chosen.weights, quorum)
        members = [
            {"judge": n, "weight": float(wi), **finite_json(dists[k].model_dump(mode="json"))}
            for (n, dists), wi in zip(readings, chosen.weights if w is None else w, strict=True)
        ]
        record = {"prompt": p[-60:], "min_valid_mass": threshold, "panel": method, "score": finite(pooled[k])}
        click.echo(json.dumps(record | {"members": members}, allow_nan=False))
