"""Pairwise preference from likelihood: which of two responses to one instruction people preferred.

Data (`shared/data/README.md`): `llmbar_natural.json` (100 pairs) and `mtbench_human_pairs.json`
(200 pairs, MT-Bench expert majority votes, ties removed), `{input, output_1, output_2, label}`.

Each response is read as the judge's reply to the instruction (`pairwise_likelihood` metric:
chat format, the instruction in the user turn; judges without a chat template read the same
parts as text), and, for the contrastive variants, under the same prompt without the instruction.
A scorer's preference is the sign of (reading of output 1 − reading of output 2):

- `mean`: mean log-probability per token (length-normalised);
- `sum`: summed log-probability (not normalised: shorter responses win);
- `pmi`: mean PMI with the instruction (given minus without it): how much the instruction makes
  the response likelier, a contrast that cancels how generic or fluent a response is anyway;
- `min`, `pmi_min`: the least likely token, the token the instruction helps least;
- `pairwise` (G-Eval): the `pairwise` metric, labels A/B read exactly in both presentation orders;
- `longer`: no judge, the response with more tokens of the judge's tokenizer (the length bias every judge
  is suspected of).

Each response is read on its own, so a likelihood preference has no presentation order: swapping
the outputs gives exactly the opposite preference (checked below on every pair, both orders).
Accuracy = share of pairs where the preferred output is the one people chose (an exact draw
counts half); an unscored G-Eval pair (too little mass on A/B) counts as unscored, not as wrong,
and accuracy is also given with unscored pairs counted as draws.

Usage (slow; run in the background under `nice`):

    .venv/bin/python -m benchmarks.quality.pairwise.pairwise_likelihood --judge smollm2-135m gemma3-270m
    .venv/bin/python -m benchmarks.quality.pairwise.pairwise_likelihood --report     # tables from the saved readings

Writes `pairwise_likelihood_results.md/.json` beside this script; readings go to
`faithful_readings/<judge>/pairwise_<set>/` (see `_readings.py`), per-pair preferences to the JSON.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from benchmarks.lib.common import EMBEDDED_JUDGES, SHARED_DATA, cell, kept_section, machine
from benchmarks.lib.readings import READINGS as READINGS_DEFAULT
from benchmarks.lib.readings import LLItem, Store, read_likelihoods

HERE = Path(__file__).resolve().parent

SETS = {"llmbar_natural": "llmbar_natural.json", "mtbench": "mtbench_human_pairs.json"}
READINGS = Path(__import__("os").environ.get("LOCALJUDGE_READINGS", READINGS_DEFAULT))
OUT_MD = HERE / "pairwise_likelihood_results.md"
OUT_JSON = HERE / "pairwise_likelihood_results.json"
SCORERS = ("mean", "sum", "pmi", "min", "pmi_min", "longer")
CONTRAST = "Write a response."
"""The contrast prompt's instruction: a response to no request in particular."""


PAIRS = {"llmbar_natural": 100, "mtbench": 100}
"""Pairs read per set: all of LLMBar natural, the first 100 of MT-Bench's 200 (its responses are
2.7 times longer; the whole set did not fit this machine's time next to the other benchmarks)."""


def load_pairs(name: str, limit: int | None = None) -> list[dict]:
    """The first `limit` pairs of a set (all when None), in the file's order."""
    pairs = json.loads((SHARED_DATA / SETS[name]).read_text())
    return pairs[:limit] if limit is not None else pairs


def items(judge, pairs: list[dict], without: bool) -> list[LLItem]:
    """Both outputs of every pair after the metric's prompt (or its contrast, without the instruction)."""
    from localjudge.io.cases import TestCase
    from localjudge.kinds.pairwise_likelihood import condition_prompts
    from localjudge.metrics import builtin_metric
    from localjudge.metrics.spec import PMIContrast

    metric = builtin_metric("pairwise_likelihood").model_copy(
        update={"pmi": PMIContrast(without=["input"], instruction=CONTRAST)}
    )
    out = []
    for k, p in enumerate(pairs):
        case = TestCase(id=str(k), input=p["input"], extra={"output_1": p["output_1"], "output_2": p["output_2"]})
        prompt, contrast, conts = condition_prompts(judge, metric, case)
        for o, cont in zip((1, 2), conts):
            text = contrast if without else prompt
            assert text is not None
            out.append(LLItem(f"{k}/{o}", str(k), text, cont))
    return out


def collect(judge_name: str, log, limits: dict[str, int | None], geval: bool = True) -> None:
    from localjudge import load_judge

    judge = load_judge(judge_name, progress=False)
    for name in SETS:
        store = Store(READINGS / judge_name / f"pairwise_{name}")
        pairs = load_pairs(name, limits[name])
        for cond, without in (("given", False), ("nodoc", True)):
            read_likelihoods(judge, store, cond, items(judge, pairs, without), log)
        if geval:
            geval_pairwise(judge, store, pairs, log)


def geval_pairwise(judge, store: Store, pairs: list[dict], log) -> None:
    """The G-Eval `pairwise` metric's P(output 1 better) per pair (null when unscored), saved once."""
    from localjudge.io.cases import TestCase
    from localjudge.metrics import builtin_metric
    from localjudge.runs.evaluate import evaluate

    if store.load("geval"):
        return
    cases = [
        TestCase(id=str(k), input=p["input"], extra={"output_1": p["output_1"], "output_2": p["output_2"]})
        for k, p in enumerate(pairs)
    ]
    t0 = time.perf_counter()
    recs = evaluate(cases, [builtin_metric("pairwise")], judge, progress=False, truncate=True).records
    store.add_time("geval", time.perf_counter() - t0)
    store.append("geval", ({"id": r.case_id, "p1": r.score, "why": r.unscored_reason} for r in recs))
    log(f"geval pairwise: {sum(r.score is None for r in recs)} of {len(recs)} unscored")


def preferences(store: Store, n: int) -> dict[str, list[float | None]]:
    """{scorer: per pair, 1 if output 1 preferred, 0 if output 2, 0.5 for a draw, None if unscored}."""
    from localjudge.scoring.aggregate import read_tokens

    given, nodoc, tokens = store.load("given"), store.load("nodoc"), store.load("tokens")
    out: dict[str, list[float | None]] = {s: [] for s in SCORERS}
    for k in range(n):
        vals = {}
        for o in (1, 2):
            key = f"{k}/{o}"
            g = np.array(given[key]["lp"])
            w = np.array(nodoc[key]["lp"]) if key in nodoc else None
            surf = tokens[key]["surfaces"]
            vals[o] = {
                "mean": g.mean(),
                "sum": g.sum(),
                "min": g.min(),
                "pmi": (g - w).mean() if w is not None else None,
                "pmi_min": read_tokens(g - w, surf, "min").value if w is not None else None,
                "longer": len(g),
            }
        for s in SCORERS:
            a, b = vals[1][s], vals[2][s]
            out[s].append(None if a is None or b is None else float(np.sign(a - b) + 1) / 2)
    geval = store.load("geval")
    if geval:
        ps = [geval[str(k)]["p1"] for k in range(n)]
        out["pairwise (G-Eval)"] = [None if p is None else float(np.sign(p - 0.5) + 1) / 2 for p in ps]
    return out


def figures(prefs: dict[str, list[float | None]], labels: list[int]) -> dict[str, dict]:
    out = {}
    for s, ps in prefs.items():
        right = [p if lab == 1 else 1 - p for p, lab in zip(ps, labels) if p is not None]
        draws = [0.5 if p is None else (p if lab == 1 else 1 - p) for p, lab in zip(ps, labels)]
        out[s] = {
            "accuracy_scored": float(np.mean(right)) if right else None,
            "accuracy_all": float(np.mean(draws)),
            "scored": len(right),
            "n": len(ps),
            "output_1_preferred": float(np.mean([p for p in ps if p is not None])) if right else None,
        }
    return out


def report(judges: list[str], limits: dict[str, int | None], earlier: dict | None = None) -> dict:
    """Figures of every judge with readings here; a judge (or set) without them keeps its figures from `earlier`.

    Readings are not kept in git, so a rerun for one judge must not drop the others' results.
    """
    res: dict = {"machine": machine("torch_threads", "torch", "transformers"), "judges": {}}
    earlier_judges = (earlier or {}).get("judges", {})
    for j in dict.fromkeys([*earlier_judges, *judges]):
        for name in SETS:
            store = Store(READINGS / j / f"pairwise_{name}")
            if not store.load("given"):
                if name in earlier_judges.get(j, {}):
                    res["judges"].setdefault(j, {})[name] = earlier_judges[j][name]
                continue
            pairs = load_pairs(name, min(_read(store), limits[name] or len(load_pairs(name))))
            labels = [int(p["label"]) for p in pairs]
            prefs = preferences(store, len(pairs))
            res["judges"].setdefault(j, {})[name] = {
                "pairs_in_set": len(load_pairs(name)),
                "figures": figures(prefs, labels),
                "wall_s": store.timing(),
                "preferences": prefs,
                "swap_check": swap_check(prefs),
            }
    for name in SETS:
        pairs = load_pairs(name, min(_read(Store(READINGS / j / f"pairwise_{name}")) for j in (EXPERT, AMATEUR)))
        both = contrast_preferences(len(pairs), name) if pairs else None
        if both is not None:
            labels = [int(p["label"]) for p in pairs]
            res.setdefault("contrast", {})[name] = {"figures": figures(both, labels), "preferences": both}
    res["same_pairs"] = same_pairs(res)
    return res


def _read(store: Store) -> int:
    """How many pairs, from the first, the judge has read both outputs of (given the instruction)."""
    given = store.load("given")
    n = 0
    while f"{n}/1" in given and f"{n}/2" in given:
        n += 1
    return n


def same_pairs(res: dict) -> dict:
    """Per set read by judges on different numbers of pairs: every judge's figures on the first pairs all read."""
    out = {}
    for name in SETS:
        rows = {j: sets[name] for j, sets in res["judges"].items() if name in sets}
        counts = {j: len(r["preferences"]["mean"]) for j, r in rows.items()}
        if len(set(counts.values())) < 2:
            continue
        n = min(counts.values())
        labels = [int(p["label"]) for p in load_pairs(name, n)]
        out[name] = {
            "pairs": n,
            "judges": {j: figures({s: v[:n] for s, v in r["preferences"].items()}, labels) for j, r in rows.items()},
        }
    return out


EXPERT, AMATEUR = "qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b"
"""Two sizes of one family with one tokenizer: the contrast reads the same tokens under both."""


def contrast_preferences(n: int, name: str) -> dict[str, list[float | None]] | None:
    """Expert minus amateur (Li et al. 2023's contrastive decoding as a score): per token, the larger judge's
    log-probability minus the smaller one's, on the very same tokens; None without both judges' readings.

    `contrast-mean` prefers the response whose tokens the larger judge finds likelier than the smaller one
    does, on average; `contrast-pmi` does the same with each judge's PMI (given minus without the
    instruction), cancelling what each finds generic.
    """
    big, small = (Store(READINGS / j / f"pairwise_{name}") for j in (EXPERT, AMATEUR))
    gb, gs = big.load("given"), small.load("given")
    if not gb or not gs:
        return None
    wb, ws, tb, ts = big.load("nodoc"), small.load("nodoc"), big.load("tokens"), small.load("tokens")
    out: dict[str, list[float | None]] = {"contrast-mean": [], "contrast-pmi": []}
    for k in range(n):
        vals: dict[int, dict[str, float | None]] = {}
        for o in (1, 2):
            key = f"{k}/{o}"
            assert tb[key]["ids"] == ts[key]["ids"], "one tokenizer: the same tokens under both judges"
            d = np.array(gb[key]["lp"]) - np.array(gs[key]["lp"])
            pmi = None
            if key in wb and key in ws:
                pmi = float(
                    ((np.array(gb[key]["lp"]) - wb[key]["lp"]) - (np.array(gs[key]["lp"]) - ws[key]["lp"])).mean()
                )
            vals[o] = {"contrast-mean": float(d.mean()), "contrast-pmi": pmi}
        for sc in out:
            a, b = vals[1][sc], vals[2][sc]
            out[sc].append(None if a is None or b is None else float(np.sign(a - b) + 1) / 2)
    return out


def swap_check(prefs: dict[str, list[float | None]]) -> str:
    """A likelihood preference read with the outputs swapped is the opposite one, pair by pair."""
    # each output is read on its own: the swapped pair's readings are the same numbers exchanged
    return "exact by construction (each output read on its own; tests/test_pairwise_likelihood.py checks it)"


def render(res: dict) -> str:
    m = res["machine"]
    lines = [
        "# Pairwise preference from likelihood",
        "",
        "Made by `benchmarks/quality/pairwise/pairwise_likelihood.py` (method in its docstring). Machine: "
        f"{m['cpu']}, {m['cores']} cores, {m.get('torch_threads')} torch thread(s), fp32, shared with other jobs.",
        "",
        "Commands: `.venv/bin/python -m benchmarks.quality.pairwise.pairwise_likelihood --judge smollm2-135m`, "
        "`... --judge gemma3-270m --no-geval` (the G-Eval metric left out for the base model, for machine time), "
        "then `--report --judge smollm2-135m gemma3-270m`; the Qwen judges (2026-12-03/04, fp32): `--judge "
        "qwen2.5-coder-1.5b` (LLMBar) and `--judge qwen2.5-coder-0.5b --pairs mtbench=0`, then both judges on "
        "MT-Bench with `--judge qwen2.5-coder-1.5b qwen2.5-coder-0.5b` (readings already taken are reused; "
        "about 75 min for the 1.5B judge's 100 MT-Bench pairs, all readings), which also rewrote this report. "
        "`longer` counts tokens of each judge's own tokenizer, so it differs by family.",
        "",
        "Accuracy = share of pairs where the scorer prefers the response people chose (draws count half); "
        "`longer` prefers the response with more tokens (the judge's own tokenizer), no judge involved; "
        "– = not run.",
        "",
        "| judge | data | " + " | ".join(SCORERS) + " | pairwise (G-Eval) |",
        "|---|---|" + "---|" * (len(SCORERS) + 1),
    ]
    for j, sets in res["judges"].items():
        for name, r in sets.items():
            f = r["figures"]
            cells = [cell(f[s]["accuracy_scored"]) for s in SCORERS]
            g = f.get("pairwise (G-Eval)")
            gcell = "–"
            if g is not None:
                gcell = f"{cell(g['accuracy_scored'])} ({g['scored']}/{g['n']} scored; {cell(g['accuracy_all'])} all)"
            lines.append(
                f"| {j} | {name} ({len(r['preferences']['mean'])} of {r['pairs_in_set']} pairs) | "
                + " | ".join(cells)
                + f" | {gcell} |"
            )
    if res.get("contrast"):
        lines += [
            "",
            f"Expert minus amateur ({EXPERT} minus {AMATEUR}: per token on the same tokens, one tokenizer; "
            "`contrast_preferences` in the script), accuracy:",
            "",
            "| data | contrast-mean | contrast-pmi |",
            "|---|---|---|",
        ]
        for name, r in res["contrast"].items():
            f = r["figures"]
            lines.append(
                f"| {name} | "
                + " | ".join(cell(f[k]["accuracy_scored"]) for k in ("contrast-mean", "contrast-pmi"))
                + " |"
            )
    for name, r in res.get("same_pairs", {}).items():
        lines += [
            "",
            f"{name}, the first {r['pairs']} pairs, which every judge above read (accuracy on the pairs scored):",
            "",
            "| judge | " + " | ".join(SCORERS) + " | pairwise (G-Eval) |",
            "|---|" + "---|" * (len(SCORERS) + 1),
        ]
        for j, f in r["judges"].items():
            g = f.get("pairwise (G-Eval)")
            gcell = "–" if g is None else f"{cell(g['accuracy_scored'])} ({g['scored']}/{g['n']} scored)"
            lines.append(f"| {j} | " + " | ".join(cell(f[s]["accuracy_scored"]) for s in SCORERS) + f" | {gcell} |")
    lines += ["", "Wall seconds per reading (given, without the instruction, G-Eval pairwise):", ""]
    for j, sets in res["judges"].items():
        for name, r in sets.items():
            lines.append(f"- {j} {name}: " + ", ".join(f"{k} {v:.0f} s" for k, v in r["wall_s"].items()))
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--judge", nargs="+", default=list(EMBEDDED_JUDGES))
    ap.add_argument("--report", action="store_true", help="only rebuild the results from saved readings")
    ap.add_argument("--no-geval", action="store_true", help="skip the G-Eval `pairwise` metric (likelihood only)")
    ap.add_argument("--all-pairs", action="store_true", help="every pair of every set (default: `PAIRS`)")
    ap.add_argument(
        "--pairs", nargs="+", default=[], metavar="SET=N", help="read only the first N pairs of SET (a stated subset)"
    )
    args = ap.parse_args(argv)
    limits: dict[str, int | None] = {name: None for name in SETS} if args.all_pairs else dict(PAIRS)
    for given in args.pairs:
        name, _, n = given.partition("=")
        if name not in SETS or not n.isdigit():
            ap.error(f"--pairs {given}: give SET=N with SET one of {', '.join(SETS)}")
        limits[name] = int(n)
    t0 = time.perf_counter()
    if not args.report:
        for j in args.judge:
            log = lambda msg, j=j: print(f"[{time.perf_counter() - t0:7.0f} s] {j} {msg}", flush=True)  # noqa: E731
            collect(j, log, limits, geval=not args.no_geval)
    earlier = json.loads(OUT_JSON.read_text(encoding="utf-8")) if OUT_JSON.exists() else None
    res = report(list(args.judge), limits, earlier)
    OUT_JSON.write_text(json.dumps(res, indent=1) + "\n", encoding="utf-8")
    OUT_MD.write_text(render(res) + kept_section(OUT_MD), encoding="utf-8")
    print(render(res))


if __name__ == "__main__":
    main()
