"""One look for every figure, and saving that gives the same bytes on every run.

* :func:`set_theme` — seaborn ``paper`` context, white grid, the colour-blind palette,
  TrueType fonts in PDFs (no Type 3 fonts, no LaTeX needed).
* :func:`save_figure` — ``<figures>/<target-id>.png`` and ``.pdf`` without timestamps or
  software metadata, so ``make figures`` twice gives identical files.
* :data:`BOOTSTRAP` — pass ``**BOOTSTRAP`` to seaborn's estimators so error bands are seeded.
"""

from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from .paths import figures_dir
from .profiles import check_profile

PALETTE = "colorblind"
BOOTSTRAP = {"errorbar": ("ci", 95), "n_boot": 1000, "seed": 0}

_PNG_META = {"Software": None}
_PDF_META = {"Creator": None, "Producer": None, "CreationDate": None}


def set_theme() -> None:
    """Apply the project's seaborn theme (call once per notebook)."""
    sns.set_theme(context="paper", style="whitegrid", palette=PALETTE, font_scale=1.2)
    matplotlib.rcParams.update(
        {
            "pdf.fonttype": 42,
            "ps.fonttype": 42,
            "svg.hashsalt": "ponder",
            "figure.dpi": 100,
            "savefig.dpi": 150,
            "savefig.bbox": "tight",
            "axes.titleweight": "bold",
        }
    )


def colors(n: int) -> list:
    """``n`` colours of the project palette."""
    return sns.color_palette(PALETTE, n)


def target_path(target_id: str, profile: str, suffix: str) -> Path:
    """``<figures of profile>/<target_id><suffix>``, its folder created."""
    check_profile(profile)
    out = figures_dir(profile)
    out.mkdir(parents=True, exist_ok=True)
    return out / f"{target_id}{suffix}"


def save_figure(fig: plt.Figure, target_id: str, profile: str) -> list[Path]:
    """Write ``<target_id>.png`` and ``.pdf`` into the profile's figures folder; return the paths."""
    paths = [target_path(target_id, profile, suffix) for suffix in (".png", ".pdf")]
    fig.savefig(paths[0], metadata=_PNG_META)
    fig.savefig(paths[1], metadata=_PDF_META)
    return paths


def markdown_table(frame: pd.DataFrame) -> str:
    """``frame`` as a GitHub Markdown table (header, separator, one line per row; a ``|`` in a cell escaped)."""
    lines = [
        list(map(str, frame.columns)),
        ["---"] * frame.shape[1],
        *[list(map(str, row)) for row in frame.itertuples(index=False)],
    ]
    return "".join(f"| {' | '.join(cell.replace('|', chr(92) + '|') for cell in cells)} |\n" for cells in lines)


def save_table(frame: pd.DataFrame, target_id: str, profile: str) -> Path:
    """Write ``<target_id>.md`` (a Markdown table) into the profile's figures folder; return the path."""
    path = target_path(target_id, profile, ".md")
    path.write_text(markdown_table(frame))
    return path
