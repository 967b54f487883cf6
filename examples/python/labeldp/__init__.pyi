"""Type stubs of the labeldp package (the compiled extension labeldp._labeldp, re-exported)."""

from typing import Optional, Sequence, Union

import numpy as np
import numpy.typing as npt

__version__: str

_Floats = Union[Sequence[float], npt.NDArray[np.floating]]
_Labels = npt.ArrayLike
_Ids = Union[npt.NDArray[np.int64], npt.NDArray[np.uint64], Sequence[int]]

class Mechanism:
    """A label-DP mechanism, as a labeldp mechanism file (picklable as its JSON text)."""

    @property
    def kind(self) -> str:
        """'rr-on-bins', 'optimal-lp', 'unbiased', 'rpwithprior', 'laplace', ..."""
    @property
    def eps(self) -> float:
        """The privacy budget each privatized label costs."""
    @property
    def delta(self) -> float:
        """delta of an (eps, delta) guarantee: 0 except for the Gaussian baselines."""
    @property
    def expected_loss(self) -> Optional[float]:
        """The file's expected loss under the prior it was built for, or None."""
    @property
    def is_finite(self) -> bool:
        """True for a finite mechanism (inputs, outputs, probability table)."""
    @property
    def inputs(self) -> Optional[npt.NDArray[np.float64]]:
        """A finite mechanism's inputs, else None."""
    @property
    def outputs(self) -> Optional[npt.NDArray[np.float64]]:
        """A finite mechanism's outputs, else None."""
    @property
    def probabilities(self) -> Optional[npt.NDArray[np.float64]]:
        """A finite mechanism's table P[input, output], else None."""
    def to_json(self) -> str:
        """The mechanism file (one JSON object)."""
    def save(self, path: str) -> None:
        """Writes the mechanism file to `path` atomically."""
    def audit(self) -> float:
        """The exact privacy level (finite: max log-ratio of the stored table; else eps)."""
    def privatize(
        self, labels: _Labels, key: Optional[bytes] = None, ids: Optional[_Ids] = None
    ) -> npt.NDArray[np.float64]:
        """Noisy labels (new float64 array, same shape); keyed by (key, ids[i]) when key is given."""

class PrivatePrior:
    """An eps-label-DP prior on a public grid (Ghazi et al. 2023, Algorithm 4)."""

    @property
    def values(self) -> npt.NDArray[np.float64]:
        """The grid points."""
    @property
    def probs(self) -> npt.NDArray[np.float64]:
        """The private probability of each grid point."""
    @property
    def noisy_counts(self) -> npt.NDArray[np.int64]:
        """The released noisy counts."""
    @property
    def eps(self) -> float:
        """The budget the release spent."""
    @property
    def n(self) -> int:
        """The number of labels counted (not private)."""
    @property
    def uniform_fallback(self) -> bool:
        """True when no noisy count was positive (uniform prior)."""
    @property
    def lo(self) -> float: ...
    @property
    def hi(self) -> float: ...
    @property
    def resolution(self) -> float: ...
    def to_json(self) -> str:
        """As `labeldp prior --json`."""
    def to_csv(self) -> str:
        """value,prob CSV."""
    def save(self, path: str) -> None:
        """Writes to_csv() to `path` atomically."""
    def __eq__(self, other: object) -> bool: ...

def load(path: str) -> Mechanism:
    """A mechanism from a mechanism file."""

def loads(text: str) -> Mechanism:
    """A mechanism from a mechanism file's text."""

def rr_on_bins(values: _Floats, probs: _Floats, eps: float, loss: str = "squared") -> Mechanism:
    """The optimal RR-on-Bins (as `labeldp bins`)."""

def optimal(
    values: _Floats,
    probs: _Floats,
    eps: float,
    outputs: _Floats,
    loss: str = "squared",
    time_limit: Optional[float] = None,
) -> Mechanism:
    """The optimal eps-DP mechanism onto `outputs` (as `labeldp optimal`)."""

def unbiased(
    values: _Floats,
    probs: _Floats,
    eps: float,
    grid: Optional[int] = None,
    continuous: bool = False,
    max_bias: Optional[float] = None,
    time_limit: Optional[float] = None,
) -> Mechanism:
    """The optimal unbiased / bias-bounded randomizer (as `labeldp unbiased`)."""

def interval(
    lo: _Floats, hi: _Floats, mass: _Floats, eps: float, zeta: float, granularity: Optional[float] = None
) -> Mechanism:
    """RPWithPrior on its optimal interval (as `labeldp interval`)."""

def baseline(
    kind: str,
    eps: float,
    lo: float,
    hi: float,
    delta: float = 0.0,
    resolution: Optional[float] = None,
    *,
    clip: bool = False,
    values: Optional[_Floats] = None,
    probs: Optional[_Floats] = None,
) -> Mechanism:
    """An additive or randomized-response baseline (as `labeldp baseline`)."""

def histogram_counts(labels: _Labels, lo: float, hi: float, resolution: float) -> npt.NDArray[np.int64]:
    """Exact counts of the labels on the grid (as private_prior bins them)."""

def private_prior_from_counts(
    counts: npt.ArrayLike, eps: float, lo: float, hi: float, resolution: float, key: Optional[bytes] = None
) -> PrivatePrior:
    """The private prior of exact grid counts (noise drawn once)."""

def private_prior(
    labels: _Labels, eps: float, lo: float, hi: float, resolution: float, key: Optional[bytes] = None
) -> PrivatePrior:
    """An eps-label-DP prior of the labels on the public grid (as `labeldp prior`)."""
