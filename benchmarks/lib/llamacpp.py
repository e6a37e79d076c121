"""llama.cpp for the studies that compare with it: how it was built, and the GGUF file of an embedded judge.

llama-cpp-python is not a dependency of localjudge: `require_llama_cpp` says how to build it.
"""

from __future__ import annotations

INSTALL = (
    'CMAKE_ARGS="-DGGML_NATIVE=ON -DLLAMA_CURL=OFF" CMAKE_BUILD_PARALLEL_LEVEL=2 '
    ".venv/bin/python -m pip install --no-binary llama-cpp-python llama-cpp-python==0.3.36"
)
"""How this benchmark's llama.cpp was built: from the PyPI source distribution, for this CPU."""


class LlamaCppMissing(SystemExit):
    """llama-cpp-python is not installed (the benchmark exits with this message)."""


def require_llama_cpp():
    """The `llama_cpp` module, or an exit that tells how to build it."""
    try:
        import llama_cpp
    except ImportError:
        raise LlamaCppMissing(
            "llama-cpp-python is not installed (it is not a localjudge dependency); build it from its PyPI "
            f"source distribution for this CPU (many minutes on 2 cores):\n  {INSTALL}"
        ) from None
    return llama_cpp


def gguf_path(name: str):
    """The GGUF file of an embedded judge: inside its package, or joined from its chunk packages in the cache."""
    from localjudge.judges.registry import load_registry
    from localjudge.weights.cache import cache_root
    from localjudge.weights.chunks import joined_gguf
    from localjudge.weights.sources import PackageChunksSource, package_gguf_path

    src = load_registry().get(name).source
    if isinstance(src, PackageChunksSource):
        return joined_gguf(src, name, cache_root())
    return package_gguf_path(src)  # type: ignore[arg-type]
