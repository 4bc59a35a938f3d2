"""metric-learn 0.7.0, the ecosystem's metric learners, kept as the reference knnx's
are tested and timed against (tests/metric_learning/test_metric_learning.py, benchmarks/): not used by
knnx itself."""

import functools


def metric_learn():
    """Import metric-learn, adapting it to the installed scikit-learn.

    metric-learn 0.7.0 (its latest release) passes ``force_all_finite`` to
    scikit-learn's validation helpers; scikit-learn 1.8 renamed it
    ``ensure_all_finite``. The keyword is translated; nothing else is changed.
    """
    try:
        import metric_learn
        import metric_learn._util as util
    except ImportError:
        raise ImportError(
            "the reference needs metric-learn (the dev and bench extras): pip install -e '.[dev,bench]'"
        ) from None

    def renamed(func):
        if getattr(func, "_knnx_renamed", False):
            return func

        @functools.wraps(func)
        def call(*args, **kwargs):
            if "force_all_finite" in kwargs:
                kwargs["ensure_all_finite"] = kwargs.pop("force_all_finite")
            return func(*args, **kwargs)

        call._knnx_renamed = True
        return call

    util.check_X_y = renamed(util.check_X_y)
    util.check_array = renamed(util.check_array)
    return metric_learn
