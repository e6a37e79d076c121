"""The head judges shipped in the package: each folder is whole, over the registry's own base weights.

Reading them needs their base's weights (`tests/real/test_shipped_heads.py`); these checks need none:
what `load_judge` would refuse (a base with other weights, heads changed since their fit) and what
would silently change the shipped figures (a built-in metric edited after the heads were fit on it)
fail here first.
"""

from __future__ import annotations

import pytest

from localjudge.judges.heads import HEAD_WEIGHTS, is_head_folder, read_head_manifest
from localjudge.judges.registry import TunedSource, availability, load_registry
from localjudge.metrics import builtin_metric
from localjudge.weights.hashes import sha256_file

SHIPPED = [j for j in load_registry().judges if isinstance(j.source, TunedSource)]


def test_the_summeval_heads_are_shipped_and_every_shipped_judge_is_a_head_judge():
    assert "smollm2-135m-summeval" in [j.name for j in SHIPPED]
    assert all(is_head_folder(j.source.folder()) for j in SHIPPED)


@pytest.mark.parametrize("entry", SHIPPED, ids=lambda j: j.name)
def test_a_shipped_head_judge_is_whole_over_its_registry_base_and_the_builtin_metrics_as_they_are(entry):
    folder = entry.source.folder()
    manifest = read_head_manifest(folder)
    base = load_registry().get(manifest.base)
    # an embedded judge whose weights the registry pins: anyone can install the very base by name
    assert manifest.base_provenance == f"sha256:{getattr(base.source, 'sha256', None)}"
    assert manifest.family == base.family == entry.family and entry.license == base.license
    assert sha256_file(folder / HEAD_WEIGHTS) == manifest.head_sha256
    assert (folder / HEAD_WEIGHTS).stat().st_size < 2**20  # small: every version enters git history
    assert manifest.trained_on and manifest.never_shown and manifest.dtype == "float32"
    for h in manifest.heads:
        # the metric a head answers is the built-in one `eval --metric NAME` builds today
        assert h.reading["fitted_for"] == builtin_metric(h.metric).model_dump(mode="json")
        assert h.reading["head_sha256"] == manifest.head_sha256 and h.chosen.agreement is not None
    assert availability(entry).startswith(("yes", "no: localjudge models --install"))
