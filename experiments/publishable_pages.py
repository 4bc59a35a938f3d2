"""The pages of docs/publishing.md: the comparison of a run (experiments/publishable.yaml)
as LaTeX in a one-column and a two-column article, compiled by pdflatex, the first page
holding the table drawn as a PNG by pdftoppm. Each table is what

    knnx compare RESULTS --control knn --names short --no-std --format latex --layout LAYOUT

prints (one column: ``resize,footnotesize``; two columns: ``table*,resize,footnotesize``).
Stops with an error if pdflatex reports an overfull line (a table wider than the text).

    python experiments/publishable_pages.py results/publishable docs/images
"""

import re
import subprocess
import sys
import tempfile
from pathlib import Path

from PIL import Image
from typer.testing import CliRunner

from knnx.cli import app

# name: (class options, layout, the page drawn: a table* float goes to the top of the next page)
PAGES = {
    "publishing_one_column": ("", "resize,footnotesize", 1),
    "publishing_two_column": ("twocolumn,", "table*,resize,footnotesize", 2),
}
FILLER = (
    "Nearest-neighbour rules are compared here on twenty datasets with the partitions their source "
    "publishes; each contestant is read as the caption of Table~\\ref{tab:error} says. "
) * 6


def table(results, layout):
    """The LaTeX that knnx compare prints for ``results`` in ``layout``."""
    args = ["compare", str(results), "--control", "knn", "--names", "short", "--no-std", "--format", "latex"]
    done = CliRunner().invoke(app, [*args, "--layout", layout])
    if done.exit_code != 0:
        sys.exit(done.output)
    return done.stdout


def page(results, out, name, options, layout, number):
    """Compile one article, check it for overfull lines, write its first page as PNG."""
    body = table(results, layout)
    doc = (
        f"\\documentclass[{options}10pt]{{article}}\n\\usepackage{{booktabs,graphicx}}\n"
        f"\\usepackage[margin=2.5cm]{{geometry}}\n\\begin{{document}}\n\\section{{Results}}\n{FILLER}\n"
        f"{body}\n{FILLER}\n\\end{{document}}\n"
    )
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "page.tex").write_text(doc, encoding="utf-8")
        for _ in range(2):  # twice: the references resolved
            done = subprocess.run(
                ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "page.tex"],
                cwd=tmp,
                capture_output=True,
                text=True,
            )
            if done.returncode != 0:
                sys.exit(done.stdout[-3000:])
        log = (tmp / "page.log").read_text(errors="replace")
        overfull = re.findall(r"Overfull \\hbox \(([0-9.]+)pt too wide\)", log)
        if overfull:
            sys.exit(f"{name}: overfull lines ({', '.join(overfull)} pt too wide)")
        pages = ["-f", str(number), "-l", str(number)]
        subprocess.run(["pdftoppm", "-png", "-r", "90", *pages, "page.pdf", "page"], cwd=tmp, check=True)
        png = Image.open(next(tmp.glob("page*.png")))
        png.convert("L").quantize(16).save(out / f"{name}.png", optimize=True)  # 16 greys: a small file
        (Path(results).parent / f"{name}.tex").write_text(
            body, encoding="utf-8"
        )  # the run's folder keeps the LaTeX
    print(f"{out / name}.png: {layout}, no overfull line")


def main(results_dir, out):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for name, (options, layout, number) in PAGES.items():
        page(Path(results_dir) / "results.csv", out, name, options, layout, number)


if __name__ == "__main__":
    main(*sys.argv[1:3])
