"""Flow adapter of the round-robin arbiter: stimulus schema, golden run, comparison, demo, bench.

Stimulus (docs/common.md)::

    {"params": {"n": 4},                       # optional, defaults from the registry
     "cycles": [{"req": "0110", "advance": 1, "reset": 0}, ...]}

``req`` is an integer or a string of n binary digits, bit n-1 first (as the spec prints it);
``advance`` defaults to 1 and ``reset`` to 0.
"""

from golden.common.arbiter import RoundRobinArbiterModel
from sim.errors import UsageError
from sim.stimulus import field, integer

TESTBENCH = "tb.common.arbiter_tb"
MAX_CYCLES = 1_000_000


def parse(data, block):
    """Validated (params, stimulus) from a stimulus JSON object."""
    params = block.resolve_params(field(data, "params", "stimulus", dict, default={}))
    block.check_params(params)
    n = params["n"]
    cycles = field(data, "cycles", "stimulus", list)
    if not 1 <= len(cycles) <= MAX_CYCLES:
        raise UsageError(f"stimulus.cycles: needs 1..{MAX_CYCLES} cycles, got {len(cycles)}")
    normalized = []
    for k, cycle in enumerate(cycles):
        where = f"cycles[{k}]"
        if not isinstance(cycle, dict):
            raise UsageError(f"{where}: expected an object with req/advance/reset")
        unknown = set(cycle) - {"req", "advance", "reset"}
        if unknown:
            raise UsageError(f"{where}: unknown field {sorted(unknown)[0]!r}")
        req = field(cycle, "req", where)
        if isinstance(req, str):
            if len(req) != n or set(req) - {"0", "1"}:
                raise UsageError(f"{where}.req: {req!r} is not {n} binary digits (bit {n - 1} first)")
            req = int(req, 2)
        else:
            req = integer(req, f"{where}.req", 0, (1 << n) - 1)
        normalized.append({
            "req": req,
            "advance": integer(field(cycle, "advance", where, default=1), f"{where}.advance", 0, 1),
            "reset": integer(field(cycle, "reset", where, default=0), f"{where}.reset", 0, 1),
        })
    return params, {"cycles": normalized}


def golden(params, stim):
    model = RoundRobinArbiterModel(params["n"])
    out = []
    for cycle in stim["cycles"]:
        grant, idx, valid = model.outputs(cycle["req"])
        if cycle["reset"]:
            model = RoundRobinArbiterModel(params["n"])
        else:
            model.clock(cycle["req"], cycle["advance"])
        out.append({"grant": grant, "grant_idx": idx, "valid": valid})
    return {"cycles": out}


def compare(expected, actual):
    """Mismatch descriptions, cycle by cycle."""
    problems = []
    if len(expected["cycles"]) != len(actual["cycles"]):
        problems.append(f"{len(actual['cycles'])} cycles from the RTL, {len(expected['cycles'])} expected")
    for k, (want, got) in enumerate(zip(expected["cycles"], actual["cycles"])):
        if want != got:
            problems.append(f"cycle {k}: RTL {got}, golden {want}")
    return problems


def summary(params, stim, result):
    grants = sum(1 for c, o in zip(stim["cycles"], result["cycles"]) if c["advance"] and o["valid"])
    return {"cycles": len(stim["cycles"]), "grants": grants}


def demo_stimulus(params, rng):
    """A short random stimulus for ``make``'s demo."""
    n = params["n"]
    return {"params": params, "cycles": [
        {"req": rng.randrange(1 << n), "advance": int(rng.random() < 0.8)} for _ in range(200)]}


def bench(block, seed, sim="verilator"):
    """grants/cycle and fairness under saturating and random load, measured on the RTL."""
    import json
    import tempfile
    from pathlib import Path

    from sim.cocotb_run import run_testbench

    figures = {"config": {"sim": sim, "cycles_per_load": 20000, "loads": [1.0, 0.5, 0.2, 0.05]},
               "by_n": {}}
    for n in (4, 16, 48):
        params = block.resolve_params({"n": n})
        with tempfile.TemporaryDirectory() as tmp:
            stim = Path(tmp) / "bench.json"
            out = Path(tmp) / "result.json"
            stim.write_text(json.dumps({"bench": figures["config"]}))
            run_testbench(block, params, TESTBENCH, testcase="bench", sim=sim, seed=seed,
                          env={"GPUBLOCKS_STIM": str(stim), "GPUBLOCKS_RESULT": str(out)},
                          label=f"bench_n{n}")
            figures["by_n"][str(n)] = json.loads(out.read_text())
    for n, result in figures["by_n"].items():
        for load, row in result["loads"].items():
            row["offered_per_cycle"] = min(1.0, int(n) * float(load))   # expected, for comparison
    sat = figures["by_n"]["16"]["loads"]["1.0"]
    figures["grants_per_cycle"] = sat["grants_per_cycle"]
    figures["worst_wait_grants"] = max(r["loads"][load]["worst_wait_grants"]
                                       for r in figures["by_n"].values() for load in r["loads"])
    figures["fairness_bound_ok"] = all(
        r["loads"][load]["worst_wait_grants"] <= int(n) for n, r in figures["by_n"].items() for load in r["loads"])
    return figures


def plot(figures, path):
    """grants/cycle and mean wait against offered load, one line per n."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.5))
    for n, result in figures["by_n"].items():
        loads = sorted(result["loads"], key=float)
        left.plot([float(x) for x in loads], [result["loads"][x]["grants_per_cycle"] for x in loads],
                  marker="o", label=f"n = {n}")
        right.plot([float(x) for x in loads], [result["loads"][x]["mean_wait_cycles"] for x in loads],
                   marker="o", label=f"n = {n}")
    left.set(xlabel="request probability per requester per cycle", ylabel="grants / cycle",
             title="Arbiter throughput (RTL)")
    right.set(xlabel="request probability per requester per cycle", ylabel="mean wait (cycles)",
              title="Arbiter wait (RTL)")
    left.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
