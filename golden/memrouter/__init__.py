"""Golden model of the memory router and migration engine (spec memrouter.md §4): pure
Python/numpy, never imports Amaranth or cocotb.

The interface map and PT_INIT (§4.2), a transaction-level router (checks, split, routing, the
sectored migration cache, the migration engine, responses, CSRs and events; §4.3-§4.9), the
cycle-exact QoS arbiter (§4.10) and port model (§4.11), the data pattern and flat reference
memory (§4.12), the program-trace format, scaler and valgrind-lackey converter (§4.13), an ideal
streaming/QoS estimator (§4.14) and the golden vectors of §5. See ``docs/memrouter.md``.
"""
