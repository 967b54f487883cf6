"""labeldp on Dask DataFrames: a private prior and keyed privatization at any scale.

Two functions mirror the two stages of the papers' pipeline (Ghazi et al. 2023, "Regression
with Label Differential Privacy", Algorithm 3):

* :func:`private_prior` -- exact integer label counts per partition on the public grid, summed
  exactly in a tree, and the discrete Laplace noise of Algorithm 4 added ONCE to the merged
  counts (in the calling process).  The prior costs ``eps`` once, however many partitions.
* :func:`privatize` -- a mechanism applied to every partition with keyed randomness: the noise
  for a record is a function of (secret 32-byte key, record id) only, so a retried task, a
  re-partitioned frame or a re-run reproduces exactly the same noisy labels and never draws
  fresh noise for a label already released.

Both build ordinary Dask graphs and run on any scheduler (threads, processes,
``dask.distributed``).  Workers need the ``labeldp`` package importable (the same build on every
machine of a cluster).

Throughput: each partition makes one new array (the noisy column; the output frame shares it and
the other columns; the ids are checked in one chunked pass), and ``dask.distributed`` starts its
workers with ``MALLOC_TRIM_THRESHOLD_=65536``, so their pages are handed back to the operating
system and zeroed again by the kernel for the next partition.  Where page faults are expensive
(virtual machines) that can cost as much as the privatization; workers that keep freed memory for
reuse avoid it, e.g. ``dask.config.set({"distributed.nanny.pre-spawn-
environ": {"MALLOC_TRIM_THRESHOLD_": "1073741824", "MALLOC_MMAP_THRESHOLD_": "1073741824"}})``
before the cluster starts (``examples/python/pipeline_dask.py --malloc-keep``), at the price of
resident memory staying near its peak.
"""

from __future__ import annotations

import hashlib
import importlib
import math
import numbers
import threading

import numpy as np
import pandas as pd

import dask
import dask.dataframe as dd

__all__ = ["histogram_counts", "private_prior", "privatize"]

#: Partitions' counts are summed this many at a time (the tree reduction's fan-in).
SPLIT_EVERY = 8


def _core():
    """The compiled labeldp package (imported lazily: it imports this module's parent)."""
    return importlib.import_module(__package__ or "labeldp")


# --------------------------------------------------------------------------------------------
# argument checks (in the calling process, before any task runs)


def _check_frame(ddf, fn):
    if not isinstance(ddf, dd.DataFrame):
        raise ValueError(f"labeldp.dask.{fn}: 'ddf' must be a dask.dataframe.DataFrame, got {type(ddf).__name__}")


def _check_column(ddf, name, field, fn):
    if not isinstance(name, str) and not isinstance(name, numbers.Integral):
        raise ValueError(f"labeldp.dask.{fn}: '{field}' must be a column name, got {type(name).__name__}")
    if name not in ddf.columns:
        shown = ", ".join(repr(c) for c in list(ddf.columns)[:20])
        raise ValueError(f"labeldp.dask.{fn}: '{field}' {name!r} is not a column of the DataFrame (columns: {shown})")


def _check_label_dtype(ddf, column, fn):
    dtype = ddf.dtypes[column]
    if pd.api.types.is_bool_dtype(dtype) or not pd.api.types.is_numeric_dtype(dtype):
        raise ValueError(f"labeldp.dask.{fn}: 'column' {column!r} must be numeric, got dtype {dtype}")


def _check_key(key, fn, required):
    if key is None:
        if required:
            raise ValueError(
                f"labeldp.dask.{fn}: 'key' is required: a secret 32-byte key "
                "(e.g. head -c 32 /dev/urandom > label.key), "
                "so that a retried task reproduces its noise instead of drawing fresh noise"
            )
        return None
    if not isinstance(key, (bytes, bytearray, memoryview)):
        raise ValueError(f"labeldp.dask.{fn}: 'key' must be bytes (32 of them), got {type(key).__name__}")
    key = bytes(key)
    if len(key) != 32:
        raise ValueError(f"labeldp.dask.{fn}: 'key' must be exactly 32 bytes, got {len(key)}")
    return key


def _check_eps(eps, fn):
    if isinstance(eps, bool) or not isinstance(eps, numbers.Real) or not math.isfinite(eps) or eps <= 0:
        raise ValueError(f"labeldp.dask.{fn}: 'eps' must be finite and > 0, got {eps!r}")
    return float(eps)


def _float_labels(labels):
    """A label column as float64 (no copy when it is one); a missing value becomes NaN, which the
    module refuses naming its index."""
    if isinstance(labels.dtype, np.dtype):
        return labels.to_numpy(dtype=np.float64)
    return labels.to_numpy(dtype=np.float64, na_value=np.nan)  # nullable extension dtypes (pd.NA)


def _in_partition(fn, number, error):
    """`error` (a ValueError from one partition) with the partition's number in front."""
    message = str(error)
    prefix = f"labeldp.dask.{fn}: "
    if message.startswith(prefix):
        message = message[len(prefix) :]
    where = f"partition {number}: " if number is not None else ""
    return ValueError(prefix + where + message)


# --------------------------------------------------------------------------------------------
# private prior


def _partition_counts(labels, lo, hi, resolution, number):
    """Exact int64 counts of one partition's labels on the public grid (clipped and rounded)."""
    try:
        values = _float_labels(labels)
        return np.asarray(_core().histogram_counts(values, lo, hi, resolution), dtype=np.int64)
    except ValueError as e:
        raise _in_partition("histogram_counts", number, e) from None


def _sum_counts(*parts):
    """Exact sum of count vectors (int64; no rounding, so the merge is order independent)."""
    total = np.array(parts[0], dtype=np.int64, copy=True)
    for p in parts[1:]:
        total += p
    return total


def histogram_counts(
    ddf: dd.DataFrame, column: str, lo: float, hi: float, resolution: float, *, split_every: int = SPLIT_EVERY
) -> np.ndarray:
    """Exact counts of ``ddf[column]`` on the public grid ``lo, lo + resolution, ..., hi``.

    Each partition is counted by ``labeldp.histogram_counts`` (labels clipped to ``[lo, hi]`` and
    rounded to the grid, as ``labeldp privatize`` does); the partitions' int64 vectors are summed
    exactly in a tree of fan-in ``split_every``.  The result equals ``labeldp.histogram_counts``
    of all the labels in one array, whatever the partitioning.  These counts are NOT private:
    they are what :func:`private_prior` adds noise to.

    Computed at once with Dask's current scheduler (an active ``distributed.Client`` if any).
    Returns a NumPy int64 array, one count per grid point.
    Raises ValueError naming the field for a bad argument.
    """
    _check_frame(ddf, "histogram_counts")
    _check_column(ddf, column, "column", "histogram_counts")
    _check_label_dtype(ddf, column, "histogram_counts")
    if isinstance(split_every, bool) or not isinstance(split_every, numbers.Integral) or split_every < 2:
        raise ValueError(f"labeldp.dask.histogram_counts: 'split_every' must be an integer >= 2, got {split_every!r}")
    # lo, hi and resolution are checked by the module itself, here, before any task runs.
    empty = np.asarray(_core().histogram_counts(np.empty(0, dtype=np.float64), lo, hi, resolution), dtype=np.int64)
    layer = [
        dask.delayed(_partition_counts, pure=True)(part, lo, hi, resolution, i)
        for i, part in enumerate(ddf[column].to_delayed())
    ]
    if not layer:
        return empty
    while len(layer) > 1:
        layer = [
            dask.delayed(_sum_counts, pure=True)(*layer[i : i + split_every]) for i in range(0, len(layer), split_every)
        ]
    return layer[0].compute()


def private_prior(
    ddf: dd.DataFrame, column: str, eps: float, lo: float, hi: float, resolution: float, key: bytes | None = None
):
    """A private prior of ``ddf[column]``: Ghazi et al. 2023, Algorithm 4, over a Dask DataFrame.

    The exact counts of :func:`histogram_counts` (merged over all partitions first), then
    ``labeldp.private_prior_from_counts(counts, eps, lo, hi, resolution, key)`` once, in this
    process: every count plus independent discrete Laplace noise of scale 2/eps, negatives set to
    0, normalized.  The noise is added once to the merged counts, so the release costs ``eps``
    once however many partitions there are, and equals ``labeldp.private_prior(labels, eps, lo,
    hi, resolution, key)`` on the same labels in one array (exactly, with the same ``key``).

    ``key``: None (the secure generator) or 32 secret bytes (deterministic noise, so a re-run
    releases the same prior rather than a second independent one).
    Computed at once with Dask's current scheduler (an active ``distributed.Client`` if any).
    Returns a ``labeldp.PrivatePrior`` (``values``, ``probs``, ``noisy_counts``, ``save()``).
    Raises ValueError naming the field for a bad argument (before any task runs).
    """
    _check_frame(ddf, "private_prior")
    _check_column(ddf, column, "column", "private_prior")
    _check_label_dtype(ddf, column, "private_prior")
    eps = _check_eps(eps, "private_prior")
    key = _check_key(key, "private_prior", required=False)
    counts = histogram_counts(ddf, column, lo, hi, resolution)
    return _core().private_prior_from_counts(counts, eps, lo, hi, resolution, key=key)


# --------------------------------------------------------------------------------------------
# privatize

_MECHANISMS = {}  # sha256 of the mechanism's JSON -> loaded mechanism, one per worker process
_MECHANISMS_LOCK = threading.Lock()
_MECHANISMS_MAX = 8
_load_count = 0  # mechanisms loaded by this process (the tests check: once per process)


def _mechanism(digest, text):
    """The mechanism of this JSON, loaded (and revalidated) once per process, not per partition."""
    global _load_count
    with _MECHANISMS_LOCK:
        m = _MECHANISMS.get(digest)
        if m is None:
            if hashlib.sha256(text.encode()).hexdigest() != digest:
                raise ValueError("labeldp.dask.privatize: 'mechanism' JSON does not match its digest")
            m = _core().loads(text)
            _load_count += 1
            if len(_MECHANISMS) >= _MECHANISMS_MAX:
                _MECHANISMS.pop(next(iter(_MECHANISMS)))
            _MECHANISMS[digest] = m
        return m


#: Ids are compared this many at a time (a small, cache-resident temporary instead of one the
#: partition's size).
_ID_CHUNK = 1 << 15


def _increasing(a):
    """True when ``a`` is strictly increasing; chunk by chunk, one pass, no large temporary."""
    flags = np.empty(min(_ID_CHUNK, a.size), dtype=bool)
    for i in range(0, a.size - 1, _ID_CHUNK):
        j = min(i + _ID_CHUNK, a.size - 1)
        f = flags[: j - i]
        np.greater(a[i + 1 : j + 1], a[i:j], out=f)
        if not f.all():
            return False
    return True


def _partition_ids(ids, id_column, check_unique):
    """One partition's ids as int64/uint64, checked: integers, none missing or negative, unique.

    The usual ids (a row number: increasing) cost one pass: increasing ids are unique and their
    smallest is the first."""
    if not pd.api.types.is_integer_dtype(ids.dtype):
        raise ValueError(f"labeldp.dask.privatize: 'id_column' {id_column!r} must hold integers, got dtype {ids.dtype}")
    # Only an extension dtype (pandas' nullable Int64, ...) can hold a missing value.
    if not isinstance(ids.dtype, np.dtype) and ids.hasnans:
        raise ValueError(f"labeldp.dask.privatize: 'id_column' {id_column!r} has a missing id")
    a = ids.to_numpy(dtype=np.uint64 if pd.api.types.is_unsigned_integer_dtype(ids.dtype) else np.int64)
    if a.size == 0:
        return a
    increasing = (check_unique or a.dtype.kind == "i") and _increasing(a)
    if a.dtype.kind == "i" and (a[0] if increasing else a.min()) < 0:
        raise ValueError(f"labeldp.dask.privatize: 'id_column' {id_column!r} has a negative id")
    if check_unique and not increasing and np.unique(a).size != a.size:
        raise ValueError(
            f"labeldp.dask.privatize: 'id_column' {id_column!r} has a duplicated id within a partition "
            "(two records would share their noise)"
        )
    return a


def _privatize_partition(df, text, digest, column, id_column, key, target, check_unique, partition_info=None):
    """Applies the mechanism to one partition: keyed, so a retry reproduces the same output."""
    try:
        m = _mechanism(digest, text)
        ids = _partition_ids(df[id_column], id_column, check_unique)
        labels = _float_labels(df[column])
        if labels.size == 0:
            noisy = np.empty(0, dtype=np.float64)
        else:
            noisy = np.asarray(m.privatize(labels, key=key, ids=ids), dtype=np.float64)
    except ValueError as e:
        raise _in_partition("privatize", (partition_info or {}).get("number"), e) from None
    return _with_column(df, target, noisy)


def _with_column(df, target, noisy):
    """A new frame: ``df`` with column ``target`` (replaced in place, or added last) set to ``noisy``.

    Nothing is copied: the other columns and ``noisy`` itself are shared (``out[target] = noisy``
    copies the array in pandas 1.x, 16 MB of fresh memory per 2^21-row partition, and ``assign``
    copies every column).  The input partition is left as it was."""
    if not df.columns.is_unique:  # a dict cannot hold repeated names: pandas' own assignment
        out = df.copy(deep=False)
        out[target] = noisy
        return out
    data = {c: df[c].array for c in df.columns}
    data[target] = noisy
    out = pd.DataFrame(data, index=df.index, copy=False)
    # The columns' own Index (its type and name), not one rebuilt from the dict's keys.
    out.columns = df.columns if target in df.columns else df.columns.insert(len(df.columns), target)
    return out


def privatize(
    ddf: dd.DataFrame,
    column: str,
    mechanism,
    key: bytes,
    id_column: str,
    *,
    output_column: str | None = None,
    check_unique_ids: bool = True,
) -> dd.DataFrame:
    """Privatizes ``ddf[column]`` with ``mechanism``, keyed per record by ``ddf[id_column]``.

    The mechanism (a labeldp mechanism object, or its JSON text) goes into the graph once, as its
    JSON; each worker process loads it once (cached by the JSON's SHA-256) and applies
    ``m.privatize(labels, key=key, ids=ids)`` to each partition, vectorized.  The noise for a
    record is a function of (``key``, its id) only, so the output does not depend on the
    partitioning, the row order, the scheduler, retries or re-runs.  No budget is spent beyond the
    mechanism's own eps per label (each id must name one record: a record privatized again under
    the same key gets the same noisy label, not a second draw).

    ``key``: 32 secret bytes, required (keep it secret; reuse it for every retry of one release,
    use a new one for a new release).  ``id_column``: non-negative integers, unique per record.
    ``output_column``: None to replace the label column with the noisy label (as ``labeldp
    privatize`` does; column order kept), or a new column name to put the noisy label beside it.
    ``check_unique_ids``: refuse a partition with a duplicated id (one pass when the ids are
    increasing, a sort otherwise).

    Returns a lazy Dask DataFrame with the same partitions and the noisy column as float64.
    Raises ValueError naming the field for a bad argument: checked here, before any task runs
    (frame, columns, dtypes, key, mechanism), or per partition when it runs (missing, negative or
    duplicated ids; labels the mechanism refuses).
    """
    _check_frame(ddf, "privatize")
    _check_column(ddf, column, "column", "privatize")
    _check_column(ddf, id_column, "id_column", "privatize")
    if column == id_column:
        raise ValueError(f"labeldp.dask.privatize: 'id_column' must differ from 'column', both are {column!r}")
    _check_label_dtype(ddf, column, "privatize")
    if not pd.api.types.is_integer_dtype(ddf.dtypes[id_column]):
        raise ValueError(
            f"labeldp.dask.privatize: 'id_column' {id_column!r} must hold integers, got dtype {ddf.dtypes[id_column]}"
        )
    key = _check_key(key, "privatize", required=True)
    if output_column is None:
        target = column
    else:
        if not isinstance(output_column, str) or not output_column:
            raise ValueError(
                f"labeldp.dask.privatize: 'output_column' must be a non-empty string, got {output_column!r}"
            )
        if output_column in ddf.columns:
            raise ValueError(f"labeldp.dask.privatize: 'output_column' {output_column!r} is already a column")
        target = output_column
    if isinstance(mechanism, str):
        text = mechanism
    elif hasattr(mechanism, "to_json"):
        text = mechanism.to_json()
    else:
        raise ValueError(
            "labeldp.dask.privatize: 'mechanism' must be a labeldp mechanism or its JSON, "
            f"got {type(mechanism).__name__}"
        )
    _core().loads(text)  # revalidated here, so a bad file fails before any task runs
    digest = hashlib.sha256(text.encode()).hexdigest()
    # One graph node each: shipped to a worker once, not embedded in every task.
    text_node = dask.delayed(text, name="labeldp-mechanism-" + digest, pure=True)
    # Named by a one-way hash of the key (unique per key; the key itself is not in any name).
    key_name = hashlib.sha256(b"labeldp.dask key node\0" + key).hexdigest()[:32]
    key_node = dask.delayed(key, name="labeldp-key-" + key_name, pure=True)
    meta = ddf._meta.assign(**{target: np.empty(0, dtype=np.float64)})
    return ddf.map_partitions(
        _privatize_partition,
        text_node,
        digest,
        column,
        id_column,
        key_node,
        target,
        bool(check_unique_ids),
        meta=meta,
        enforce_metadata=False,
        token="labeldp-privatize",
    )
