"""A whole bias study, as `localjudge generate` and `localjudge bias` run it: generate, judge, analyse.

`generate` answers the prompts with each model in turn into one responses file.

`judge_and_analyse` checks everything that needs no model (metrics, responses, families, files it
would overwrite), then runs the judges one at a time (`bias.judging.run_bias`) and analyses their
judgments; `analyse_only` reads the judgments of an earlier run from disk and analyses them again,
importing no torch and loading no model. Both return a `Study`, which `bias.study.write_study`
writes to a folder.

Examples:
    >>> study = judge_and_analyse("responses.jsonl", ["smollm2-135m", "gemma3-270m"], "bias_out")  # doctest: +SKIP
    >>> write_study(study.study, study.judgments, "bias_out")  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple, cast

from localjudge.bias.judging import Judgments
from localjudge.bias.options import BiasOptions
from localjudge.bias.panels import BiasPanel, check_panels
from localjudge.bias.study import BiasStudy, StoredJudgments
from localjudge.engine.options import EngineOptions
from localjudge.errors import ConfigError, clip
from localjudge.io.files import model_path_input
from localjudge.kinds import kind_of
from localjudge.kinds.pairwise import PairwiseMetric
from localjudge.runs.options import RunOptions, ScoringOptions


class Study(NamedTuple):
    """What a bias study produced: the analysis, the judgments behind it, and its pairwise metric."""

    study: BiasStudy
    """Both reports and what is needed to reproduce them."""
    judgments: list[Judgments] | list[StoredJudgments]
    """One `Judgments` per judge that ran, or the `StoredJudgments` read back from disk."""
    pair_metric: PairwiseMetric | None
    """The pairwise metric compared with, or None."""


def study_metrics(
    metric_name: str | None, pairwise: bool, pairwise_metric: str | None, default: bool
) -> tuple[Any, PairwiseMetric | None]:
    """The pointwise metric (a G-Eval one) and the pairwise metric a study names (defaults only when `default`).

    Raises:
        ConfigError: two pairwise metrics named, or a --pairwise-metric that is not pairwise.
    """
    from localjudge.metrics import resolve_metric

    name = metric_name or ("correctness" if default else None)
    metric = resolve_metric(name) if name else None
    pair_name = pairwise_metric or ("pairwise" if pairwise else None)
    pair_metric = resolve_metric(pair_name) if pair_name else None
    if metric is not None and kind_of(metric).reads_both_orders:
        if pair_metric is not None and not default:
            raise ConfigError("--metric names a pairwise metric and --pairwise-metric another; give one")
        metric, pair_metric = None, metric
    if pair_metric is not None and not kind_of(pair_metric).reads_both_orders:
        raise ConfigError(f"--pairwise-metric {clip(pair_name)} is not a pairwise metric")
    return metric, cast("PairwiseMetric | None", pair_metric)  # a kind that reads both orders: pairwise


def judge_and_analyse(
    responses: str | Path,
    judges: Sequence[str],
    out_dir: str | Path,
    *,
    metric_name: str | None = None,
    pairwise: bool = False,
    pairwise_metric: str | None = None,
    families: Mapping[str, str] | None = None,
    registry: str | None = None,
    human_field: str | None = None,
    settings: BiasOptions | None = None,
    inputs: Sequence[tuple[str, str | Path | None]] = (),
    outputs: Sequence[Path] = (),
    run: RunOptions | None = None,
    scoring: ScoringOptions | None = None,
    engine: EngineOptions | None = None,
    panels: Sequence[BiasPanel] = (),
) -> Study:
    """Checks everything that needs no model, then runs the judges one at a time and analyses.

    Args:
        responses: the responses file (`localjudge generate`'s).
        judges: judge names, paths or hub ids, loaded one at a time.
        out_dir: the study's folder; the judges' full result records go to its `records/`.
        metric_name, pairwise, pairwise_metric: as `study_metrics` (defaults: correctness, and
            pairwise when `pairwise`).
        families: model families given for judges and generators loaded by path or hub id.
        registry: a models.yaml other than the bundled one.
        human_field: prompt field with a human score of each response.
        settings: bootstrap and test settings (`BiasOptions`).
        inputs, outputs: files the study reads and writes, refused if one would overwrite another.
        run: `resume` continues the records in `out_dir/records`; `progress` shows progress bars.
        scoring: how every response is scored, as for `evaluate` (truncate, min_valid_mass...).
        engine: `EngineOptions` of every judge.
        panels: Panels of the judges, pooled and measured as judges (`bias.panels`); checked before
            any judge loads.
    """
    from localjudge.bias.cases import check_responses
    from localjudge.bias.families import check_names, fill_families, model_families
    from localjudge.bias.judging import records_path, run_bias
    from localjudge.bias.study import analyze_judgments
    from localjudge.io.files import refuse_overwriting
    from localjudge.runs.generation import read_responses

    run, scoring = run or RunOptions(), scoring or ScoringOptions()
    given = dict(families or {})
    metric, pair_metric = study_metrics(metric_name, pairwise, pairwise_metric, default=True)
    kept = [m.name for m in (metric, pair_metric) if m] + (["logppl"] if metric else [])
    written = [*outputs] + [records_path(Path(out_dir) / "records", j, name) for j in judges for name in kept]
    refuse_overwriting(written, [*inputs] + [model_path_input(j) for j in judges])
    check_panels(panels, judges)
    records = read_responses(responses)
    check_responses(records, metric, human_field)
    check_names(given, [*judges, *{r.generator for r in records}], "--judge or generator")
    judge_families = model_families(judges, given, _registry(registry), "judge")
    gen_families = fill_families({r.generator: r.generator_family for r in records}, given, "generator")
    records = [r.model_copy(update={"generator_family": gen_families[r.generator]}) for r in records]
    judgments = run_bias(
        records,
        list(judges),
        metric,
        pair_metric,
        families=judge_families,
        registry_path=registry,
        human_field=human_field,
        records_dir=Path(out_dir) / "records",
        run=run,
        scoring=scoring,
        options=engine,
    )
    study = analyze_judgments(
        judgments, records, responses, metric, pair_metric, human_field=human_field, settings=settings, panels=panels
    )
    return Study(study, list(judgments), pair_metric)


def analyse_only(
    responses: str | Path,
    judgment_paths: Sequence[str | Path],
    *,
    metric_name: str | None = None,
    pairwise_metric: str | None = None,
    families: Mapping[str, str] | None = None,
    human_field: str | None = None,
    settings: BiasOptions | None = None,
    inputs: Sequence[tuple[str, str | Path | None]] = (),
    outputs: Sequence[Path] = (),
    panels: Sequence[BiasPanel] = (),
) -> Study:
    """Reads judgments from disk and analyses them; imports no torch and loads no model.

    Args: as for `judge_and_analyse`; `judgment_paths` are folders a bias run wrote or their
    judgment files.
    """
    from localjudge.bias.families import check_names
    from localjudge.bias.judgments import align_judgments, judgment_files, read_judgments
    from localjudge.bias.study import analyze_records
    from localjudge.io.files import refuse_overwriting
    from localjudge.runs.generation import read_responses

    given = dict(families or {})
    metric, pair_metric = study_metrics(metric_name, False, pairwise_metric, default=False)
    files = judgment_files(judgment_paths)
    refuse_overwriting(outputs, [*inputs] + [("judgments file", f) for f in files])
    records = read_responses(responses)
    point, pair, files = read_judgments(judgment_paths)
    judges_seen = {v.judge for v in point} | {v.judge for v in pair}
    check_names(given, {r.generator for r in records} | judges_seen, "judge or generator")
    point, pair, records, judges = align_judgments(point, pair, records, given, human_field)
    study = analyze_records(
        point,
        pair,
        records,
        responses,
        metric,
        pair_metric,
        judges=judges,
        human_field=human_field,
        settings=settings,
        judgments_files=files,
        panels=panels,
    )
    return Study(study, [StoredJudgments(tuple(point), tuple(pair))], pair_metric)


def generate(
    prompts: str | Path,
    models: Sequence[str],
    run: RunOptions,
    *,
    max_new_tokens: int = 128,
    batch_size: int = 8,
    families: Mapping[str, str] | None = None,
    registry: str | None = None,
    engine: EngineOptions | None = None,
    say: Callable[[str], None] = lambda line: None,
) -> None:
    """Answers the prompts with each model in turn, into one responses file (`run.out`).

    Everything that needs no model is checked first (repeated models, files it would overwrite,
    the output mode, the prompts, the families); each model is freed before the next loads, and
    later models append to the file the first one started. `say` gets a line before each load
    and after each model.
    """
    import gc

    from localjudge.bias.families import check_names, model_families
    from localjudge.errors import repeated
    from localjudge.io.cases import load_cases
    from localjudge.io.files import refuse_overwriting
    from localjudge.judges import loading
    from localjudge.runs.generation import check_prompts, generate_responses

    assert run.out is not None, "the command line requires --out"
    if len(set(models)) != len(models):
        raise ConfigError(f"models repeated: {repeated(models)}; give each --model once")
    inputs = [("prompts file", prompts), ("judge registry", registry), *[model_path_input(m) for m in models]]
    refuse_overwriting([run.out], inputs)
    run.check_output()
    cases = load_cases(prompts)
    check_prompts(cases)  # these checks come before the first (slow) load
    given = dict(families or {})
    check_names(given, models, "--model")
    model_family = model_families(models, given, _registry(registry), "model")
    for k, name in enumerate(models):
        say(f"Loading model {name}...")
        model = loading.load_judge(
            name, options=engine, progress=run.progress, family=model_family[name], registry_path=registry
        )
        # later models append to the file the first one started
        appending = run if k == 0 else run.model_copy(update={"resume": True, "overwrite": False})
        records = generate_responses(cases, model, max_new_tokens=max_new_tokens, batch_size=batch_size, run=appending)
        say(f"{model.info.name} ({model.info.family}, {model.info.dtype}): {len(records)} responses")
        del model
        gc.collect()


def _registry(path: str | None):
    from localjudge.judges.registry import load_registry

    return load_registry(Path(path)) if path else load_registry()
