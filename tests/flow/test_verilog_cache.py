"""sim.verilog.convert keeps each configuration's Verilog under build/cache/verilog, keyed by the
sources that make it: a second conversion reads the cached text, and a change of any design
source, parameter or module name converts again."""

from sim import registry
from sim import verilog


def cached(build):
    return sorted(p.name for p in (build / "cache" / "verilog").glob("*.v.gz"))


def test_a_conversion_is_cached_and_keyed_by_sources_params_and_name(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUBLOCKS_BUILD", str(tmp_path))
    block = registry.get("arbiter")
    params = block.resolve_params({"n": 5})
    first = verilog.convert(block, params, name="arb")
    [entry] = cached(tmp_path)
    assert entry.startswith("arb-")
    # the cached text is what is returned, not a new conversion
    calls = []
    monkeypatch.setattr(verilog.amaranth_rtlil, "convert", lambda *a, **k: calls.append(a))
    assert verilog.convert(block, params, name="arb") == first and calls == []
    monkeypatch.undo()
    monkeypatch.setenv("GPUBLOCKS_BUILD", str(tmp_path))
    # another module name, other parameters, other sources: new entries
    assert "module arb2(" in verilog.convert(block, params, name="arb2")
    other = verilog.convert(block, block.resolve_params({"n": 6}), name="arb")
    assert other != first and "[5:0] req" in other
    monkeypatch.setattr(verilog, "_source_key", lambda: "an edited source tree")
    assert verilog.convert(block, params, name="arb") == first
    assert len(cached(tmp_path)) == 4
