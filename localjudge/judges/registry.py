"""The judge registry: `models.yaml` entries, validated (where weights come from: `weights.sources`)."""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from localjudge.errors import ConfigError, clip, field_path, repeated, unknown_name
from localjudge.io.files import load_yaml
from localjudge.weights.sources import (
    GGUFFileSource,
    HubSource,
    LocalDirSource,
    PackageChunksSource,
    PackageGGUFSource,
)

REGISTRY_PATH = Path(__file__).resolve().parent.parent / "models.yaml"
"""The bundled registry: in a checkout a link to the top-level models.yaml, in the wheel that file itself.

Relative paths in a registry are read from the folder the registry is named in, links not followed,
so the bundled registry's `tuned/...` is the package's folder in a checkout and in an install alike."""
UNKNOWN_FAMILY = "unknown"
"""The family of a model loaded by path or hub id when none is given: too vague for bias studies."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TunedSource(_Strict):
    """A tuned judge: a tune folder (adapter and manifest, `localjudge tune`) over the base judge it names."""

    kind: Literal["tuned"] = Field(description="Source kind.")
    path: str = Field(description="The tune folder; relative paths from the folder models.yaml is named in.")

    def describe(self) -> str:
        return f"tuned:{self.path}"

    def folder(self, registry_path: str | Path = REGISTRY_PATH) -> Path:
        """The tune folder, for the registry file at `registry_path`."""
        return Path(registry_path).absolute().parent / self.path


class ScriptedSource(_Strict):
    """A scripted judge: no weights, a policy function gives the probability of each outcome of a prompt.

    For tests, yours and ours, chosen by name like any judge (`judges.scripted`): every `load_judge`
    builds a fresh one. Functions are named `module:attribute`, imported on load.
    """

    kind: Literal["scripted"] = Field(description="Source kind.")
    policy: str = Field(description="prompt -> {outcome: probability}, as `module:attribute`.")
    generator: str | None = Field(default=None, description="prompt -> generated text, as `module:attribute`.")
    lm: str | None = Field(
        default=None, description="(prompt, continuation) -> log-probabilities per token, as `module:attribute`."
    )

    def describe(self) -> str:
        return f"scripted:{self.policy}"


Source = Annotated[
    HubSource
    | LocalDirSource
    | GGUFFileSource
    | PackageGGUFSource
    | PackageChunksSource
    | TunedSource
    | ScriptedSource,
    Field(discriminator="kind"),
]


class JudgeEntry(_Strict):
    """One judge model in the registry."""

    name: str = Field(description="Registry name used on the command line.")
    family: str = Field(description="Model family, for self-preference studies (e.g. 'llama', 'gemma').")
    source: Source = Field(description="Where the weights come from.")
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = Field(
        default="auto", description="auto: bf16 on CUDA, fp32 on CPU."
    )
    chat_template: Literal["auto", "none"] = Field(
        default="auto", description="auto: use the tokenizer's chat template if it has one; none: plain text."
    )
    context_length: int = Field(gt=0, description="Longest prompt the judge accepts, in tokens.")
    trust_remote_code: bool = Field(default=False, description="Run the repository's own code (off by default).")
    license: str = Field(default="", description="The model's licence, e.g. 'Apache-2.0', 'Gemma Terms of Use'.")
    gated: bool = Field(
        default=False, description="Hub only: the licence must be accepted on the hub, then `hf auth login`."
    )
    parameters: float | None = Field(
        default=None,
        gt=0,
        description="Parameters in billions (from the model's config.json shapes), for memory figures.",
    )
    notes: str = Field(default="", description="Short notes for users.")


class Registry(_Strict):
    """The whole models.yaml file."""

    default: str = Field(description="Name of the judge used when none is given.")
    judges: list[JudgeEntry] = Field(description="All registered judges.")

    def get(self, name: str) -> JudgeEntry:
        """The entry called `name`; raises `UnknownNameError` listing close matches."""
        for entry in self.judges:
            if entry.name == name:
                return entry
        raise unknown_name("judge", name, [j.name for j in self.judges], "see `localjudge models`")


@lru_cache(maxsize=4)
def load_registry(path: Path = REGISTRY_PATH) -> Registry:
    """Reads and validates a models.yaml file."""
    raw = load_yaml(path, "judge registry")
    try:
        reg = Registry.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = field_path(first["loc"])
        raise ConfigError(f"{path}: {where}: {first['msg']} (fix this entry of the judge registry)") from None
    names = [j.name for j in reg.judges]
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        raise ConfigError(f"{path}: judge names repeated: {repeated(names)}")
    reg.get(reg.default)
    return reg


def model_family(name: str, registry: Registry, family: str | None = None) -> str:
    """The model family of a model named on the command line, before it loads.

    Args:
        name: A registry name, a model folder, a GGUF file or a hub id.
        registry: The registry in use.
        family: The family the user gives (`--family NAME=FAMILY`); required for models outside
            the registry in bias studies, refused when it contradicts a registry entry.

    Returns:
        The registry entry's family, else `family`, else `UNKNOWN_FAMILY`.
    """
    entry = next((j for j in registry.judges if j.name == name), None)
    if entry is None:
        return family or UNKNOWN_FAMILY
    if family is not None and family != entry.family:
        raise ConfigError(
            f"{clip(name)} is registered with family {clip(entry.family)}, not {clip(family)}; "
            "drop its --family or change the registry"
        )
    return entry.family


def availability(entry: JudgeEntry, registry_path: Path = REGISTRY_PATH) -> str:
    """Whether a judge can be loaded here without a network: 'yes', or why not (cheap check)."""
    src = entry.source
    if isinstance(src, ScriptedSource):
        return "yes"
    if isinstance(src, TunedSource):
        return _tuned_availability(entry.name, src.folder(registry_path), registry_path)
    if isinstance(src, LocalDirSource):
        where = Path(registry_path).absolute().parent / src.path  # absolute paths stay as they are
        return "yes" if where.is_dir() else f"no: {where} missing"
    if isinstance(src, PackageGGUFSource):
        if importlib.util.find_spec(src.module) is None:
            return f"no: localjudge models --install {entry.name}"
        return "yes"
    if isinstance(src, PackageChunksSource):
        have = sum(importlib.util.find_spec(src.part_module(n)) is not None for n in range(1, len(src.parts) + 1))
        if have == len(src.parts):
            return "yes"
        some = f" ({have} of {len(src.parts)} parts here)" if have else ""
        return f"no: localjudge models --install {entry.name}{some}"
    if isinstance(src, (LocalDirSource, GGUFFileSource)):
        return "yes" if Path(src.path).exists() else f"no: {src.path} missing"
    try:
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(src.repo, "config.json", revision=src.revision)
    except Exception:
        cached = None
    return (
        "yes (hub cache)" if isinstance(cached, str) else f"no: hf download (localjudge models --install {entry.name})"
    )


def _tuned_availability(name: str, folder: Path, registry_path: Path) -> str:
    """A tuned or head judge is here when its folder is and its base judge is installed."""
    from localjudge.judges.adapters import is_tune_folder, read_manifest
    from localjudge.judges.heads import is_head_folder, read_head_manifest

    if is_head_folder(folder):
        base = read_head_manifest(folder).base
    elif is_tune_folder(folder):
        base = read_manifest(folder).base
    else:
        return f"no: {folder} missing"
    entry = next((j for j in load_registry(Path(registry_path)).judges if j.name == base), None)
    if entry is None:  # a base named by path or hub id: the load says whether it is there
        return f"yes (base {base})"
    here = availability(entry, registry_path)
    return here if here.startswith("yes") else f"no: localjudge models --install {name} (its base, {base})"
