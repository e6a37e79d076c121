"""The self-preference study's analysis and results.md, from the records on disk (no model, no torch).

`analyse` turns each task's records into the bias lab's studies (written to <out>/<task>/ and
<out>/<task>/recognition/, as `localjudge bias` writes them); `write_results` puts the key numbers,
the human anchor, the judges' discrimination and the time of every phase into <out>/results.md.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import numpy as np

from benchmarks.bias._study_items import HUMAN_FIELD, SUMMARY_INSTRUCTION, SYSTEMS
from benchmarks.bias._study_judging import Task, lab_judgments
from localjudge.bias import BiasOptions
from localjudge.bias.panels import BiasPanel
from localjudge.bias.study import BiasStudy, StoredJudgments, analyze_records, write_study
from localjudge.runs.generation import read_responses
from localjudge.runs.results_file import read_results
from localjudge.stats import Estimate

HIGH, LOW = (f"summeval-{s}" for s in sorted(SYSTEMS, reverse=True))  # M22 (high anchor), M20 (low)


def _shown(path: Path, root: Path) -> str:
    """A path as committed files show it: relative to the repository when inside it."""
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


def panels(judges: list[dict]) -> list[BiasPanel]:
    """The study's panels of its judges (name, family): all, one per family (its last), that one less each family.

    With the four embedded judges: `all` (four), `three` (smollm2-135m, gemma3-270m,
    qwen2.5-coder-1.5b: PoLL's one judge per family) and `no-smollm`, `no-gemma`, `no-qwen`.
    """
    family = {j["name"]: j["family"] for j in judges}
    names = list(family)
    per_family = {f: [n for n in names if family[n] == f][-1] for f in dict.fromkeys(family.values())}
    one_each = list(per_family.values())
    out = [BiasPanel(name="all", members=tuple(names))] if len(names) > len(one_each) else []
    if len(one_each) >= 2:
        out.append(BiasPanel(name="three" if len(one_each) == 3 else "one-per-family", members=tuple(one_each)))
    if len(one_each) >= 3:
        out += [BiasPanel(name=f"no-{f}", members=tuple(n for n in one_each if family[n] != f)) for f in per_family]
    return out


def analyse(
    out: Path, tasks: list[Task], judges: list[str], root: Path, *, seed: int, n_bootstrap: int, figures: bool = True
) -> dict[str, tuple[BiasStudy, BiasStudy]]:
    """Each task's (judging study, recognition study), written to <out>/<task>/ and <out>/<task>/recognition/."""
    settings = BiasOptions(seed=seed, n_bootstrap=n_bootstrap)
    studies = {}
    for task in tasks:
        path = out / task.name / "responses.jsonl"
        responses = read_responses(path)
        point, pair, recog, infos = lab_judgments(task, responses, out / task.name / "records", judges, HUMAN_FIELD)
        shown = _shown(path, root)
        study = analyze_records(
            point,
            pair,
            responses,
            path,
            task.metric,
            task.pair_metric,
            judges=infos,
            human_field=HUMAN_FIELD,
            settings=settings,
            panels=panels(infos),
        ).model_copy(update={"responses_file": shown})
        write_study(study, [StoredJudgments(tuple(point), tuple(pair))], out / task.name, figures=figures)
        recognition = analyze_records([], recog, responses, path, None, None, judges=infos, settings=settings)
        recognition = recognition.model_copy(
            update={
                "responses_file": shown,
                "notes": ["pairwise judgments answer 'which one did you write?', not 'which is better'"],
            }
        )
        write_study(recognition, [StoredJudgments((), tuple(recog))], out / task.name / "recognition", figures=figures)
        studies[task.name] = (study, recognition)
    return studies


def _f(e: Estimate | None, digits: int = 2, ci: bool = True) -> str:
    if e is None or e.value is None:
        return "–"
    text = f"{e.value:.{digits}f}"
    if ci and e.ci_low is not None and e.ci_high is not None:
        text += f" [{e.ci_low:.{digits}f}, {e.ci_high:.{digits}f}]"
    return text


def _p(e: Estimate | None) -> str:
    return "" if e is None or e.p_value is None else f", p={e.p_value:.2g}"


def _key_table(study: BiasStudy, recognition: BiasStudy) -> list[str]:
    m, r = study.models, recognition.models
    own = {x.judge: x for x in (m.targets if m else []) if x.relation == "self"}
    did = {x.judge: x for x in (m.target_did if m else []) if x.relation == "self"}
    rec = {x.judge: x for x in (r.targets if r else []) if x.relation == "self"}
    pos = {x.judge: x for x in (study.pairwise.position if study.pairwise else [])}
    lines = [
        "| judge | self-preference ½[P(own│first) + P(own│second)] | P(own│first) | P(own│second) | "
        "minus neutral judges | pointwise DiD, own (points) | self-recognition ½[…] | P(first position wins) | "
        "order consistency | agrees with experts |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for j in study.judges:
        n = j["name"]
        o, p = own.get(n), pos.get(n)
        consistent = None
        if p is not None and p.flip_rate.value is not None:
            f = p.flip_rate
            consistent = Estimate(
                value=1 - f.value,
                ci_low=None if f.ci_high is None else 1 - f.ci_high,
                ci_high=None if f.ci_low is None else 1 - f.ci_low,
            )
        lines.append(
            f"| {n} | {_f(o.rate) + _p(o.rate) if o else '–'} | {_f(o.shown_first, ci=False) if o else '–'} | "
            f"{_f(o.shown_second, ci=False) if o else '–'} | {_f(o.difference) + _p(o.difference) if o else '–'} | "
            f"{_f(did[n].did) + _p(did[n].did) if n in did else '–'} | "
            f"{_f(rec[n].rate) + _p(rec[n].rate) if n in rec else '–'} | "
            f"{_f(p.first_position) if p else '–'} | {_f(consistent)} | {_f(p.accuracy_combined) if p else '–'} |"
        )
    return lines


def _family_table(study: BiasStudy) -> list[str]:
    m = study.models
    fam = [x for x in (m.targets if m else []) if x.relation == "family"]
    if not fam:
        return ["No judge has another model of its family among the generators."]
    did = {(x.judge, x.target): x for x in (m.target_did if m else [])}
    pooled = {x.judge: x for x in (study.pointwise.self_preference if study.pointwise else [])}
    lines = [
        "| judge | target | pairwise ½[P│first + P│second] | minus neutral judges | pointwise DiD (points) | "
        "pooled family DiD (lab, points) |",
        "|---|---|---|---|---|---|",
    ]
    for x in fam:
        d = did.get((x.judge, x.target))
        pf = pooled.get(x.judge)
        lines.append(
            f"| {x.judge} | {x.target} | {_f(x.rate)}{_p(x.rate)} | {_f(x.difference)}{_p(x.difference)} | "
            f"{_f(d.did) + _p(d.did) if d else '–'} | {_f(pf.did) + _p(pf.did) if pf else '–'} |"
        )
    return lines


def _panel_table(study: BiasStudy) -> list[str]:
    """Each family's preference alone (its judges' own), under the panels that include it, under those that do not."""
    m = study.models
    if m is None or not m.panels:
        return ["No panel: the study has fewer than two judges."]
    own = {x.target: x for x in m.targets if x.relation == "self"}
    lines = [
        "| family | target | its own judge: minus neutral judges | panel | includes it | panel ½[P│first + P│second] "
        "| panel minus neutral judges | pointwise DiD (points) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for x in sorted(m.panels, key=lambda x: (x.family, x.target, not x.includes_family, x.panel)):
        o = own.get(x.target)
        lines.append(
            f"| {x.family} | {x.target} | {_f(o.difference) + _p(o.difference) if o else '–'} | "
            f"{x.panel} ({', '.join(x.members)}) | {'yes' if x.includes_family else 'no'} | {_f(x.rate)} | "
            f"{_f(x.difference)}{_p(x.difference)} | {_f(x.did)}{_p(x.did)} |"
        )
    return lines


def _covariates(study: BiasStudy) -> list[str]:
    ppl = {x.judge: x for x in (study.pointwise.perplexity if study.pointwise else [])}
    length = {x.judge: x for x in (study.pointwise.length if study.pointwise else [])}
    longer = {x.judge: x for x in (study.pairwise.pairwise_length if study.pairwise else [])}
    lines = [
        "| judge | own-family effect, no covariate | with judge log-ppl | log-ppl coefficient (points per nat) | "
        "length slope (points / 100 chars) | P(longer answer wins) |",
        "|---|---|---|---|---|---|",
    ]
    for j in study.judges:
        n = j["name"]
        q = ppl.get(n)
        lines.append(
            f"| {n} | {_f(q.own_without) + _p(q.own_without) if q else '–'} | "
            f"{_f(q.own_with) + _p(q.own_with) if q else '–'} | {_f(q.logppl) + _p(q.logppl) if q else '–'} | "
            f"{_f(length[n].slope, 3) + _p(length[n].slope) if n in length else '–'} | "
            f"{_f(longer[n].prefers_longer) + _p(longer[n].prefers_longer) if n in longer else '–'} |"
        )
    return lines


def _anchor(study: BiasStudy, out: Path) -> list[str]:
    responses = read_responses(out / "summaries" / "responses.jsonl")
    human = {(r.id, r.generator): r.extra[HUMAN_FIELD] for r in responses if r.generator in (HIGH, LOW)}
    pairs = [(human[(i, HIGH)], human[(i, LOW)]) for i in dict.fromkeys(r.id for r in responses)]
    prefer = sum(h > lo for h, lo in pairs)
    ties = sum(h == lo for h, lo in pairs)
    cells = {
        (c.judge, c.generator): c.mean
        for c in (study.pointwise.matrix.cells if study.pointwise and study.pointwise.matrix else [])
    }
    wins = {
        (c.judge, c.generator): c.rate
        for c in (study.models.win_rates.cells if study.models and study.models.win_rates else [])
    }
    lines = [
        f"Experts (SummEval, mean of 3) rate {HIGH} {np.mean([h for h, _ in pairs]):.2f} and {LOW} "
        f"{np.mean([lo for _, lo in pairs]):.2f} "
        f"for consistency on these {len(pairs)} articles; they prefer {HIGH} on {prefer}, tie on {ties}, prefer "
        f"{LOW} on {len(pairs) - prefer - ties}. The references and our models' summaries have no expert score.",
        "",
        f"| judge | mean consistency score {HIGH} | {LOW} | win rate {HIGH} (all its pairs) | {LOW} |",
        "|---|---|---|---|---|",
    ]
    for j in study.judges:
        n = j["name"]
        lines.append(
            f"| {n} | {_f(cells.get((n, HIGH)))} | {_f(cells.get((n, LOW)))} | "
            f"{_f(wins.get((n, HIGH)))} | {_f(wins.get((n, LOW)))} |"
        )
    return lines


def _quality(out: Path, task: str) -> list[str]:
    """How well each judge separates responses at all: valid mass, unscored share, spread of its scores."""
    lines = ["| judge | metric | records | unscored | mean valid mass | score sd |", "|---|---|---|---|---|---|"]
    for path in sorted((out / task / "records").glob("*.jsonl")):
        if path.name.endswith((".logppl.jsonl", ".recognition.jsonl")):
            continue
        recs = read_results(path)
        mass = [r.valid_mass for r in recs if r.valid_mass is not None]
        scores = [r.raw_score if r.raw_score is not None else r.score for r in recs if r.score is not None]
        lines.append(
            f"| {recs[0].judge['name']} | {recs[0].metric} | {len(recs)} | {sum(r.score is None for r in recs)} | "
            f"{np.mean(mass):.3f} | {np.std(scores):.3f} |"
        )
    return lines


def _timings(out: Path) -> list[str]:
    path = out / "timings.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    total: defaultdict[tuple[str, str], float] = defaultdict(float)
    cpu: defaultdict[tuple[str, str], float] = defaultdict(float)
    prompts: defaultdict[tuple[str, str], int] = defaultdict(int)
    for r in rows:
        phase = r["phase"] if r["phase"] in ("load", "generate", "analysis") else f"{r['phase']} ({r['task']})"
        total[(r["model"], phase)] += r["seconds"]
        cpu[(r["model"], phase)] += r.get("cpu_s", 0.0)
        prompts[(r["model"], phase)] += r["prompts"]
    lines = ["| model | phase | wall s | CPU s | prompts |", "|---|---|---|---|---|"]
    for m in sorted({m for m, _ in total}):
        for (mm, phase), s in sorted(total.items()):
            if mm == m:
                lines.append(f"| {m} | {phase} | {s:.0f} | {cpu[(mm, phase)]:.0f} | {prompts[(mm, phase)] or ''} |")
        wall, used = (sum(v for (mm, _), v in d.items() if mm == m) for d in (total, cpu))
        lines.append(f"| **{m}** | all | **{wall:.0f}** | **{used:.0f}** | |")
    runs_path = out / "runs.jsonl"
    runs = [json.loads(line) for line in runs_path.read_text().splitlines()] if runs_path.exists() else []
    lines += [
        "",
        f"Sum of all phases: **{sum(total.values()) / 60:.1f} min** wall, {sum(cpu.values()) / 60:.1f} min CPU "
        "(all threads; on a shared machine CPU / threads is what idle cores would take). Runs (a killed run "
        "records no line):",
        "",
    ]
    for r in runs:
        m = r.get("machine", {})
        lines.append(
            f"- {r['run']}: {r['wall_s'] / 60:.1f} min wall, `{' '.join(r['argv'])}`; {m.get('cpu')}, "
            f"{m.get('cores')} cores ({m.get('simd')}), torch {m.get('torch')} with {r['threads']} threads; "
            f"load average {r['load_start']:.1f} at start, {r['load_end']:.1f} at the end."
        )
    return lines


def write_results(out: Path, studies: dict[str, tuple[BiasStudy, BiasStudy]], config: dict, root: Path) -> Path:
    """results.md: the settings, the key numbers with caveats, and the time of every phase."""
    shown = _shown(out, root)
    lines = [
        "# Self-preference study: four embedded judges, three families (CPU)",
        "",
        "Made by `benchmarks/bias/self_preference.py` (its docstring has the design and the budget); "
        f"settings in `{shown}/config.json`: {config['articles']} SummEval dev articles (the first in file order), "
        f"{config['prompts']} prompts of `benchmarks/bias/prompts.jsonl` (round-robin over categories), "
        f"judges {', '.join(config['judges'])}, {config['dtype']}, greedy, summaries up to {config['summary_tokens']} "
        f'and answers up to {config["answer_tokens"]} new tokens. Instruction: "{SUMMARY_INSTRUCTION}".',
        "",
        "Estimates with 95% bootstrap intervals over items and unadjusted p-values; the Holm-adjusted findings are "
        "the summary lines below and the Findings tables of each report.md. 'own' is the judge's own response; "
        "self-preference and recognition are measured against other families' responses only (a Qwen judge's "
        "sibling is the family-preference target).",
        "",
    ]
    for task, (study, recognition) in studies.items():
        lines += [
            f"## {task.capitalize()}",
            "",
            f"Key numbers ({study.n_items} items; `{shown}/{task}/report.md`):",
            "",
        ]
        lines += _key_table(study, recognition)
        lines += ["", "Family preference (does one Qwen size favour the other?):", ""]
        lines += _family_table(study)
        lines += [
            "",
            "Panels as judges (`localjudge bias analyse --panel`): a panel's judgment is its members' probabilities "
            "(scores) averaged; a family's preference under it is measured as for a judge of that family: against "
            "other families' responses, minus the judges of neither family in the pair (not Holm-corrected):",
            "",
        ]
        lines += _panel_table(study)
        lines += ["", "Covariates (lab, family level; perplexity after Wataoka et al. 2024):", ""]
        lines += _covariates(study)
        if task == "summaries":
            lines += ["", "Human anchor:", ""] + _anchor(study, out)
        lines += ["", "Holm-adjusted findings:", ""]
        for label, s in (("judging", study), ("recognition", recognition)):
            reports = [s.pointwise, s.pairwise] if label == "judging" else [s.pairwise]
            for report in reports:
                if report is not None:
                    lines += [f"- [{label}, {report.kind}] {line}" for line in report.summary]
            if s.models is not None:
                lines += [f"- [{label}, model level] {line}" for line in s.models.summary]
        lines += ["", "Discrimination (from records/):", ""] + _quality(out, task) + [""]
    lines += [
        "## Caveats",
        "",
        "- Small judges: where a judge puts little probability on the labels (mean valid mass above) its pairs are "
        "unscored and skipped, never guessed; a judge whose judgments flip with the order (order consistency near 0) "
        "shows self-preference ½[P(own│first) + P(own│second)] near 0.5 whatever it thinks of its own text "
        "(Panickssery et al. report this for a 7B model), so read the rate beside P(own│first) and P(own│second).",
        "- gemma3-270m is a base model: it summarises and answers after a plain 'Question: …\\nAnswer:' prompt, cut "
        "at the first blank line, and judges from plain-text prompts; the other three use their chat templates.",
        "- SummEval's system and reference summaries are tokenised text (spaces before punctuation, often lower "
        "case), our models' are not: a judge can tell them apart by style, which the recognition rates include.",
        "- The human anchor covers only the two SummEval systems (experts rated neither the references nor our "
        "models' summaries): it says how well each judge agrees with people where they are known, not whether "
        "its own summaries are better. The control for quality elsewhere is the other families' judges "
        "(difference to neutral judges, difference in differences).",
        "- In answers the reference is judged for correctness against itself (a ceiling, not a finding).",
        f"- {len(next(iter(studies.values()))[0].judges)} judges on "
        + " and ".join(f"{s.n_items} {t}" for t, (s, _) in studies.items())
        + ": intervals are wide, and with ~18 tests per report Holm needs nearly every item to agree.",
        "",
    ]
    lines += ["## Time", ""] + _timings(out)
    lines += [
        "",
        "## Reproduce",
        "",
        "```",
        "LOCALJUDGE_CACHE=/tmp/ljcache nice -n 19 .venv/bin/python -m benchmarks.bias.self_preference "
        f"--out-dir {shown} --articles {config['articles']} --prompts {config['prompts']} "
        f"--judges {' '.join(config['judges'])}"
        + (f" --dtype {config['dtype']}" if config["dtype"] != "float32" else "")
        + (f" --device {config['device']}" if config.get("device", "cpu") != "cpu" else ""),
        f".venv/bin/python -m benchmarks.bias.self_preference --out-dir {shown} --analyse-only",
        f".venv/bin/localjudge bias analyse {shown}/summaries/responses.jsonl --judgments {shown}/summaries "
        f"--out-dir /tmp/again --human-field {HUMAN_FIELD} --metric consistency "
        "--pairwise-metric benchmarks/bias/pairwise_summary.yaml",
        "```",
        "",
    ]
    path = out / "results.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path
