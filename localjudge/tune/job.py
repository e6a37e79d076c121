"""`TuneJob`: what a tune works on and where it writes, beside the `TuneOptions` of how it trains."""

from __future__ import annotations

import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field

from localjudge.errors import ConfigError, clip
from localjudge.judges.adapters import MANIFEST, is_tune_folder
from localjudge.options import Options
from localjudge.tune.checkpoint import FOLDER


class TuneJob(Options):
    """The judge, the labels, the output folder and how to treat what is already there."""

    label: ClassVar[str] = "tune option"

    judge: str = Field(description="The base judge: a registry name, model directory, GGUF file or hub id.")
    human: str = Field(
        description="The case field holding each case's human label; with several metrics, a name with {metric} "
        "in it (human_{metric}: human_coherence, human_consistency...)."
    )
    out: Path = Field(description="Folder the tuned judge is written to (adapter, manifest).")
    group: str | None = Field(default=None, description="Case field grouping cases (a document); default the input.")
    human_scale: tuple[float, float] | None = Field(
        default=None, description="Scale of the human ratings, mapped onto the metric's; default the metric's."
    )
    name: str | None = Field(default=None, description="The tuned judge's name; default the folder's name.")
    resume: bool = Field(default=False, description="Continue an unfinished tune in `out`.")
    overwrite: bool = Field(default=False, description="Replace a tune already in `out`.")
    progress: bool = Field(default=True, description="Show progress bars.")
    device: str | None = Field(default=None, description="cpu, cuda...; default CUDA when available.")
    data_sha256: str = Field(default="", description="SHA-256 of the labelled cases file(s).")
    data_name: str = Field(default="the labelled cases", description="The labelled data, in words.")
    trained_on: str | None = Field(default=None, description="What the adapter is shown, in words; default counted.")
    never_shown: str = Field(default="", description="What the adapter is never shown, in words.")
    features: Path | None = Field(
        default=None, description="Folder of cached features (several tunes of one judge may share it); default in out."
    )

    @property
    def features_folder(self) -> Path:
        """Where the features are cached: `features`, else a folder in `out` removed when the tune ends."""
        return self.features if self.features is not None else self.out / "features"

    def prepare_out(self) -> bool:
        """Readies the output folder; True when it already holds this finished tune and `resume` is on.

        Raises:
            ConfigError: the folder holds another tune (without --resume/--overwrite) or other files.
        """
        out = self.out
        if not out.exists():
            out.mkdir(parents=True)
            return False
        if not out.is_dir():
            raise ConfigError(f"--out {out} is a file; give a folder for the tuned judge")
        finished = (out / MANIFEST).is_file()
        unfinished = (out / FOLDER).is_dir() or (out / "features").is_dir()
        if finished or unfinished:
            if self.overwrite:
                shutil.rmtree(out)
                out.mkdir(parents=True)
                return False
            if self.resume:
                return finished
            what = "a finished tune" if finished else "an unfinished tune"
            hint = "--overwrite to replace it" if finished else "--resume to continue it, or --overwrite to start again"
            raise ConfigError(f"--out {out} holds {what}; pass {hint}, or choose another folder")
        if any(out.iterdir()):
            raise ConfigError(f"--out {out} holds other files, not a tune; choose an empty or new folder")
        return False

    def human_field(self, metric: str, several: bool) -> str:
        """The field holding the labels for `metric` (`human` with {metric} filled in).

        Raises:
            ConfigError: several metrics but one field for all of them.
        """
        if "{metric}" in self.human:
            return self.human.replace("{metric}", metric)
        if several:
            raise ConfigError(
                f"--human {clip(self.human)} names one field for several metrics; name each metric's with "
                "{metric} in it, e.g. --human 'human_{metric}'"
            )
        return self.human

    def base_name(self) -> str:
        """The base judge as the manifest records it: a registry name, or an absolute path."""
        path = Path(self.judge).expanduser()
        return str(path.resolve()) if path.exists() else self.judge

    def load(self) -> Any:
        """The base judge in fp32, on stock layers (training needs plain linear layers)."""
        from localjudge.engine.options import EngineOptions
        from localjudge.judges.loading import load_judge

        if is_tune_folder(Path(self.judge).expanduser()):
            raise ConfigError(f"{clip(self.judge)} is a tuned judge; tune its base judge instead")
        options = EngineOptions(device=self.device, dtype="float32", batch_invariant=False)
        return load_judge(self.judge, options=options, progress=self.progress)

    @contextmanager
    def bar(self, total: int, what: str, initial: int = 0):
        from tqdm.auto import tqdm

        bar = tqdm(
            total=total,
            initial=initial,
            desc=what,
            unit="pack",
            disable=None if self.progress else True,
            dynamic_ncols=True,
        )
        try:
            yield bar
        finally:
            bar.close()
