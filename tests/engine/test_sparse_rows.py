"""The models' sparse matrix (`SparseRows`) against scipy.sparse, which it replaces on the hot path:
the same compressed rows, products and columns for random entries, repeated and out of order."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse

from optimizer.formulation import SparseRows


@pytest.mark.parametrize("seed", range(20))
def test_sparse_rows_agree_with_scipy(seed):
    rng = np.random.default_rng(seed)
    shape = (int(rng.integers(0, 30)), int(rng.integers(1, 30)))
    entries = int(rng.integers(0, 200)) if shape[0] else 0
    rows, cols = rng.integers(0, max(shape[0], 1), entries), rng.integers(0, shape[1], entries)
    if seed % 2:  # in order without repeats, as the models mostly add them
        key = np.unique(rows * shape[1] + cols)
        rows, cols = key // shape[1], key % shape[1]
    vals = rng.integers(-(10**9), 10**9, len(rows))
    ours = SparseRows.of(rows, cols, vals, shape)
    theirs = sparse.csr_matrix((vals, (rows, cols)), shape=shape)
    theirs.sum_duplicates()
    assert ours.nnz == theirs.nnz
    assert (ours.indptr.tolist(), ours.indices.tolist(), ours.data.tolist()) == (theirs.indptr.tolist(), theirs.indices.tolist(), theirs.data.tolist())
    values = rng.integers(-1000, 1000, shape[1])
    assert (ours @ values).tolist() == (theirs @ values).tolist()
    columns, csc = ours.columns(), theirs.tocsc()
    csc.sort_indices()
    assert (columns.indptr.tolist(), columns.indices.tolist(), columns.data.tolist()) == (csc.indptr.tolist(), csc.indices.tolist(), csc.data.tolist())
    if shape[0]:
        cut = int(rng.integers(0, shape[0] + 1))
        head = ours.head(cut)
        assert (head @ values).tolist() == (theirs[:cut] @ values).tolist()
