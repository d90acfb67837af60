"""Golden model of the round-robin arbiter against the spec's vectors and an independent form."""

import itertools

import numpy as np
import pytest

from golden.common.arbiter import RoundRobinArbiterModel, rr_pick
from golden.common.arbiter_vectors import TQ_GV16, TQ_GV16_N
from hw.common.arbiter import RoundRobinArbiter


def _rotate_reference(req, ptr, n):
    """Independent form: rotate the request vector so ptr is at 0, take the lowest set bit."""
    bits = np.array([(req >> i) & 1 for i in range(n)])
    rotated = np.roll(bits, -ptr)
    if not rotated.any():
        return None
    return (int(np.argmax(rotated)) + ptr) % n


@pytest.mark.req("TQ-GV16")
def test_model_generates_tq_gv16():
    model = RoundRobinArbiterModel(TQ_GV16_N)
    for row, (req_text, advance, want_idx, want_ptr) in enumerate(TQ_GV16):
        grant, idx, valid = model.clock(int(req_text, 2), advance)
        got_idx = idx if valid else None
        assert (got_idx, model.ptr) == (want_idx, want_ptr), f"TQ-GV16 row {row}"
        assert grant == (0 if want_idx is None else 1 << want_idx)


@pytest.mark.req("TQ-F45", "TQ-V16")
@pytest.mark.parametrize("n", range(1, 9))
def test_rr_pick_matches_rotation_reference_exhaustively(n):
    for ptr, req in itertools.product(range(n), range(1 << n)):
        assert rr_pick(req, ptr, n) == _rotate_reference(req, ptr, n), (n, ptr, req)


@pytest.mark.req("TQ-F45")
def test_model_advance_rule():
    """ptr moves to grant + 1 only with advance and a grant; no request keeps it."""
    for n in range(1, 7):
        for ptr, req, advance in itertools.product(range(n), range(1 << n), (0, 1)):
            model = RoundRobinArbiterModel(n, ptr)
            grant, idx, valid = model.clock(req, advance)
            assert valid == int(req != 0) and grant == (1 << idx if valid else 0)
            expected = (idx + 1) % n if (advance and valid) else ptr
            assert model.ptr == expected


@pytest.mark.parametrize("bad", [0, -1, 1025, 2.0, "4", True, None])
def test_rtl_rejects_bad_n(bad):
    with pytest.raises(ValueError, match="n must be"):
        RoundRobinArbiter(bad)


@pytest.mark.parametrize("bad", [0, -3])
def test_model_rejects_bad_n(bad):
    with pytest.raises(ValueError):
        RoundRobinArbiterModel(bad)


def test_model_rejects_request_wider_than_n():
    with pytest.raises(ValueError):
        RoundRobinArbiterModel(4).outputs(0b10000)
