"""`EngineOptions`: how the transformers backend runs a judge (device, dtype, batching, tree reading).

`load_judge(name, options=...)` takes them (or only `device`/`dtype`, its two shortcuts), resolves
what was left open against the machine and the registry entry (`EngineOptions.resolve`) and builds
the backend from the resolved options, which it then holds: `judge.options` reads them there, and
every result records them (`JudgeInfo`). `judge.with_options(...)` gives the same weights with
other run-time settings (`RUNTIME_FIELDS`).

Examples:
    >>> EngineOptions(dtype="bf16").dtype
    'bfloat16'
    >>> EngineOptions().resolve(cuda_available=False).token_budget
    4096
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypedDict

from pydantic import Field, field_validator

from localjudge.errors import ConfigError, clip
from localjudge.options import Options
from localjudge.scoring.distribution import DEFAULT_TREE_TOLERANCE

if TYPE_CHECKING:
    from typing_extensions import Unpack

Dtype = Literal["auto", "float32", "bfloat16", "float16"]
DTYPE_ALIASES = {
    "float32": "float32",
    "fp32": "float32",
    "bfloat16": "bfloat16",
    "bf16": "bfloat16",
    "float16": "float16",
    "fp16": "float16",
    "auto": "auto",
}
CUDA_BUDGET, CPU_BUDGET = 16384, 4096
"""Default padded tokens per forward batch on a GPU and on the CPU."""
RUNTIME_FIELDS = ("token_budget", "tree_tolerance", "reuse_prefix")
"""Settings a loaded judge can change on the same weights (`Judge.with_options`); the others shape
its layers, dtype or device and are fixed when it loads."""
GRID = 32
"""Default row-width and prefix grid of the batch-invariant layout. Block attention makes any grid
bitwise invariant; the grid trades prefix tokens recomputed (up to grid - 1 per row) against
attention calls. On the demo's 48 likelihood items on 2 CPU cores: 16: 31.4 s, 32: 30.4 s,
64: 33.2 s."""


class RuntimeKeywords(TypedDict, total=False):
    """The `RUNTIME_FIELDS` as keywords of `Judge.with_options` (typed: mypy checks the names)."""

    token_budget: int | None
    tree_tolerance: float
    reuse_prefix: bool


class EngineKeywords(RuntimeKeywords, total=False):
    """Every `EngineOptions` field as a keyword of `EngineOptions.replace`."""

    device: str | None
    dtype: Dtype | str | None
    batch_invariant: bool
    grid: int | None
    fp32_head: bool
    mixed_precision: bool | None


class EngineOptions(Options):
    """Settings of the batching engine; None fields are picked for the machine by `resolve`.

    Invalid values raise `ConfigError` naming the field.
    """

    label: ClassVar[str] = "engine option"

    device: str | None = Field(default=None, description="cpu, cuda, cuda:1...; None: CUDA when available, else CPU.")
    dtype: Dtype | None = Field(
        default=None,
        description="Compute dtype (or fp32, bf16, fp16); None: the registry entry's; auto: bf16 on CUDA, else fp32.",
    )
    token_budget: int | None = Field(
        default=None, gt=0, description="Padded tokens per forward batch; None: 16384 on CUDA, 4096 on the CPU."
    )
    tree_tolerance: float = Field(
        default=DEFAULT_TREE_TOLERANCE,
        description="Share of the valid mass that unread score-tree nodes may hold; 0 reads every node.",
    )
    reuse_prefix: bool = Field(
        default=True, description="Compute a prefix that a batch's prompts share once (KV cache)."
    )
    batch_invariant: bool = Field(
        default=True,
        description="Canonical layout and fixed-shape GEMMs, so an item's results do not depend on its batch "
        "companions, the token budget or the prefix plan (bitwise where the load-time probe passes).",
    )
    grid: int | None = Field(
        default=None,
        gt=0,
        description="Padded row widths and cached prefixes are multiples of it; None: 32 when batch_invariant, else 1.",
    )
    fp32_head: bool = Field(
        default=True, description="Apply the output layer in fp32 at the positions read, whatever the compute dtype."
    )
    mixed_precision: bool | None = Field(
        default=None,
        description="With dtype bf16 or fp16: only the linear layers run in it (weights and GEMMs), the residual "
        "stream, norms, attention and softmax in fp32; False: every op in it. None: on for the CPU, off on CUDA; "
        "always off in fp32.",
    )

    @field_validator("dtype", mode="before")
    @classmethod
    def _dtype_alias(cls, value: Any) -> Any:
        if value is None:
            return None
        if not isinstance(value, str) or value not in DTYPE_ALIASES:
            raise ConfigError(f"unknown dtype {clip(value)}; use one of float32, bfloat16, float16")
        return DTYPE_ALIASES[value]

    @field_validator("tree_tolerance")
    @classmethod
    def _tolerance_range(cls, value: float) -> float:
        if not 0 <= value < 1:
            raise ConfigError(f"tree_tolerance must be in [0, 1), got {value}; 0 reads every score-tree node")
        return value

    @property
    def resolved(self) -> bool:
        """Whether device, dtype and token budget are all picked (and dtype is not "auto")."""
        return None not in (self.device, self.dtype, self.token_budget) and self.dtype != "auto"

    @property
    def row_grid(self) -> int:
        """The grid that runs: `grid`, else 32 with `batch_invariant` and 1 without."""
        return self.grid or (GRID if self.batch_invariant else 1)

    def resolve(self, cuda_available: bool, default_dtype: Dtype = "auto") -> EngineOptions:
        """These options with device, dtype, token budget and grid picked for the machine.

        Args:
            cuda_available: whether this process can use CUDA (`torch.cuda.is_available()`).
            default_dtype: the dtype when none was given (a registry entry's).

        Raises:
            ConfigError: a CUDA device was asked for but CUDA is not available.
        """
        device = self.device or ("cuda" if cuda_available else "cpu")
        on_cuda = device.startswith("cuda")
        if on_cuda and not cuda_available:
            raise ConfigError(f"device {clip(device)} requested but CUDA is not available; use --device cpu")
        dtype = DTYPE_ALIASES[self.dtype or default_dtype]
        if dtype == "auto":
            dtype = "bfloat16" if on_cuda else "float32"
        budget = self.token_budget or (CUDA_BUDGET if on_cuda else CPU_BUDGET)
        mixed = None if dtype == "float32" else (not on_cuda if self.mixed_precision is None else self.mixed_precision)
        return self.model_copy(
            update={
                "device": device,
                "dtype": dtype,
                "token_budget": budget,
                "grid": self.row_grid,
                "mixed_precision": mixed,
            }
        )

    @property
    def weights_dtype(self) -> str:
        """The dtype a judge's weights load in: fp32 under mixed precision (its linear layers are cast at load)."""
        assert self.dtype is not None and self.dtype != "auto", "resolve the options first"
        return "float32" if self.mixed_precision else self.dtype

    @property
    def weights_layout(self) -> str:
        """How the weights are read at load: the dtype, or "<dtype>-mixed" (the linear layers in it, the rest fp32).

        A GGUF judge's prepared copy is stored in this layout (`weights.cache.LAYOUTS`), so its load
        makes no fp32 copy of weights that run in bf16.
        """
        assert self.dtype is not None and self.dtype != "auto", "resolve the options first"
        return f"{self.dtype}-mixed" if self.mixed_precision else self.dtype

    def replace(self, **changes: Unpack[EngineKeywords]) -> EngineOptions:
        """A copy with some fields changed (typed: `EngineKeywords`), validated like a new one."""
        return EngineOptions(**{**self.model_dump(), **changes})
