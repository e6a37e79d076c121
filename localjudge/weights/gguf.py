"""A GGUF judge's model and tokenizer: from its prepared copy in the cache, else prepared once from the GGUF.

A first load writes the copy in the layout the run reads (`cache.LAYOUTS`: fp32, bf16, or bf16
linear layers beside fp32 for mixed precision) one tensor at a time (`gguf_stream`: the model on
the meta device, each GGUF tensor dequantised, cast and written at its place), then loads the copy
as every later load does (about a second, after verifying it): no load holds the model twice
(`benchmarks/memory/memory_results.md`). A load reads every tensor in the dtype it is stored in: a
bf16 judge never holds an fp32 model.

Without a cache, or for a GGUF the stream cannot write exactly, the GGUF is parsed whole by
transformers (fp32, the dtype it dequantises to), which reads it three times per load (the
tokenizer's config, the model's config, the weights), each read parsing every metadata field
again, the vocabulary included: `_parse_once` lets the reads share one parse of the file, and the
two metadata-only reads share one result (1.4 s of the 0.5B Qwen judge's cold load).

The cache is an optimisation: when its folder cannot hold the copy (disk full, read-only, or a
copy larger than its size limit), the load goes on from the GGUF with a one-line warning rather
than failing. After each load the folder is brought back within its limit (`cache_list.evict`).
"""

from __future__ import annotations

import gc
import json
import logging
from functools import partial
from pathlib import Path
from typing import Any

from localjudge.errors import CacheError
from localjudge.weights.cache import (
    LAYOUTS,
    CacheKey,
    cache_root,
    discard,
    held,
    prepared,
    store_prepared,
    weights_dir,
)
from localjudge.weights.cache_list import CacheLimit, cache_limit, evict, too_big
from localjudge.weights.gguf_parse import UNLOADABLE, _parse_once, cannot_load, to_layout
from localjudge.weights.hashes import fresh_sha256, remembered_sha256

log = logging.getLogger("localjudge")


def load_gguf(path: Path, layout: str, cache: bool | str | Path = True) -> tuple[Any, Any, str]:
    """Model, tokenizer and provenance ("sha256:<hex>" of the GGUF, however it was loaded).

    Args:
        path: The GGUF file.
        layout: How the weights are read (`cache.LAYOUTS`): "float32", "bfloat16" or "float16", or
            "bfloat16-mixed" / "float16-mixed" (mixed precision: the linear layers `engine.mixed`
            lowers in that dtype, the rest in fp32; without a copy, parsed in fp32 and lowered later).
        cache: True: keep a prepared copy in `cache_root()`; a folder: keep it there instead;
            False: parse the GGUF on every load.

    Raises:
        ModelUnavailableError: transformers cannot load this GGUF.
        ConfigError: $LOCALJUDGE_CACHE_LIMIT is not a size.
    """
    import transformers

    assert layout in LAYOUTS, layout
    if cache is False:
        return (*parse_gguf(path, _parse_dtype(layout)), f"sha256:{fresh_sha256(path)}")
    root = cache_root(None if cache is True else cache)
    limit = cache_limit()  # a bad value fails now, not after a parse
    with held(path):  # a joined GGUF being read is not evicted
        sha = remembered_sha256(path, root)
        key = CacheKey(sha, transformers.__version__, layout)
        loaded = _from_copy(key, root, path.name)
        if loaded is None:
            fresh = remembered_sha256(path, root, rehash=True)  # a parse reads the GGUF: hashed from its bytes
            if fresh != sha:
                log.warning("%s changed without its size, mtime or ctime changing; its sha256 is now %s", path, fresh)
                key = CacheKey(fresh, transformers.__version__, layout)
                loaded = _from_copy(key, root, path.name)
        if loaded is None:
            loaded = _prepare(path, key, root, limit)
    try:
        for entry in evict(root, limit.bytes, keep=(weights_dir(root) / key.name, path)):
            log.info(
                "evicted the least recently used %s (%.0f MiB) from the judge cache", entry.path, entry.size / 2**20
            )
    except OSError as exc:
        log.warning("cannot bring the judge cache in %s within its limit: %s", root, exc.strerror or exc)
    return (*loaded, f"sha256:{key.gguf_sha256}")


def _parse_dtype(layout: str):
    """The torch dtype a GGUF is parsed in for `layout`: fp32 under mixed precision (lowered later)."""
    import torch

    return getattr(torch, "float32" if layout.endswith("-mixed") else layout)


def _from_copy(key: CacheKey, root: Path, gguf_file: str) -> tuple[Any, Any] | None:
    """Model and tokenizer from the verified copy for `key`, or None (no copy, or it does not load: discarded)."""
    try:
        with prepared(key, root) as folder:
            if folder is None:
                return None
            try:
                model, tokenizer = load_prepared(folder, key.layout)
            except Exception as exc:  # verified bytes that still do not load: never used, rebuilt
                log.warning("prepared copy %s does not load (%s); rebuilding it from the GGUF", folder, exc)
            else:
                log.info("loaded the prepared copy %s of %s", folder, gguf_file)
                return model, tokenizer
    except OSError as exc:  # e.g. a cache folder we may not read
        log.warning("cannot read the judge cache in %s (%s); loading from the GGUF", root, exc.strerror or exc)
        return None
    discard(folder)
    return None


def _prepare(path: Path, key: CacheKey, root: Path, limit: CacheLimit) -> tuple[Any, Any]:
    """Writes the copy for the key's layout from the GGUF, one tensor at a time (`gguf_stream`), and
    returns the judge as the copy loads it: the load never holds the model twice. A GGUF that cannot
    be streamed is parsed whole (`_prepare_parsed`)."""
    from localjudge.weights.gguf_stream import Unstreamable

    try:
        where = _write_streamed(path, key, root, limit)
    except Unstreamable as exc:
        log.info("%s is parsed whole to prepare its copy (%s)", path.name, exc)
        return _prepare_parsed(path, key, root, limit)
    except CacheError as exc:
        log.warning("%s (loaded from the GGUF this time)", exc)
        return parse_gguf(path, _parse_dtype(key.layout))
    log.info("prepared copy of %s written to %s", path.name, where)
    gc.collect()  # the GGUF's tokenizer and metadata, which the copy's load does not need
    with held(where):
        return load_prepared(where, key.layout)


def _write_streamed(path: Path, key: CacheKey, root: Path, limit: CacheLimit) -> Path:
    """The copy for `key` written from the GGUF (`gguf_stream`); the folder it is in."""
    from localjudge.weights.gguf_stream import streamed_copy

    with streamed_copy(path, key.layout) as copy:
        error = too_big(copy.size, limit)
        if error is not None:
            raise error
        evict(root, limit.bytes, incoming=copy.size)
        return store_prepared(key, path.name, copy.write, root, copy.size)


def _prepare_parsed(path: Path, key: CacheKey, root: Path, limit: CacheLimit) -> tuple[Any, Any]:
    """Parses the GGUF in fp32, casts it in place to the key's layout, writes the copy, and returns
    the judge as the copy loads it (for a GGUF `gguf_stream` cannot write tensor by tensor)."""
    import torch

    layout = key.layout
    model, tokenizer = parse_gguf(path, torch.float32)
    if not _plain_weights(model):  # blocks kept packed for GGUF kernels: no copy, and they follow the dtype
        return (model, tokenizer) if layout == "float32" else parse_gguf(path, _parse_dtype(layout))
    to_layout(model, layout)
    size = sum(p.numel() * p.element_size() for p in model.parameters())
    try:
        error = too_big(size, limit)
        if error is not None:
            raise error
        evict(root, limit.bytes, incoming=size)
        where = store_prepared(key, path.name, partial(_save, model, tokenizer), root, size)
    except CacheError as exc:
        if layout == "float32":
            log.warning("%s (loaded from the GGUF this time)", exc)
            return model, tokenizer
        # a model cast in place is not one loaded in that dtype (transformers builds the latter's
        # buffers in it too): parsed again as a load without a cache parses it
        log.warning("%s (loaded from the GGUF this time, parsed again for %s)", exc, layout)
        del model
        gc.collect()
        return parse_gguf(path, _parse_dtype(layout))
    log.info("prepared copy of %s written to %s", path.name, where)
    if layout == "float32":
        return model, tokenizer
    del model  # the judge in another layout is what every later load reads: the copy
    gc.collect()
    with held(where):
        return load_prepared(where, layout)


def parse_gguf(path: Path, dtype) -> tuple[Any, Any]:
    """Model and tokenizer from the GGUF itself, parsed once; plain tensors, without GGUF quantizer state."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        with _parse_once():
            tokenizer = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
            model: Any = AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name, dtype=dtype)
    except UNLOADABLE as exc:
        raise cannot_load(path, exc) from None
    if _plain_weights(model) and getattr(model, "hf_quantizer", None) is not None:
        # dequantised on load: the quantizer has nothing left to do, and it would refuse
        # save_pretrained; without it the model is the one a prepared copy loads as
        model.hf_quantizer = None
        del model.config.quantization_config
    return model, tokenizer


def _plain_weights(model) -> bool:
    """Whether the weights are ordinary tensors (dequantised), not GGUF blocks kept packed for kernels."""
    quantizer = getattr(model, "hf_quantizer", None)
    return quantizer is None or not getattr(quantizer, "packed_modules", None)


def _save(model, tokenizer, folder: Path) -> None:
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)


def load_prepared(folder: Path, layout: str) -> tuple[Any, Any]:
    """Model and tokenizer from a prepared copy (safetensors and tokenizer files, as `_save` writes them).

    "float32", "bfloat16", "float16": the model built in that dtype, as the copy stores it. A mixed
    layout: built in fp32 with every tensor read in the dtype the copy stores it in, so the linear
    weights arrive low, never widened (transformers' per-tensor dtype plan, `_stored_dtypes`).
    """
    import torch
    from transformers import AutoModelForCausalLM

    kwargs: dict[str, Any] = {"local_files_only": True, "use_safetensors": True}
    if not layout.endswith("-mixed"):
        model = AutoModelForCausalLM.from_pretrained(folder, dtype=getattr(torch, layout), **kwargs)
        return model, load_tokenizer(folder)
    plain = _model_class(folder)
    stored = _stored_dtypes(folder)
    reading: Any = type(plain.__name__, (plain,), {"_get_dtype_plan": lambda self, dtype: stored})
    model = reading.from_pretrained(folder, dtype=torch.float32, **kwargs)
    model.__class__ = plain  # the class transformers would have built; the plan was for this load only
    return model, load_tokenizer(folder)


def _model_class(folder: Path):
    """The causal-LM class `AutoModelForCausalLM` builds for the copy's config."""
    from transformers import AutoConfig, AutoModelForCausalLM
    from transformers.models.auto.auto_factory import _get_model_class

    config = AutoConfig.from_pretrained(folder, local_files_only=True)
    return _get_model_class(config, AutoModelForCausalLM._model_mapping)


def _stored_dtypes(folder: Path) -> dict[str, Any]:
    """Each tensor of the copy stored in another dtype than fp32, as transformers' dtype plan keys it
    (a regular expression matching the whole name; read from the files' headers, not their data)."""
    import re

    import torch
    from safetensors import safe_open

    names = {"BF16": torch.bfloat16, "F16": torch.float16}
    plan: dict[str, Any] = {}
    for file in sorted(folder.glob("*.safetensors")):
        with safe_open(file, framework="pt") as f:
            for name in f.keys():
                dtype = names.get(f.get_slice(name).get_dtype())
                if dtype is not None:
                    plan[f"^{re.escape(name)}$"] = dtype
    return plan


def load_tokenizer(folder: Path):
    """The saved tokenizer, its `tokenizer.json` read as it is by the tokenizers library.

    `AutoTokenizer.from_pretrained` would also parse that file in Python, and a class with its
    own `__init__` (GemmaTokenizer, LlamaTokenizer...) rebuilds the whole pipeline from the
    vocabulary and merges: 3-5 s for Gemma's 262k tokens against 1-1.5 s here. The file is the
    serialisation of the tokenizer the GGUF gave, so this is that tokenizer again; only the
    class's own default padding side is carried over from the class the config names.
    """
    from transformers import TokenizersBackend
    from transformers.models.auto.tokenization_auto import tokenizer_class_from_name

    config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    named = tokenizer_class_from_name(config.pop("tokenizer_class", None) or "") or TokenizersBackend
    for key in ("backend", "is_local", "local_files_only"):  # how it was loaded, not what it is
        config.pop(key, None)
    config.setdefault("padding_side", named.padding_side)
    template = folder / "chat_template.jinja"
    if template.is_file():
        config["chat_template"] = template.read_text(encoding="utf-8")
    return TokenizersBackend(
        tokenizer_file=str(folder / "tokenizer.json"),
        name_or_path=str(folder),
        **config,
    )
