"""The tuned judges shipped in the package: each folder is whole, over the registry's own base weights.

Reading a tuned judge needs its base's weights (`tests/real/test_qwen_judge.py` loads the 0.5B one;
`tests/tune/test_tune_tiny.py` loads a tuned judge by registry name end to end); these checks need
none: what `load_judge` would refuse (a base with other weights, an adapter changed since its tune)
and what would silently change the shipped judge's figures (a built-in metric edited after the
adapter was trained on it) fail here first.
"""

from __future__ import annotations

import pytest

from localjudge.judges.adapters import ADAPTER, file_sha256, read_manifest
from localjudge.judges.registry import TunedSource, availability, load_registry
from localjudge.metrics import builtin_metric
from localjudge.weights.sources import PackageChunksSource

SUMMEVAL = ("coherence", "consistency", "fluency", "relevance")
TUNED = [j for j in load_registry().judges if isinstance(j.source, TunedSource)]


def test_the_summeval_judge_is_shipped():
    assert "qwen2.5-coder-0.5b-summeval" in [j.name for j in TUNED]


@pytest.mark.parametrize("entry", TUNED, ids=lambda j: j.name)
def test_a_shipped_tuned_judge_is_whole_and_over_its_registry_base(entry):
    folder = entry.source.folder()
    manifest = read_manifest(folder)
    base = load_registry().get(manifest.base)
    assert isinstance(base.source, PackageChunksSource)  # an embedded judge: anyone can install it by name
    assert manifest.base_provenance == f"sha256:{base.source.sha256}"
    assert manifest.family == base.family == entry.family and entry.license == base.license
    assert file_sha256(folder / ADAPTER) == manifest.adapter_sha256
    assert (folder / ADAPTER).stat().st_size < 8 * 2**20  # small: every version enters git history
    assert manifest.trained_on and manifest.never_shown
    assert availability(entry).startswith(("yes", "no: localjudge models --install"))


def test_the_summeval_judge_was_tuned_on_the_builtin_metrics_as_they_are():
    entry = next(j for j in TUNED if j.name == "qwen2.5-coder-0.5b-summeval")
    manifest = read_manifest(entry.source.folder())
    # the prompt it was trained on is the one `eval --metric consistency` builds today
    assert manifest.metrics == [builtin_metric(d).model_dump(mode="json") for d in SUMMEVAL]
    assert manifest.human_field == "human_{metric}" and manifest.human_scale == [1, 5]
    best = manifest.history[manifest.best_epoch]
    assert manifest.best_epoch > 0 and best.agreement > manifest.history[0].agreement
