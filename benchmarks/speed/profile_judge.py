"""Where a judge's time goes: linear layers, attention, output layer, the rest, against the GEMM peak.

One workload per (judge, dtype), timed in one process: the likelihood pass of the first SummEval
dev articles' summaries (builtin `consistency_likelihood`, prefix reuse on, as the ladder runs it)
and the G-Eval `consistency` scoring of the same summaries. Forward hooks on the model's modules
time, by wall clock (CPU ops run synchronously), every linear layer grouped by role (attention
projections, MLP, output layer), every attention call without its projections, every norm; the
rest of the wall time is the engine's own work (layout, masks, tree reading, tokenising) and
Python. The linear layers' FLOPs are counted from their shapes, so their achieved GFLOP/s can be
put beside the peak measured in the same run: the engine's own kernel (`invariant.gemm_for`, the
prepacked oneDNN GEMM the judge runs) on the judge's largest weight shape, at the plan's chunk rows.

Usage (from the repository root; minutes per judge, on a quiet machine):

    .venv/bin/python -m benchmarks.speed.profile_judge --judge qwen2.5-coder-1.5b --dtypes float32 bf16-mixed bf16-full

Results: `profile_judge_results.json` and `.md` beside this script, one table per machine (a run
replaces the rows of the (machine, judge, dtype) triples it measured and keeps the others).
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path

from benchmarks.lib.common import SUMMEVAL_DATA, kept_section, load_summeval, machine

HERE = Path(__file__).resolve().parent

OUT_JSON, OUT_MD = HERE / "profile_judge_results.json", HERE / "profile_judge_results.md"
ROLES = ("linear: MLP", "linear: attention projections", "linear: output layer")
DTYPES = {"float32": ("float32", None), "bf16-mixed": ("bfloat16", True), "bf16-full": ("bfloat16", False)}


def _role(name: str, module) -> str | None:
    """What a module counts as: a linear layer's role, attention, norm, or None (not timed on its own)."""
    kind = type(module).__name__
    if kind in ("InvariantLinear", "MixedLinear", "Linear"):
        if name.endswith(("q_proj", "k_proj", "v_proj", "o_proj")):
            return "linear: attention projections"
        if name.endswith(("gate_proj", "up_proj", "down_proj")):
            return "linear: MLP"
        return "linear: other"
    if kind.endswith("Attention"):
        return "attention (without its projections)"
    if kind.endswith("RMSNorm") or kind.endswith("LayerNorm"):
        return "norms"
    return None


class Timer:
    """Wall seconds and FLOPs per role, from forward hooks; attention excludes the linear layers inside it."""

    def __init__(self, model):
        import torch

        self.seconds: dict[str, float] = defaultdict(float)
        self.flops: dict[str, float] = defaultdict(float)
        self._start: dict[int, float] = {}
        self._inner: dict[int, float] = defaultdict(float)  # linear time inside an attention call
        self._open_attention: list[int] = []
        self.paused = False  # warm-up calls run with the hooks in place but are not counted
        self.handles = []
        for name, module in model.named_modules():
            role = _role(name, module)
            if role is None:
                continue
            self.handles.append(module.register_forward_pre_hook(self._pre))
            self.handles.append(module.register_forward_hook(self._post(role)))
        self._torch = torch

    def _pre(self, module, args):
        if self.paused:
            return
        self._start[id(module)] = time.perf_counter()
        if _role("", module) == "attention (without its projections)":
            self._open_attention.append(id(module))

    def _post(self, role: str):
        def hook(module, args, out):
            if self.paused:
                return
            dt = time.perf_counter() - self._start.pop(id(module))
            if role.startswith("linear"):
                x = args[0]
                rows = x.numel() // x.shape[-1]
                self.flops[role] += 2.0 * rows * module.in_features * module.out_features
                if self._open_attention:
                    self._inner[self._open_attention[-1]] += dt
            if role.startswith("attention"):
                self._open_attention.pop()
                dt -= self._inner.pop(id(module), 0.0)
            self.seconds[role] += dt

        return hook

    def close(self) -> None:
        for h in self.handles:
            h.remove()


def peak(judge) -> dict:
    """GFLOP/s of the engine's kernel on the judge's largest linear weight, at the plan's big-chunk rows."""
    import torch

    from localjudge.engine.gemm import gemm_for
    from localjudge.engine.invariant import InvariantLinear, can_prepack

    layers = [m for m in judge.backend.model.modules() if isinstance(m, InvariantLinear)]
    layer = max(layers, key=lambda m: m.in_features * m.out_features)
    rows = layer.plan.big
    gemm = gemm_for(layer.weight, None, layer.plan.packed and can_prepack(layer.weight), rows)
    x = torch.randn(rows, layer.in_features).to(layer.weight.dtype)
    with torch.inference_mode():
        for _ in range(3):
            gemm(x)
        t0, n = time.perf_counter(), 0
        while time.perf_counter() - t0 < 2.0:
            gemm(x)
            n += 1
    seconds = (time.perf_counter() - t0) / n
    return {
        "shape": [rows, layer.in_features, layer.out_features],
        "dtype": str(layer.weight.dtype).removeprefix("torch."),
        "gflop_s": 2.0 * rows * layer.in_features * layer.out_features / seconds / 1e9,
    }


def workload(judge, docs: int, timer: Timer | None = None) -> dict:
    """Seconds and tokens of the likelihood pass and the G-Eval scoring of the first `docs` articles.

    Each part is run once on two summaries first (kernels and caches built); a `timer` is paused
    for that warm-up, so that its seconds are those of the timed calls, the wall time its shares
    are taken of.
    """
    from localjudge.metrics import builtin_metric
    from localjudge.runs.evaluate import evaluate

    cases = load_summeval(SUMMEVAL_DATA, docs)
    out = {}
    for name, metric in (("likelihood", "consistency_likelihood"), ("geval", "consistency")):
        if timer is not None:
            timer.paused = True
        evaluate(cases[:2], [builtin_metric(metric)], judge, progress=False)  # kernels and caches built
        if timer is not None:
            timer.paused = False
        t0 = time.perf_counter()
        recs = evaluate(cases, [builtin_metric(metric)], judge, progress=False).records
        out[name] = {"seconds": time.perf_counter() - t0, "items": len(recs)}
    return out


def profile(name: str, label: str, docs: int) -> dict:
    from localjudge import load_judge
    from localjudge.engine.options import EngineOptions

    dtype, mixed = DTYPES[label]
    judge = load_judge(name, options=EngineOptions(device="cpu", dtype=dtype, mixed_precision=mixed))
    plain = workload(judge, docs)  # without hooks: the wall time the shares are taken of
    timer = Timer(judge.backend.model)
    runner = judge.backend.runner
    head, width = runner.head, judge.backend.model.get_output_embeddings().weight.shape

    def timed_head(h):  # the output layer runs apart from the model (fp32, fixed row chunks)
        if timer.paused:
            return head(h)
        t0 = time.perf_counter()
        out = head(h)
        timer.seconds["linear: output layer"] += time.perf_counter() - t0
        timer.flops["linear: output layer"] += 2.0 * h.shape[0] * width[0] * width[1]
        return out

    runner.head = timed_head
    hooked = workload(judge, docs, timer)
    runner.head = head
    timer.close()
    total = sum(v["seconds"] for v in hooked.values())
    shares = {role: s / total for role, s in sorted(timer.seconds.items())}
    shares["engine and Python (the rest)"] = 1 - sum(shares.values())
    linear_s = sum(s for r, s in timer.seconds.items() if r.startswith("linear"))
    linear_flops = sum(timer.flops.values())
    p = peak(judge)
    return {
        "judge": name,
        "dtype": label,
        "measured": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "docs": docs,
        "gemm_plan": judge.info.gemm,
        "seconds": {k: v["seconds"] for k, v in plain.items()},
        "items": {k: v["items"] for k, v in plain.items()},
        "hooked_seconds": total,
        "shares": shares,
        "linear_gflop_s": linear_flops / linear_s / 1e9 if linear_s else None,
        "linear_gflop_s_by_role": {r: timer.flops[r] / timer.seconds[r] / 1e9 for r in timer.flops if timer.seconds[r]},
        "peak": p,
    }


def _machine_key(mach: dict) -> str:
    """The machine a row was measured on, as its table heading (CPU, cores, SIMD, torch)."""
    return (
        f"{mach.get('cpu')}, {mach.get('cores')} cores, {mach.get('torch_threads')} torch threads, "
        f"{mach.get('simd')}, torch {mach.get('torch')}"
    )


def render(rows: list[dict]) -> str:
    lines = [
        "# Where a judge's time goes (`benchmarks/speed/profile_judge.py`)",
        "",
        "Method in the script's docstring. Shares are of the hooked run's wall time (its timed calls, "
        "warm-up excluded; the hooks add a little to the rest); GFLOP/s of the linear layers beside the peak "
        "of the engine's own GEMM kernel on the judge's largest weight shape in the same process; "
        "× fp32 = the fp32 row's seconds over this row's (same judge, same machine, likelihood / G-Eval). "
        "One table per machine.",
    ]
    machines = list(dict.fromkeys(_machine_key(r["machine"]) for r in rows))
    for key in machines:
        here = [r for r in rows if _machine_key(r["machine"]) == key]
        lines += [
            "",
            f"Machine: {key}.",
            "",
            "| judge | dtype | likelihood s / items | G-Eval s / items | × fp32 | linear: MLP | linear: attn proj | "
            "output layer | attention | norms | the rest | linear GFLOP/s (MLP / attn proj / output) | "
            "peak GFLOP/s | of peak |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in here:
            s, by = r["shares"], r["linear_gflop_s_by_role"]
            frac = r["linear_gflop_s"] / r["peak"]["gflop_s"] if r["linear_gflop_s"] else None
            base = next((b for b in here if b["judge"] == r["judge"] and b["dtype"] == "float32"), None)
            speed = (
                " / ".join(f"{base['seconds'][k] / r['seconds'][k]:.2f}" for k in ("likelihood", "geval"))
                if base is not None
                else "–"
            )

            def pct(key: str, s=s) -> str:
                return f"{100 * s.get(key, 0.0):.0f}%"

            lines.append(
                f"| {r['judge']} | {r['dtype']} | {r['seconds']['likelihood']:.1f} / {r['items']['likelihood']} | "
                f"{r['seconds']['geval']:.1f} / {r['items']['geval']} | {speed} | {pct('linear: MLP')} | "
                f"{pct('linear: attention projections')} | {pct('linear: output layer')} | "
                f"{pct('attention (without its projections)')} | {pct('norms')} | "
                f"{pct('engine and Python (the rest)')} | "
                f"{r['linear_gflop_s']:.0f} ({' / '.join(f'{by.get(k, 0):.0f}' for k in ROLES)}) | "
                f"{r['peak']['gflop_s']:.0f} | {100 * frac:.0f}% |"
            )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--judge", nargs="+", default=["qwen2.5-coder-1.5b"])
    ap.add_argument("--dtypes", nargs="+", default=list(DTYPES), choices=list(DTYPES))
    ap.add_argument("--docs", type=int, default=1, help="SummEval dev articles (16 summaries each)")
    ap.add_argument("--report", action="store_true")
    args = ap.parse_args(argv)
    old = json.loads(OUT_JSON.read_text()) if OUT_JSON.exists() else {"rows": []}
    # rows of files written before rows carried their machine: the file's one machine
    rows = [{"machine": old.get("machine", {})} | r for r in old["rows"]]
    if not args.report:
        mach = machine("torch_threads", "simd", "torch")
        for name in args.judge:
            for label in args.dtypes:
                row = {"machine": mach} | profile(name, label, args.docs)
                same = (_machine_key(mach), name, label)
                rows = [r for r in rows if (_machine_key(r["machine"]), r["judge"], r["dtype"]) != same] + [row]
                OUT_JSON.write_text(json.dumps({"rows": rows}, indent=1) + "\n")
                print(json.dumps(row), flush=True)
    OUT_MD.write_text(render(rows) + kept_section(OUT_MD))


if __name__ == "__main__":
    main()
