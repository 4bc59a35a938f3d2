"""Statistical comparison of configurations over datasets (``compare``): Friedman,
Nemenyi, Wilcoxon-Holm, corrected t-tests and the critical-difference diagram."""
