"""The end of a run (``knnx.experiment.outputs.finish_outputs``: sort results.csv,
summaries, figures, report.html) timed at two versions of knnx on the same results.

Usage::

    knnx run experiments/ripley.yaml --out /tmp/eor-ripley
    git worktree add /tmp/wt-before 7469df7
    python benchmarks/end_of_run.py /tmp/eor-ripley --before /tmp/wt-before [--after .] [--repeats 5]

Each version runs in processes of its own (``PYTHONPATH`` set to its tree), on its
own copy of the run folder; each process is warmed up by one call (imports, fonts),
then times ``--repeats`` calls; the versions alternate, ``--rounds`` processes each.
Prints the median seconds of each version and the ratio after / before.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, sys, time
from pathlib import Path
from knnx.experiment.outputs import finish_outputs
from knnx.results import param_names, read_results

out, repeats = Path(sys.argv[1]), int(sys.argv[2])
frame = read_results(out / "results.csv")
cells = frame[["dataset", "algorithm", "params", "repeat", "fold"]].itertuples(index=False, name=None)
order = {}
for cell in cells:
    order.setdefault((cell[0], cell[1], cell[2], int(cell[3]), int(cell[4])), len(order))
options = dict(
    order=order,
    metrics=list(dict.fromkeys(frame["metric"])),
    names=param_names(frame["params"]),
    rounds="round" in frame.columns,
)
finish_outputs(out, **options)  # warm-up
times = []
for _ in range(repeats):
    t0 = time.perf_counter()
    finish_outputs(out, **options)
    times.append(time.perf_counter() - t0)
print(json.dumps(times))
"""


def _times(tree, folder, repeats):
    env = {**os.environ, "PYTHONPATH": str(Path(tree).resolve())}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(folder), str(repeats)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
        cwd=tree,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("run", type=Path, help="The folder of a finished run (results.csv, spec.yaml, ...).")
    parser.add_argument("--before", type=Path, required=True, help="Tree of the earlier knnx.")
    parser.add_argument("--after", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--repeats", type=int, default=5, help="Timed calls per process.")
    parser.add_argument("--rounds", type=int, default=2, help="Processes per version, alternating.")
    args = parser.parse_args()
    times = {"before": [], "after": []}
    with tempfile.TemporaryDirectory() as tmp:
        folders = {}
        for which in times:
            folders[which] = Path(tmp) / which
            shutil.copytree(args.run, folders[which])
        for _ in range(args.rounds):
            for which, tree in (("before", args.before), ("after", args.after)):
                times[which] += _times(tree, folders[which], args.repeats)
    medians = {which: statistics.median(t) for which, t in times.items()}
    for which, t in times.items():
        print(
            f"{which:6s} {Path(getattr(args, which)).resolve()}: median {medians[which]:.3f} s "
            f"over {len(t)} calls (min {min(t):.3f} s)"
        )
    print(f"ratio after / before: {medians['after'] / medians['before']:.3f}")


if __name__ == "__main__":
    main()
