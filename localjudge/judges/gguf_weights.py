"""A GGUF judge's model and tokenizer: from its prepared copy in the cache, else parsed once and prepared.

transformers reads a GGUF three times per load (the tokenizer's config, the model's config, the
weights), and each read parses every metadata field again, the vocabulary included: 3 x 5-40 s
for the embedded judges. `_parse_once` lets the three reads share one parse. The parsed model is
then saved as safetensors with its config and tokenizer (`cache.store_prepared`), and later loads
read that copy instead (about a second), after verifying it.

The cache is an optimisation: when its folder cannot hold the copy (disk full, read-only), the
load goes on from the GGUF with a one-line warning rather than failing.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from contextlib import contextmanager
from functools import lru_cache, partial
from pathlib import Path
from typing import Any

from localjudge.errors import CacheError, ModelUnavailableError
from localjudge.judges.cache import CacheKey, cache_root, discard, find_prepared, sha256_file, store_prepared

log = logging.getLogger("localjudge")

_PATCHING = threading.Lock()  # `_parse_once` swaps module attributes of `gguf` for the whole process


def load_gguf(path: Path, dtype_name: str, cache: bool | str | Path = True) -> tuple[Any, Any, str]:
    """Model, tokenizer and provenance ("sha256:<hex>" of the GGUF, however it was loaded).

    Args:
        path: The GGUF file.
        dtype_name: "float32", "bfloat16" or "float16".
        cache: True: keep a prepared copy in `cache_root()`; a folder: keep it there instead;
            False: parse the GGUF on every load.

    Raises:
        ModelUnavailableError: transformers cannot load this GGUF.
    """
    import torch
    import transformers

    dtype = getattr(torch, dtype_name)
    sha = file_sha256(path)
    provenance = f"sha256:{sha}"
    if cache is False:
        return (*_parse(path, dtype), provenance)
    root = cache_root(None if cache is True else cache)
    key = CacheKey(sha, transformers.__version__, dtype_name)
    try:
        folder = find_prepared(key, root)
    except OSError as exc:  # e.g. a cache folder we may not read
        log.warning("cannot read the judge cache in %s (%s); loading from the GGUF", root, exc.strerror or exc)
        folder = None
    if folder is not None:
        try:
            model, tokenizer = _load_prepared(folder, dtype)
            log.info("loaded the prepared copy %s of %s", folder, path.name)
            return model, tokenizer, provenance
        except Exception as exc:  # verified bytes that still do not load: never used, rebuilt
            log.warning("prepared copy %s does not load (%s); rebuilding it from the GGUF", folder, exc)
            discard(folder)
    model, tokenizer = _parse(path, dtype)
    if _plain_weights(model):
        size = sum(p.numel() * p.element_size() for p in model.parameters())
        try:
            where = store_prepared(key, path.name, partial(_save, model, tokenizer), root, size)
            log.info("prepared copy of %s written to %s", path.name, where)
        except CacheError as exc:
            log.warning("%s (loaded from the GGUF this time)", exc)
    return model, tokenizer, provenance


def _parse(path: Path, dtype) -> tuple[Any, Any]:
    """Model and tokenizer from the GGUF itself, parsed once; plain tensors, without GGUF quantizer state."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        with _parse_once():
            tokenizer = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
            model: Any = AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name, dtype=dtype)
    except (ValueError, KeyError, NotImplementedError) as exc:
        raise ModelUnavailableError(
            f"transformers cannot load the GGUF {path.name}: {exc}; convert it to safetensors "
            "or use a GGUF of a supported architecture (llama, mistral, qwen2, gemma3, phi3...)"
        ) from None
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


def _load_prepared(folder: Path, dtype) -> tuple[Any, Any]:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(folder, local_files_only=True, use_safetensors=True, dtype=dtype)
    return model, _load_tokenizer(folder)


def _load_tokenizer(folder: Path):
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


@contextmanager
def _parse_once():
    """Lets transformers' reads of a GGUF share one parse (`gguf.GGUFReader`) and one tensor-name map.

    transformers imports both from `gguf` when it calls them, so swapping the module attributes
    reaches every read; they are restored on exit. The name map is built per module of the
    model (hundreds of times) from the same two arguments.
    """
    import gguf

    real_reader, real_map = gguf.GGUFReader, gguf.get_tensor_name_map
    readers: dict[tuple, Any] = {}

    def reader(path, *args, **kwargs):
        key = (os.path.realpath(path), args, tuple(sorted(kwargs.items())))
        if key not in readers:
            readers[key] = real_reader(path, *args, **kwargs)
        return readers[key]

    with _PATCHING:
        gguf.GGUFReader, gguf.get_tensor_name_map = reader, lru_cache(maxsize=None)(real_map)
        try:
            yield
        finally:
            gguf.GGUFReader, gguf.get_tensor_name_map = real_reader, real_map


def file_sha256(path: Path) -> str:
    """SHA-256 of a file, remembered per (path, size, mtime) for this process."""
    st = path.stat()
    return _sha256(str(path.resolve()), st.st_size, st.st_mtime_ns)


@lru_cache(maxsize=16)
def _sha256(path: str, size: int, mtime_ns: int) -> str:
    return sha256_file(Path(path))
