"""Head judges: a base judge plus linear heads on its hidden states, described by a manifest (`head.json`).

A head folder (`localjudge tune --method head --out DIR`) holds `head.safetensors` and `head.json`.
Loading it loads the base judge, refuses a base whose weights are not the ones the heads were fit
on, and gives the judge a reading for each metric fit: `evaluate` answers that metric with the
head (a metric of kind `head`, whose records carry the head's sha256); every other metric runs on
the base judge as usual.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from localjudge.errors import ConfigError, ModelUnavailableError, clip

HEAD_MANIFEST = "head.json"
HEAD_WEIGHTS = "head.safetensors"


class Candidate(BaseModel):
    """One configuration the grouped cross-validation tried, and how it agreed with the labels."""

    model_config = ConfigDict(extra="forbid")

    layers: list[int] = Field(description="Decoder layers read.")
    alpha: float = Field(description="L2 strength.")
    agreement: float | None = Field(description="Mean over folds of the agreement on each held-out fold.")


class HeadFit(BaseModel):
    """One metric's head: what it was fit for, on what, how it was chosen and the reading it gives."""

    model_config = ConfigDict(extra="forbid")

    metric: str = Field(description="The metric's name.")
    reading: dict[str, Any] = Field(description="The `HeadMetric` spec that answers it (folder filled in at load).")
    human_field: str = Field(description="The case field holding the labels.")
    human_scale: list[float] | None = Field(description="The labels' scale, mapped onto the metric's; None: its own.")
    labelled_cases: int = Field(description="Cases the head was fit on.")
    groups: int = Field(description="Groups (documents, inputs) among them.")
    agreement_name: str = Field(description="What the cross-validation agreement measures.")
    folds: int = Field(description="Grouped folds of the cross-validation.")
    candidates: list[Candidate] = Field(description="Every configuration tried.")
    chosen: Candidate = Field(description="The configuration kept, then fit on every labelled case.")
    fit_seconds: float = Field(description="Wall time of the cross-validation and the final fit.")


class HeadManifest(BaseModel):
    """What a head judge is: its base, its heads, what they were fit on and how well they did."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="The head judge's name, recorded as the judge of its results.")
    base: str = Field(description="The base judge: a registry name, model directory or GGUF file.")
    base_provenance: str = Field(description="The base weights' provenance (sha256 of the GGUF) the heads read.")
    family: str = Field(description="The base judge's model family.")
    dtype: str = Field(description="The dtype the features were read in.")
    head_sha256: str = Field(description="SHA-256 of head.safetensors.")
    features: dict[str, Any] = Field(description="What every head reads (`FeatureSpec`).")
    heads: list[HeadFit] = Field(description="One head per metric.")
    settings: dict[str, Any] = Field(description="Every fitting setting (`HeadOptions`).")
    data_sha256: str = Field(description="SHA-256 of the labelled cases file(s).")
    trained_on: str = Field(description="What the heads were fit on, in words.")
    never_shown: str = Field(default="", description="What they never saw (held-out data), in words.")
    feature_seconds: float = Field(description="Wall time of the feature pass (cached features count 0).")
    outputs_read: int = Field(description="Outputs whose features this fit computed (not read from the cache).")
    wall_seconds: float = Field(description="Wall time of the whole fit, load and features included.")
    peak_memory_gib: float = Field(description="Peak resident memory of the fitting process.")
    localjudge_version: str = Field(description="localjudge version that fit it.")


def is_head_folder(path: Path) -> bool:
    """Whether `path` is a folder holding a head judge."""
    return (path / HEAD_MANIFEST).is_file()


def read_head_manifest(folder: Path) -> HeadManifest:
    """The manifest of a head folder.

    Raises:
        ModelUnavailableError: the folder lacks its weights, or the manifest is not one.
    """
    from localjudge.io.files import parse_json, read_text

    path = folder / HEAD_MANIFEST
    if not (folder / HEAD_WEIGHTS).is_file():
        raise ModelUnavailableError(f"{folder} has {HEAD_MANIFEST} but no {HEAD_WEIGHTS}; the fit did not finish")
    data = parse_json(read_text(path, "head manifest"), path)
    try:
        return HeadManifest.model_validate(data)
    except ValueError as exc:
        raise ModelUnavailableError(f"{path} is not a head manifest: {clip(exc, 300)}") from None


def head_readings(folder: Path, manifest: HeadManifest, provenance: str, name: str) -> dict[str, dict[str, Any]]:
    """Metric name -> the spec of the head metric answering it, for a base loaded with `provenance`.

    Raises:
        ConfigError: the base weights are not those the heads were fit on.
    """
    if provenance != manifest.base_provenance:
        raise ConfigError(
            f"head judge {clip(manifest.name)} was fit on {manifest.base} with weights {manifest.base_provenance}, "
            f"but those loaded are {provenance}; install the base it names (`localjudge models --install`)"
        )
    where = str(folder.absolute())
    return {h.metric: {**h.reading, "head": where, "judge": name} for h in manifest.heads}
