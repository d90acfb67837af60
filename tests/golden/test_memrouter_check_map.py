"""The RTL testbench's MR-V2 checker (tb.memrouter.router_tb.check_map) on hand-made logs: it
must flag a memory request to a frame its page no longer holds, whatever the cycle numbers."""

from types import SimpleNamespace

import pytest

from golden.memrouter.formats import EV_DONE, EV_PT_UPDATE, EV_START, PTE
from golden.memrouter.ifmap import pt_init
from golden.memrouter.params import reference
from tb.memrouter.router_tb import check_map

NEAR, FAR, MIG = 0, 1, 2


def bench(tevents, mlog):
    p, cfg = reference("B")
    return SimpleNamespace(p=p, tevents=tevents, mlog=mlog), pt_init(p, cfg)


def moved_page(init):
    """A near page and a PT entry moving it to a frame no page holds at PT_INIT."""
    q = next(k for k in range(init.pages) if init.pt[k].pool == NEAR and init.pt[k].state)
    e = init.pt[q]
    used = {(init.pt[k].port, init.pt[k].frame) for k in range(init.pages)}
    frame = next(f for f in range(1 << 20) if (e.port, f) not in used)
    return q, e, PTE(e.state, NEAR, e.port, frame)


@pytest.mark.req("MR-V2")
def test_check_map_flags_a_stale_frame_after_a_late_pt_update():
    """A PT_UPDATE at cycle 5000 (a cycle number larger than the log) moves page q; a NEAR
    request to its old frame at cycle 6000 is an MR-V2 failure, one to the new frame is not."""
    b, init = bench([], [])
    q, old, new = moved_page(init)
    lg = b.p.LOG2G
    b.tevents[:] = [(4000, (EV_START, 0, q, 1)), (5000, (EV_PT_UPDATE, 0, q, new.encode())),
                    (5001, (EV_DONE, 0, q, 0))]
    b.mlog[:] = [(100, old.port, NEAR, old.frame << lg, 1, 0),
                 (6000, new.port, NEAR, new.frame << lg, 1, 0)]
    assert check_map(b, init) == 2
    b.mlog.append((6000, old.port, NEAR, old.frame << lg, 1, 0))
    with pytest.raises(AssertionError, match="MR-V2"):
        check_map(b, init)
    assert check_map(b, init, since=3) == 0


@pytest.mark.req("MR-V2")
def test_check_map_flags_a_mig_request_outside_a_command():
    b, init = bench([], [])
    q, old, _ = moved_page(init)
    b.mlog[:] = [(50, old.port, MIG, old.frame << b.p.LOG2G, 1, 1)]
    with pytest.raises(AssertionError, match="outside a command"):
        check_map(b, init)
