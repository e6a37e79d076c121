"""A seed cache folder for `memory.py --seed`: the fp32 prepared copies of a cache, hard-linked, and
each other layout's copy made from them by the casts a cold load makes (`gguf.to_layout`).

The fp32 copy holds bitwise what a parse of the GGUF gives (`tests/judges/test_load_cache.py`), so a
layout made from it is the copy a cold load would write, without parsing the GGUF again: for a host
too busy to parse every judge once per layout. Usage (localjudge of the version measured):
`python -m benchmarks.memory._seed FROM_CACHE SEED_DIR [--layouts bfloat16-mixed bfloat16]`.
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
from functools import partial
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="a cache folder holding fp32 copies (and joined GGUFs)")
    parser.add_argument("seed", type=Path, help="the seed folder to write")
    parser.add_argument("--layouts", nargs="*", default=["bfloat16-mixed", "bfloat16"])
    args = parser.parse_args()
    for part in ("weights", "hashes", "gguf"):
        if (args.source / part).is_dir():
            shutil.copytree(args.source / part, args.seed / part, copy_function=os.link, dirs_exist_ok=True)
    if not args.layouts:
        return
    from localjudge.weights.cache import CacheKey, read_manifest, store_prepared
    from localjudge.weights.gguf import _save, load_prepared, to_layout

    for folder in sorted((args.seed / "weights").iterdir()):
        manifest = read_manifest(folder)
        if manifest.dtype != "float32":
            continue
        for layout in args.layouts:
            model, tokenizer = load_prepared(folder, "float32")
            to_layout(model, layout)
            key = CacheKey(manifest.gguf_sha256, manifest.transformers, layout)
            where = store_prepared(key, manifest.gguf_file, partial(_save, model, tokenizer), args.seed)
            print(f"{folder.name} -> {where.name}", flush=True)
            del model
            gc.collect()


if __name__ == "__main__":
    main()
