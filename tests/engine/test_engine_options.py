"""Engine options: validated in one place, passed to the backend, recorded from what ran."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from localjudge import load_judge
from localjudge.engine.options import EngineOptions
from localjudge.errors import ConfigError
from localjudge.io.cases import TestCase
from localjudge.judges.judge import JudgeInfo
from localjudge.metrics import builtin_metric
from localjudge.runs.evaluate import evaluate
from localjudge.testing.tiny_models import tiny_llama

pytestmark = pytest.mark.usefixtures("torch_one_thread")


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory, tiny_tokenizer) -> Path:
    """A local model directory (config, tokenizer, safetensors) of the tiny Llama."""
    d = tmp_path_factory.mktemp("tiny_model")
    tiny_llama(tiny_tokenizer).save_pretrained(d)
    tiny_tokenizer.save_pretrained(d)
    return d


# -- validation ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "field, value, words",
    [
        ("dtype", "float8", "unknown dtype"),
        ("dtype", 16, "unknown dtype"),
        ("tree_tolerance", 1.0, "tree_tolerance must be in [0, 1)"),
        ("tree_tolerance", -0.1, "tree_tolerance must be in [0, 1)"),
        ("tree_tolerance", "small", "tree_tolerance"),
        ("token_budget", 0, "token_budget"),
        ("token_budget", "lots", "token_budget"),
        ("device", 3, "device"),
        ("reuse_prefix", "maybe", "reuse_prefix"),
        ("budget", 4096, "budget"),
    ],
)
def test_each_bad_option_is_a_config_error_naming_it(field, value, words):
    with pytest.raises(ConfigError) as err:
        EngineOptions(**{field: value})
    assert words in str(err.value)


def test_dtype_aliases_are_normalised():
    assert [EngineOptions(dtype=d).dtype for d in ("fp32", "bf16", "fp16", "auto", "float16")] == [
        "float32",
        "bfloat16",
        "float16",
        "auto",
        "float16",
    ]


def test_options_are_frozen():
    with pytest.raises(ValidationError):
        EngineOptions().reuse_prefix = False  # type: ignore[misc]


def test_resolve_picks_device_dtype_and_budget():
    cpu = EngineOptions().resolve(cuda_available=False)
    assert (cpu.device, cpu.dtype, cpu.token_budget) == ("cpu", "float32", 4096) and cpu.resolved
    gpu = EngineOptions().resolve(cuda_available=True)
    assert (gpu.device, gpu.dtype, gpu.token_budget) == ("cuda", "bfloat16", 16384)
    kept = EngineOptions(device="cpu", token_budget=77, reuse_prefix=False).resolve(True, default_dtype="float16")
    assert (kept.device, kept.dtype, kept.token_budget, kept.reuse_prefix) == ("cpu", "float16", 77, False)
    assert not EngineOptions().resolved
    with pytest.raises(ConfigError, match="CUDA is not available"):
        EngineOptions(device="cuda:1").resolve(cuda_available=False)


def test_replace_validates():
    assert EngineOptions().replace(dtype="bf16").dtype == "bfloat16"
    with pytest.raises(ConfigError, match="tree_tolerance"):
        EngineOptions().replace(tree_tolerance=2)


# -- load_judge ------------------------------------------------------------------------------------


def test_load_judge_records_the_options_that_ran(model_dir, tmp_path):
    options = EngineOptions(device="cpu", token_budget=1234, reuse_prefix=False, tree_tolerance=0.0)
    judge = load_judge(str(model_dir), options=options)
    assert judge.options == judge.backend.options
    assert judge.backend.options == EngineOptions(
        device="cpu", dtype="float32", token_budget=1234, tree_tolerance=0.0, reuse_prefix=False, grid=32
    )
    assert (judge.info.token_budget, judge.info.reuse_prefix, judge.info.tree_tolerance) == (1234, False, 0.0)
    out = tmp_path / "r.jsonl"
    case = TestCase(id="c", input="q", actual_output="a", expected_output="a")
    evaluate([case], [builtin_metric("correctness")], judge, out=out, progress=False)
    rec = json.loads(out.read_text().splitlines()[0])
    assert {k: rec["judge"][k] for k in ("device", "dtype", "token_budget", "reuse_prefix", "tree_tolerance")} == {
        "device": "cpu",
        "dtype": "float32",
        "token_budget": 1234,
        "reuse_prefix": False,
        "tree_tolerance": 0.0,
    }


def test_load_judge_defaults_are_resolved_for_the_device(model_dir):
    judge = load_judge(str(model_dir), device="cpu")
    assert (judge.info.token_budget, judge.info.reuse_prefix, judge.info.dtype) == (4096, True, "float32")
    assert judge.options.resolved


def test_reuse_prefix_false_reaches_the_backend(model_dir):
    prompts = [" ".join(["the answer is good"] * 20) + f" score {i}" for i in range(4)]
    prefills = {}
    for reuse in (True, False):
        judge = load_judge(str(model_dir), options=EngineOptions(device="cpu", reuse_prefix=reuse))
        with judge.backend.observe_forwards() as calls:
            judge.score_texts(prompts, 0, 10)
        prefills[reuse] = [c.lengths[0] for c in calls if c.kind == "prefill"]
    assert prefills[True] and not prefills[False]


def test_options_object_or_the_shortcuts_never_both(model_dir):
    # one way in: the device/dtype shortcuts, or an EngineOptions with every setting
    with pytest.raises(ConfigError, match="dtype='float32' given beside an EngineOptions"):
        load_judge(str(model_dir), options=EngineOptions(dtype="bf16"), dtype="float32")
    with pytest.raises(ConfigError, match="device='cpu' given beside"):
        load_judge(str(model_dir), "cpu", options=EngineOptions(device="cpu"))
    with pytest.raises(TypeError):  # the other settings have no keyword of their own
        load_judge(str(model_dir), options=EngineOptions(reuse_prefix=True), reuse_prefix=False)  # type: ignore[call-arg]
    judge = load_judge(str(model_dir), options=EngineOptions(device="cpu", dtype="bf16", token_budget=999))
    assert (judge.info.dtype, judge.info.token_budget) == ("bfloat16", 999)
    assert load_judge(str(model_dir), device="cpu", dtype="bf16").info.dtype == "bfloat16"


def test_results_written_before_the_new_fields_still_load():
    old = {
        "name": "x",
        "family": "f",
        "source": "s",
        "provenance": "p",
        "dtype": "float32",
        "device": "cpu",
        "chat_template": True,
        "context_length": 8,
        "tree_tolerance": 1e-6,
    }
    info = JudgeInfo.model_validate(old)
    assert (info.token_budget, info.reuse_prefix) == (None, None)
    assert info.model_dump() == old  # and it writes back exactly what it read


# -- one owner: the backend holds the options, the judge reads them, with_options swaps them -------


def test_the_resolved_options_are_held_in_one_place(model_dir):
    judge = load_judge(str(model_dir), options=EngineOptions(device="cpu", token_budget=2048))
    assert judge.options is judge.backend.options  # read there, not copied
    fields = ("dtype", "device", "token_budget", "reuse_prefix", "tree_tolerance", "batch_invariant", "fp32_head")
    assert {f: getattr(judge.info, f) for f in fields} == {f: getattr(judge.options, f) for f in fields}
    assert judge.info.grid == judge.options.grid == 32
    assert not hasattr(judge, "_options") and "options" not in vars(judge)


def test_with_options_gives_the_same_weights_with_other_settings(model_dir):
    judge = load_judge(str(model_dir), device="cpu")
    prompts = [" ".join(["the answer is good"] * 20) + f" score {i}" for i in range(4)]
    other = judge.with_options(token_budget=512, reuse_prefix=False, tree_tolerance=0.0)
    assert other.backend.model is judge.backend.model and other.backend.tokenizer is judge.backend.tokenizer
    assert (other.options.token_budget, other.options.reuse_prefix, other.options.tree_tolerance) == (512, False, 0.0)
    assert (other.info.token_budget, other.info.reuse_prefix, other.info.tree_tolerance) == (512, False, 0.0)
    assert (judge.options.token_budget, judge.options.reuse_prefix, judge.info.token_budget) == (4096, True, 4096)
    # the batch-invariant engine: other batching and no prefix reuse give the same bits
    a, b = judge.score_texts(prompts, 0, 10), other.score_texts(prompts, 0, 10)
    assert [d.probs for d in a] == [d.probs for d in b]
    case = TestCase(id="c", input="q", actual_output="a", expected_output="a")
    rec = evaluate([case], [builtin_metric("correctness")], other, progress=False).records[0]
    assert (rec.judge["token_budget"], rec.judge["reuse_prefix"], rec.judge["tree_tolerance"]) == (512, False, 0.0)


@pytest.mark.parametrize(
    "changes, words",
    [
        ({"dtype": "bf16"}, "dtype is fixed when a judge loads"),
        ({"batch_invariant": False}, "batch_invariant is fixed"),
        ({"token_budget": None}, "token budget"),
        ({"tree_tolerance": 2.0}, "tree_tolerance must be in"),
        ({"no_such_setting": 1}, "no_such_setting"),
    ],
)
def test_with_options_refuses_what_a_load_fixes(model_dir, changes, words):
    judge = load_judge(str(model_dir), device="cpu")
    with pytest.raises(ConfigError, match=words):
        judge.with_options(**changes)


def test_with_options_needs_an_engine():
    from localjudge.testing import fake_judge

    with pytest.raises(ConfigError, match="no engine options"):
        fake_judge(lambda p: {"1": 1.0}).with_options(reuse_prefix=False)


def test_generation_honours_reuse_prefix(model_dir, tmp_path):
    """generate(share_prefix=True) prefills a shared prefix once only when reuse_prefix is on, as records say."""
    judge = load_judge(str(model_dir), device="cpu")
    prompts = [" ".join(["the answer is good"] * 20) + f" score {i}" for i in range(4)]
    texts, prefills = {}, {}
    for reuse in (True, False):
        j = judge.with_options(reuse_prefix=reuse)
        with j.backend.observe_forwards() as calls:
            texts[reuse] = j.generate(prompts, 6, share_prefix=True)
        prefills[reuse] = [c.lengths[0] for c in calls if c.kind == "prefill"]
    assert prefills[True] and not prefills[False]
    assert texts[True] == texts[False]  # bitwise batch invariance: the same tokens either way
    # a reasoning run records the setting its generation ran with
    metric = builtin_metric("correctness", reasoning="before")
    case = TestCase(id="c", input="q", actual_output="a", expected_output="a")
    for reuse in (True, False):
        rec = evaluate([case], [metric], judge.with_options(reuse_prefix=reuse), progress=False).records[0]
        assert rec.judge["reuse_prefix"] is reuse and rec.reasoning is not None
