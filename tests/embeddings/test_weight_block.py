"""in_one_block: read-only copies, equal to the arrays given, back to back in one mapping."""

import numpy as np
import pytest

from engine.embeddings.weight_block import in_one_block


def test_copies_are_equal_read_only_and_laid_out_in_order():
    rng = np.random.default_rng(7)
    arrays = [rng.standard_normal(shape, dtype=np.float32) for shape in ((384, 1152), (1152,), (3, 5))]
    copies = in_one_block(arrays)
    assert [c.shape for c in copies] == [a.shape for a in arrays]
    assert all(np.array_equal(c, a) and c.flags.c_contiguous for c, a in zip(copies, arrays))
    starts = [c.ctypes.data for c in copies]
    assert starts == sorted(starts) and all(s % 64 == 0 for s in starts)
    assert starts[-1] - starts[0] < sum(a.nbytes for a in arrays[:-1]) + 64 * len(arrays)
    with pytest.raises(ValueError):
        copies[0][0, 0] = 1.0
