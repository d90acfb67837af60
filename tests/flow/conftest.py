"""Fixtures of the flow tests: a private build directory and an in-process CLI call."""

import pytest

from sim.cli import main
from sim.paths import build_dir


@pytest.fixture
def build(tmp_path, monkeypatch):
    """``GPUBLOCKS_BUILD`` pointed at a fresh directory; returns its path.

    Its ``sim/`` links to the session's simulation-model cache: the CLI's RTL runs reuse the
    Verilator models the RTL tests built (same Verilog, same key) instead of compiling their own.
    Reports, benchmarks and FPGA builds stay private to the test.
    """
    shared_models = build_dir("sim")
    monkeypatch.setenv("GPUBLOCKS_BUILD", str(tmp_path / "build"))
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "sim").symlink_to(shared_models, target_is_directory=True)
    return tmp_path / "build"


@pytest.fixture
def cli(capsys):
    """``cli(*argv)`` runs the gpublocks CLI in-process: (exit code, stdout, stderr)."""
    def run(*argv):
        code = main(list(argv))
        out = capsys.readouterr()
        return code, out.out, out.err
    return run
