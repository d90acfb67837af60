"""The specs' performance requirements (the ``-P`` IDs) against the measured figures.

Each :class:`Target` names a requirement, its target in words, and how to judge it from what the
flow wrote: the block's ``build/bench/<block>.json`` (``gpublocks bench``), the FPGA report
(``gpublocks fpga``), or, for requirements that a test proves cycle by cycle rather than a
benchmark measures, the tests citing the ID in the last ``make test`` (``gpublocks vplan``).
``gpublocks report`` prints one row per target with a pass / short marker.
"""

from dataclasses import dataclass
from typing import Callable

__all__ = ["Target", "TARGETS", "NotMeasured", "judge", "get"]


@dataclass(frozen=True)
class Target:
    """One performance requirement.

    ``check(figures, fpga)`` returns (measured value as text, met) from the block's benchmark
    figures and the FPGA report; it raises KeyError when a figure it needs is missing (the
    benchmark or build has not run). ``check`` None: judged by the tests citing ``req``.
    """
    req: str
    level: str                  # MUST, SHOULD, or "report" (a figure to report, no bound)
    what: str
    target: str
    check: Callable | None = None


class NotMeasured(Exception):
    """The figures exist but were not taken where the target applies; the message says why."""


def get(figures, path):
    """``figures["a"]["b"]...`` for path ``"a.b..."``; KeyError when any step is missing."""
    value = figures
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            raise KeyError(path)
        value = value[part]
    return value


def _fmt(value):
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_fmt(v)}" for k, v in value.items())
    return str(value)


def at_least(path, bound):
    return lambda f, _: (_fmt(get(f, path)), get(f, path) >= bound)


def at_most(path, bound):
    return lambda f, _: (_fmt(get(f, path)), get(f, path) <= bound)


def equals(**expected):
    """Every ``path=value`` pair equal (paths spelled with ``__`` for dots)."""
    def check(f, _):
        got = {p.replace("__", "."): get(f, p.replace("__", ".")) for p in expected}
        ok = all(got[p.replace("__", ".")] == v for p, v in expected.items())
        return _fmt(got) if len(got) > 1 else _fmt(next(iter(got.values()))), ok
    return check


def both(*checks):
    """All of ``checks`` met; their measured texts joined."""
    def check(f, fpga):
        results = [c(f, fpga) for c in checks]
        return "; ".join(text for text, _ in results), all(ok for _, ok in results)
    return check


def report(path):
    """A figure the spec asks to report, with no bound: met when it was measured."""
    return lambda f, _: (_fmt(get(f, path)), True)


def _tma_swizzle(f, _):
    swz, none = (get(f, f"benchmarks.bm_swz_{k}.request.per_cycle") for k in ("128b", "none"))
    ratio = get(f, "swizzle_throughput_ratio")
    return f"SW128B {swz:.4g}, NONE {none:.4g}, ratio {ratio:.4g}", \
        min(swz, none) >= 0.98 and abs(ratio - 1) <= 0.01


def _tma_report_fields(f, _):
    need = ("count", "bytes", "window_cycles", "per_cycle", "bytes_per_cycle", "line_fraction")
    benches = get(f, "benchmarks")
    missing = sorted({f"{part}.{k}" for b in benches.values() for part in ("request", "write")
                      for k in need if k not in b.get(part, {})})
    return (f"{len(benches)} benchmarks" + (f", missing {missing}" if missing else ", all fields")), \
        not missing


def _tq_b2b(f, _):
    detail = get(f, "resp_per_cycle_detail")
    spans = {k: (v["first_resp"], v["last_resp"]) for k, v in detail.items()}
    return _fmt({k: f"{a}..{b}" for k, (a, b) in spans.items()}), \
        all(span == (3, 66) for span in spans.values()) and get(f, "resp_per_cycle_all_ready") == 1.0


def _wd_spec_machine(check):
    """WD-P1..P3 hold for the spec's 16 × 8 machine; ``gpublocks bench wdist`` runs 4 × 8 unless
    ``WDIST_BENCH_N_GPC=16``, and a smaller machine's ratio is no measure of them."""
    def wrapped(f, fpga):
        text, ok = check(f, fpga)
        if not get(f, "config.full_benchmark_machine"):
            raise NotMeasured(f"{text} on {get(f, 'config.N_GPC')} × {get(f, 'config.SM_PER_GPC')} "
                              "SMs; the target is for 16 × 8 (WDIST_BENCH_N_GPC=16)")
        return text, ok
    return wrapped


def _wd_rates(f, _):
    ok = get(f, "raster_ids_per_cycle") == 1.0 and \
        get(f, "raster_first_id_latency_max") <= get(f, "raster_first_id_latency_bound")
    return (f"{get(f, 'raster_ids_per_cycle'):.4g} IDs per cycle, first ID after "
            f"{get(f, 'raster_first_id_latency_max')} (bound {get(f, 'raster_first_id_latency_bound')})"), ok


def _wd_query(f, _):
    lat, bound = get(f, "query_latency_cycles"), get(f, "query_latency_bound")
    return ", ".join(f"{k} {lat[k]} (≤ {bound[k]})" for k in lat), \
        all(lat[k] <= bound[k] for k in lat) and get(f, "query_latency_within_bound")


def _mr_stream(cfg, bound):
    def check(f, _):
        s = get(f, f"streaming.CFG-{cfg}")
        frac = s["beats_per_cycle"] / s["peak"]
        return f"{s['beats_per_cycle']:.4g} beats/cycle ({frac:.2%} of {s['peak']})", frac >= bound
    return check


def _mr_qos(f, _):
    err = get(f, "qos_near_share_error_pp")
    use = min(p["port_use"] for run in get(f, "qos.shares").values() for p in run["ports"].values())
    return f"share error {err:.3g} pp, port use ≥ {use:.2%}", err <= 2.0 and use >= 0.97


def _mr_promotion(f, _):
    """The spec leaves MIG_OUTSTANDING to the CSR; the reset value 8 keeps too few walker
    sectors in flight for 1600 cycles (docs/memrouter.md), 16 meets it."""
    deep, reset = get(f, "promotion_cycles_outstanding16"), get(f, "promotion_cycles")
    return f"{deep} at MIG_OUTSTANDING 16 ({reset} at the reset value 8)", deep <= 1600


def _mr_trace(f, _):
    static, migrating = get(f, "trace_hbm_fraction_static"), get(f, "trace_hbm_fraction_migrating")
    return f"{static:.4g} -> {migrating:.4g}", migrating > static


def _dfp_fmax(_, fpga):
    r = fpga["dfp"]
    if r.get("fmax_mhz") is None:
        from sim.fpga import fmax_text
        return fmax_text(r), False
    return f"{r['fmax_mhz']:.1f} MHz, {r['dsp']} MULT18X18D", r["fmax_mhz"] >= 100 and r["dsp"] == 16


def _dfp_error(f, _):
    """Max normalized error per mode over every K and LANES 1, 16 at ACC_W 32 (error_bench keys
    its configurations "MODE/L<lanes>/W<acc_w>")."""
    errors = get(f, "error_bench.errors")
    worst = {}
    for mode in ("CHUNK", "ADAPTIVE", "PRESHIFT"):
        names = [f"{mode}/L{lanes}/W32" for lanes in (1, 16)]
        worst[mode] = max(max(errors[n].values()) for n in names)
    ovf = get(f, "error_bench.ovf_with_manager")
    return f"{_fmt(worst)}; ovf chains {ovf}", \
        worst["CHUNK"] <= 2e-5 and worst["ADAPTIVE"] <= 2e-5 and worst["PRESHIFT"] <= 5e-4 and ovf == 0


def _dfp_training(f, _):
    gaps = get(f, "training.gap_pp")
    return _fmt(gaps) + " pp", all(abs(g) <= 0.5 for g in gaps.values())


TARGETS = {
    "tma": (
        Target("TMA-P1", "MUST", "BM-TILE requests per cycle", "≥ 0.98", at_least("req_per_cycle", 0.98)),
        Target("TMA-P2", "MUST", "BM-TILE8 requests per cycle", "≥ 0.98",
               at_least("benchmarks.bm_tile8.request.per_cycle", 0.98)),
        Target("TMA-P3", "MUST", "golden / issued L2 requests (random regression)", "= 1",
               equals(min_request_ratio=1.0)),
        Target("TMA-P4", "MUST", "BM-LAT first request after cmd (cycles)", "≤ 4",
               at_most("first_req_latency", 4)),
        Target("TMA-P5", "MUST", "BM-SWZ requests per cycle, SW128B / NONE", "both ≥ 0.98, within 1 %",
               _tma_swizzle),
        Target("TMA-P6", "MUST", "smem_wr beats per cycle, BM-WR and BM-FILL", "≥ 0.98",
               at_least("write_per_cycle_min", 0.98)),
        Target("TMA-P7", "MUST", "BM-I2C request rate / BM-TILE rate", "≥ 0.9",
               at_least("im2col_req_rate_ratio", 0.9)),
        Target("TMA-P8", "SHOULD", "BM-DMISS gap between commands (cycles)", "≤ 4",
               at_most("dmiss_gap_cycles", 4)),
        Target("TMA-P9", "SHOULD", "BM-ST WRITE requests per cycle", "≥ 0.9",
               at_least("store_req_per_cycle", 0.9)),
        Target("TMA-P10", "SHOULD", "BM-BLK requests per cycle", "≥ 0.98",
               at_least("benchmarks.bm_blk.request.per_cycle", 0.98)),
        Target("TMA-P11", "SHOULD", "BM-8D request window (cycles)", "≤ 92",
               at_most("bm_8d_window_cycles", 92)),
        Target("TMA-P12", "MUST", "every benchmark reports the P12 fields", "all fields",
               _tma_report_fields),
    ),
    "trackq": (
        Target("TQ-P1", "MUST", "hit behind a miss, resp - accept (Lm 50, 500)", "≤ 4",
               both(report("hit_behind_miss_latency"), at_most("hit_behind_miss_latency_max", 4))),
        Target("TQ-P2", "MUST", "E1 mean pop / resp latency, mode 4 and baseline", "32.5 / 34.5 and 100.0 / 102.0",
               equals(e1_mean_latency_perwarp=32.5, e1_mean_resp_latency_perwarp=34.5,
                      e1_mean_latency_fifo=100.0, e1_mean_resp_latency_fifo=102.0,
                      e1_mean_latency_mode1=100.0)),
        Target("TQ-P3", "MUST", "64 back-to-back hits: resp cycles", "3..66 (1 per cycle)", _tq_b2b),
        Target("TQ-P4", "MUST", "one queue holds the pool; req.ready low cycles (TQ-GV10)", "16 entries, 87 cycles",
               equals(max_single_queue_occupancy=16, pool_full_req_ready_low_cycles=87)),
        Target("TQ-P5", "MUST", "B-RAND mean hit latency speedup over the FIFO baseline", "≥ 5×, throughput not lower",
               both(at_least("random_mix_speedup", 5),
                    lambda f, _: (f"throughput {get(f, 'random_mix_throughput_perwarp'):.4g} vs "
                                  f"{get(f, 'random_mix_throughput_fifo'):.4g}",
                                  get(f, "random_mix_throughput_perwarp") >= get(f, "random_mix_throughput_fifo")))),
        Target("TQ-P6", "MUST", "fast-path hit latency (cycles)", "1", equals(fast_hit_latency=1)),
        Target("TQ-P7", "SHOULD", "cnt_req_stall on TQ-GV4, in-order / free-list", "49 / 4 (golden)",
               equals(gv4_cnt_req_stall_inorder=49, gv4_cnt_req_stall_freelist=4)),
    ),
    "wdist": (
        Target("WD-P1", "MUST", "plain-grid fill, T_legacy / T_shadow", "≥ 16",
               _wd_spec_machine(at_least("fill_speedup", 16))),
        Target("WD-P2", "SHOULD", "the same ratio, stretch (spec: not reachable at the fixed rates)", "≥ 36",
               _wd_spec_machine(at_least("fill_speedup", 36))),
        Target("WD-P3", "MUST", "GPC-CGA grid launch rate / legacy, LB (MC reported)", "≥ 4",
               _wd_spec_machine(both(at_least("cga_speedup_lb", 4), report("cga_speedup_mc")))),
        Target("WD-P4", "MUST", "mock-GPC (LB, MC) and global query latency (cycles)", "≤ LVL_W + ⌈log2 SM⌉ + 2",
               _wd_query),
        Target("WD-P5", "MUST", "per-SM ID generation", "1 ID per cycle, first ≤ DELTA_W + 4", _wd_rates),
        Target("WD-P6", "MUST", "CGAs per A5 step when all GPCs tie", "= N_GPC",
               lambda f, _: (_fmt(get(f, "cgas_per_step")), get(f, "cgas_per_step") == get(f, "config.N_GPC"))),
        Target("WD-P7", "MUST", "emitter and broadcast beats per cycle", "1"),
        Target("WD-P8", "MUST", "legacy plain fill T_legacy", "≤ N_SM × 8 + 16",
               both(report("fill_cycles_legacy"), equals(legacy_fill_within_bound=True))),
        Target("WD-P9", "SHOULD", "snapshot staleness", "includes completions ≤ t - 2"),
        Target("WD-P10", "SHOULD", "Pass I + II latency per GPU CGA", "≤ (rounds + steps)(P4 bound + 2) + 4"),
    ),
    "memrouter": (
        Target("MR-P1", "MUST", "CFG-B near-pool streaming read", "≥ 97 % of 0.875", _mr_stream("B", 0.97)),
        Target("MR-P2", "MUST", "CFG-A and CFG-D streaming read", "≥ 97 % of 0.75 / 0.5",
               both(_mr_stream("A", 0.97), _mr_stream("D", 0.97))),
        Target("MR-P3", "MUST", "streaming speedup over HBM alone, CFG-A / CFG-B", "≥ 1.455 / ≥ 1.6975",
               both(at_least("speedup_vs_hbm_512_256", 1.455), at_least("speedup_vs_hbm_512_384", 1.6975))),
        Target("MR-P4", "MUST", "QoS near share on every OFF port, (2,1) and (1,2)", "± 2 pp, port use ≥ 97 %",
               _mr_qos),
        Target("MR-P5", "MUST", "work conservation, one class alone", "≥ 97 % of every OFF port",
               at_least("work_conserving_fraction", 0.97)),
        Target("MR-P6", "MUST", "processor-link beats added by migration", "0",
               equals(migration_proc_link_beats=0)),
        Target("MR-P7", "MUST", "promotion port traffic (bytes far read / near write)", "4096 / 4096",
               equals(promotion_far_read_bytes=4096, promotion_near_write_bytes=4096)),
        Target("MR-P8", "MUST", "read latency to a page in migration (MIG_STALL 0)", "≤ L_MISS + T_FILL"),
        Target("MR-P9", "MUST", "program trace HBM fraction, static -> migrating", "higher with migration",
               _mr_trace),
        Target("MR-P10", "SHOULD", "explicit 4 KiB promotion, MIG_START to MIG_DONE (cycles)", "≤ 1600",
               _mr_promotion),
    ),
    "dfp": (
        Target("DFP-P1", "MUST", "MACs per cycle, NONE / PRESHIFT / ADAPTIVE (16 lanes)", "16 (II = 1)",
               at_least("macs_per_cycle", 16)),
        Target("DFP-P2", "MUST", "MACs per cycle, CHUNK", "16 (II = 1)", at_least("macs_per_cycle_chunk", 16)),
        Target("DFP-P3", "MUST", "ADAPTIVE fig20 bubbles per eop chain", "≤ 4"),
        Target("DFP-P4", "SHOULD", "last beat to result latency, other modes / CHUNK", "≤ 12 / ≤ 16",
               both(at_most("latency_max_cycles", 12), at_most("latency_max_cycles_chunk", 16))),
        Target("DFP-P5", "MUST", "dequantizer beats per cycle, latency", "1 per cycle, ≤ 4"),
        Target("DFP-P6", "MUST", "quantizer / down-converter block time", "≤ 2n + 8 cycles"),
        Target("DFP-P7", "MUST", "normalized dot error, max over K and lanes: CHUNK / ADAPTIVE / PRESHIFT",
               "≤ 2e-5 / 2e-5 / 5e-4, no ovf", _dfp_error),
        Target("DFP-P8", "MUST", "MLP test accuracy vs FP32, mean over seeds 0-4", "within 0.5 pp",
               _dfp_training),
        Target("DFP-P9", "MUST", "Fmax on ECP5 at LANES 16, products in MULT18X18D", "≥ 100 MHz, 16 DSPs",
               _dfp_fmax),
        Target("DFP-P10", "SHOULD", "LUT4 / FF / MULT18X18D per MAC, LANES 1 and 16", "reported"),
    ),
}


def judge(target, figures, fpga, test_state):
    """(measured text, marker) of ``target``.

    Markers: ``pass``, ``short`` (measured and missed), ``not measured`` (its figures are
    absent); for targets proven by tests: ``pass (tests)``, ``fail (tests)``, ``not run``, from
    ``test_state`` ("passed", "failed" or None for the tests citing the ID).
    """
    if target.check is None:
        marker = {"passed": "pass (tests)", "failed": "fail (tests)"}.get(test_state, "not run")
        return "judged by the tests citing it (last make test)", marker
    try:
        text, ok = target.check(figures or {}, fpga or {})
    except KeyError:
        return "-", "not measured"
    except NotMeasured as exc:
        return str(exc), "not measured"
    return text, "pass" if ok else "short"
