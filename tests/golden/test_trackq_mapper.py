"""QueueMapper golden (spec §4.3, TQ-F1..F6) against an independent reference, and the mapping
through the whole model with a config that changes every cycle."""

import random

import pytest

from golden.trackq.formats import LG, TEX, TTU, Fill, make_req
from golden.trackq.mapper import QueueMapper
from golden.trackq.model import TrackingQueuesModel
from golden.trackq.params import TrackqParams
from golden.trackq.vectors import GV12_QUEUES, GV12_SEQUENCE


class _Reference:
    """The mapping written from the requirement text: TTU packets cycle through their range in
    order, continuing after the last TTU queue used (any mode), restarting at the range start
    when the last used queue is outside the range or at its end."""

    def __init__(self, n_q):
        self.n_q = n_q
        self.last = None                 # last TTU queue (None: ttu_ptr = 0 at reset)

    def map(self, cls, warp, mode, w):
        n_q = self.n_q
        if mode == 1:
            return 0
        if cls in (LG, TEX):
            return {2: 0, 3: warp % w if mode == 3 else None, 4: warp % n_q}[mode]
        rng = {2: range(1, n_q), 3: range(w, n_q), 4: range(n_q)}[mode]
        nxt = 0 if self.last is None else self.last + 1
        if nxt not in rng:
            nxt = rng[0]
        self.last = nxt if nxt != rng[-1] else rng[0] - 1
        return nxt


@pytest.mark.req("TQ-GV12", "TQ-F1", "TQ-F2", "TQ-F3", "TQ-F4")
@pytest.mark.parametrize("mode", [1, 2, 3, 4])
def test_gv12_function_level(mode):
    m = QueueMapper(4)
    assert tuple(m.map(c, w, mode, 2) for c, w in GV12_SEQUENCE) == GV12_QUEUES[mode]


@pytest.mark.req("TQ-F1", "TQ-F2", "TQ-F3", "TQ-F4", "TQ-F5")
@pytest.mark.parametrize("n_q", [2, 3, 4, 5, 8, 48, 64])
def test_mapper_matches_reference_with_mode_changes(seed, n_q):
    """Random cls/warp/mode/W sequences; the one ttu_ptr is shared by all modes (TQ-F5)."""
    rng = random.Random(seed + n_q)
    m, ref = QueueMapper(n_q), _Reference(n_q)
    mode = 4
    for k in range(3000):
        if rng.random() < 0.2:
            mode = rng.choice([1, 2, 3, 4])
        w = rng.randint(1, n_q - 1)
        cls = rng.choice([LG, TEX, TTU, TTU])
        warp = rng.randrange(64)
        got = m.map(cls, warp, mode, w)
        assert got == ref.map(cls, warp, mode, w), (k, cls, warp, mode, w)
        lo = {1: 0, 2: 1 if cls == TTU else 0, 3: w if cls == TTU else 0, 4: 0}[mode]
        hi = {1: 0, 2: n_q - 1 if cls == TTU else 0, 3: n_q - 1 if cls == TTU else w - 1,
              4: n_q - 1}[mode]
        assert lo <= got <= hi


@pytest.mark.req("TQ-F5", "TQ-F44")
def test_ttu_pointer_resets_to_zero_and_wraps():
    m = QueueMapper(4)
    assert m.ttu_ptr == 0
    assert [m.map(TTU, 0, 4, 2) for _ in range(6)] == [0, 1, 2, 3, 0, 1]
    assert m.map(TTU, 0, 2, 2) == 2 and m.map(TTU, 0, 2, 2) == 3 and m.map(TTU, 0, 2, 2) == 1
    assert m.map(TTU, 0, 3, 3) == 3 and m.ttu_ptr == 3          # wraps to lo = W = 3
    assert m.map(LG, 5, 4, 2) == 1 and m.ttu_ptr == 3           # L/G does not move it
    assert m.map(TTU, 0, 1, 2) == 0 and m.ttu_ptr == 3          # mode 1 does not move it


@pytest.mark.req("TQ-F6", "TQ-V3")
def test_config_sampled_in_the_cycle_of_acceptance():
    """The mode changes every cycle; a request held while req.ready = 0 maps with the config of
    the cycle it is accepted in, not the one it was first offered in."""
    p = TrackqParams.gv(POOL=2, FAST_PATH=0)
    model = TrackingQueuesModel(p)
    modes = [0, 3, 1, 2] * 10
    blocked = make_req(1, warp=3, sectors=[(0, 0, 0)])
    model.step(req=blocked, cfg=p.default_config(cfg_mode=3))          # TQ3
    model.step(req=make_req(2, warp=1, sectors=[(0, 0, 0)]),
               cfg=p.default_config(cfg_mode=3))                        # TQ1: pool now full
    r = make_req(3, warp=3, cls=TEX, eoi=1)
    c = 2
    while True:
        res = model.step(req=r, fill=Fill(0, 0, 0) if c == 5 else None,
                         cfg=p.default_config(cfg_mode=modes[c], cfg_lgq=2))
        if res.accepted is not None:
            e = res.accepted
            break
        c += 1
    want = {0: 0, 1: 0, 2: 3 % 2, 3: 3}[modes[c]]
    assert c > 5 and e.q == want, (c, modes[c], e.q)


@pytest.mark.req("TQ-F4", "TQ-E7", "TQ-C1")
def test_single_queue_build_maps_everything_to_tq0():
    p = TrackqParams.gv(N_Q=1)
    for mode in range(4):
        model = TrackingQueuesModel(p)
        for k, (cls, warp) in enumerate(GV12_SEQUENCE):
            res = model.step(req=make_req(k, warp=warp, cls=cls),
                             cfg=p.default_config(cfg_mode=mode, cfg_lgq=1))
            assert res.accepted.q == 0
            assert bool(res.err_events) == (mode in (1, 2)), mode
