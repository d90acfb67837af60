"""Where things live: the project root, build/ and the shared specifications."""

import os
from pathlib import Path

__all__ = ["ROOT", "build_dir", "specs_dir"]

ROOT = Path(__file__).resolve().parents[1]


def build_dir(*parts):
    """``build/<parts...>`` under the project root (``GPUBLOCKS_BUILD`` overrides), created."""
    base = Path(os.environ.get("GPUBLOCKS_BUILD", ROOT / "build"))
    path = base.joinpath(*parts)
    path.mkdir(parents=True, exist_ok=True)
    return path


def specs_dir():
    """The specification folder: ``GPUBLOCKS_SPECS``, else ``../shared/specs`` beside the checkout.

    Returns None when neither exists (a checkout without the shared folder).
    """
    env = os.environ.get("GPUBLOCKS_SPECS")
    candidates = [Path(env)] if env else [ROOT.parent / "shared" / "specs", ROOT / "specs"]
    for path in candidates:
        if path.is_dir():
            return path
    return None
