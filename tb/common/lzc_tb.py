"""cocotb testbench of LeadingZeroCount: every sample compared bit-exactly with the golden model.

The part is combinational: each sample drives ``i``, waits 1 ns and reads ``count`` and
``zero``. Exhaustive when 2**width <= 65536, so LZC16 is checked on every word (about a second).
Wider words get every power of two with its neighbours, the all-ones word, every "ones below
bit b" word and random words whose leading-zero counts are spread evenly over 0..width.
"""

import cocotb
from cocotb.triggers import Timer

from golden.common.lzc import lzc
from tb.common import env

EXHAUSTIVE_LIMIT = 1 << 16
RANDOM_SAMPLES = 4000


def _edge_words(width):
    ones = (1 << width) - 1
    words = {0, ones}
    for b in range(width):
        for word in ((1 << b) - 1, 1 << b, (1 << b) + 1, (1 << (b + 1)) - 1, ones >> b,
                     ones ^ (1 << b)):
            if 0 <= word <= ones:
                words.add(word)
    return sorted(words)


def _random_words(width, rng, count):
    """Random words shifted right by a random amount, so every count from 0 to width appears."""
    return [rng.getrandbits(width) >> rng.randrange(width + 1) for _ in range(count)]


@cocotb.test()
async def ports(dut):
    """Port widths: i is width bits, count ceil(log2(width+1)) bits, zero one bit."""
    width = env.params()["width"]
    assert (len(dut.i), len(dut.count), len(dut.zero)) == (width, width.bit_length(), 1), \
        f"widths i={len(dut.i)} count={len(dut.count)} zero={len(dut.zero)} for width={width}"


@cocotb.test()
async def matches_golden(dut):
    """Every sample: count = leading zeros of i (width for 0), zero = (i == 0), bit-exact."""
    width = env.params()["width"]
    dut._log.info("seed %d, params %s", env.seed(), env.params())
    if (1 << width) <= EXHAUSTIVE_LIMIT:
        words = list(range(1 << width))
        dut._log.info("exhaustive: %d words", len(words))
    else:
        edges = _edge_words(width)
        words = edges + _random_words(width, env.rng(1), RANDOM_SAMPLES)
        dut._log.info("random: %d words (%d directed)", len(words), len(edges))
    failures, mismatches = 0, []                  # mismatches: the first 1000, for the report
    counts_seen = set()
    for word in words:
        dut.i.value = word
        await Timer(1, unit="ns")
        got = (int(dut.count.value), int(dut.zero.value))
        want = (lzc(word, width), int(word == 0))
        counts_seen.add(want[0])
        if got != want:
            failures += 1
            if len(mismatches) < 1000:
                mismatches.append(f"i={word:#x}: (count, zero)={got}, golden={want}")
    assert not failures, (
        f"{failures} of {len(words)} samples mismatch (width={width}, seed {env.seed()}):\n"
        + "\n".join(mismatches[:20]))
    assert counts_seen == set(range(width + 1)), "stimulus missed some leading-zero counts"
    dut._log.info("width=%d: %d samples match the golden model", width, len(words))
