"""cocotb testbench of PrefixPopcount: every sample compared bit-exactly with the golden model.

The part is combinational: each sample drives ``i``, waits 1 ns and reads the flat ``o`` vector
(unpacked with ``golden.common.popcount.unpack``) and ``total``. Exhaustive when 2**n <= 65536,
otherwise random words of varied density plus directed edge words.
"""

import cocotb
from cocotb.triggers import Timer

from golden.common.popcount import count_width, prefix_popcount, unpack
from tb.common import env

EXHAUSTIVE_LIMIT = 1 << 16
RANDOM_SAMPLES = 3000


def _edge_words(n):
    """0, all ones, every single bit, every single hole, alternating and half-filled words."""
    ones = (1 << n) - 1
    words = [0, ones]
    for b in range(n):
        words += [1 << b, ones ^ (1 << b), (1 << (b + 1)) - 1, ones ^ ((1 << b) - 1)]
    for pattern in ("01", "10", "0011", "1100", "0001", "1110"):
        words.append(int((pattern * n)[:n], 2))
    return words


def _random_words(n, rng, count):
    words = []
    for _ in range(count):
        density = rng.choice([0.0, 0.05, 0.25, 0.5, 0.75, 0.95, 1.0])
        words.append(sum(1 << k for k in range(n) if rng.random() < density))
    return words


class PopcountChecker:
    def __init__(self, dut):
        self.dut = dut
        self.n = env.params()["n"]
        self.samples = 0
        self.failures = 0
        self.mismatches = []                      # the first 1000, for the report

    async def check(self, word):
        dut, n = self.dut, self.n
        dut.i.value = word
        await Timer(1, unit="ns")
        got = unpack(int(dut.o.value), n)
        got_total = int(dut.total.value)
        want = prefix_popcount(word, n)
        want_total = want[-1] + (word >> (n - 1))
        self.samples += 1
        if (got, got_total) == (want, want_total):
            return
        self.failures += 1
        if len(self.mismatches) < 1000:
            wrong = [k for k in range(n) if got[k] != want[k]][:8]
            self.mismatches.append(
                f"i={word:#x}: total {got_total} (golden {want_total}); "
                + ", ".join(f"o[{k}]={got[k]} (golden {want[k]})" for k in wrong))

    def report(self):
        assert not self.failures, (
            f"{self.failures} of {self.samples} samples mismatch (n={self.n}, "
            f"seed {env.seed()}):\n" + "\n".join(self.mismatches[:20]))
        self.dut._log.info("n=%d: %d samples match the golden model", self.n, self.samples)


@cocotb.test()
async def ports(dut):
    """Port widths: i is n bits, o is n counts of ceil(log2(n+1)) bits, total one count."""
    n = env.params()["n"]
    w = count_width(n)
    assert (len(dut.i), len(dut.o), len(dut.total)) == (n, n * w, w), \
        f"widths i={len(dut.i)} o={len(dut.o)} total={len(dut.total)} for n={n}, w={w}"


@cocotb.test()
async def matches_golden(dut):
    """Every sample: o[k] = popcount(i[0:k]) and total = popcount(i), bit-exact."""
    dut._log.info("seed %d, params %s", env.seed(), env.params())
    checker = PopcountChecker(dut)
    n = checker.n
    if (1 << n) <= EXHAUSTIVE_LIMIT:
        words = list(range(1 << n))
        dut._log.info("exhaustive: %d words", len(words))
    else:
        rng = env.rng(1)
        words = _edge_words(n) + _random_words(n, rng, RANDOM_SAMPLES)
        dut._log.info("random: %d words (%d directed)", len(words), len(_edge_words(n)))
    for word in words:
        await checker.check(word)
    checker.report()
