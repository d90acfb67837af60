"""Golden vectors MR-GV1..GV20 of spec memrouter.md §5, transcribed once for the golden tests and
the RTL testbenches. Address maps are (partition address, port, device address) with port None
for E_RANGE; QoS rows give the counts printed in the spec."""

from fractions import Fraction as Fr

__all__ = ["GV1", "GV7", "GV8", "GV9", "GV10", "GV15", "GV16", "GV17", "GV18", "GV19", "GV12",
           "GV13", "SECTOR_BW"]

# per-port bandwidth in beats/cycle (§2.4): HBM 4/8, module 1/8
SECTOR_BW = {"HBM": Fr(4, 8), "OFF": Fr(1, 8)}

# MR-GV1: name -> (LOG2G, N_OFF, slots, HBM_FRAMES, MOD_FRAMES, NEAR_FRAMES, CARVE/mod, FAR_FRAMES,
#                   PAGES (excl), PT_ENTRIES, NUM_LINES, OFF RATE_N/F,
#                   Σ bandwidth of the near pool's ports)
GV1 = {
    "A": (12, 2, "H,M0,H,H,M1,H", 96, 256, 144, 24, 464, 608, 1024, 8, (3, 0), Fr(3, 4)),
    "B": (12, 3, "H,M0,H,M1,H,M2,H", 64, 256, 112, 16, 720, 832, 1024, 8, (3, 0), Fr(7, 8)),
    "C": (12, 3, "H,M0,H,H,M1,H,H,M2,H", 48, 192, 72, 8, 552, 624, 1024, 8, (2, 1), Fr(7, 8)),
    "D": (12, 2, "H", 96, 256, 96, 0, 512, 608, 1024, 8, (0, 3), Fr(1, 2)),
    "G64": (16, 3, "H,M0,H,M1,H,M2,H", 8, 5, 14, 2, 9, 23, 256, 4, (3, 0), Fr(7, 8)),
}

# MR-GV7 (CFG-G64, NEAR_RESERVE 0)
GV7 = [(0x00000, 0, 0x00000), (0x10020, 1, 0x00020), (0x20000, 0, 0x10000),
       (0x3FFFF, 2, 0x0FFFF), (0x3FFE0, 2, 0x0FFE0), (0x50000, 3, 0x00000),
       (0x71234, 0, 0x41234), (0xC0000, 3, 0x10000), (0xD0040, 0, 0x70040),
       (0xE0000, 1, 0x20000), (0xF0000, 2, 0x20000), (0x100000, 3, 0x20000),
       (0x160000, 3, 0x40000), (0x170000, None, None)]

# MR-GV8 (CFG-B)
GV8 = [(0x00000, 0, 0x00000), (0x01020, 1, 0x00020), (0x02000, 0, 0x01000),
       (0x03FE0, 2, 0x00FE0), (0x05000, 3, 0x00000), (0x07120, 0, 0x04120),
       (0x0C040, 3, 0x01040), (0x0D040, 0, 0x07040), (0x6FFE0, 0, 0x3FFE0),
       (0x70000, 1, 0x10000), (0x71000, 2, 0x10000), (0x72000, 3, 0x10000),
       (0x73000, 1, 0x11000), (0x33FFE0, 3, 0xFFFE0), (0x340000, None, None)]

# MR-GV9 (CFG-A) as (page, port, device of the page base) except the byte row
GV9 = [(0, 0, 0x0), (1, 1, 0x0), (2, 0, 0x1000), (3, 0, 0x2000), (4, 2, 0x0), (5, 0, 0x3000),
       (6, 0, 0x4000), (7, 1, 0x1000), (143, 0, 0x5F000), (144, 1, 0x18000), (145, 2, 0x18000),
       (146, 1, 0x19000), (608, None, None)]
GV9_BYTE = (0x25FFE0, 2, 0xFFFE0)

# MR-GV10 (page, port, device)
GV10 = {
    "C": [(0, 0, 0x0), (1, 1, 0x0), (2, 0, 0x1000), (3, 0, 0x2000), (4, 2, 0x0), (5, 0, 0x3000),
          (6, 0, 0x4000), (7, 3, 0x0), (8, 0, 0x5000), (9, 0, 0x6000), (71, 0, 0x2F000),
          (72, 1, 0x8000), (73, 2, 0x8000), (74, 3, 0x8000), (75, 1, 0x9000), (623, 3, 0xBF000)],
    "D": [(0, 0, 0x0), (95, 0, 0x5F000), (96, 1, 0x0), (97, 2, 0x0), (98, 1, 0x1000),
          (607, 2, 0xFF000)],
}
GV10_C_CARVE = [1, 4, 7, 10, 13, 16]          # modules 0, 1, 2, 0, 1, 2

# MR-GV12 (CFG-G64 seed-scale migration trace; 1-based sector ranges as printed)
GV12 = dict(page=13, far=(1, 2), near=(0, 7), pre=(1537, 2048), walk_stop=100,
            demand=(200, 300), prevalid=512, walk=1435, demand_fills=101, full_writes=0,
            far_reads_far=613, far_reads_mig=1435, near_mig_writes=2048, prsp_beats=613,
            after=(0xD0040, 0, 0x70040))

# MR-GV13 (CFG-B scaled trace)
GV13 = dict(page=111, far=(1, 16), near=(0, 63), pre=(97, 128), walk_stop=6, demand=(12, 18),
            walk=89, demand_fills=7, prevalid=32, full_writes=0)

# MR-GV15: name -> (rate_n, rate_f, stimulus kwargs, expected dict)
GV15 = {
    "a": (2, 1, {}, dict(N=841, F=409, N2=834, F2=416,
                         head="N" * 24 + "FNN" * 4, first=[7, 15, 23])),
    "b": (1, 2, {}, dict(N=425, F=825)),
    "c": (2, 1, dict(near=False), dict(N=0, F=1250)),
    "d": (2, 1, dict(far=False), dict(N=1250, F=0)),
    "e": (2, 1, dict(nb=8, ready=64), dict(N=840, F=408, head="NNNF" + "NNF" * 5)),
    "f": (2, 1, dict(near_gate=True, uw=1000), dict(N=314, F=936, idle=0)),
    "g": (2, 1, dict(near_gate=True, uw=1000, uth_en=1, uth=40), dict(N=314, F=936)),
    "h": (2, 1, dict(near_gate=True, uw=1000, uth_en=1, uth=20),
          dict(N=455, F=467, idle=328, F_first_epoch=92, F_rest=375)),
    "i": (0, 0, dict(mig=True, mig_starve=100),
          dict(N=1147, F=8, M=95, head="N" * 8 + "F" * 8, mig_first=[127, 231, 335, 439])),
}

# MR-GV16: (port, bw_num, lat, requests [(t, len, wr)]) -> response cycles
GV16 = [
    ("OFF read len 7", 1, 96, [(0, 7, 0)], [97 + 8 * k for k in range(8)]),
    ("HBM read len 7", 4, 32, [(0, 7, 0)], [33 + 2 * k for k in range(8)]),
    ("OFF write len 0", 1, 96, [(0, 0, 1)], [97]),
    ("OFF reads len 0 at 0 and 1", 1, 96, [(0, 0, 0), (1, 0, 0)], [97, 105]),
]
GV16_OFF_SERVICE = [1 + 8 * k for k in range(8)]

# MR-GV17: (port, device address, word)
GV17 = [(0, 0x0, 0x9E3779B1), (0, 0x4, 0x24234428), (1, 0x0, 0x3C6EF362),
        (1, 0x20, 0x6BCD471A), (3, 0x10000, 0x6B7BA6C4)]

# MR-GV18
GV18 = dict(strides={608: 375, 832: 515, 624: 385}, ranks=[0, 375, 142, 517, 284, 51],
            hbm_share=Fr(96, 608))

# MR-GV19: config -> (sum of port bandwidth, target, seed ratio to HBM alone, target ratio)
GV19 = {"D": (Fr(1, 2), Fr(485, 1000), Fr(1), None),
        "A": (Fr(3, 4), Fr(7275, 10000), Fr(3, 2), Fr(1455, 1000)),
        "B": (Fr(7, 8), Fr(84875, 100000), Fr(7, 4), Fr(16975, 10000))}
