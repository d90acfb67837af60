"""Golden vectors WD-GV1 .. WD-GV15 of spec wdist.md §5, transcribed once for the golden tests and
the RTL testbenches. Values are exactly as printed; ``None`` marks a FAIL row."""

__all__ = ["GV1_SHAPES", "GV2", "GV3", "GV4", "GV4_SEED", "GV5", "GV6", "GV7", "GV8", "GV9",
           "GV10", "GV11_GPC", "GV11_GPU", "GV11_FLAT", "GV12", "GV13_PLAIN", "GV13_CGA",
           "GV14", "GV15", "CPC_SPEEDS"]

# GV1: Fig 12 shapes over 18x12: (name, level, in, out, units, CTAs per unit)
GV1_SHAPES = (
    ("(1) CTA grid", "PLAIN", (1, 1, 1), (1, 1, 1), 216, 1),
    ("(2) GPC CGAs", "GPC", (3, 2, 1), (1, 1, 1), 36, 6),
    ("(3) GPU CGAs of CTAs", "GPU_FLAT", (9, 6, 1), (1, 1, 1), 4, 54),
    ("(4) GPU CGAs of GPC CGAs", "GPU", (3, 2, 1), (3, 3, 1), 4, 54),
)

# GV2: grid 18x12x1, level GPC, in 3x2x1; CTA "C": unit u, rank r -> ctaid
GV2 = dict(grid=(18, 12, 1), inner=(3, 2, 1), u=8, r=4, ctaid=(7, 3, 0))

# GV3: (f, N, a, L, R, speed); a None = FAIL (cause SLOTS)
GV3 = (
    ([4, 2, 1, 0, 0, 0, 0, 0], 4, [3, 1, 0, 0, 0, 0, 0, 0], 1, 0, 1),
    ([5, 3, 3, 2, 0, 4, 1, 0], 7, [3, 1, 1, 0, 0, 2, 0, 0], 2, 0, 2),
    ([5, 3, 3, 2, 0, 4, 1, 0], 9, [4, 2, 1, 0, 0, 2, 0, 0], 2, 2, 1),
    ([5, 3, 3, 2, 0, 4, 1, 0], 12, [4, 2, 2, 1, 0, 3, 0, 0], 1, 0, 1),
    ([2, 2, 2, 2], 3, [1, 1, 1, 0], 2, 3, 1),
    ([6, 6, 1, 1], 5, [3, 2, 0, 0], 4, 1, 3),
    ([4, 2, 1, 0, 0, 0, 0, 0], 7, [4, 2, 1, 0, 0, 0, 0, 0], 0, 0, 0),
    ([4, 2, 1, 0, 0, 0, 0, 0], 8, None, None, None, None),
    ([1, 0, 0], 2, None, None, None, None),
)

# GV4: level_search W=6 traces: (f, N, [(L tested, V(L), V>N)], L)
GV4 = (
    ([4, 2, 1, 0, 0, 0, 0, 0], 4,
     [(31, 0, False), (15, 0, False), (7, 0, False), (3, 1, False), (1, 4, False), (0, 7, True)], 1),
    ([6, 6, 1, 1], 5,
     [(31, 0, False), (15, 0, False), (7, 0, False), (3, 6, True), (5, 2, False), (4, 4, False)], 4),
)
# GV4 row 3: the seed-style bisection for the first f: (h, L, V, verdict) and the result
GV4_SEED = dict(f=[4, 2, 1, 0, 0, 0, 0, 0], N=4,
                trace=[(2, 2, 2, "raise"), (3, 1, 4, "raise"), (4, 0, 7, "too much")], h=3, L=1)

# GV5: the Fig 21 instance: 137 CTAs onto 32 SMs (capacity 12)
GV5 = dict(
    f=[9, 10, 12, 0, 0, 12, 0, 12, 0, 11, 4, 6, 3, 9, 11, 8, 10, 5, 0, 11, 9, 7, 10, 8, 7, 11, 9, 6,
       10, 8, 7, 0],
    N=137, sum=225, L=4, R=15, V4=122, candidates=25,
    a=[6, 7, 9, 0, 0, 9, 0, 9, 0, 8, 1, 3, 0, 6, 8, 5, 7, 2, 0, 8, 6, 3, 6, 4, 3, 7, 5, 2, 6, 4, 3, 0],
    speed=3, cap=12,
    full=(3, 4, 6, 8, 18, 31), partial=(10, 11, 12, 17), empty=(2, 5, 7),
    trace=[(31, 0, False), (15, 0, False), (7, 54, False), (3, 147, True), (5, 98, False),
           (4, 122, False)],
)

# GV6: multicast, SM_PER_TPC = 2: (f, N, class-A SMs, a, speed); a None = FAIL
GV6 = (
    ([3, 0, 2, 2, 1, 1, 0, 4], 3, (2, 3, 4, 5), [0, 0, 1, 1, 1, 0, 0, 0], 0),
    ([3, 0, 2, 2, 1, 1, 0, 4], 5, (2, 3, 4, 5), [0, 0, 1, 1, 1, 1, 0, 1], 0),
    ([3, 0, 2, 2, 1, 1, 0, 4], 6, (2, 3, 4, 5), [1, 0, 1, 1, 1, 1, 0, 1], 0),
    ([3, 0, 2, 2, 1, 1, 0, 4], 7, (2, 3, 4, 5), None, None),
    ([2, 3, 3, 2, 0, 1, 1, 1], 4, (0, 1, 2, 3, 6, 7), [1, 1, 1, 1, 0, 0, 0, 0], 1),
    ([4, 4, 4, 4, 4, 4, 3, 3], 8, tuple(range(8)), [1] * 8, 2),
)

# GV7: 4 GPCs x 8 SMs, credits 8, level GPC LB, grid 24x1x1 of 8x1x1 CGAs
GV7 = dict(
    free=[[4, 2, 1, 0, 0, 0, 0, 0], [2, 1, 1, 1, 1, 1, 1, 0], [4, 4, 4, 4, 4, 4, 3, 3], [3] * 8],
    grid=(24, 1, 1), inner=(8, 1, 1),
    # per step: {gpc: (speed, a) or None for FAIL}, best, winners
    steps=[
        ({0: None, 1: (0, [2, 1, 1, 1, 1, 1, 1, 0]), 2: (2, [2, 2, 1, 1, 1, 1, 0, 0]),
          3: (2, [1] * 8)}, 2, (2, 3)),
        ({0: None, 1: (0, None), 2: (1, [1] * 8), 3: (1, [1] * 8)}, 1, (2,)),
    ],
    step2_f={2: [2, 2, 3, 3, 3, 3, 3, 3], 3: [2] * 8},
    beats=[(0, 2), (1, 3), (2, 2)],          # (seq, gpc); first_rank 0, end_of_cga 1
)

# GV8: 4 GPCs x 8 SMs, credits 8, level GPU LB, isz 4
GV8 = dict(
    free=[[3, 2, 2, 1, 1, 0, 0, 0], [1, 1, 1, 0, 0, 0, 0, 0], [2, 1, 1, 0, 0, 0, 0, 0],
          [2, 2, 1, 1, 1, 0, 0, 0]],
    isz=4,
    pass1={5: [(0, 2, 3), (0,), ()], 4: [(0, 2, 3), (0,)]},
    pass1_credit=[(0, 2, 3), ()],            # n = 4 with credit[0] = 1; R2 GPC0 cause CREDIT
    pass2=[
        ({0: (1, [2, 1, 1, 0, 0, 0, 0, 0]), 1: None, 2: (0, None), 3: (0, None)}, 1, (0,)),
        ({0: (0, [1, 1, 1, 1, 0, 0, 0, 0]), 2: (0, [2, 1, 1, 0, 0, 0, 0, 0]),
          3: (0, [2, 2, 0, 0, 0, 0, 0, 0])}, 0, (0, 2, 3)),
    ],
    step2_f0=[1, 1, 1, 1, 1, 0, 0, 0],
    beats=[(0, 0), (0, 4), (2, 8), (3, 12)],   # (gpc, first_rank); end_of_cga on the last
    final=[[0, 0, 0, 0, 1, 0, 0, 0], None, [0] * 8, [0, 0, 1, 1, 1, 0, 0, 0]],  # None = unchanged
)

# GV9: (grid, start, delta, (xd, yd, zd), carries, result, check lin)
GV9 = (
    ((18, 12, 1), (0, 0, 0), 137, (11, 7, 0), (0, 0), (11, 7, 0), 137),
    ((18, 12, 2), (11, 7, 0), 100, (10, 5, 0), (1, 1), (3, 1, 1), 237),
    ((5, 4, 3), (4, 3, 0), 27, (2, 1, 1), (1, 1), (1, 1, 2), 46),
    ((18, 12, 2), (17, 11, 0), 1, (1, 0, 0), (1, 1), (0, 0, 1), 216),
)

# GV10: plain 4x2x1 on 2 GPCs x 2 SMs: beats (gpc, cnt) and per-SM IDs
GV10 = dict(
    grid=(4, 2, 1),
    beats=[(0, [2, 1]), (1, [1, 2]), (0, [1, 1])],
    ids={0: [(0, 0, 0), (1, 0, 0), (2, 1, 0)], 1: [(2, 0, 0), (3, 1, 0)], 2: [(3, 0, 0)],
         3: [(0, 1, 0), (1, 1, 0)]},
)

# GV11: CGA ID mapping
GV11_GPC = dict(grid=(6, 4, 1), inner=(3, 2, 1), cnt=[2, 1, 0, 3],
                ids={0: [(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (2, 1)],
                     1: [(3, 0), (4, 0), (5, 0), (3, 1), (4, 1), (5, 1)]})
GV11_GPU = dict(grid=(18, 12, 1), inner=(3, 2, 1), outer=(3, 3, 1), u=3, rho=29, v=4, r=5,
                ctaid=(14, 9, 0), cga_cta_id=5)
GV11_FLAT = dict(grid=(18, 12, 1), inner=(9, 6, 1), u=1, rho=40, ctaid=(13, 4, 0))

# GV12: GPM ID pool, GPC_CGA_ID_W = 2: per cycle (allocation label or None, release ID or None,
# expected ID, "stall" or None)
GV12 = (
    (0, "A", None, 0), (1, "B", None, 1), (2, "C", None, 2), (3, "D", None, 3),
    (4, "E", None, "stall"), (5, "E", "B", "stall"), (6, "E", None, 1),
    (7, None, 0, None), (8, None, 2, None), (9, "F", None, 0),
)

# GV13: legacy versus shadow
GV13_PLAIN = dict(f=[2, 3, 3], N=5, picks=[1, 2, 0, 1, 2], totals=[1, 2, 2], L=1)
GV13_CGA = dict(free=[[3, 1, 0, 2], [2, 2, 2, 1]], N=4, legacy_gpc=1, legacy_picks=[0, 1, 2, 0],
                legacy_totals=[2, 1, 1, 0], legacy_cycles=5,
                shadow={0: (0, [3, 0, 0, 1]), 1: (0, [2, 1, 1, 0])}, shadow_gpc=0)

# GV14: seed figures
GV14 = dict(legacy_fill_min=1000, example=dict(N_GPC=8, SM_PER_GPC=(18,) * 8), portable=8)

# GV15: multicast stacking is not monotone
GV15 = dict(
    params=dict(N_GPC=1, SM_PER_GPC=(6,), SM_PER_TPC=2, CTA_SLOTS=3),
    grid=(20, 1, 1), inner=(2, 1, 1), outer=(5, 1, 1), credit=6,
    empty_f=[0, 3, 1, 2, 2, 3],
    empty_rounds=[([0, 0, 0, 1, 0, 1], 1), ([0, 0, 0, 0, 1, 1], 1), ([0, 0, 1, 1, 0, 0], 0),
                  ([0, 0, 0, 0, 1, 1], 0)],
    one_f=[0, 3, 0, 2, 2, 3],
    one_rounds=[([0, 0, 0, 0, 1, 1], 1), ([0, 0, 0, 0, 1, 1], 0), ([0, 1, 0, 1, 0, 0], 1),
                ([0, 1, 0, 1, 0, 0], 0), ([0, 1, 0, 0, 0, 1], 0)],
    first_ranks=[0, 2, 4, 6, 8],
    slot_caps=(0, 3, 1, 2, 2, 3), warp_caps=(7, 7, 64, 7, 7, 7),
)

# §6 item 5 / G-CPC: one CPC with free [1,1,5,0,5,0], SM_PER_TPC 2, MC, N 2: successive speeds
CPC_SPEEDS = dict(f=[1, 1, 5, 0, 5, 0], N=2, speeds=[0, 4, 3])
