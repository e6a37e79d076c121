"""`localjudge inspect JUDGE`: who a judge is, how it spells each score, and what probes read."""

from __future__ import annotations

import hashlib
import json

import click

from localjudge.cli.options import SectionedCommand, judge_load_options, load_from_options, read_scale


@click.command("inspect", cls=SectionedCommand)
@click.argument("judge_name", metavar="JUDGE")
@click.option("--low", type=int, default=None, help="Lowest score of the scale (default scale 1-10).")
@click.option("--high", type=int, default=None, help="Highest score of the scale.")
@click.option("--labels", default=None, help="Comma-separated label scale instead of scores, e.g. A,B.")
@click.option(
    "--probe", "probes", multiple=True, help="A rendered prompt to read the scale at (repeatable); default two."
)
@click.option("--json", "as_json", is_flag=True, help="Print the whole report as JSON.")
@click.option("--no-progress", is_flag=True, help="Hide progress bars (also hidden when stderr is not a terminal).")
@judge_load_options
def inspect_cmd(judge_name, low, high, labels, probes, as_json, no_progress, **load_kw) -> None:
    """Show what to check before trusting JUDGE (a registry name, model dir, .gguf file or hub id).

    Family, source and revision, dtype, device, context length and chat template; how the judge
    spells each score of the scale (token paths by id and text); and how much probability short
    probe prompts put on valid scores.
    """
    from localjudge.errors import ConfigError
    from localjudge.runs.inspection import inspect_judge

    scale = read_scale(low, high, labels, default=(1, 10))
    if any(not p.strip() for p in probes):
        raise ConfigError("a --probe is empty; give every probe some text")
    judge = load_from_options(judge_name, **load_kw, progress=not no_progress)
    report = inspect_judge(judge, low=scale.low, high=scale.high, labels=scale.labels, probes=probes or None)
    if as_json:
        click.echo(json.dumps(report.model_dump(mode="json"), indent=1, ensure_ascii=False))
        return
    info, model = report.judge, report.model
    template = model.chat_template
    rows = [
        ("judge", info.name),
        ("family", info.family),
        ("source", info.source),
        ("provenance", info.provenance),
        (
            "runs with",
            f"{info.dtype} on {info.device}" + (f", token budget {info.token_budget}" if info.token_budget else ""),
        ),
        ("context", f"{info.context_length} tokens"),
        ("architecture", f"{model.architecture}, {_count(model.parameters)} weights" if model.architecture else "-"),
        ("tokenizer", f"{model.tokenizer or '-'}, {model.vocab_size} tokens, {model.logit_rows or '-'} logit rows"),
        ("special tokens", f"BOS {model.bos_token!r} (added: {model.adds_bos}), EOS {model.eos_token!r}"),
        (
            "chat template",
            ("in use" if info.chat_template else "not used (plain prompts)")
            + (
                f"; {len(template)} chars, sha256 {hashlib.sha256(template.encode()).hexdigest()[:12]}"
                if template
                else ""
            ),
        ),
    ]
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        click.echo(f"{key.ljust(width)}  {value}")
    n_paths = sum(len(s.paths) for s in report.spellings)
    click.echo(
        f"\nscale {report.scale}: {n_paths} token paths, {report.tree_nodes} tree nodes, "
        f"{report.continuation_tokens} continuation tokens"
    )
    for s in report.spellings:
        paths = " | ".join(" + ".join(f"{t.id} {json.dumps(t.text, ensure_ascii=False)}" for t in p) for p in s.paths)
        click.echo(f"  {s.value}: {paths or '(no path: this outcome cannot be spelled)'}")
    for k, p in enumerate(report.probes, 1):
        top = sorted(p.probs.items(), key=lambda kv: -kv[1])[:3]
        shown = ", ".join(f"{v}: {q:.2f}" for v, q in top)
        state = "scored" if p.scored else "UNSCORED"
        expected = f", expected {p.expected:.2f}" if p.expected is not None else ""
        click.echo(f"\nprobe {k}: valid mass {p.valid_mass:.3f} ({state}{expected}); top {shown}")
        click.echo(f"  ends with {json.dumps(p.prompt[-60:], ensure_ascii=False)}")
        click.echo(f"  greedy    {json.dumps(p.greedy, ensure_ascii=False)}")


def _count(n: int | None) -> str:
    return "-" if n is None else f"{n / 1e9:.2f}B" if n >= 1e9 else f"{n / 1e6:.1f}M" if n >= 1e6 else str(n)
