"""Fixtures of the flow tests: a private build directory and an in-process CLI call."""

import pytest

from sim.cli import main


@pytest.fixture
def build(tmp_path, monkeypatch):
    """``GPUBLOCKS_BUILD`` pointed at a fresh directory; returns its path."""
    monkeypatch.setenv("GPUBLOCKS_BUILD", str(tmp_path / "build"))
    return tmp_path / "build"


@pytest.fixture
def cli(capsys):
    """``cli(*argv)`` runs the gpublocks CLI in-process: (exit code, stdout, stderr)."""
    def run(*argv):
        code = main(list(argv))
        out = capsys.readouterr()
        return code, out.out, out.err
    return run
