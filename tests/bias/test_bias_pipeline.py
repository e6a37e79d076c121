"""Bias lab pipeline end to end with scripted fake models whose biases are planted in their policies.

Fake generators of three families write answers with a latent quality, a family marker word and
filler of varying length. Fake judges read the scoring prompt, find the answer in its fenced
block and score its quality, plus whatever bias the test plants. The real pipeline (generate →
judge_responses → analyze_judgments, and the CLI) must find each planted bias with the right sign
and significance, and nothing where nothing was planted.
"""

from __future__ import annotations

import json

import pytest
from bias_fakes import FAST, MARKERS, N_ITEMS, biased_judge, write_prompts, write_responses
from click.testing import CliRunner

from localjudge.bias.cases import response_pairs
from localjudge.bias.judging import judge_responses
from localjudge.bias.study import analyze_judgments, write_study
from localjudge.errors import ConfigError
from localjudge.io.cases import load_cases
from localjudge.metrics import builtin_metric
from localjudge.runs.generation import clean_response, generate_responses, generation_prompt, read_responses
from localjudge.runs.options import RunOptions, ScoringOptions
from localjudge.testing import fake_judge


@pytest.fixture(scope="module")
def prompts_file(tmp_path_factory):
    return write_prompts(tmp_path_factory.mktemp("bias"))


@pytest.fixture(scope="module")
def responses_file(prompts_file):
    return write_responses(prompts_file)


def _study(responses_file, judges):
    responses = read_responses(responses_file)
    metric, pairwise = builtin_metric("correctness"), builtin_metric("pairwise")
    judgments = [judge_responses(j, responses, metric, pairwise, run=RunOptions(progress=False)) for j in judges]
    return analyze_judgments(judgments, responses, responses_file, metric, pairwise, settings=FAST), judgments


@pytest.fixture(scope="module")
def planted(responses_file):
    judges = [
        biased_judge("j-alpha", "alpha", own_bonus=1.0),  # self-preference, pointwise and pairwise
        biased_judge("j-beta", "beta", first_bias=1.5),  # prefers position A
        biased_judge("j-gamma", "gamma", length_rate=0.5),  # rewards length (pointwise)
    ]
    return _study(responses_file, judges)


def _significant(report) -> set[tuple[str, str]]:
    return {(f.test, f.judge) for f in report.findings if f.significant}


def test_responses_record_generator_family_and_prompt_style(responses_file):
    rs = read_responses(responses_file)
    assert len(rs) == 3 * N_ITEMS
    by_gen = {r.generator: r for r in rs if r.id == "p00"}
    assert by_gen["gen-alpha"].generator_family == "alpha"
    assert by_gen["gen-alpha"].prompt_style == "chat" and by_gen["gen-beta"].prompt_style == "plain"
    assert by_gen["gen-alpha"].reference == "Answer 0." and by_gen["gen-alpha"].extra["category"] == "quiz"
    assert all(MARKERS[r.generator_family] in r.response for r in rs)


def test_cross_family_pairs_cover_each_item_once_per_family_pair(responses_file):
    pairs = response_pairs(read_responses(responses_file))
    assert len(pairs) == 3 * N_ITEMS
    assert all(
        a.id == b.id and a.generator < b.generator and a.generator_family != b.generator_family for a, b in pairs
    )


def test_planted_self_preference_is_found_for_its_judge_only(planted):
    study, _ = planted
    did = {s.judge: s.did for s in study.pointwise.self_preference}
    assert 0.6 < did["j-alpha"].value < 1.4 and did["j-alpha"].ci_low > 0
    assert abs(did["j-beta"].value) < 0.3 and abs(did["j-gamma"].value) < 0.3
    pair = {s.judge: s.difference for s in study.pairwise.pairwise_self_preference}
    assert pair["j-alpha"].value > 0.1 and pair["j-alpha"].ci_low > 0
    assert ("self_preference", "j-alpha") in _significant(study.pointwise)
    assert ("pairwise_self_preference", "j-alpha") in _significant(study.pairwise)
    assert not {("self_preference", "j-beta"), ("self_preference", "j-gamma")} & _significant(study.pointwise)


def test_planted_position_bias_is_found_for_its_judge_only(planted):
    study, _ = planted
    pos = {p.judge: p for p in study.pairwise.position}
    assert pos["j-beta"].first_position.value > 0.6 and pos["j-beta"].flip_rate.value > 0.2
    assert abs(pos["j-alpha"].first_position.value - 0.5) < 1e-9  # unbiased: both orders agree exactly
    assert pos["j-alpha"].flip_rate.value == 0.0
    assert {j for t, j in _significant(study.pairwise) if t == "position"} == {"j-beta"}


def test_planted_length_reward_is_found_for_its_judge_only(planted):
    study, _ = planted
    length = {b.judge: b.slope for b in study.pointwise.length}
    assert length["j-gamma"].value > 0.25 and length["j-gamma"].ci_low > 0
    assert {j for t, j in _significant(study.pointwise) if t == "length"} == {"j-gamma"}


def test_nothing_else_is_significant_in_the_planted_study(planted):
    study, _ = planted
    expected = {
        ("self_preference", "j-alpha"),
        ("perplexity_adjusted_self_preference", "j-alpha"),
        ("length", "j-gamma"),
        ("pairwise_length", "j-gamma"),  # j-gamma rewards length in pairs too
        ("pairwise_self_preference", "j-alpha"),
        ("position", "j-beta"),
    }
    assert _significant(study.pointwise) | _significant(study.pairwise) <= expected


def test_sign_flip_ignores_rounding_residue():
    # regression: an order-symmetric judge's P(first) is 0.5 * (p + 1 - p), which rounds to
    # 0.5 + 1e-16; thirty such residues of one sign came out "significant" (p = 1e-4).
    import numpy as np

    from localjudge.stats import sign_flip_p

    p = np.linspace(0.01, 0.99, 30)
    residue = 0.5 * (p + 1.0 - p) - 0.5
    assert np.any(residue != 0)
    assert sign_flip_p(residue, 1999, 0) == 1.0


def test_unbiased_judges_show_no_significant_effect(responses_file):
    study, _ = _study(responses_file, [biased_judge(f"u-{f}", f) for f in ("alpha", "beta", "gamma")])
    assert not _significant(study.pointwise) and not _significant(study.pairwise)
    assert study.pointwise.summary[0].startswith("No effect is significant")


def test_records_carry_lengths_perplexity_and_write_outputs(planted, responses_file, tmp_path):
    study, judgments = planted
    rec = judgments[0].pointwise[0]
    assert rec.judge_logppl is not None and rec.response_length > 0 and rec.score is not None
    files = write_study(study, judgments, tmp_path)
    assert {"json", "markdown", "heatmap", "pointwise", "pairwise"} <= set(files)
    assert json.loads(files["json"].read_text())["pointwise"]["kind"] == "pointwise"
    md = files["markdown"].read_text()
    assert "## Bias report (pointwise)" in md and "## Bias report (pairwise)" in md
    assert files["heatmap"].read_bytes()[:4] == b"\x89PNG"


def test_human_field_reaches_the_records(responses_file):
    responses = read_responses(responses_file)
    v = judge_responses(
        biased_judge("j", "alpha"),
        responses,
        builtin_metric("correctness"),
        builtin_metric("pairwise"),
        human_field="human",
        run=RunOptions(progress=False),
    )
    assert all(r.human_score is not None for r in v.pointwise)
    assert {r.human_preferred for r in v.pairwise} <= {"a", "b", None}


def test_metric_without_reference_is_refused(tmp_path):
    prompts = tmp_path / "p.jsonl"
    prompts.write_text(json.dumps({"id": "a", "input": "Question number 1?"}) + "\n")
    out = tmp_path / "r.jsonl"
    generate_responses(load_cases(prompts), biased_judge("g", "alpha"), RunOptions(out=out, progress=False))
    with pytest.raises(ConfigError, match="reference"):
        judge_responses(
            biased_judge("j", "alpha"),
            read_responses(out),
            builtin_metric("correctness"),
            run=RunOptions(progress=False),
        )


# -- generation ---------------------------------------------------------------------------------


def test_prompt_styles_and_plain_stops():
    case = load_cases_from_rows([{"id": "x", "input": "Why?"}])[0]
    assert generation_prompt(biased_judge("g", "beta", chat=False), case) == "Question: Why?\nAnswer:"
    assert generation_prompt(biased_judge("g", "alpha"), case).startswith("<user>\nWhy?")
    with_context = load_cases_from_rows([{"id": "y", "input": "Why?", "context": ["Doc one."]}])[0]
    assert (
        generation_prompt(biased_judge("g", "beta", chat=False), with_context)
        == "Context:\nDoc one.\n\nQuestion: Why?\nAnswer:"
    )
    assert clean_response(" Because.\n\nQuestion: Next?", plain=True) == "Because."
    assert clean_response("\nBecause.\nQuestion: Next?\nAnswer: No.", plain=True) == "Because."
    assert clean_response(" Because.\n\nMore.", plain=False) == "Because.\n\nMore."


def load_cases_from_rows(rows):
    from localjudge.io.cases import case_from_row

    return [case_from_row(r, "test", i) for i, r in enumerate(rows)]


def test_generate_resume_reproduces_an_uninterrupted_run(prompts_file, tmp_path):
    cases = load_cases(prompts_file)[:10]
    full, part = tmp_path / "full.jsonl", tmp_path / "part.jsonl"
    generate_responses(cases, biased_judge("g", "alpha"), RunOptions(out=full, progress=False), batch_size=4)
    lines = full.read_text().splitlines(keepends=True)
    part.write_text("".join(lines[:5]) + lines[5][:20])  # killed while writing the 6th record
    model = biased_judge("g", "alpha")
    generate_responses(cases, model, RunOptions(out=part, resume=True, progress=False), batch_size=4)
    assert part.read_text() == full.read_text()
    assert len(model.backend.calls) == 4 + 2  # chunk 5-8 again (for identical padding), chunk 9-10
    with pytest.raises(ConfigError, match="other settings"):
        generate_responses(
            cases, biased_judge("g", "alpha"), RunOptions(out=part, resume=True), batch_size=4, max_new_tokens=7
        )
    with pytest.raises(ConfigError, match="--resume"):
        generate_responses(cases, biased_judge("g", "alpha"), RunOptions(out=part), batch_size=4)


def test_a_mixed_precision_generator_resumes_its_own_responses(prompts_file, tmp_path):
    # the identity a resume checks (dtype and mixed precision) is what a response records
    cases = load_cases(prompts_file)[:6]
    out = tmp_path / "bf16.jsonl"

    def bf16(mixed: bool):
        model = biased_judge("g", "alpha")
        model.info = model.info.model_copy(update={"dtype": "bfloat16", "mixed_precision": mixed})
        return model

    generate_responses(cases[:3], bf16(True), RunOptions(out=out, progress=False), batch_size=4)
    assert json.loads(out.read_text().splitlines()[0])["generator_info"]["mixed_precision"] is True
    generate_responses(cases, bf16(True), RunOptions(out=out, resume=True, progress=False), batch_size=4)
    assert len(out.read_text().splitlines()) == 6
    with pytest.raises(ConfigError, match="mixed precision"):
        generate_responses(cases, bf16(False), RunOptions(out=out, resume=True, progress=False), batch_size=4)


def test_responses_holding_unicode_line_breaks_read_back(tmp_path):
    """Regression: responses are split at "\\n" only; a U+2028 in a response (written raw) once
    cut its record in two and made the responses file unreadable."""
    prompts = tmp_path / "p.jsonl"
    prompts.write_text(json.dumps({"id": "a", "input": "Question number 1?"}) + "\n")
    out = tmp_path / "r.jsonl"
    odd = fake_judge(lambda p: {}, lambda p: "one\u2028two\x85three", name="g", family="alpha")
    generate_responses(load_cases(prompts), odd, RunOptions(out=out, progress=False))
    assert "\u2028".encode() in out.read_bytes()
    assert [r.response for r in read_responses(out)] == ["one\u2028two\x85three"]


# -- CLI ----------------------------------------------------------------------------------------


@pytest.fixture()
def fake_loader(localjudge_scripted):
    families = {"gen-alpha": "alpha", "gen-beta": "beta", "j-alpha": "alpha", "j-beta": "beta"}

    def load(asked):
        name = asked.name
        assert asked.family == families[name]  # --family reaches the loader
        return biased_judge(name, families[name], own_bonus=1.0 if name == "j-alpha" else 0.0, chat=name != "gen-beta")

    localjudge_scripted.add_any(load)


# the fake models are not in the registry: each is given its family, as a path or hub id would be
GEN_FAMILIES = ["--family", "gen-alpha=alpha", "--family", "gen-beta=beta"]
JUDGE_FAMILIES = ["--family", "j-alpha=alpha", "--family", "j-beta=beta"]


def test_cli_generate_then_bias(prompts_file, tmp_path, fake_loader):
    from localjudge.cli import main

    out, report = tmp_path / "responses.jsonl", tmp_path / "report"
    runner = CliRunner()
    res = runner.invoke(
        main,
        [
            "generate",
            str(prompts_file),
            "--model",
            "gen-alpha",
            "--model",
            "gen-beta",
            *GEN_FAMILIES,
            "--out",
            str(out),
            "--max-new-tokens",
            "32",
            "--no-progress",
        ],
    )
    assert res.exit_code == 0, res.output
    assert len(read_responses(out)) == 2 * N_ITEMS
    res = runner.invoke(
        main, ["generate", str(prompts_file), "--model", "gen-alpha", "--out", str(out), *GEN_FAMILIES[:2]]
    )
    assert res.exit_code == 2 and "--resume" in res.output
    res = runner.invoke(
        main,
        [
            "bias",
            "run",
            str(out),
            "--judge",
            "j-alpha",
            "--judge",
            "j-beta",
            "--pairwise",
            *JUDGE_FAMILIES,
            "--out-dir",
            str(report),
            "--bootstrap",
            "200",
            "--no-progress",
        ],
    )
    assert res.exit_code == 0, res.output
    assert "[pointwise]" in res.output and "[pairwise]" in res.output
    assert "favours its own family" in res.output  # the planted j-alpha bias, in the summary
    for name in ("report.json", "report.md", "heatmap.png", "pointwise_records.jsonl", "pairwise_records.jsonl"):
        assert (report / name).is_file()
    assert (report / "records" / "j-alpha.correctness.jsonl").is_file()


def test_cli_bias_reports_bad_human_field_without_traceback(prompts_file, tmp_path, fake_loader):
    from localjudge.cli import main

    out = tmp_path / "responses.jsonl"
    runner = CliRunner()
    assert (
        runner.invoke(
            main,
            [
                "generate",
                str(prompts_file),
                "--model",
                "gen-alpha",
                "--model",
                "gen-beta",
                *GEN_FAMILIES,
                "--out",
                str(out),
                "--no-progress",
            ],
        ).exit_code
        == 0
    )
    res = runner.invoke(
        main,
        [
            "bias",
            "run",
            str(out),
            "--judge",
            "j-alpha",
            *JUDGE_FAMILIES[:2],
            "--out-dir",
            str(tmp_path / "r"),
            "--human-field",
            "category",
            "--no-progress",
        ],
    )
    assert res.exit_code == 2 and "not a number" in res.output and "Traceback" not in res.output


def test_cli_bias_with_a_pairwise_metric_only(prompts_file, tmp_path, fake_loader):
    from localjudge.cli import main

    out, report = tmp_path / "responses.jsonl", tmp_path / "report"
    runner = CliRunner()
    assert (
        runner.invoke(
            main,
            [
                "generate",
                str(prompts_file),
                "--model",
                "gen-alpha",
                "--model",
                "gen-beta",
                *GEN_FAMILIES,
                "--out",
                str(out),
                "--no-progress",
            ],
        ).exit_code
        == 0
    )
    res = runner.invoke(
        main,
        [
            "bias",
            "run",
            str(out),
            "--judge",
            "j-alpha",
            "--judge",
            "j-beta",
            *JUDGE_FAMILIES,
            "--metric",
            "pairwise",
            "--out-dir",
            str(report),
            "--bootstrap",
            "200",
            "--no-progress",
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    study = json.loads(res.output)
    assert study["pointwise"] is None and study["pairwise"]["kind"] == "pairwise"
    assert not (report / "heatmap.png").exists()


def test_perplexity_covariate_is_one_batched_engine_pass(tiny_tokenizer):
    """judge_logppl: the responses go through the likelihood engine in batches, not one forward each."""
    import torch

    from localjudge.bias.judging import judge_logppl
    from localjudge.engine.options import EngineOptions
    from localjudge.judges.judge import Judge
    from localjudge.runs.generation import ResponseRecord, generation_prompt, response_continuation
    from localjudge.testing.tiny_models import tiny_info, tiny_llama

    info = tiny_info(1024)
    model = tiny_llama(tiny_tokenizer)
    options = EngineOptions(device="cpu", dtype="float32", token_budget=4096)
    judge = Judge.from_model(model, tiny_tokenizer, info, options)
    responses = [
        ResponseRecord(
            id=f"q{i % 3}",
            input=f"the answer is good yes {i % 3}",
            generator=f"g{i}",
            generator_family="tiny",
            response=" ".join(["the response is fluent"] * (1 + i % 4)),
            prompt_style="plain",
            max_new_tokens=8,
            batch_size=1,
            generator_info={},
            localjudge_version="0",
        )
        for i in range(12)
    ]
    with judge.backend.observe_forwards() as calls:
        got = judge_logppl(judge, responses)
    batches = [len(c.lengths) for c in calls if c.kind == "batch"]
    assert len(batches) < len(responses) and sum(batches) == len(responses)
    assert judge.backend.stats.head_rows == sum(
        len(judge.backend.encode_continuation(response_continuation(judge, r.response))) for r in responses
    )  # output layer at response tokens only
    for r, nll in zip(responses, got):
        from localjudge.io.cases import TestCase

        prompt = tiny_tokenizer(generation_prompt(judge, TestCase(id=r.id, input=r.input)))["input_ids"]
        cont = tiny_tokenizer(response_continuation(judge, r.response), add_special_tokens=False)["input_ids"]
        with torch.inference_mode():
            logits = model(input_ids=torch.tensor([prompt + cont])).logits[0].double()
        logp = torch.log_softmax(logits[len(prompt) - 1 : -1], -1)[torch.arange(len(cont)), torch.tensor(cont)]
        assert nll == pytest.approx(float(-logp.mean()), abs=1e-5)


def test_min_valid_mass_reaches_every_judgment_and_unscored_pairs_give_none(responses_file):
    """The fake judges put 0.95 of their probability on the valid scores and labels."""
    responses = [r for r in read_responses(responses_file) if r.id in ("p00", "p01")]  # 2 items × 3 families
    metric, pairwise = builtin_metric("correctness"), builtin_metric("pairwise")
    default = judge_responses(
        biased_judge("j-alpha", "alpha"), responses, metric, pairwise, run=RunOptions(progress=False)
    )
    assert all(p.score is not None for p in default.pointwise)
    assert default.pairwise and all(p.p_a_first is not None for p in default.pairwise)
    strict = judge_responses(
        biased_judge("j-alpha", "alpha"),
        responses,
        metric,
        pairwise,
        run=RunOptions(progress=False),
        scoring=ScoringOptions(min_valid_mass=0.96),
    )
    assert all(p.score is None for p in strict.pointwise)
    # an unscored pair keeps its readings in its result record, but gives the analysis no judgment
    assert all(p.p_a_first is None and p.p_a_second is None for p in strict.pairwise)


def test_cli_bias_min_valid_mass_is_recorded_and_not_an_analysis_option(responses_file, tmp_path, fake_loader):
    from localjudge.cli import main
    from localjudge.runs.results_file import read_results

    report = tmp_path / "report"
    args = ["bias", "run", str(responses_file), "--out-dir", str(report), "--bootstrap", "50", "--no-progress"]
    res = CliRunner().invoke(main, [*args, "--judge", "j-alpha", *JUDGE_FAMILIES[:2], "--min-valid-mass", "0.5"])
    assert res.exit_code == 0, res.output
    records = read_results(report / "records" / "j-alpha.correctness.jsonl")
    assert records and all(r.min_valid_mass == 0.5 for r in records)
    again = CliRunner().invoke(
        main,
        ["bias", "analyse", str(responses_file), "--out-dir", str(tmp_path / "r2"), "--judgments", str(report)]
        + ["--min-valid-mass", "0.5"],
    )
    assert again.exit_code == 2 and "No such option '--min-valid-mass'" in again.output


def test_all_pairs_a_source_field_and_recognition_kept_in_a_records_folder_resume(responses_file, tmp_path):
    """The study's options (`pairs="all"`, `source_field`, `recognition`): every phase kept in the folder,
    read back without the judge, and a rerun after a loss judges only what is missing."""
    from localjudge.bias.recognition import Recognition
    from localjudge.bias.records_folder import RecordsFolder

    responses = [
        r.model_copy(update={"extra": {**r.extra, "source": f"The text of {r.id}."}})
        for r in read_responses(responses_file)
        if r.id in ("p00", "p01")
    ]
    metric, pairwise = builtin_metric("correctness"), builtin_metric("pairwise")
    judge = biased_judge("gen-alpha", "alpha", own_bonus=1.0)  # a judge that is also a generator
    rdir = tmp_path / "records"
    options = {"pairs": "all", "source_field": "source", "recognition": Recognition("answers", "Question")}
    logged: list[tuple[str, str, int]] = []

    def run():
        return judge_responses(
            judge,
            responses,
            metric,
            pairwise,
            records_dir=rdir,
            run=RunOptions(resume=True, progress=False),
            log=lambda phase, item, seconds, prompts: logged.append((phase, item, prompts)),
            **options,
        )

    first = run()
    n_pairs = 2 * 3  # two items, three generators each: every pair, same family or not
    assert len(first.pointwise) == 6 and len(first.pairwise) == n_pairs and len(first.recognition) == 2 * 2
    read = [p for p in judge.backend.calls if "The text of p0" in p]  # the source field, not the question
    assert len(read) >= 6 + 2 * n_pairs + 2 * 4 and not any("Question number" in p for p in read)
    assert {r.generator_a for r in first.recognition} | {r.generator_b for r in first.recognition} >= {"gen-alpha"}
    assert [(phase, item) for phase, item, _ in logged if phase in ("logppl", "recognition")] == [
        ("logppl", "p00"),
        ("logppl", "p01"),
        ("recognition", "p00"),
        ("recognition", "p01"),
    ]
    folder = RecordsFolder(rdir, "gen-alpha", responses, metric, pairwise, "all", recognition=True)
    assert set(folder.missing().values()) == {0}
    assert folder.judgments() == first

    # lose the last item's perplexities and recognition answers: the rerun asks only for those
    for phase in ("logppl", "recognition"):
        path = rdir / f"gen-alpha.{phase}.jsonl"
        lines = path.read_text().splitlines(keepends=True)
        path.write_text("".join(line for line in lines if '"p01"' not in line))
    assert folder.missing() == {
        "pointwise": 0,
        "logppl": 3,
        "pairwise": 0,
        "recognition": 2,
    }
    with pytest.raises(Exception, match="has not finished"):
        folder.judgments()
    logged.clear()
    assert run() == first
    assert [(phase, item) for phase, item, _ in logged if phase in ("logppl", "recognition")] == [
        ("logppl", "p01"),
        ("recognition", "p01"),
    ]
