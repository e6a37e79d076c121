"""A bias study on disk: what was judged and by whom, both reports, and the files they go to.

`analyze_judgments` turns the judges' judgments into a `BiasStudy` (pointwise and pairwise
`BiasReport`s plus everything needed to reproduce them); `analyze_records` does the same for
judgment records read back from disk (`localjudge bias analyse`, no model loaded);
`write_study` writes report.json, report.md, the figures (heatmap.png, win_rates.png,
position.png) and the input records of the analysis to a folder.

Examples:
    >>> study = analyze_judgments(judgments, responses, "responses.jsonl", metric, pairwise_metric)  # doctest: +SKIP
    >>> write_study(study, judgments, "bias_out")  # doctest: +SKIP
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from localjudge.bias.analysis import analyze_models, analyze_pairwise, analyze_pointwise
from localjudge.bias.judging import Judgments
from localjudge.bias.markdown import format_bias_report
from localjudge.bias.options import BiasOptions
from localjudge.bias.panels import BiasPanel
from localjudge.bias.plots import write_heatmap, write_position_panel, write_win_rates
from localjudge.bias.records import PairwiseRecord, PointwiseRecord
from localjudge.bias.results import BiasReport
from localjudge.errors import ConfigError, clip
from localjudge.io.jsonl import write_rows
from localjudge.judges.registry import UNKNOWN_FAMILY
from localjudge.kinds.geval.spec import GEvalMetric
from localjudge.kinds.pairwise import PairwiseMetric
from localjudge.runs.generation import ResponseRecord
from localjudge.version import __version__


class Generator(BaseModel):
    """A model whose responses were judged."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="Registry name of the generator.")
    family: str = Field(description="Its model family.")
    n_responses: int = Field(description="Responses it contributed.")
    info: dict[str, Any] = Field(description="Source, provenance, dtype and device it generated with.")


class BiasStudy(BaseModel):
    """Everything a bias run found, with what is needed to reproduce it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    responses_file: str = Field(description="The responses file judged.")
    responses_sha256: str = Field(description="SHA-256 of that file's bytes.")
    n_items: int = Field(description="Distinct prompts.")
    generators: list[Generator] = Field(description="Models whose responses were judged.")
    judges: list[dict[str, Any]] = Field(description="Each judge's name, family, provenance, dtype, device.")
    metric: dict[str, Any] | None = Field(description="The pointwise metric's full definition, or null.")
    pairwise_metric: dict[str, Any] | None = Field(description="The pairwise metric's definition, or null.")
    length_unit: Literal["characters"] = Field(default="characters", description="Unit of response lengths.")
    human_field: str | None = Field(default=None, description="Prompt field holding human scores, or null.")
    pointwise: BiasReport | None = Field(description="Analysis of the pointwise scores, or null.")
    pairwise: BiasReport | None = Field(description="Analysis of the own-vs-other pairs, or null.")
    models: BiasReport | None = Field(
        default=None, description="Model-level preferences (each judge for itself and its family's models)."
    )
    judgments_files: list[str] = Field(
        default_factory=list, description="Judgment files re-analysed (`--judgments`); empty when the judges ran."
    )
    notes: list[str] = Field(default_factory=list, description="Analyses skipped for lack of data, and why.")
    localjudge_version: str = Field(default=__version__, description="Version of localjudge.")


class StoredJudgments(NamedTuple):
    """Judgment records without a loaded judge, e.g. read back from a finished study."""

    pointwise: tuple[PointwiseRecord, ...]
    pairwise: tuple[PairwiseRecord, ...]


def analyze_judgments(
    judgments: Sequence[Judgments],
    responses: Sequence[ResponseRecord],
    responses_file: str | Path,
    metric: GEvalMetric | None,
    pairwise_metric: PairwiseMetric | None,
    *,
    human_field: str | None = None,
    settings: BiasOptions | None = None,
    panels: Sequence[BiasPanel] = (),
) -> BiasStudy:
    """Runs the pointwise and pairwise analyses on every judge's judgments (and on `panels` of them)."""
    return analyze_records(
        [r for v in judgments for r in v.pointwise],
        [r for v in judgments for r in v.pairwise],
        responses,
        responses_file,
        metric,
        pairwise_metric,
        judges=[v.judge.model_dump() for v in judgments],
        human_field=human_field,
        settings=settings,
        panels=panels,
    )


def analyze_records(
    point: Sequence[PointwiseRecord],
    pair: Sequence[PairwiseRecord],
    responses: Sequence[ResponseRecord],
    responses_file: str | Path,
    metric: GEvalMetric | None,
    pairwise_metric: PairwiseMetric | None,
    *,
    judges: Sequence[dict[str, Any]],
    human_field: str | None = None,
    settings: BiasOptions | None = None,
    judgments_files: Sequence[str | Path] = (),
    panels: Sequence[BiasPanel] = (),
) -> BiasStudy:
    """Runs the pointwise and pairwise analyses on judgment records.

    Args:
        point: Pointwise records of every judge.
        pair: Pairwise records of every judge.
        responses: The responses judged (generators, their families and info).
        responses_file: Where they were read from (recorded with its SHA-256).
        metric: The pointwise metric, or None (also when not known).
        pairwise_metric: The pairwise metric, or None.
        judges: Each judge's info: at least name and family.
        human_field: The prompts' field the human scores came from, if any.
        settings: Resampling settings.
        judgments_files: The files the records were read from, if any.
        panels: Panels of the judges, measured in the model-level report (`bias.panels`).

    Raises:
        ConfigError: A judge or generator has the family "unknown": self-preference would
            compare "unknown" with "unknown" as one family.
    """
    settings = settings or BiasOptions()
    families = {j["name"]: j["family"] for j in judges} | {r.generator: r.generator_family for r in responses}
    vague = sorted(name for name, family in families.items() if family == UNKNOWN_FAMILY)
    if vague:
        raise ConfigError(
            f"{clip(vague[0])} has the model family {UNKNOWN_FAMILY!r}, so self-preference cannot "
            f"be told from chance; pass --family {vague[0]}=FAMILY"
        )
    no_ppl = sorted({r.judge for r in point} - {r.judge for r in point if r.judge_logppl is not None})
    notes = (
        [f"perplexity covariate skipped for {', '.join(no_ppl)}: no judge_logppl in the judgments"] if no_ppl else []
    )
    gens: dict[str, list[ResponseRecord]] = {}
    for r in responses:
        gens.setdefault(r.generator, []).append(r)
    path = Path(responses_file)
    return BiasStudy(
        responses_file=str(responses_file),
        responses_sha256=hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "",
        n_items=len({r.id for r in responses}),
        generators=[
            Generator(name=g, family=rs[0].generator_family, n_responses=len(rs), info=rs[0].generator_info)
            for g, rs in sorted(gens.items())
        ],
        judges=[dict(j) for j in judges],
        metric=metric.model_dump(mode="json") if metric is not None else None,
        pairwise_metric=pairwise_metric.model_dump(mode="json") if pairwise_metric is not None else None,
        human_field=human_field,
        pointwise=analyze_pointwise(point, settings) if point else None,
        pairwise=analyze_pairwise(pair, settings) if pair else None,
        models=analyze_models(point, pair, settings, panels) if point or pair else None,
        judgments_files=[str(p) for p in judgments_files],
        notes=notes,
    )


def format_study(study: BiasStudy) -> str:
    """The study as markdown: what was judged, then each report."""
    gens = ", ".join(f"{g.name} ({g.family}, {g.n_responses} responses)" for g in study.generators)
    judges = ", ".join(
        f"{j['name']} ({', '.join(str(j[k]) for k in ('family', 'dtype', 'device') if k in j)})" for j in study.judges
    )
    named = "not recorded" if study.judgments_files else "–"
    out = [
        "# Bias study",
        "",
        f"- Responses: `{study.responses_file}` (sha256 {study.responses_sha256[:12]}), "
        f"{study.n_items} prompts; generators: {gens}.",
        f"- Judges: {judges}.",
        f"- Pointwise metric: {study.metric['name'] if study.metric else named}; pairwise metric: "
        f"{study.pairwise_metric['name'] if study.pairwise_metric else named} (both orders).",
        f"- Response lengths in {study.length_unit}; judge_logppl is the judge's mean NLL per token "
        "of the response given the prompt it would itself answer.",
        f"- localjudge {study.localjudge_version}.",
        *(
            [f"- Analysis only, of the judgments in {', '.join(f'`{p}`' for p in study.judgments_files)}."]
            if study.judgments_files
            else []
        ),
        *[f"- Note: {note}." for note in study.notes],
        "",
    ]
    for report in (study.pointwise, study.pairwise, study.models):
        if report is not None:
            # one heading level down: each report is a section of this document
            out += ["#" + line if line.startswith("#") else line for line in format_bias_report(report).splitlines()]
            out.append("")
    return "\n".join(out).rstrip() + "\n"


def summary_lines(study: BiasStudy) -> list[str]:
    """The plain-language summary of each report, prefixed by its kind, then the notes."""
    return (
        [f"[{r.kind}] {line}" for r in (study.pointwise, study.pairwise) if r is not None for line in r.summary]
        + [f"[models] {line}" for line in (study.models.summary if study.models else [])]
        + [f"[note] {note}" for note in study.notes]
    )


STUDY_FILES = (
    "report.json",
    "report.md",
    "heatmap.png",
    "win_rates.png",
    "position.png",
    "pointwise_records.jsonl",
    "pairwise_records.jsonl",
)
"""The files `write_study` may write into its folder."""


def write_study(
    study: BiasStudy, judgments: Sequence[Judgments | StoredJudgments], out_dir: str | Path, *, figures: bool = True
) -> dict[str, Path]:
    """Writes report.json, report.md, the figures and the analysis' input records.

    heatmap.png (mean scores) needs pointwise judgments; win_rates.png and position.png (one
    panel per judge) need pairwise ones. `figures=False` writes none of them (about 0.3 s each
    to draw), leaving any already in the folder as they are.

    Returns:
        The files written, by role.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files = {"json": out / "report.json", "markdown": out / "report.md"}
    files["json"].write_text(study.model_dump_json(indent=1) + "\n", encoding="utf-8")
    files["markdown"].write_text(format_study(study), encoding="utf-8")
    if figures and study.pointwise is not None:
        files["heatmap"] = write_heatmap(study.pointwise, out / "heatmap.png")
    if figures and study.pairwise is not None and study.models is not None:
        files["win_rates"] = write_win_rates(study.models, out / "win_rates.png")
        files["position"] = write_position_panel(study.pairwise, study.models, out / "position.png")
    for kind in ("pointwise", "pairwise"):
        rows = [r for v in judgments for r in getattr(v, kind)]
        if rows:
            files[kind] = out / f"{kind}_records.jsonl"
            # escaped to ASCII as ever, so a re-analysis (--judgments) writes a study's files byte for byte
            write_rows(files[kind], rows, ensure_ascii=True, allow_nan=True)
    return files
