"""The embedded default judge through the prepared-copy cache: a cold and a warm load score bitwise alike.

The cache's rules are checked on a tiny GGUF in `tests/judges/test_load_cache.py`.
"""

from __future__ import annotations

import hashlib

import pytest
from prepared import assert_same, copies, fingerprint

from localjudge import load_judge

pytestmark = pytest.mark.usefixtures("torch_one_thread")


@pytest.mark.slow
def test_smollm2_cold_and_warm_scores_are_bitwise_identical(tmp_path):
    from localjudge.judges.registry import load_registry
    from localjudge.weights.sources import package_gguf_path

    cold = load_judge("smollm2-135m", device="cpu", dtype="float32", cache=tmp_path, progress=False)
    warm = load_judge("smollm2-135m", device="cpu", dtype="float32", cache=tmp_path, progress=False)
    assert len(copies(tmp_path)) == 1
    sha = hashlib.sha256(package_gguf_path(load_registry().get("smollm2-135m").source).read_bytes()).hexdigest()
    assert cold.info == warm.info and cold.info.provenance == f"sha256:{sha}"
    a, b = fingerprint(cold), fingerprint(warm)
    assert_same(a, b)
    assert a["mass"].min() > 0.5  # a real judge reading real scores, not an empty comparison
