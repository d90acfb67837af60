"""Product with a narrow factor as shifted partial products and an adder tree, in logic.

Yosys maps every ``$mul`` of two operands of 2 bits or more to an ECP5 MULT18X18D. When one
factor is a few bits wide (a CTA count times a per-CTA resource), the DSP gains nothing and its
column is a long way from the surrounding logic: in wdist's used counters the round trip to
the DSP was 13 ns of routing on the critical path (issue 9).
"""

from amaranth import Mux

__all__ = ["shift_add_mul"]


def shift_add_mul(narrow, wide):
    """``narrow * wide`` (both unsigned) as Σ Mux(narrow[i], wide << i, 0), summed pairwise:
    ceil(log2(len(narrow))) adder levels, len(narrow) + len(wide) bits."""
    terms = [Mux(narrow[i], wide << i, 0) for i in range(len(narrow))]
    while len(terms) > 1:
        pairs = [terms[k] + terms[k + 1] for k in range(0, len(terms) - 1, 2)]
        terms = pairs + ([terms[-1]] if len(terms) % 2 else [])
    return terms[0][:len(narrow) + len(wide)]
