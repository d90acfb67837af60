"""Seeds are printed and reproducible through GPUBLOCKS_SEED."""

import pytest

from sim.errors import UsageError
from sim.seed import pick_seed


def test_env_seed_is_used_and_printed(monkeypatch, capsys):
    monkeypatch.setenv("GPUBLOCKS_SEED", "1234")
    assert pick_seed("x") == 1234
    assert "GPUBLOCKS_SEED=1234" in capsys.readouterr().out


def test_fresh_seeds_differ(monkeypatch):
    monkeypatch.delenv("GPUBLOCKS_SEED", raising=False)
    assert len({pick_seed() for _ in range(5)}) > 1


def test_bad_env_seed(monkeypatch):
    monkeypatch.setenv("GPUBLOCKS_SEED", "abc")
    with pytest.raises(UsageError):
        pick_seed()
