"""Where knnx's bundled data lives (imported by the quick rerun check, so it imports
nothing heavy)."""

import os
from pathlib import Path

from knnx.errors import DataError


def data_dir():
    """The folder holding the bundled CSV files.

    ``KNNX_DATA`` if set; else the copy inside an installed wheel
    (``knnx/_bundled_data``); else the repository's ``datasets/`` (editable install).
    """
    env = os.environ.get("KNNX_DATA")
    here = Path(__file__).resolve()
    candidates = [Path(env)] if env else []
    candidates += [here.parents[0] / "_bundled_data", here.parents[1] / "datasets"]
    for folder in candidates:
        if (folder / "MANIFEST.csv").is_file():
            return folder
    raise DataError(
        f"bundled datasets not found (looked in {', '.join(map(str, candidates))}); set KNNX_DATA"
    )
