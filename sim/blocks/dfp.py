"""Flow adapter of the DFP16 dot unit: stimulus schema, golden run, comparison, demo, bench.

Stimulus (docs/dfp.md)::

    {"params": {"lanes": 4, "acc_w": 32},           # optional, registry defaults
     "cfg": {"mode": "ADAPTIVE", "ovf_sat": 1, ...}, # optional defaults for every chain
     "timing": {"gap_prob": 0.2, "ready_prob": 0.7}, # optional random valid gaps / back-pressure
     "chains": [
       {"a": [int16, ...], "b": [int16, ...], "es_a": -6, "es_b": -6,
        "bl_a": 15, "bl_b": 15, "k_log2": 1, "eop": 1, "cfg": {...}, "clr_before": 0,
        "blk": [{"beat": 2, "es_a": 1, "es_b": 0, "bl_a": 15, "bl_b": 15}]},
       {"a_fp32": [318.0, 3.4667968], "b_fp32": [1.0, "0x3F800000"]},   # quantized here
       ...]}
"""

import math

from golden.dfp.dot import DotUnit
from golden.dfp.formats import CONFIG_FIELDS, DOT_STATS, MODE_NAMES, Config
from golden.dfp.numerics import bits_f32, bitlen, clog2, f32_bits
from golden.dfp.quant import quant_block
from sim.errors import UsageError
from sim.stimulus import field, integer

TESTBENCH = "tb.dfp.run_tb"
MAX_BEATS = 200_000
_MODE_BY_NAME = {name: value for value, name in MODE_NAMES.items()}
_ROUND_BY_NAME = {"TRUNC": 0, "BIASED": 1, "RNE": 2}
_CHAIN_KEYS = {"a", "b", "a_fp32", "b_fp32", "es_a", "es_b", "bl_a", "bl_b", "k_log2", "eop",
               "cfg", "clr_before", "blk"}


def _parse_cfg(obj, where, base):
    if not isinstance(obj, dict):
        raise UsageError(f"{where}: expected an object of cfg fields")
    values = base.as_dict()
    for key, value in obj.items():
        if key not in values:
            raise UsageError(f"{where}: unknown cfg field {key!r} (fields: {', '.join(values)})")
        if key == "mode" and isinstance(value, str):
            if value.upper() not in _MODE_BY_NAME:
                raise UsageError(f"{where}.mode: {value!r} is not one of {', '.join(_MODE_BY_NAME)}")
            value = _MODE_BY_NAME[value.upper()]
        if key == "round_mode" and isinstance(value, str):
            if value.upper() not in _ROUND_BY_NAME:
                raise UsageError(f"{where}.round_mode: {value!r} is not one of TRUNC, BIASED, RNE")
            value = _ROUND_BY_NAME[value.upper()]
        width = CONFIG_FIELDS.widths[key]
        values[key] = integer(value, f"{where}.{key}", 0, (1 << width) - 1)
    return Config(**values)


def _fp32_word(value, where):
    if isinstance(value, str):
        try:
            word = int(value, 16)
        except ValueError:
            raise UsageError(f"{where}: {value!r} is neither a number nor a hex bit pattern") from None
        return integer(word, where, 0, 0xFFFFFFFF)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UsageError(f"{where}: expected a number or a hex FP32 bit pattern string")
    if math.isfinite(value) and abs(value) > 3.4028234663852886e38:
        raise UsageError(f"{where}: {value} does not fit in FP32")
    return f32_bits(value)


def _operands(chain, where, side, cfg):
    """(ints, es, bl or None, fp32 words or None) of operand ``side`` ('a' or 'b')."""
    if side in chain and f"{side}_fp32" in chain:
        raise UsageError(f"{where}: give either {side} or {side}_fp32, not both")
    if f"{side}_fp32" in chain:
        raw = field(chain, f"{side}_fp32", where, list)
        if not raw:
            raise UsageError(f"{where}.{side}_fp32: needs at least one element")
        if f"es_{side}" in chain:
            raise UsageError(f"{where}.es_{side}: not allowed with {side}_fp32 (it comes from the quantizer)")
        words = [_fp32_word(v, f"{where}.{side}_fp32[{k}]") for k, v in enumerate(raw)]
        mode = 1 if cfg.round_mode == 3 else cfg.round_mode
        q = quant_block(words, mode)
        return q.I, q.sf_b - 141, q.bl, words
    raw = field(chain, side, where, list)
    if not raw:
        raise UsageError(f"{where}.{side}: needs at least one element")
    ints = [integer(v, f"{where}.{side}[{k}]", -32768, 32767) for k, v in enumerate(raw)]
    es = integer(field(chain, f"es_{side}", where, default=0), f"{where}.es_{side}", -512, 511)
    return ints, es, None, None


def parse(data, block):
    """Validated (params, normalized stimulus) from a stimulus JSON object."""
    params = block.resolve_params(field(data, "params", "stimulus", dict, default={}))
    block.check_params(params)
    lanes = params["lanes"]
    base = _parse_cfg(field(data, "cfg", "stimulus", dict, default={}), "stimulus.cfg", Config())
    timing = field(data, "timing", "stimulus", dict, default={})
    for key in timing:
        if key not in ("gap_prob", "ready_prob"):
            raise UsageError(f"stimulus.timing: unknown field {key!r}")
    gap = field(timing, "gap_prob", "stimulus.timing", (int, float), default=0.0)
    ready = field(timing, "ready_prob", "stimulus.timing", (int, float), default=1.0)
    if not 0 <= gap < 1 or not 0 < ready <= 1:
        raise UsageError("stimulus.timing: gap_prob needs 0 <= p < 1 and ready_prob 0 < p <= 1")
    chains_in = field(data, "chains", "stimulus", list)
    if not chains_in:
        raise UsageError("stimulus.chains: needs at least one chain")
    chains, total = [], 0
    for n, chain in enumerate(chains_in):
        where = f"chains[{n}]"
        if not isinstance(chain, dict):
            raise UsageError(f"{where}: expected an object")
        unknown = set(chain) - _CHAIN_KEYS
        if unknown:
            raise UsageError(f"{where}: unknown field {sorted(unknown)[0]!r}")
        cfg = _parse_cfg(field(chain, "cfg", where, dict, default={}), f"{where}.cfg", base)
        a, es_a, q_bl_a, words_a = _operands(chain, where, "a", cfg)
        b, es_b, q_bl_b, words_b = _operands(chain, where, "b", cfg)
        if len(a) != len(b):
            raise UsageError(f"{where}: a has {len(a)} elements and b {len(b)}")
        pad = (-len(a)) % lanes
        a, b = a + [0] * pad, b + [0] * pad
        beats = len(a) // lanes
        total += beats
        if total > MAX_BEATS:
            raise UsageError(f"stimulus: more than {MAX_BEATS} beats")

        def default_bl(values, given):
            return given if given is not None else bitlen(max(min(abs(x), 32767) for x in values))

        bl_a = integer(field(chain, "bl_a", where, default=default_bl(a, q_bl_a)), f"{where}.bl_a", 0, 15)
        bl_b = integer(field(chain, "bl_b", where, default=default_bl(b, q_bl_b)), f"{where}.bl_b", 0, 15)
        k_log2 = integer(field(chain, "k_log2", where, default=clog2(lanes * beats)),
                         f"{where}.k_log2", 0, 31)
        eop = integer(field(chain, "eop", where, default=1), f"{where}.eop", 0, 1)
        clr = integer(field(chain, "clr_before", where, default=0), f"{where}.clr_before", 0, 1)
        out_beats = [{"a": a[k * lanes:(k + 1) * lanes], "b": b[k * lanes:(k + 1) * lanes],
                      "first": int(k == 0), "last": int(k == beats - 1), "eop": eop, "blk": 0,
                      "es_a": es_a, "es_b": es_b, "bl_a": bl_a, "bl_b": bl_b, "k_log2": k_log2}
                     for k in range(beats)]
        for m, reload in enumerate(field(chain, "blk", where, list, default=[])):
            w = f"{where}.blk[{m}]"
            if not isinstance(reload, dict):
                raise UsageError(f"{w}: expected an object")
            k = integer(field(reload, "beat", w), f"{w}.beat", 1, beats - 1)
            out_beats[k].update(
                blk=1,
                es_a=integer(field(reload, "es_a", w, default=es_a), f"{w}.es_a", -512, 511),
                es_b=integer(field(reload, "es_b", w, default=es_b), f"{w}.es_b", -512, 511),
                bl_a=integer(field(reload, "bl_a", w, default=bl_a), f"{w}.bl_a", 0, 15),
                bl_b=integer(field(reload, "bl_b", w, default=bl_b), f"{w}.bl_b", 0, 15))
        entry = {"beats": out_beats, "cfg": cfg.as_dict(), "clr_before": clr, "results": 1}
        if words_a is not None and words_b is not None:
            entry["exact"] = math.fsum(bits_f32(x) * bits_f32(y) for x, y in zip(words_a, words_b))
        chains.append(entry)
    return params, {"chains": chains, "timing": {"gap_prob": gap, "ready_prob": ready}}


def golden(params, stim):
    unit = DotUnit(params["lanes"], params["acc_w"])
    results = []
    for chain in stim["chains"]:
        if chain.get("clr_before"):
            unit.clr()
        cfg = Config(**chain["cfg"])
        for beat in chain["beats"]:
            results += unit.beat(beat, cfg)
    return {"results": results, "stats": dict(unit.stats)}


def compare(expected, actual):
    """Mismatch descriptions: result by result and field by field, then the stats port."""
    problems = []
    want, got = expected["results"], actual["results"]
    if len(want) != len(got):
        problems.append(f"{len(got)} results from the RTL, {len(want)} expected")
    for k, (w, g) in enumerate(zip(want, got)):
        for key in w:
            if w[key] != g.get(key):
                problems.append(f"result {k}: {key} RTL {g.get(key)}, golden {w[key]}")
    for key in DOT_STATS:
        if expected["stats"][key] != actual["stats"].get(key):
            problems.append(f"stats.{key}: RTL {actual['stats'].get(key)}, golden {expected['stats'][key]}")
    return problems


def summary(params, stim, result):
    res = result["results"]
    out = {"chains": len(stim["chains"]), "beats": sum(len(c["beats"]) for c in stim["chains"]),
           "results": len(res), "ovf": sum(r["ovf"] for r in res),
           "errors": sum(r["op_err"] | r["meta_err"] | r["proto_err"] for r in res)}
    for mode, name in MODE_NAMES.items():
        count = sum(1 for c in stim["chains"] if c["cfg"]["mode"] == mode)
        if count:
            out[f"chains_{name.lower()}"] = count
    errors = [abs(bits_f32(r["fp32"]) - c["exact"]) for c, r in zip(stim["chains"], res) if "exact" in c]
    if errors:
        out["max_abs_err_vs_fp64"] = max(errors)
    if "accept_cycles" in result and result["accept_cycles"]:
        cycles = result["accept_cycles"][-1] - result["accept_cycles"][0] + 1
        out["beats_per_cycle"] = round(len(result["accept_cycles"]) / cycles, 4)
    return out


def demo_stimulus(params, rng):
    """A short random stimulus for ``make``'s demo: every mode, random operand scales."""
    lanes = params["lanes"]
    chains = []
    for k in range(24):
        beats = rng.choice([1, 2, 3, 8])
        scale = rng.choice([100, 4000, 32767])
        n = lanes * beats
        chains.append({"a": [rng.randrange(-scale, scale + 1) for _ in range(n)],
                       "b": [rng.randrange(-scale, scale + 1) for _ in range(n)],
                       "es_a": rng.randrange(-20, 5), "es_b": rng.randrange(-20, 5),
                       "cfg": {"mode": k % 4}})
    return {"params": params, "timing": {"gap_prob": 0.2, "ready_prob": 0.8}, "chains": chains}


# -- benchmark (gpublocks bench dfp) ----------------------------------------------------------

BENCH_LANES, BENCH_ACC_W = 16, 32
THROUGHPUT_BEATS = 2048


def _run_rtl(block, params, stim, seed, sim, label):
    """Run a normalized stimulus on the RTL; returns the testbench's result record."""
    import json
    import tempfile
    from pathlib import Path

    from sim.cocotb_run import run_testbench

    with tempfile.TemporaryDirectory() as tmp:
        stim_file, out_file = Path(tmp) / "stim.json", Path(tmp) / "rtl.json"
        stim_file.write_text(json.dumps(stim))
        run_testbench(block, params, TESTBENCH, testcase="run_stimulus", sim=sim, seed=seed,
                      env={"GPUBLOCKS_STIM": str(stim_file), "GPUBLOCKS_RESULT": str(out_file)},
                      label=label)
        return json.loads(out_file.read_text())


def throughput_stimulus(lanes, rng, beats=THROUGHPUT_BEATS):
    """Back-to-back chains (1..16 beats, single-beat chains included) in each mode, random
    full-range operands; valid never gaps and ready never drops (DFP-P1/P2 protocol)."""
    chains, segments = [], {}
    for mode in (0, 1, 3, 2):                            # NONE, PRESHIFT, ADAPTIVE, CHUNK
        start, left = len(chains), beats
        while left:
            n = min(left, rng.choice([1, 1, 2, 3, 4, 5, 8, 16]))
            left -= n
            chains.append({"a": [rng.randrange(-32767, 32768) for _ in range(n * lanes)],
                           "b": [rng.randrange(-32767, 32768) for _ in range(n * lanes)],
                           "es_a": rng.randrange(-30, 10), "es_b": rng.randrange(-30, 10),
                           "eop": 1, "cfg": {"mode": mode}})
        segments[MODE_NAMES[mode]] = (start, len(chains))
    return {"params": {"lanes": lanes, "acc_w": BENCH_ACC_W}, "chains": chains}, segments


def _segment_figures(stim, result, start, end):
    """beats/cycle and result latency for chains[start:end] of a throughput run."""
    first_beat = sum(len(c["beats"]) for c in stim["chains"][:start])
    n_beats = sum(len(c["beats"]) for c in stim["chains"][start:end])
    accepts = result["accept_cycles"][first_beat:first_beat + n_beats]
    cycles = accepts[-1] - accepts[0] + 1
    last_beats, pos = [], first_beat
    for chain in stim["chains"][start:end]:
        pos += len(chain["beats"])
        last_beats.append(result["accept_cycles"][pos - 1])
    latency = [r - b for r, b in zip(result["result_cycles"][start:end], last_beats)]
    return {"beats": n_beats, "cycles": cycles, "beats_per_cycle": round(n_beats / cycles, 4),
            "stall_cycles": cycles - n_beats, "latency_max": max(latency),
            "latency_min": min(latency)}


def bench(block, seed, sim="verilator"):
    """DFP-P1/P2/P4 throughput and latency on the RTL, DFP-P7 error benchmark, DFP-P8 training
    parity, and the DFP-V10 RTL spot check of training dot products."""
    import random
    import time

    from golden.dfp import errbench, training

    figures = {"config": {"sim": sim, "lanes": BENCH_LANES, "acc_w": BENCH_ACC_W}}
    params = block.resolve_params({"lanes": BENCH_LANES, "acc_w": BENCH_ACC_W})
    # -- throughput and latency (RTL)
    data, segments = throughput_stimulus(BENCH_LANES, random.Random(seed))
    _, stim = parse(data, block)
    result = _run_rtl(block, params, stim, seed, sim, "bench_dfp_throughput")
    problems = compare(golden(params, stim), result)
    per_mode = {name: _segment_figures(stim, result, *span) for name, span in segments.items()}
    figures["throughput"] = per_mode
    figures["throughput_mismatches"] = len(problems)
    figures["macs_per_cycle"] = round(BENCH_LANES * min(
        per_mode[m]["beats_per_cycle"] for m in ("NONE", "PRESHIFT", "ADAPTIVE")), 3)
    figures["macs_per_cycle_chunk"] = round(BENCH_LANES * per_mode["CHUNK"]["beats_per_cycle"], 3)
    figures["latency_max_cycles"] = max(v["latency_max"] for m, v in per_mode.items() if m != "CHUNK")
    figures["latency_max_cycles_chunk"] = per_mode["CHUNK"]["latency_max"]
    # -- error benchmark (golden model, protocol of spec §4.13)
    t0 = time.time()
    err = errbench.error_bench()
    figures["error_bench"] = err
    for key in ("dot_err_chunk_k4096", "dot_err_adaptive_k4096", "dot_err_preshift_k4096",
                "ovf_with_manager"):
        figures[key] = err[key]
    figures["config"]["error_bench_seconds"] = round(time.time() - t0, 1)
    # -- training parity (golden model, protocol of spec §4.14)
    t0 = time.time()
    parity = training.training_parity()
    figures["training"] = parity
    for key in ("train_acc_fp32", "train_acc_dfp16", "train_acc_gap_pp"):
        figures[key] = parity[key]
    figures["config"]["training_seconds"] = round(time.time() - t0, 1)
    # -- RTL spot check of training dot products (DFP-V10)
    spot = spot_check(block, seed, sim)
    figures["rtl_spot_checks"] = spot["checked"]
    figures["rtl_spot_mismatches"] = spot["mismatches"]
    figures["spot_check"] = spot
    return figures


def spot_check_stimulus(chains):
    """Normalized stimulus for recorded training chains (LANES 16, ACC_W 32)."""
    out = []
    for c in chains:
        out.append({"a": [int(x) for x in c["a"]], "b": [int(x) for x in c["b"]],
                    "es_a": int(c["es_a"]), "es_b": int(c["es_b"]), "bl_a": int(c["bl_a"]),
                    "bl_b": int(c["bl_b"]), "k_log2": int(c["k_log2"]),
                    "cfg": {"mode": int(c["mode"])}})
    return {"params": {"lanes": BENCH_LANES, "acc_w": BENCH_ACC_W}, "chains": out}


def spot_check(block, seed, sim="verilator", n_per_mode=256):
    """Training dot products (seed-0 run, first and last mini-batch, all five product types,
    sampled with default_rng(99)) through the RTL; every result field compared."""
    from golden.dfp import training

    chains = training.spot_check_chains(n_per_mode=n_per_mode)
    params = block.resolve_params({"lanes": BENCH_LANES, "acc_w": BENCH_ACC_W})
    _, stim = parse(spot_check_stimulus(chains), block)
    expected = golden(params, stim)
    recorded = [{k: c["result"][k] for k in expected["results"][0]} for c in chains]
    result = _run_rtl(block, params, stim, seed, sim, "bench_dfp_spot_check")
    problems = compare(expected, result)
    types = sorted({c["product"] for c in chains})
    return {"checked": len(result["results"]), "mismatches": len(problems),
            "golden_matches_recorded": expected["results"] == recorded,
            "product_types": types, "problems": problems[:20]}


def plot(figures, path):
    """Normalized dot-product error against K per configuration (left) and test accuracy per
    seed for FP32 and the two DFP16 modes (right)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    err = figures["error_bench"]["errors"]
    for name, by_k in err.items():
        ks = sorted(by_k, key=int)
        left.loglog([int(k) for k in ks], [by_k[k] for k in ks], marker="o", label=name)
    left.axhline(2e-5, color="grey", ls="--", lw=0.8)
    left.axhline(5e-4, color="grey", ls=":", lw=0.8)
    left.set(xlabel="K (products per chain)", ylabel="max normalized error",
             title="DFP-P7 error benchmark (golden)")
    left.legend(fontsize=5, ncol=2)
    acc = figures["training"]["test_acc"]
    seeds = figures["training"]["seeds"]
    width = 0.25
    for n, kind in enumerate(acc):
        right.bar([s + (n - 1) * width for s in seeds], [100 * a for a in acc[kind]], width,
                  label=kind)
    right.set(xlabel="seed", ylabel="test accuracy (%)", ylim=(90, 100),
              title="DFP-P8 training parity (digits MLP)")
    right.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
