"""labeldp: optimal label-differential-privacy mechanisms for regression.

A Python front end to the labeldp C++ headers (the compiled extension ``labeldp._labeldp``):

* constructors mirroring the ``labeldp`` program's commands -- :func:`rr_on_bins` (``bins``),
  :func:`optimal`, :func:`unbiased`, :func:`interval`, :func:`baseline` -- and the private prior
  (:func:`private_prior`, or :func:`histogram_counts` + :func:`private_prior_from_counts` for
  counts merged across shards);
* :func:`load` / :func:`loads` / :meth:`Mechanism.save` / :meth:`Mechanism.to_json`: the
  program's mechanism files, interchangeable with ``labeldp privatize --mechanism FILE``;
* :meth:`Mechanism.audit`: the exact eps of a finite mechanism's table;
* :meth:`Mechanism.privatize`: NumPy labels in, a new float64 array out, vectorized C++ with
  the GIL released.

Keyed (re-run-safe) randomness: ``m.privatize(labels, key=key, ids=ids)`` makes the noise of
record ``i`` a function of ``(key, ids[i])`` only (ChaCha20 keyed by ``key``, labeldp's
``KeyedRandom``), so a retried or re-partitioned distributed job reproduces the same noisy labels
and never releases a second, independent noisy copy of a label. The key is a secret:

>>> import secrets
>>> key = secrets.token_bytes(32)   # 256 bits from the operating system

Keep it like a password (a secrets manager, never in code or next to the data; anyone holding it
and the ids can recompute the noise and remove it), use a fresh key for each release of a data
set, and discard it when no re-run can happen any more. Without ``key`` the noise comes from
``SecureRandom`` (ChaCha20 keyed from the operating system, one per call).

The Dask functions are in :mod:`labeldp.dask` (``import labeldp.dask``).
"""

from ._labeldp import (
    Mechanism,
    PrivatePrior,
    __version__,
    baseline,
    histogram_counts,
    interval,
    load,
    loads,
    optimal,
    private_prior,
    private_prior_from_counts,
    rr_on_bins,
    unbiased,
)

__all__ = [
    "Mechanism",
    "PrivatePrior",
    "__version__",
    "baseline",
    "histogram_counts",
    "interval",
    "load",
    "loads",
    "optimal",
    "private_prior",
    "private_prior_from_counts",
    "rr_on_bins",
    "unbiased",
]
