"""`gguf_dequant.dequantize` gives gguf-py's values bit for bit, for every block type it takes over.

Random bytes are valid blocks of any type (scales that decode to inf or NaN included), so they
reach every branch of a block formula; the comparison is on the fp32 bit patterns, so NaNs and
signed zeros count too. The embedded SmolLM2's GGUF is checked tensor by tensor as it is stored.
"""

from __future__ import annotations

import numpy as np
import pytest

from localjudge.judges import gguf_dequant
from localjudge.judges.gguf_dequant import dequantize
from localjudge.judges.registry import load_registry, package_gguf_path

gguf = pytest.importorskip("gguf")
from gguf import GGML_QUANT_SIZES, GGMLQuantizationType, quants  # noqa: E402

TAKEN_OVER = sorted((t for t, kind in quants._type_traits.items() if kind.grid_hex is None), key=lambda t: t.name)


def bits(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x).view(np.uint32)


def same(ours: np.ndarray, theirs: np.ndarray) -> bool:
    return ours.shape == theirs.shape and ours.dtype == theirs.dtype and np.array_equal(bits(ours), bits(theirs))


pytestmark = pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning", "ignore:overflow:RuntimeWarning")


@pytest.fixture
def small_groups(monkeypatch):
    """Groups of 4096 values, so that a small tensor spans several groups and threads."""
    monkeypatch.setattr(gguf_dequant, "GROUP_VALUES", 4096)


@pytest.mark.usefixtures("small_groups")
@pytest.mark.parametrize("qtype", TAKEN_OVER, ids=lambda t: t.name)
def test_random_blocks_match_gguf_py(qtype):
    block, size = GGML_QUANT_SIZES[qtype]
    rng = np.random.default_rng(int(qtype))
    # more rows than one group holds, and a last group shorter than the others
    width_blocks = 8
    rows = 4 * 4096 // (width_blocks * block) + 3
    data = rng.integers(0, 256, size=(rows, width_blocks * size), dtype=np.uint8)
    ours, theirs = dequantize(data, qtype), gguf.dequantize(data, qtype)
    assert same(ours, theirs)
    assert ours.shape == (rows, width_blocks * block)


@pytest.mark.usefixtures("small_groups")
def test_a_memmap_and_a_3d_tensor_match(tmp_path):
    qtype = GGMLQuantizationType.Q4_K
    block, size = GGML_QUANT_SIZES[qtype]
    rng = np.random.default_rng(7)
    path = tmp_path / "blocks.bin"
    rng.integers(0, 256, size=4 * 5 * 2 * size, dtype=np.uint8).tofile(path)
    data = np.memmap(path, dtype=np.uint8, mode="r", shape=(4, 5, 2 * size))
    ours, theirs = dequantize(data, qtype), gguf.dequantize(data, qtype)
    assert same(ours, theirs) and ours.shape == (4, 5, 2 * block)
    assert type(ours) is np.ndarray


def test_other_types_are_gguf_py_s_own():
    values = np.arange(12, dtype=np.float16).reshape(3, 4)
    assert same(dequantize(values.view(np.uint8), GGMLQuantizationType.F16), values.astype(np.float32))
    as_f32 = np.arange(6, dtype=np.float32)
    assert np.array_equal(dequantize(as_f32.view(np.uint8), GGMLQuantizationType.F32), as_f32)


def test_every_tensor_of_the_embedded_smollm2_gguf():
    path = package_gguf_path(load_registry().get("smollm2-135m").source)
    reader = gguf.GGUFReader(path)
    kinds = {t.tensor_type for t in reader.tensors}
    assert GGMLQuantizationType.Q4_1 in kinds  # the file's own quantisation is what is compared
    for tensor in reader.tensors:
        assert same(dequantize(tensor.data, tensor.tensor_type), gguf.dequantize(tensor.data, tensor.tensor_type)), (
            tensor.name
        )
