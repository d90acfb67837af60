"""cocotb testbench of the FP32 side of the dfp dot unit (hw/dfp/fp32.py), bit-exact against
``golden.dfp.numerics.to_fp32`` and ``fadd32`` (spec dfp §4.5, §4.6).

The top is the test wrapper ``Fp32TestTop`` of tests/rtl/test_dfp_fp32.py: one
``DfpToFp32(acc_w, conv_stages)`` (ports ``conv_*``), one ``Fp32Adder(add_stages)`` (``add_*``)
and one ``Fp32Accumulator(fadd_cyc)`` (``acc_*``), side by side, so one build checks three
units.

Inputs are driven just after a rising edge and outputs read in the ReadOnly phase of the same
cycle. Every cycle is checked:

* pipelines (converter, adder): one vector per cycle with random valid gaps (random garbage on
  the data inputs in gap cycles); ``o_valid`` must be high exactly ``latency`` cycles after each
  valid input and low otherwise, and the output then equals the golden value;
* accumulator: a cycle model of the documented contract (busy window, clear, cancel, reset
  value) that calls the golden fadd32 for every issued add; ``busy`` and ``sum`` are compared
  every cycle. The driver respects ``busy`` but also raises ``add_valid`` while busy (must be
  ignored) and sometimes clears while an add is in flight (cancels it).

Testcases: ``conv_golden_vectors`` / ``add_golden_vectors`` (every DFP-GV13 / DFP-GV14 row that
fits the build), ``conv_random``, ``add_random``, ``acc_random`` (random stimulus with coverage
bins that must all be hit), ``reset_state`` (reset values and a reset with work in flight).
"""

import os
from collections import deque
from fractions import Fraction

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from golden.dfp.numerics import fadd32, to_fp32
from tb.common import env
from tb.common.clock import reset, start_clock

QNAN = 0x7FC00000
INF = 0x7F800000

# DFP-GV13 (acc, es, expected) and DFP-GV14 (x, y, expected), copied from the spec's tables.
GV13 = [
    (16777217, 0, 0x4B800000), (16777218, 0, 0x4B800001), (16777219, 0, 0x4B800002),
    (2147352578, 0, 0x4EFFFC00), (-2147352578, 0, 0xCEFFFC00), (3221028867, 0, 0x4F3FFD00),
    (1, -126, 0x00800000), (1, -127, 0x00000000), (-1, -127, 0x80000000),
    (16777215, -150, 0x00000000), (16777215, 104, 0x7F7FFFFF), (33554431, 103, 0x7F800000),
    (1, 128, 0x7F800000), (-(2 ** 47 - 1), 0, 0xD7000000), (2 ** 46 + 2 ** 22, -10, 0x51800000),
    (0, 5, 0x00000000), (414154842, -12, 0x47C57C03), (1, 1024, 0x7F800000),
    (-3, 1085, 0xFF800000), (-5, -1024, 0x80000000), (1, -1100, 0x00000000),
]
GV14 = [
    (0x4EFFFC00, 0x4E7FFC00, 0x4F3FFD00), (0x00800000, 0x80800001, 0x80000000),
    (0x00800001, 0x80800000, 0x00000000), (0x3F800000, 0xBF800000, 0x00000000),
    (0x80000000, 0x80000000, 0x80000000), (0x7F7FFFFF, 0x7F7FFFFF, 0x7F800000),
    (0x7F800000, 0xFF800000, 0x7FC00000),
]

ES_MIN, ES_MAX = -2048, 2047
N_RANDOM = int(os.environ.get("GPUBLOCKS_FP32_VECTORS", "20000"))


def _params():
    p = env.params()
    return p["acc_w"], p["conv_stages"], p["add_stages"], p["fadd_cyc"]


# ---------------------------------------------------------------- stimulus (pure Python)

def conv_vectors(rng, acc_w, n):
    """``n`` random (acc, es) pairs for to_fp32 at ACC_W = ``acc_w``, plus fixed edge cases.

    acc: uniform over the whole signed range, a uniform bit length with a random sign, exact
    rounding ties (and their neighbours) at every length above 24 bits, all-ones significands
    (which round up into the next binade), small values, the extremes ±2^(ACC_W-1), and every
    ±2^k with the negative neighbours -2^k ± 1 (the converter counts the leading zeros of a
    negative acc from its one's complement, corrected exactly at powers of two).
    es: uniform over [-1024, 1085] (the reachable es_out range) or [-2048, 2047], or placed so
    that the exact exponent sits at the flush (-126) or overflow (127) boundary.
    """
    lo, hi = -(1 << (acc_w - 1)), (1 << (acc_w - 1)) - 1
    fixed = [lo, hi, lo + 1, -hi, 1, -1, 0, (1 << 24) - 1, 1 << 24, (1 << 24) + 1]
    out = []
    for acc in fixed:
        for es in (ES_MIN, -1100, -1024, -150, -127, -126, -100, 0, 103, 104, 127, 128, 1024,
                   1085, ES_MAX):
            out.append((acc, es))

    def pick_acc():
        c = rng.random()
        if c < 0.25:
            return rng.randint(lo, hi)
        if c < 0.50:
            bits = rng.randint(1, acc_w - 1)
            m = rng.getrandbits(bits) | (1 << (bits - 1))
        elif c < 0.70:                       # tie or a neighbour: q.1000..0 (+-1)
            bits = rng.randint(25, acc_w - 1)
            k = bits - 24
            m = (rng.getrandbits(24) | (1 << 23)) << k | (1 << (k - 1))
            m += rng.choice((0, 0, 0, 1, -1))
        elif c < 0.78:                       # all ones: rounds up to 2^bits (or is exact)
            bits = rng.randint(24, acc_w - 1)
            m = (1 << bits) - 1 - rng.choice((0, 0, 1, 2))
        elif c < 0.92:                       # small values, exact in 24 bits
            m = rng.getrandbits(rng.randint(1, 24))
        else:
            return rng.choice(fixed)
        return -m if rng.random() < 0.5 else m

    def pick_es(acc):
        nbits = abs(acc).bit_length()
        c = rng.random()
        if c < 0.40:
            es = rng.randint(-1024, 1085)
        elif c < 0.55:
            es = rng.randint(ES_MIN, ES_MAX)
        elif c < 0.75:
            es = -126 - (nbits - 1) + rng.randint(-3, 2)      # exact exponent near -126
        elif c < 0.95:
            es = 127 - (nbits - 1) + rng.randint(-2, 2)       # exact exponent near 127
        else:
            es = rng.randint(-40, 40)
        return max(ES_MIN, min(ES_MAX, es))

    for k in range(acc_w - 1):               # every power of two and its neighbours: the
        for acc in (1 << k, -(1 << k), -(1 << k) - 1, -(1 << k) + 1):   # count's correction
            if acc:
                out.append((acc, pick_es(acc)))
    for _ in range(n):
        acc = max(lo, min(hi, pick_acc()))
        out.append((acc, pick_es(acc)))
    return out


def _f32(sign, exp, frac):
    return (sign & 1) << 31 | (exp & 0xFF) << 23 | (frac & 0x7FFFFF)


SPECIALS = [0, 0x80000000, INF, INF | 1 << 31, QNAN, QNAN | 1 << 31, 0x7F800001, 0xFFFFFFFF,
            0x7FBFFFFF, 0x7F7FFFFF, 0xFF7FFFFF, 0x00800000, 0x80800000, 0x00000001, 0x807FFFFF]


def add_vectors(rng, n):
    """``n`` random (x, y) pairs for fadd32, weighted toward the hard cases.

    Cancellation (opposite signs, exponents 0 or 1 apart, equal or nearly equal magnitudes),
    ties (exponent differences 22..27 with trailing-zero significands), huge exponent
    differences, results at the 2^-126 edge, overflow (exponents 253..254), zeros of both
    signs, Inf, NaN, a few denormal inputs (added by exact value, as the golden does), and
    uniformly random bit patterns.
    """
    def rand_frac():
        f = rng.getrandbits(23)
        if rng.random() < 0.3:
            f &= ~((1 << rng.randint(1, 23)) - 1) & 0x7FFFFF      # trailing zeros
        return f

    def finite(exp_lo=1, exp_hi=254):
        return _f32(rng.getrandbits(1), rng.randint(exp_lo, exp_hi), rand_frac())

    out = [(a, b) for a in SPECIALS for b in SPECIALS]
    for _ in range(n):
        c = rng.random()
        if c < 0.12:                                           # uniform bit patterns
            x, y = rng.getrandbits(32), rng.getrandbits(32)
        elif c < 0.30:                                         # near path: d <= 1, opposite
            x = finite()
            e = (x >> 23) & 0xFF
            y = _f32(~x >> 31, max(1, min(254, e + rng.randint(-1, 1))), rand_frac())
        elif c < 0.40:                                         # nearly equal magnitudes
            x = finite()
            y = (x ^ (1 << 31) ^ rng.getrandbits(rng.randint(1, 6))) if rng.random() < 0.8 \
                else x ^ (1 << 31)
            if rng.random() < 0.2:
                y = x                                          # doubling
        elif c < 0.55:                                         # ties and rounding: d 22..27
            x = finite(30, 254)
            e = (x >> 23) & 0xFF
            y = _f32(rng.getrandbits(1), e - rng.randint(22, 27), rand_frac())
        elif c < 0.62:                                         # huge exponent differences
            x = finite(60, 254)
            e = (x >> 23) & 0xFF
            y = _f32(rng.getrandbits(1), rng.randint(1, e - 25), rand_frac())
        elif c < 0.72:                                         # near 2^-126
            x = finite(1, 3)
            y = finite(1, 3)
        elif c < 0.80:                                         # overflow
            x = _f32(rng.getrandbits(1), rng.randint(252, 254), rand_frac())
            y = _f32(x >> 31 if rng.random() < 0.8 else rng.getrandbits(1),
                     rng.randint(250, 254), rand_frac())
        elif c < 0.87:                                         # zeros, Inf, NaN with anything
            x = rng.choice(SPECIALS[:8])
            y = finite() if rng.random() < 0.7 else rng.choice(SPECIALS)
        elif c < 0.92:                                         # denormal inputs
            x = _f32(rng.getrandbits(1), 0, rng.getrandbits(23))
            y = _f32(rng.getrandbits(1), rng.choice((0, 1, 2, rng.randint(1, 254))),
                     rng.getrandbits(23))
        else:                                                  # random finite pairs
            x, y = finite(), finite()
        if rng.random() < 0.5:
            x, y = y, x
        out.append((x, y))
    return out


def _value(bits):
    """Exact value of a finite FP32 pattern."""
    e, f = (bits >> 23) & 0xFF, bits & 0x7FFFFF
    v = Fraction(f, 1 << 149) if e == 0 else Fraction((1 << 23) | f) * Fraction(2) ** (e - 150)
    return -v if bits >> 31 else v


def conv_bins(acc, es, result):
    """Coverage bins of one to_fp32 vector."""
    bins = []
    m = abs(acc)
    n = m.bit_length()
    if acc == 0:
        bins.append("acc_zero")
    elif result & 0x7FFFFFFF == 0:
        bins.append("ftz_neg" if acc < 0 else "ftz_pos")
    elif result & 0x7FFFFFFF == INF:
        bins.append("inf_neg" if acc < 0 else "inf_pos")
        if es + n - 1 == 127:
            bins.append("inf_by_rounding")
    else:
        bins.append("normal")
        if result & 0x7F800000 == 0x00800000:
            bins.append("min_binade")
        if result & 0x7FFFFFFF == 0x7F7FFFFF:
            bins.append("max_finite")
        if n > 24:
            rest = m & ((1 << (n - 24)) - 1)
            half = 1 << (n - 25)
            if rest == half:
                bins.append("tie")
            if m >> (n - 24) == (1 << 24) - 1 and rest >= half:
                bins.append("round_to_next_binade")
    if acc == -(1 << (env.params()["acc_w"] - 1)):
        bins.append("acc_min")
    if es >= 1024:
        bins.append("es_ge_1024")
    if es <= -1024:
        bins.append("es_le_-1024")
    return bins


CONV_BINS = ["acc_zero", "ftz_neg", "ftz_pos", "inf_neg", "inf_pos", "inf_by_rounding", "normal",
             "min_binade", "max_finite", "tie", "round_to_next_binade", "acc_min", "es_ge_1024",
             "es_le_-1024"]


def _is_nan(b):
    return (b >> 23) & 0xFF == 0xFF and b & 0x7FFFFF


def _is_inf(b):
    return b & 0x7FFFFFFF == INF


def add_bins(x, y, result):
    """Coverage bins of one fadd32 vector."""
    bins = []
    if _is_nan(x) or _is_nan(y):
        return ["nan_in"]
    if _is_inf(x) or _is_inf(y):
        return ["inf_minus_inf" if result == QNAN else "inf_in"]
    if any(not (v >> 23) & 0xFF and v & 0x7FFFFF for v in (x, y)):
        bins.append("denormal_in")
    s = _value(x) + _value(y)
    if s == 0:
        bins.append("exact_zero_neg" if result == 0x80000000 else "exact_zero_pos")
        return bins
    if abs(s) < Fraction(1, 1 << 126):
        bins.append("ftz")
        return bins
    if _is_inf(result):
        bins.append("overflow")
        return bins
    ex, ey = max(1, (x >> 23) & 0xFF), max(1, (y >> 23) & 0xFF)
    d = abs(ex - ey)
    opposite = (x ^ y) >> 31
    if opposite and d <= 1:
        bins.append("near_path")
        if abs(s) < max(abs(_value(x)), abs(_value(y))) / (1 << 10):
            bins.append("massive_cancellation")
    else:
        bins.append("far_path_sub" if opposite else "far_path_add")
    if d >= 25:
        bins.append("d_ge_25")
    r = _value(result)
    if r != s:
        ulp = Fraction(2) ** (max(1, (result >> 23) & 0xFF) - 150)
        if abs(s - r) * 2 == ulp:
            bins.append("tie")
    if (result >> 23) & 0xFF == 1:
        bins.append("min_binade")
    return bins


ADD_BINS = ["nan_in", "inf_in", "inf_minus_inf", "denormal_in", "exact_zero_pos",
            "exact_zero_neg", "ftz", "overflow", "near_path", "massive_cancellation",
            "far_path_add", "far_path_sub", "d_ge_25", "tie", "min_binade"]


# ---------------------------------------------------------------- pipeline checker

class _Pipe:
    """Drive one fully pipelined unit and check its output every cycle.

    ``ports``: (valid_in, [data_in handles], valid_out, data_out); ``masks``: bit masks of the
    data inputs (negative values are driven in two's complement).
    """

    def __init__(self, dut, name, ports, masks, latency, golden, vectors, gap_prob, rng):
        self.dut, self.name = dut, name
        self.i_valid, self.inputs, self.o_valid, self.out = ports
        self.masks = masks
        self.latency, self.golden = latency, golden
        self.vectors = deque(vectors)
        self.gap_prob, self.rng = gap_prob, rng
        self.due = deque()           # (cycle, vector, expected)
        self.failures, self.checked = [], 0
        self.results = []            # (vector, expected), in order

    @property
    def done(self):
        return not self.vectors and not self.due

    def drive(self, cycle):
        """Called just after the rising edge that starts ``cycle``."""
        if self.vectors and self.rng.random() >= self.gap_prob:
            vec = self.vectors.popleft()
            for handle, mask, value in zip(self.inputs, self.masks, vec):
                handle.value = value & mask
            self.i_valid.value = 1
            want = self.golden(*vec)
            self.due.append((cycle + self.latency, vec, want))
            self.results.append((vec, want))
        else:
            self.i_valid.value = 0
            for handle, mask in zip(self.inputs, self.masks):
                handle.value = self.rng.getrandbits(32 + 16) & mask     # ignored garbage

    def check(self, cycle):
        """Called in the ReadOnly phase of ``cycle``."""
        expect = bool(self.due) and self.due[0][0] == cycle
        valid = int(self.o_valid.value)
        if valid != expect:
            self._fail(f"cycle {cycle}: o_valid={valid}, expected {int(expect)}")
        if expect:
            _, vec, want = self.due.popleft()
            got = int(self.out.value)
            self.checked += 1
            if got != want:
                self._fail(f"cycle {cycle}: {self.name}{tuple(vec)} = {got:#010x}, "
                           f"golden {want:#010x}")

    def _fail(self, message):
        if len(self.failures) < 1000:
            self.failures.append(message)
        else:
            self.failures[-1] = f"... and more (last: {message})"

    def assert_ok(self):
        assert not self.failures, (
            f"{self.name}: {len(self.failures)} failures (seed {env.seed()}, params "
            f"{env.params()}):\n" + "\n".join(self.failures[:25]))
        assert self.checked == len(self.results), (self.checked, len(self.results))


async def _start(dut):
    for name in ("conv_i_valid", "add_i_valid", "acc_clear", "acc_first", "acc_add_valid"):
        getattr(dut, name).value = 0
    for name in ("conv_acc", "conv_es", "add_x", "add_y", "acc_x"):
        getattr(dut, name).value = 0
    start_clock(dut)
    await reset(dut)


def _conv_pipe(dut, vectors, rng, gap_prob=0.2):
    acc_w, conv_stages, _, _ = _params()
    ports = (dut.conv_i_valid, [dut.conv_acc, dut.conv_es], dut.conv_o_valid, dut.conv_fp32)
    return _Pipe(dut, "to_fp32", ports, [(1 << acc_w) - 1, 0xFFF], conv_stages, to_fp32,
                 vectors, gap_prob, rng)


def _add_pipe(dut, vectors, rng, gap_prob=0.2):
    _, _, add_stages, _ = _params()
    ports = (dut.add_i_valid, [dut.add_x, dut.add_y], dut.add_o_valid, dut.add_sum)
    return _Pipe(dut, "fadd32", ports, [0xFFFFFFFF, 0xFFFFFFFF], add_stages, fadd32,
                 vectors, gap_prob, rng)


async def _run_pipes(dut, pipes, max_cycles):
    clk = dut.clk
    cycle = 0
    while not all(p.done for p in pipes):
        await RisingEdge(clk)
        cycle += 1
        assert cycle <= max_cycles, f"still busy after {max_cycles} cycles"
        for p in pipes:
            p.drive(cycle)
        await ReadOnly()
        for p in pipes:
            p.check(cycle)
    for _ in range(4):                         # nothing more may come out
        await RisingEdge(clk)
        cycle += 1
        for p in pipes:
            p.drive(cycle)
        await ReadOnly()
        for p in pipes:
            p.check(cycle)
    return cycle


def _check_bins(dut, name, results, binner, required):
    counts = {}
    for vec, want in results:
        for b in binner(*vec, want):
            counts[b] = counts.get(b, 0) + 1
    missing = [b for b in required if not counts.get(b)]
    dut._log.info("%s coverage: %s", name, ", ".join(f"{b}={counts.get(b, 0)}" for b in required))
    assert not missing, f"{name}: stimulus missed coverage bins {missing}"


# ---------------------------------------------------------------- tests

@cocotb.test()
async def conv_golden_vectors(dut):
    """Every DFP-GV13 row whose acc fits ACC_W: expected value from the spec table, and the
    golden model agrees; driven back to back and with gaps."""
    await _start(dut)
    acc_w = _params()[0]
    rows = [r for r in GV13 if -(1 << (acc_w - 1)) <= r[0] < (1 << (acc_w - 1))]
    for acc, es, want in rows:
        assert to_fp32(acc, es) == want, f"golden to_fp32({acc}, {es}) disagrees with GV13"
    vectors = [(acc, es) for acc, es, _ in rows] * 2
    pipe = _conv_pipe(dut, vectors, env.rng(1), gap_prob=0.3)
    await _run_pipes(dut, [pipe], 1000)
    pipe.assert_ok()
    table = {(a, e): w for a, e, w in rows}
    for vec, want in pipe.results:
        assert want == table[vec]
    dut._log.info("DFP-GV13: %d of %d rows fit ACC_W=%d and match", len(rows), len(GV13), acc_w)


@cocotb.test()
async def add_golden_vectors(dut):
    """Every DFP-GV14 row, both operand orders (fadd32 is commutative on these rows)."""
    await _start(dut)
    for x, y, want in GV14:
        assert fadd32(x, y) == want and fadd32(y, x) == want, f"golden fadd32 on {x:#x}, {y:#x}"
    vectors = [(x, y) for x, y, _ in GV14] + [(y, x) for x, y, _ in GV14]
    pipe = _add_pipe(dut, vectors, env.rng(2), gap_prob=0.3)
    await _run_pipes(dut, [pipe], 1000)
    pipe.assert_ok()
    dut._log.info("DFP-GV14: %d rows (both orders) match", len(GV14))


@cocotb.test()
async def conv_random(dut):
    """Random to_fp32 vectors (see conv_vectors) with random valid gaps; coverage bins."""
    await _start(dut)
    acc_w = _params()[0]
    vectors = conv_vectors(env.rng(3), acc_w, N_RANDOM)
    pipe = _conv_pipe(dut, vectors, env.rng(4))
    cycles = await _run_pipes(dut, [pipe], 4 * len(vectors) + 100)
    pipe.assert_ok()
    _check_bins(dut, "to_fp32", pipe.results, conv_bins, CONV_BINS)
    dut._log.info("to_fp32: %d vectors checked in %d cycles (acc_w %d, latency %d)",
                  pipe.checked, cycles, acc_w, pipe.latency)


@cocotb.test()
async def add_random(dut):
    """Random fadd32 vectors (see add_vectors) with random valid gaps; coverage bins."""
    await _start(dut)
    vectors = add_vectors(env.rng(5), N_RANDOM)
    pipe = _add_pipe(dut, vectors, env.rng(6))
    cycles = await _run_pipes(dut, [pipe], 4 * len(vectors) + 100)
    pipe.assert_ok()
    _check_bins(dut, "fadd32", pipe.results, add_bins, ADD_BINS)
    dut._log.info("fadd32: %d vectors checked in %d cycles (latency %d)", pipe.checked, cycles,
                  pipe.latency)


class AccModel:
    """Cycle model of Fp32Accumulator's documented contract, calling the golden fadd32."""

    def __init__(self, fadd_cyc):
        self.lat = fadd_cyc - 1
        self.reset()

    def reset(self):
        self.sum = 0
        self.live = [0] * self.lat
        self.pending = None

    @property
    def busy(self):
        return int(any(self.live))

    def step(self, clear, add_valid, x, first=0):
        """Apply one cycle's inputs; returns True when an add was issued."""
        issue = add_valid and not self.busy
        clear_only = clear and not issue
        result = fadd32(0 if clear or first else self.sum, x) if issue else None
        if clear_only:
            self.sum = 0
            self.live = [0] * self.lat
            self.pending = None
            return False
        if self.lat == 0:
            if issue:
                self.sum = result
            return issue
        if self.live[-1]:
            self.sum = self.pending
        self.live = [int(issue)] + self.live[:-1]
        if issue:
            self.pending = result
        return issue


def acc_addend(rng, current):
    """An addend for the accumulator: mostly finite values near the running sum's exponent
    (cancellation, ties, 2^-126 edge), sometimes huge, tiny, zero, Inf or NaN."""
    e = (current >> 23) & 0xFF
    c = rng.random()
    if c < 0.35 and 1 <= e <= 254:
        ex = max(1, min(254, e + rng.randint(-3, 3)))
        f = rng.getrandbits(23)
        if rng.random() < 0.3:
            f = (current & 0x7FFFFF) ^ rng.getrandbits(4)
        return _f32(rng.getrandbits(1) if rng.random() < 0.5 else ~current >> 31, ex, f)
    if c < 0.45 and 1 <= e <= 254:
        return current ^ (1 << 31)                       # exact cancellation
    if c < 0.75:
        return _f32(rng.getrandbits(1), rng.randint(100, 154), rng.getrandbits(23))
    if c < 0.85:
        return _f32(rng.getrandbits(1), rng.randint(1, 254), rng.getrandbits(23))
    if c < 0.90:
        return _f32(rng.getrandbits(1), rng.randint(250, 254), rng.getrandbits(23))
    if c < 0.94:
        return _f32(rng.getrandbits(1), rng.randint(1, 4), rng.getrandbits(23))
    return rng.choice(SPECIALS)


@cocotb.test()
async def acc_random(dut):
    """Random clear/add sequences with random gaps, adds attempted while busy (ignored),
    clears alone (also while an add is in flight: cancels it), ``first`` on random cycles (S =
    +0 only for an issued add); busy and sum every cycle."""
    await _start(dut)
    fadd_cyc = _params()[3]
    model = AccModel(fadd_cyc)
    rng = env.rng(7)
    clk = dut.clk
    clear_h, first_h, valid_h, x_h = dut.acc_clear, dut.acc_first, dut.acc_add_valid, dut.acc_x
    busy_h, sum_h = dut.acc_busy, dut.acc_sum
    adds = cancels = clears = ignored = cycle = 0
    failures = []
    counts = {"nan": 0, "inf": 0, "neg_zero": 0}
    target = N_RANDOM
    while adds < target:
        await RisingEdge(clk)
        cycle += 1
        assert cycle <= (fadd_cyc + 2) * target * 3, "accumulator test ran too long"
        want_busy, want_sum = model.busy, model.sum
        c = rng.random()
        clear = add_valid = 0
        x = rng.getrandbits(32)
        if want_busy:
            if c < 0.15:
                add_valid = 1                       # must be ignored
                ignored += 1
            if c < 0.01 or 0.15 <= c < 0.18:
                clear = 1                           # cancels the add in flight
                cancels += 1
        else:
            if c < 0.85:
                add_valid = 1
                x = acc_addend(rng, want_sum)
                clear = int(rng.random() < 0.08)
            elif c < 0.90:
                clear = 1
                clears += 1
        first = int(rng.random() < 0.08)            # any cycle: counts only with an issued add
        clear_h.value, first_h.value, valid_h.value, x_h.value = clear, first, add_valid, x
        issued = model.step(clear, add_valid, x, first)
        adds += issued
        await ReadOnly()
        got_busy, got_sum = int(busy_h.value), int(sum_h.value)
        if (got_busy, got_sum) != (want_busy, want_sum) and len(failures) < 25:
            failures.append(f"cycle {cycle}: busy={got_busy} sum={got_sum:#010x}, expected "
                            f"busy={want_busy} sum={want_sum:#010x}")
        counts["nan"] += want_sum == QNAN
        counts["inf"] += _is_inf(want_sum)
        counts["neg_zero"] += want_sum == 0x80000000
    for _ in range(fadd_cyc + 2):                  # drain: the last add lands, then stays
        await RisingEdge(clk)
        cycle += 1
        want_busy, want_sum = model.busy, model.sum
        clear_h.value = first_h.value = valid_h.value = 0
        model.step(0, 0, 0)
        await ReadOnly()
        got = (int(busy_h.value), int(sum_h.value))
        if got != (want_busy, want_sum) and len(failures) < 25:
            failures.append(f"drain cycle {cycle}: (busy, sum)={got}, expected "
                            f"{(want_busy, want_sum)}")
    assert not failures, (f"accumulator (fadd_cyc {fadd_cyc}, seed {env.seed()}):\n"
                          + "\n".join(failures))
    assert model.busy == 0
    assert counts["nan"] and counts["inf"], f"stimulus never reached NaN/Inf sums: {counts}"
    if fadd_cyc > 1:
        assert ignored and cancels, "stimulus never tried an add or a clear while busy"
    dut._log.info("accumulator fadd_cyc %d: %d adds, %d clears alone, %d cancelling clears, "
                  "%d adds ignored while busy, %d cycles; cycles with NaN/Inf/-0 sums: %s",
                  fadd_cyc, adds, clears, cancels, ignored, cycle, counts)


@cocotb.test()
async def reset_state(dut):
    """After reset: no valid outputs, sum = +0.0, busy low; a reset with conversions, sums
    and an accumulator add in flight drops them all."""
    await _start(dut)
    clk = dut.clk
    await ReadOnly()
    assert int(dut.acc_sum.value) == 0 and int(dut.acc_busy.value) == 0
    assert int(dut.conv_o_valid.value) == 0 and int(dut.add_o_valid.value) == 0
    _, conv_stages, add_stages, fadd_cyc = _params()
    # Load the accumulator with 1.0, then start an add and reset in its busy window.
    await RisingEdge(clk)
    dut.acc_add_valid.value, dut.acc_clear.value, dut.acc_x.value = 1, 1, 0x3F800000
    dut.conv_i_valid.value, dut.conv_acc.value, dut.conv_es.value = 1, 5, 0
    dut.add_i_valid.value, dut.add_x.value, dut.add_y.value = 1, 0x3F800000, 0x3F800000
    await RisingEdge(clk)
    dut.acc_add_valid.value = dut.acc_clear.value = 0
    for _ in range(fadd_cyc + 1):
        await RisingEdge(clk)
    await ReadOnly()
    assert int(dut.acc_sum.value) == 0x3F800000, f"sum {int(dut.acc_sum.value):#x}"
    await RisingEdge(clk)
    dut.acc_add_valid.value, dut.acc_x.value = 1, 0x40000000
    await RisingEdge(clk)
    dut.acc_add_valid.value = 0
    dut.rst.value = 1                                   # reset during the busy window / add
    await RisingEdge(clk)
    dut.rst.value = 0
    dut.conv_i_valid.value = dut.add_i_valid.value = 0
    for _ in range(max(fadd_cyc, conv_stages, add_stages) + 2):
        await ReadOnly()
        assert int(dut.acc_sum.value) == 0, f"sum {int(dut.acc_sum.value):#x} after reset"
        assert int(dut.acc_busy.value) == 0
        assert int(dut.conv_o_valid.value) == 0 and int(dut.add_o_valid.value) == 0
        await RisingEdge(clk)
