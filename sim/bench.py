"""``gpublocks bench``: cycle-counted benchmarks from RTL simulation into build/bench/<block>.json."""

import json

from sim.paths import build_dir

__all__ = ["supports_bench", "run_bench"]


def supports_bench(block):
    return block.adapter is not None and hasattr(block.flow(), "bench")


def run_bench(block, seed, sim="verilator"):
    """Run the block's benchmark; write JSON (and a PNG when the adapter can plot)."""
    adapter = block.flow()
    figures = adapter.bench(block, seed, sim=sim)
    figures.setdefault("config", {})["seed"] = seed
    out = build_dir("bench") / f"{block.name}.json"
    out.write_text(json.dumps(figures, indent=1))
    plot = getattr(adapter, "plot", None)
    png = None
    if plot is not None:
        png = build_dir("bench") / f"{block.name}.png"
        plot(figures, png)
    return figures, out, png
