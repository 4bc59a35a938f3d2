"""A damaged numba cache is compiled again, not a failure of every cell (imports only numba).

numba keeps compiled kernels in cache files (beside knnx's sources, or under
``NUMBA_CACHE_DIR``): an index (``.nbi``) and one data file (``.nbc``) per kernel and
argument types, both pickles. A file truncated or overwritten (a disk filled up while
numba wrote it, a copy interrupted) made numba raise while loading it, and with it every
cell that ran that kernel (``UnpicklingError: pickle data was truncated``).
:func:`tolerate_damaged_cache` makes an unreadable entry a cache miss: the kernel's index
is rewritten empty, the kernel is compiled again, and the new code is saved in its place.
"""

import pickle
import sys
import warnings

# Exceptions that reading a damaged cache file raises (a pickle's, or what an
# unpickled object of the wrong shape raises when numba uses it).
DAMAGED = (
    pickle.UnpicklingError,
    EOFError,
    ValueError,
    TypeError,
    AttributeError,
    KeyError,
    IndexError,
    ImportError,
    OSError,
)


def tolerate_damaged_cache():
    """Patch numba's cache (once per process) so that a cache entry it cannot read is
    compiled again and rewritten; a no-op until numba is imported."""
    if "numba" not in sys.modules:
        return
    from numba.core import caching

    if getattr(caching.Cache.load_overload, "tolerates_damage", False):
        return
    load, save = caching.Cache.load_overload, caching.Cache.save_overload

    def load_overload(self, sig, target_context):
        try:
            return load(self, sig, target_context)
        except DAMAGED as exc:
            _forget(self, exc)
            return None  # a miss: numba compiles, then saves over the damaged entry

    def save_overload(self, sig, data):
        try:
            return save(self, sig, data)
        except DAMAGED as exc:
            _forget(self, exc)
            return save(self, sig, data)

    load_overload.tolerates_damage = True
    caching.Cache.load_overload, caching.Cache.save_overload = load_overload, save_overload


def _forget(cache, exc):
    """Rewrite ``cache``'s index empty (its entries are compiled again) and say so."""
    cache.flush()
    warnings.warn(
        f"numba's cache of {getattr(cache, '_name', 'a kernel')} could not be read "
        f"({type(exc).__name__}); it is compiled again and its cache rewritten",
        RuntimeWarning,
        stacklevel=3,
    )
