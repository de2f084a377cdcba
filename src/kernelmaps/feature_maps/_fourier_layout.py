"""The output layout of the Fourier-type maps: cosine/sine pairs, then cos+phase features.

:class:`~kernelmaps.feature_maps.RandomFourierFeatures`, :class:`Fastfood` and
:class:`StructuredOrthogonalFeatures` share it.  With ``D`` output features:

``variant="cos_sin"``
    ``L = D // 2`` frequencies give ``[cos(w_i . x)]_{i<L}`` then ``[sin(w_i . x)]_{i<L}``;
    when ``D`` is odd one more frequency gives a last ``cos(w . x + b)`` feature.
``variant="cos_phase"``
    ``D`` frequencies give ``[cos(w_i . x + b_i)]_{i<D}`` (Rahimi & Recht 2007).

Every feature is weighted ``sqrt(2 / D)``, which keeps ``z(x) . z(y)`` unbiased for
``k(x - y)`` in both variants and for odd ``D`` (Sutherland & Schneider 2015 compare the
variances of the two variants).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .._array_api import is_numpy
from ._trig import cos_shifted_into, cos_sin_into

__all__ = ["FourierLayout", "fourier_features_into"]


@dataclass(frozen=True)
class FourierLayout:
    """How ``D`` output features split into cosine/sine pairs and cos+phase features.

    Attributes
    ----------
    n_pairs : int
        Frequencies giving a cosine and a sine (the first ``2 n_pairs`` columns).
    n_frequencies : int
        Frequencies drawn: ``n_pairs + n_phases``.
    n_phases : int
        Frequencies giving one ``cos(w . x + b)`` feature each (the last columns).
    scale : float
        ``sqrt(2 / D)``, the weight of every feature.

    Examples
    --------
    >>> from kernelmaps.feature_maps._fourier_layout import FourierLayout
    >>> FourierLayout.of(7, "cos_sin")
    FourierLayout(n_pairs=3, n_frequencies=4, n_phases=1, scale=0.5345224838248488)
    >>> FourierLayout.of(7, "cos_phase").n_phases
    7
    """

    n_pairs: int
    n_frequencies: int
    n_phases: int
    scale: float

    @classmethod
    def of(cls, n_components: int, variant: str) -> FourierLayout:
        """The layout of ``n_components`` features of ``variant`` ("cos_sin", "cos_phase")."""
        D = int(n_components)
        n_pairs = D // 2 if variant == "cos_sin" else 0
        n_frequencies = D - n_pairs
        return cls(n_pairs, n_frequencies, n_frequencies - n_pairs, math.sqrt(2.0 / D))


def fourier_features_into(
    out: Any,
    pairs: Any | None,
    tail: Any | None,
    offsets: Any | None,
    scale: float,
    xp: Any = None,
) -> None:
    """Write ``[s cos P_pairs, s sin P_pairs, s cos(P_tail + b)]`` into ``out``.

    Parameters
    ----------
    out : array of shape (b, 2 L + n_phases)
        The output block.
    pairs : array of shape (b, L) or None
        Projections of the pair frequencies (may be overwritten); None when ``L = 0``.
    tail : array of shape (b, n_phases) or None
        Projections of the cos+phase frequencies; on NumPy replaced in place by their
        features and copied to the last columns of ``out`` (no copy when ``tail`` is
        ``out`` itself); None when there are none.
    offsets : array of shape (n_phases,) or None
        The phases ``b``.
    scale : float
        ``s``, the weight of every feature.
    xp : namespace, optional
        The namespace of the arrays (default: NumPy's, whose route is the in-place,
        compiled one of :mod:`._trig`; other libraries write each part into ``out``).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.feature_maps._fourier_layout import fourier_features_into
    >>> out = np.empty((1, 3))
    >>> fourier_features_into(out, np.zeros((1, 1)), np.zeros((1, 1)), np.zeros(1), 1.0)
    >>> out
    array([[1., 0., 1.]])
    """
    n_pairs = 0 if pairs is None else pairs.shape[1]
    if xp is not None and not is_numpy(xp):
        if n_pairs:
            out[:, :n_pairs] = xp.cos(pairs) * scale
            out[:, n_pairs : 2 * n_pairs] = xp.sin(pairs) * scale
        if tail is not None:
            out[:, 2 * n_pairs :] = xp.cos(tail + xp.astype(offsets, tail.dtype)) * scale
        return
    if tail is not None:
        assert offsets is not None
        cos_shifted_into(tail, offsets, scale)
        if tail is not out:
            out[:, 2 * n_pairs :] = tail
    if pairs is not None and n_pairs:
        cos_sin_into(pairs, out, scale)
