"""Batch-invariant linear layers: every GEMM runs on row chunks of a few fixed shapes.

A BLAS picks its blocking, its kernel and its thread split by the number of rows M, so the same
row can come out a bit different with other companions in its batch (measured here: fp32 rows
differ at M = 1 and 7 against M = 1024; bf16 on AMX flips 1-10% of rows by one step for some M).
What a kernel cannot vary is its work on a shape it never sees change. So a layer computes every
row in a chunk of `big` rows, or, for the remainder, of `small` rows (zero-padded): only two GEMM
shapes ever run. A probe at load time checks on the layer's own weights that a row's output is the
same at every position of both chunk shapes, whatever the other rows hold; a plan that fails is
not used, and the judge then does not claim bitwise results.

On the CPU the weights are prepacked once for oneDNN where it supports the dtype (fp32 here;
bf16 needs AVX-512 or AVX-NE-CONVERT): stock `F.linear` reorders them on every call. A layer that
owns its weight then lets the plain tensor go (`InvariantLinear.release`): the packed copy is
the weight, and reading `layer.weight` rebuilds the plain one from it exactly, so a run holds
each linear weight once instead of twice (`engine.pages` frees the pages of a weight mapped
from its file). A weight that stays whole anyway (a tied embedding read as the output layer, the
fp32 copy of a bf16 output layer) is not packed at all where oneDNN gives the same bits reading
it as it is (`same_bits_unpacked`): one copy of it, not two.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass, replace

import torch
from torch import nn

from localjudge.engine.gemm import Gemm, chunked, gemm_for, pack, packed_gemm
from localjudge.engine.mixed import MixedLinear, low_linear
from localjudge.engine.pages import SafetensorsMaps, drop_pages

CANDIDATES = ((256, 16), (128, 16), (64, 16), (32, 8), (16, 16), (8, 8))
"""(big, small) chunk shapes tried, fastest first; a plan is the first whose probe passes."""


@dataclass(frozen=True)
class GemmPlan:
    """How the linear layers of a model run: chunk shapes and the kernel.

    Attributes:
        big: rows per full chunk.
        small: rows per remainder chunk (zero-padded); divides `big`.
        packed: whether weights are prepacked for oneDNN.
        dtype: the dtype of the weights the probe passed on (a plan holds for that dtype only).
    """

    big: int
    small: int
    packed: bool
    dtype: torch.dtype = torch.float32

    def describe(self) -> str:
        """The plan as it is recorded with results, e.g. "256/16 rows, prepacked"."""
        return f"{self.big}/{self.small} rows, " + ("prepacked" if self.packed else "stock linear")


def can_prepack(weight: torch.Tensor) -> bool:
    """Whether oneDNN can prepack this weight here (CPU, and a dtype the processor supports)."""
    if weight.device.type != "cpu" or not torch.backends.mkldnn.is_available():
        return False
    try:
        torch.ops.mkldnn._reorder_linear_weight(weight[:8, :8].contiguous(), 8)
    except RuntimeError:  # "bf16 path needs the cpu support avx_ne_convert or avx512..."
        return False
    return True


SLOW_DTYPE = (
    "%s on this CPU runs without native kernels (oneDNN has none for it here: bf16 needs AVX-512 or "
    "AVX-NE-CONVERT); expect several times the float32 time (the demo took 4.6x as long in bf16 on a "
    "2-core AVX2 machine). Use --dtype float32 (dtype='float32') on this machine."
)
"""The warning `slow_dtype` gives, with the dtype's name."""


def slow_dtype(model: nn.Module) -> str | None:
    """The warning for a model whose weights are in a reduced precision this CPU has no kernels for, else None.

    Reduced precision pays on the CPU only where oneDNN has native kernels for it (AVX-512 BF16,
    AMX, AVX-NE-CONVERT); elsewhere each GEMM converts and runs several times slower than fp32.
    """
    weight = next((m.weight for m in model.modules() if isinstance(m, (nn.Linear, MixedLinear, InvariantLinear))), None)
    if weight is None or weight.device.type != "cpu" or weight.dtype == torch.float32:
        return None
    if can_prepack(weight):
        return None
    return SLOW_DTYPE % str(weight.dtype).removeprefix("torch.")


def same_bits_unpacked(weight: torch.Tensor, bias: torch.Tensor | None, plan: GemmPlan) -> bool:
    """Whether oneDNN's GEMM reading the plain weight gives, on the plan's two chunk shapes, the bits
    it gives on the packed copy (probed on the first `PROBE_ROWS` output rows).

    Measured here (AVX2, fp32): the same bits at 8 rows and more, and the same time, with no copy
    made per call: the packed layout buys nothing for an fp32 weight on this CPU, and a weight that
    must stay whole anyway (a tied embedding read as the output layer) then needs no second copy.
    """
    if not weight.is_contiguous():
        return False
    rows = weight[:PROBE_ROWS]
    first = None if bias is None else bias[:PROBE_ROWS]
    packed, plain = packed_gemm(pack(rows, plan.big), first), packed_gemm(rows, first)
    g = torch.Generator().manual_seed(4321)
    with torch.inference_mode():
        for m in (plan.big, plan.small):
            x = torch.randn(m, rows.shape[1], generator=g).to(rows.dtype)
            if not torch.equal(packed(x), plain(x)):
                return False
    return True


def probe(gemm: Gemm, n_in: int, dtype: torch.dtype, device: torch.device, big: int, small: int) -> bool:
    """Whether a row's output is bitwise the same at every position of both chunk shapes.

    Rows are random (seeded, like hidden states in scale); each is computed in a full chunk, in
    the same chunk rolled by several offsets, with other companions, and in remainder chunks.
    """
    g = torch.Generator().manual_seed(1234)
    x = torch.randn(2 * big, n_in, generator=g).to(device=device, dtype=dtype)
    ref = gemm(x[:big])  # (big, out)
    for shift in sorted({1, 3, small - 1, big // 2 + 1} - {0}):
        if not torch.equal(torch.roll(gemm(torch.roll(x[:big], shift, 0)), -shift, 0), ref):
            return False
    others = torch.cat([x[:small], x[big + small :]])  # the first rows with other companions
    if not torch.equal(gemm(others)[:small], ref[:small]):
        return False
    for s in range(0, big, small):  # remainder chunks, and a row alone (zero companions)
        if not torch.equal(gemm(x[s : s + small]), ref[s : s + small]):
            return False
    lone = torch.cat([x[:1], x.new_zeros(small - 1, n_in)])
    return torch.equal(gemm(lone)[:1], ref[:1])


class InvariantLinear(nn.Module):
    """A drop-in `nn.Linear` whose rows do not depend on the other rows of the call.

    An input in another dtype than the weight (mixed precision, `engine.mixed`) is cast to the
    weight's dtype for the GEMM and the output back to the input's, the bias added after in that
    dtype: elementwise steps, so rows stay independent.

    With `release`, a layer whose plan prepacks drops its plain weight once the packed copy is
    made: the parameter then holds a stand-in of the same shape, dtype and device that stores one
    element. Reading `layer.weight`, casting or moving the module (`model.to`), `state_dict`,
    `load_state_dict` and deep copies first rebuild the plain weight from the packed copy
    (`to_dense`, exact); the next call packs it again and lets it go again. Code that walks
    `model.parameters()` to read or cast values calls `restore_weights(model)` first
    (`HFBackend` does before `lower_linears`).
    """

    lowers_in_place = True
    """`engine.mixed.lower_linears` lowers this layer's weight where it stands (see `make_invariant`),
    after `restore`."""

    def __init__(
        self,
        linear: nn.Linear | MixedLinear,
        plan: GemmPlan,
        release: bool = False,
        maps: SafetensorsMaps | None = None,
    ):
        super().__init__()
        self.weight, self.bias = linear.weight, linear.bias  # shared, not copied (tied embeddings)
        self.in_features, self.out_features = linear.in_features, linear.out_features
        self.plan = plan
        self.release = release
        """Whether the plain weight goes once packed (only for a weight no other module reads); one
        that stays is read unpacked where that gives the packed copy's bits (`same_bits_unpacked`)."""
        self._maps = maps  # the model's memory-mapped weight files (`engine.pages`), shared by its layers
        self._gemm: Gemm | None = None
        self._packed_for: tuple | None = None
        # the plain weight from oneDNN's copy, while the kernel reads one (a closure, not the tensor:
        # an opaque mkldnn tensor cannot be deep-copied, and a copied model shares the kernel anyway)
        self._unpack: Callable[[], torch.Tensor] | None = None

    def __getattr__(self, name: str):
        # parameters live in `_parameters`, so every `layer.weight` comes through here
        if name == "weight" and self.__dict__.get("_unpack") is not None:
            self.restore()
        return super().__getattr__(name)

    def _held(self) -> nn.Parameter:
        """The weight parameter as it is held (a stand-in while released; `self.weight` would rebuild it)."""
        weight = self._parameters["weight"]
        assert weight is not None
        return weight

    @property
    def released(self) -> bool:
        """Whether the plain weight is let go (the packed copy is the only one)."""
        # a stand-in is the only weight with every stride 0
        return self._unpack is not None and not any(self._held().stride())

    def restore(self) -> None:
        """Gives the parameter its plain weight back (rebuilt from the packed copy) if released."""
        if self.released:
            assert self._unpack is not None
            self._held().data = self._unpack()

    def _apply(self, fn, recurse=True):  # `model.to`, `.float()`...
        self.restore()
        return super()._apply(fn, recurse)

    def __getstate__(self) -> dict:
        # deep copies and pickles copy the plain weight (a copied stand-in would be dense zeros)
        self.restore()
        return dict(self.__dict__)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        self.restore()
        super()._save_to_state_dict(destination, prefix, keep_vars)

    def _load_from_state_dict(self, *args, **kwargs):
        self.restore()
        super()._load_from_state_dict(*args, **kwargs)

    def _key(self) -> tuple:
        """What the kernel was made for: the weights (dtype, device, storage) and the plan."""
        weight = self._held()
        return (weight.dtype, weight.device, weight.data_ptr(), self.plan)

    def pin_gemm(self, gemm: Gemm | None) -> None:
        """Runs `gemm` for the current weights instead of the plan's kernel; None goes back to the plan's.

        `gemm` maps (C, in) rows to (C, out) outputs as the plan's kernel does (with the bias, unless
        the bias is in another dtype than the weight: mixed precision adds it after). For measurements
        that swap the kernel, e.g. the precision table of `benchmarks/invariance/invariance.py`; changed weights
        or plan drop a pinned kernel.
        """
        self.restore()
        self._unpack = None
        self._gemm, self._packed_for = (gemm, self._key()) if gemm is not None else (None, None)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # prepacked weights follow the weights: rebuilt after `model.to(...)` changes them
        weight = self._held()
        mixed = self.bias is not None and self.bias.dtype != weight.dtype
        if self._gemm is None or self._key() != self._packed_for:
            self.restore()  # the plan changed: the plain weight to pack again
            bias = None if mixed else self.bias
            packs = self.plan.packed and can_prepack(weight)
            if packs and not self.release and same_bits_unpacked(weight, bias, self.plan):
                # a weight kept whole anyway (a tied embedding's, an fp32 copy of the output layer's):
                # oneDNN reads it as it is, with the packed copy's bits, instead of a copy beside it
                self._gemm, self._unpack = packed_gemm(weight, bias), None
            elif packs:
                packed = pack(weight, self.plan.big)
                self._gemm, self._unpack = packed_gemm(packed, bias), packed.to_dense
                if self.release:
                    # (out, in) with strides (0, 0): one element, the plain weight's memory freed
                    plain = weight.data
                    weight.data = weight.new_zeros(()).expand(weight.shape)
                    drop_pages(plain, self._maps)  # a weight mapped from its file: freeing it frees no page
                    del plain
            else:
                self._unpack, self._gemm = None, gemm_for(weight, bias, False, self.plan.big)
            self._packed_for = self._key()
        gemm = self._gemm
        if x.dtype == weight.dtype and not mixed:
            return chunked(gemm, x, self.plan.big, self.plan.small, self.out_features)
        return low_linear(
            x,
            weight,
            self.bias,
            lambda rows: chunked(gemm, rows, self.plan.big, self.plan.small, self.out_features),
        )


def restore_weights(model: nn.Module) -> None:
    """Gives every released `InvariantLinear` of the model its plain weight back (before code
    that reads or casts weights through `model.parameters()`)."""
    for layer in model.modules():
        if isinstance(layer, InvariantLinear):
            layer.restore()


PROBE_ROWS = 2048
"""Output rows of a weight the probe multiplies (each output is its own dot product; a vocabulary
of 262k rows would make the probe cost seconds)."""


def plan_for(linears: list[nn.Linear | MixedLinear]) -> GemmPlan | None:
    """The first candidate plan whose probe passes on one layer of every weight shape, else None."""
    shapes: dict[tuple[int, int], nn.Linear | MixedLinear] = {}
    for layer in linears:
        shapes.setdefault((layer.out_features, layer.in_features), layer)
    if not shapes:
        return None
    packed = can_prepack(next(iter(shapes.values())).weight)
    with torch.inference_mode():
        for big, small in CANDIDATES:
            if all(_passes(m, packed, big, small) for m in shapes.values()):
                return GemmPlan(big, small, packed, next(iter(shapes.values())).weight.dtype)
    return None


def _passes(layer: nn.Linear | MixedLinear, packed: bool, big: int, small: int) -> bool:
    weight = layer.weight[:PROBE_ROWS]
    # a mixed-precision layer adds its (fp32) bias after the GEMM, elementwise: the GEMM is what is probed
    bias = None if layer.bias is None or layer.bias.dtype != weight.dtype else layer.bias[:PROBE_ROWS]
    gemm = gemm_for(weight, bias, packed, big)
    return probe(gemm, layer.in_features, weight.dtype, weight.device, big, small)


def make_invariant(model: nn.Module) -> GemmPlan | None:
    """Replaces every `nn.Linear` of the model by an `InvariantLinear` on a probed plan.

    A model made invariant before (another judge over the same model) keeps its layers. Their
    chunk shapes are kept while the weights keep the dtype they were probed in; weights cast or
    lowered since (a bf16 or mixed-precision judge over a model an fp32 judge used) are probed
    again, since a plan that is bitwise for one dtype's kernels need not be for another's. The plan
    says prepacked only if the weights can be prepacked here (`InvariantLinear.forward` falls back
    to `F.linear` otherwise).

    Returns:
        The plan, or None when no candidate passed (a model made invariant before keeps running on
        its old chunk shapes, and the judge claims nothing).
    """
    # exactly these classes, not subclasses of nn.Linear (quantized or otherwise special layers)
    linears = [m for m in model.modules() if type(m) in (nn.Linear, MixedLinear)]
    done = [m for m in model.modules() if isinstance(m, InvariantLinear)]
    if done and not linears:
        kept, held = done[0].plan, done[0]._held()  # not `.weight`: that would rebuild a released one
        if kept.dtype == held.dtype:
            return replace(kept, packed=kept.packed and can_prepack(held))
        plan = plan_for(done)  # type: ignore[arg-type]  # an InvariantLinear has what the probe reads
        if plan is not None:
            for layer in done:
                layer.plan = plan
        return plan
    plan = plan_for(linears)  # type: ignore[arg-type]  # the type test above narrows what mypy cannot
    if plan is None:
        return None
    uses: dict[int, int] = {}
    for _, param in model.named_parameters(remove_duplicate=False):
        uses[id(param)] = uses.get(id(param), 0) + 1
    maps = SafetensorsMaps()
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if isinstance(child, (nn.Linear, MixedLinear)) and type(child) in (nn.Linear, MixedLinear):
                # a weight another module reads (a tied embedding) keeps its plain tensor
                layer = InvariantLinear(child, plan, release=uses[id(child.weight)] == 1, maps=maps)
                setattr(parent, name, layer)
    return plan


_READ_LAYERS: weakref.WeakKeyDictionary[nn.Module, dict[tuple, nn.Module]] = weakref.WeakKeyDictionary()
"""`read_layer`'s results per output layer: a judge rebuilt over the same model (other engine
options) reuses the fp32 copy and the prepacked GEMM instead of making them again (a 262k-row
output layer takes seconds to widen and to prepack)."""


def read_layer(layer: nn.Module, fp32: bool, invariant: bool) -> nn.Module:
    """The output layer used at the positions read: in fp32 if asked, on fixed GEMM shapes if asked.

    An fp32 layer reads a float copy of the weights (none is made when they are fp32 already). A
    layer whose probe fails is used as it is; the backend then does not claim bitwise results.
    The result is remembered for this layer while its weights stay the same tensor.
    """
    if not isinstance(layer, nn.Linear):
        return layer
    weight = layer.weight
    same = (weight.data_ptr(), weight.dtype, weight.device, weight._version)
    known = _READ_LAYERS.setdefault(layer, {})
    for stale in [k for k in known if k[2:] != same]:  # made from weights since replaced or changed
        del known[stale]
    key = (fp32, invariant, *same)
    if key not in known:
        known[key] = _read_layer(layer, fp32, invariant)
    return known[key]


def _read_layer(layer: nn.Linear, fp32: bool, invariant: bool) -> nn.Module:
    if fp32 and layer.weight.dtype != torch.float32:
        copy = nn.Linear(layer.in_features, layer.out_features, bias=layer.bias is not None, device="meta")
        copy.weight = nn.Parameter(layer.weight.detach().float(), requires_grad=False)
        if layer.bias is not None:
            copy.bias = nn.Parameter(layer.bias.detach().float(), requires_grad=False)
        layer = copy
    if not invariant:
        return layer
    plan = plan_for([layer])
    return InvariantLinear(layer, plan) if plan is not None else layer
