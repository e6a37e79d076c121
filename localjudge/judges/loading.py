"""`load_judge`: from a registry name, directory, GGUF file or hub id to a ready `Judge`."""

from __future__ import annotations

import os
import sys
import tempfile
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

from localjudge.engine.options import EngineOptions
from localjudge.errors import CLIP, ConfigError, ModelUnavailableError, UnsafeModelError, clip, cut
from localjudge.io.files import is_dir
from localjudge.judges.adapters import TuneManifest, is_tune_folder, merge_adapter, read_manifest
from localjudge.judges.heads import HeadManifest, head_readings, is_head_folder, read_head_manifest
from localjudge.judges.judge import Judge, JudgeInfo
from localjudge.judges.registry import (
    REGISTRY_PATH,
    UNKNOWN_FAMILY,
    JudgeEntry,
    ScriptedSource,
    TunedSource,
    load_registry,
    model_family,
)
from localjudge.judges.scripted import ScriptedLoad, active_table
from localjudge.judges.versions import warn_untested_versions
from localjudge.weights.cache import cache_root
from localjudge.weights.chunks import joined_gguf, joined_if_present
from localjudge.weights.gguf import load_gguf
from localjudge.weights.install import package_weights
from localjudge.weights.sources import GGUFFileSource, HubSource, LocalDirSource, PackageChunksSource, PackageGGUFSource

__all__ = ["load_judge"]

_PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".pkl", ".ckpt")


def load_judge(
    name_or_path: str | None = None,
    device: str | None = None,
    dtype: str | None = None,
    *,
    options: EngineOptions | None = None,
    trust_remote_code: bool | None = None,
    allow_pickle: bool = False,
    registry_path: str | Path | None = None,
    progress: bool = True,
    family: str | None = None,
    cache: bool | str | Path = True,
) -> Judge:
    """Loads a judge model.

    The engine settings come one way or the other: `device` and `dtype` alone (the everyday
    shortcuts), or `options`, an `EngineOptions` holding all of them. What `options` leaves
    unset is picked for this machine and the registry entry.

    Args:
        name_or_path: a registry name (see `localjudge models`), a model directory, a `.gguf`
            file, or a Hugging Face hub id ("org/name"). None loads the registry's default.
        device: "cpu", "cuda", "cuda:1"...; default CUDA when available, else CPU.
        dtype: "float32", "bfloat16" or "float16" (or fp32, bf16, fp16, auto); default the registry
            entry's, else bf16 on CUDA and fp32 on CPU.
        options: every engine setting (device, dtype, token budget, tree tolerance, prefix reuse,
            batch invariance, grid, fp32 head) as one `EngineOptions`; not with `device`/`dtype`.
        trust_remote_code: run the repository's own code; default off unless the entry says so.
        allow_pickle: allow pickle-based checkpoints (.bin/.pt), which can run arbitrary code.
        registry_path: a models.yaml other than the bundled one.
        progress: let transformers show its loading bars ("Loading weights", GGUF
            dequantisation); they show only when stderr is a terminal, and never when False.
        family: the model family to record for a judge loaded by path or hub id (bias studies
            compare it with the generators'); default: the registry entry's, else "unknown".
        cache: for a GGUF judge, keep a prepared copy of its weights (safetensors, verified on
            every load) so later loads take seconds: True in the user cache folder
            ($LOCALJUDGE_CACHE, else $XDG_CACHE_HOME/localjudge, else ~/.cache/localjudge), a
            folder to use instead, or False to parse the GGUF every time and write nothing (a
            judge whose GGUF ships in parts reads the joined file `localjudge models --install`
            left in the user cache folder, checked, else joins the parts in a temporary folder).
            A folder that cannot hold the copy (disk full, read-only) costs a warning, never the load.

    Raises:
        ConfigError: `options` and `device`/`dtype` both given, or an invalid setting.

    Examples:
        >>> judge = load_judge("smollm2-135m")  # doctest: +SKIP
        >>> judge.score_texts(["Rate 0-10. Score:"], low=0, high=10)[0].expected  # doctest: +SKIP
        >>> options = EngineOptions(device="cpu", reuse_prefix=False)
        >>> judge = load_judge("smollm2-135m", options=options)  # doctest: +SKIP
        >>> judge.with_options(reuse_prefix=True).options.reuse_prefix  # doctest: +SKIP
        True
    """
    asked = _engine_options(options, device=device, dtype=dtype)
    registry = load_registry(Path(registry_path)) if registry_path else load_registry()
    table = active_table()
    if table is not None:  # tests: every load answered by name from a table of scripted judges
        where = Path(registry_path) if registry_path else None
        request = ScriptedLoad(name_or_path or registry.default, family, device, dtype, where, progress)
        return table.load(request)
    headed = _head_folder(name_or_path, registry, Path(registry_path or REGISTRY_PATH))
    tuned = None if headed else _tune_folder(name_or_path, registry, Path(registry_path or REGISTRY_PATH))
    if tuned is not None:
        folder, manifest = tuned
        entry, adhoc = _resolve(manifest.base, registry)
        entry = entry.model_copy(update={"name": manifest.name, "family": manifest.family})
    elif headed is not None:
        entry, adhoc = _resolve(headed[1].base, registry)
        entry = entry.model_copy(update={"name": headed[1].name, "family": headed[1].family})
    else:
        entry, adhoc = _resolve(name_or_path or registry.default, registry)
    if family is not None:
        entry = entry.model_copy(update={"family": model_family(entry.name, registry, family)})
    if isinstance(entry.source, ScriptedSource):  # no weights, no torch: a policy function (`judges.scripted`)
        from localjudge.judges.scripted import scripted_judge

        chat = entry.chat_template == "auto"
        return scripted_judge(entry.name, entry.family, entry.source, entry.context_length, chat)
    import torch

    warn_untested_versions()
    if isinstance(entry.source, LocalDirSource) and not Path(entry.source.path).is_absolute() and not adhoc:
        # registry paths are relative to the registry file, not to the working directory
        where = Path(registry_path or REGISTRY_PATH).absolute().parent / entry.source.path
        entry = entry.model_copy(update={"source": LocalDirSource(kind="local_dir", path=str(where))})
    run = asked.resolve(torch.cuda.is_available(), entry.dtype)
    assert run.device is not None and run.dtype is not None  # resolved
    trust = entry.trust_remote_code if trust_remote_code is None else trust_remote_code
    with _loader_bars(progress and _stderr_is_terminal()):
        model, tokenizer, provenance = _load_weights(entry, run.weights_layout, trust, allow_pickle, cache)
    if tuned is not None:
        provenance = merge_adapter(model, folder, manifest, provenance)
    model.to(run.device).eval()
    use_chat = entry.chat_template == "auto" and bool(getattr(tokenizer, "chat_template", None))
    info = JudgeInfo(
        name=entry.name,
        family=entry.family,
        source=entry.source.describe(),
        provenance=provenance,
        dtype=run.dtype,
        device=run.device,
        chat_template=use_chat,
        context_length=_model_context(model) if adhoc else entry.context_length,
    )
    judge = Judge.from_model(model, tokenizer, info, run)
    if tuned is not None:
        judge.tuned_for = tuple(str(m["name"]) for m in tuned[1].metrics)
    if headed is not None:
        judge.readings = head_readings(headed[0], headed[1], provenance, entry.name)
    return judge


def prepare_judge(
    name_or_path: str, *, registry_path: str | Path | None = None, cache: str | Path | None = None
) -> str:
    """Makes sure a GGUF judge has its prepared copy in the cache, so that its next load takes seconds.

    Parses the GGUF and writes the copy when there is none (or it is damaged), else verifies the
    copy; no judge is built. For an image or a CI job to pay the first load ahead of time.

    Args:
        name_or_path: a registry name or a `.gguf` file.
        registry_path: a models.yaml other than the bundled one.
        cache: the cache folder; default the user cache folder (see `load_judge`).

    Returns:
        The judge's provenance, "sha256:<hex>" of its GGUF.

    Raises:
        ConfigError: the judge is not a GGUF (a model directory or hub model has no prepared copy).
        ModelUnavailableError: its GGUF or packages are missing.

    Examples:
        >>> prepare_judge("smollm2-135m")  # doctest: +SKIP
        'sha256:...'
    """
    registry = load_registry(Path(registry_path)) if registry_path else load_registry()
    entry, _ = _resolve(name_or_path, registry)
    if not isinstance(entry.source, (PackageChunksSource, PackageGGUFSource, GGUFFileSource)):
        raise ConfigError(
            f"{clip(name_or_path)} is not a GGUF judge ({entry.source.describe()}): only GGUF judges have a "
            "prepared copy; it loads as it is"
        )
    with _loader_bars(_stderr_is_terminal()):
        _, _, provenance = _load_weights(entry, "float32", False, False, True if cache is None else cache)
    return provenance


def _tune_folder(name_or_path: str | None, registry, registry_path: Path) -> tuple[Path, TuneManifest] | None:
    """The folder and manifest of a tuned judge named by its folder or its registry name, else None."""
    if not name_or_path:
        return None
    entry = next((j for j in registry.judges if j.name == name_or_path), None)
    if entry is not None and isinstance(entry.source, TunedSource):
        folder = entry.source.folder(registry_path)
        if not is_tune_folder(folder):
            raise ModelUnavailableError(f"tuned judge {name_or_path}: {folder} holds no tune; reinstall localjudge")
        manifest = read_manifest(folder)
        return folder, manifest.model_copy(update={"name": entry.name})
    path = Path(name_or_path).expanduser()
    if not (is_dir(path) and is_tune_folder(path)):
        return None
    return path, read_manifest(path)


def _head_folder(name_or_path: str | None, registry, registry_path: Path) -> tuple[Path, HeadManifest] | None:
    """The folder and manifest of a head judge named by its folder or its registry name, else None."""
    if not name_or_path:
        return None
    entry = next((j for j in registry.judges if j.name == name_or_path), None)
    if entry is not None and isinstance(entry.source, TunedSource):
        folder = entry.source.folder(registry_path)
        if not is_head_folder(folder):
            return None
        return folder, read_head_manifest(folder).model_copy(update={"name": entry.name})
    path = Path(name_or_path).expanduser()
    if not (is_dir(path) and is_head_folder(path)):
        return None
    return path, read_head_manifest(path)


def _engine_options(options: EngineOptions | None, *, device: str | None, dtype: str | None) -> EngineOptions:
    """The options `load_judge` was given: the object, or the two shortcuts, never both."""
    shortcuts = {"device": device, "dtype": dtype}
    given: dict[str, Any] = {k: v for k, v in shortcuts.items() if v is not None}
    if options is None:
        return EngineOptions(**given)
    if given:
        named = ", ".join(f"{k}={clip(v)}" for k, v in given.items())
        raise ConfigError(
            f"{named} given beside an EngineOptions; give every engine setting in one place: "
            f"options=EngineOptions({', '.join(f'{k}=...' for k in given)}, ...), or the shortcuts alone"
        )
    return options


def _stderr_is_terminal() -> bool:
    return bool(getattr(sys.stderr, "isatty", None) and sys.stderr.isatty())


@contextmanager
def _loader_bars(show: bool):
    """Silences transformers' and the hub's progress bars while a model loads, unless `show`.

    transformers draws "Loading weights" through its own switch, but its GGUF reader calls
    tqdm directly, so that one is handed a disabled tqdm for the duration of the load.
    """
    if show:
        yield
        return
    from transformers.utils import logging as hf_logging

    gguf_utils: Any
    try:
        from transformers import modeling_gguf_pytorch_utils as gguf_utils
    except ImportError:  # a transformers without GGUF support: nothing to silence there
        gguf_utils = None
    was_enabled = hf_logging.is_progress_bar_enabled()
    gguf_tqdm = getattr(gguf_utils, "tqdm", None)
    hf_logging.disable_progress_bar()
    if gguf_tqdm is not None:
        gguf_utils.tqdm = partial(gguf_tqdm, disable=True)
    try:
        yield
    finally:
        if gguf_tqdm is not None:
            gguf_utils.tqdm = gguf_tqdm
        if was_enabled:
            hf_logging.enable_progress_bar()


def _resolve(name: str, registry) -> tuple[JudgeEntry, bool]:
    """Turns a name or path into a registry entry; True for ad-hoc entries (paths, hub ids)."""
    if any(j.name == name for j in registry.judges):
        return registry.get(name), False
    path = Path(name).expanduser()
    if path.suffix == ".gguf":
        if not path.is_file():
            raise ModelUnavailableError(
                f"GGUF file {path} does not exist; check the path or use a registry name (`localjudge models`)"
            )
        return _adhoc(name, GGUFFileSource(kind="gguf_file", path=str(path))), True
    if is_dir(path):
        return _adhoc(name, LocalDirSource(kind="local_dir", path=str(path))), True
    if name.count("/") == 1 and not name.startswith((".", "/")):
        return _adhoc(name, HubSource(kind="hub", repo=name, revision="main")), True
    return registry.get(name), False  # raises with close matches


def _adhoc(name: str, source: GGUFFileSource | LocalDirSource | HubSource) -> JudgeEntry:
    """The entry of a judge outside the registry: family unknown, context read from its config later."""
    return JudgeEntry(name=name, family=UNKNOWN_FAMILY, context_length=8192, source=source)


def _model_context(model) -> int:
    """The longest input a model's own config allows (for judges outside the registry)."""
    config = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
    return int(getattr(config, "max_position_embeddings", None) or 8192)


def _load_weights(entry: JudgeEntry, layout: str, trust: bool, allow_pickle: bool, cache: bool | str | Path):
    """Loads model and tokenizer; returns them with a provenance string (file hash or revision).

    `layout` is `EngineOptions.weights_layout`: a GGUF judge reads its prepared copy stored that way;
    a model directory or hub model loads in fp32 under mixed precision (lowered later), else in the dtype.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    src = entry.source
    dtype_name = "float32" if layout.endswith("-mixed") else layout
    kw = {"dtype": getattr(torch, dtype_name), "trust_remote_code": trust}
    if isinstance(src, PackageChunksSource):
        if cache is False:  # nothing written to the cache: its joined file read if there, else joined for this load
            ready = joined_if_present(src, entry.name, cache_root())
            if ready is not None:
                return load_gguf(ready, layout, False)
            with tempfile.TemporaryDirectory(prefix="localjudge-") as tmp:
                return load_gguf(joined_gguf(src, entry.name, Path(tmp)), layout, False)
        return load_gguf(joined_gguf(src, entry.name, cache_root(None if cache is True else cache)), layout, cache)
    if isinstance(src, PackageGGUFSource):
        path, _ = package_weights(entry.name, src)  # size and SHA-256 checked when the registry gives them
        return load_gguf(path, layout, cache)
    if isinstance(src, GGUFFileSource):
        path = Path(src.path)
        if not path.is_file():
            raise ModelUnavailableError(f"GGUF file {path} is missing; check the path")
        return load_gguf(path, layout, cache)
    where: Path | str
    if isinstance(src, LocalDirSource):
        where, revision = Path(src.path), None
        if not where.is_dir():
            raise ModelUnavailableError(f"model directory {where} does not exist")
        _refuse_pickle_only(where, allow_pickle)
        local_only = True
    else:
        assert isinstance(src, HubSource), "a tuned judge loads its base's weights (`_tune_folder`)"
        where, revision = src.repo, src.revision
        local_only = os.environ.get("HF_HUB_OFFLINE", "0") not in ("", "0", "false", "False")
    try:
        tok = AutoTokenizer.from_pretrained(
            where, revision=revision, local_files_only=local_only, trust_remote_code=trust
        )
        model = AutoModelForCausalLM.from_pretrained(
            where,
            revision=revision,
            local_files_only=local_only,
            use_safetensors=None if allow_pickle else True,
            **kw,
        )
    except OSError as exc:
        if isinstance(src, HubSource):
            raise ModelUnavailableError(
                f"hub model {cut(src.repo)}@{cut(src.revision)} is not in the local cache"
                + (" and HF_HUB_OFFLINE is set" if local_only else " and could not be downloaded")
                + f"; on a machine with network run `hf download {cut(src.repo)} --revision {cut(src.revision)}`, "
                "or pass a local model directory"
            ) from None
        raise ModelUnavailableError(f"cannot load model from {cut(where)}: {cut(exc, 4 * CLIP)}") from None
    except ValueError as exc:
        if "trust_remote_code" in str(exc):
            raise UnsafeModelError(
                f"{cut(where)} needs its own code to load; only if you trust it, pass --trust-remote-code"
            ) from None
        raise ModelUnavailableError(f"cannot load model from {cut(where)}: {cut(exc, 4 * CLIP)}") from None
    provenance = f"revision:{getattr(model.config, '_commit_hash', None) or revision or 'local'}"
    return model, tok, provenance


def _refuse_pickle_only(directory: Path, allow_pickle: bool) -> None:
    """Refuses a directory whose weights exist only as pickle files, unless allowed."""
    has_safe = any(directory.glob("*.safetensors"))
    pickles = [p.name for p in directory.iterdir() if p.suffix in _PICKLE_SUFFIXES]
    if not has_safe and pickles and not allow_pickle:
        raise UnsafeModelError(
            f"{directory} holds only pickle checkpoints ({', '.join(sorted(pickles))}), which can run "
            "arbitrary code when loaded; convert them to safetensors, or pass --allow-pickle if you "
            "trust the source"
        )
