"""How a method is drawn: one colour per family, a line style and marker per member.

The family, label and default kernel of a method come from the method registry
(:func:`kernelmaps.experiments.get_method`); this module only turns them into a colour
(one per family of :data:`~kernelmaps.experiments.METHOD_FAMILIES`), a line style and a
marker (one per member of the family, in the registry's order, so the two methods of a
pair the study compares never look alike) and a legend label that names the kernel.
"""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Iterable
from typing import Any

__all__ = ["MethodLook", "looks", "method_style"]

#: The colour of each family: Okabe & Ito's palette (told apart with colour blindness),
#: but an ochre for random binning (their orange is too near the Nyström vermillion).
FAMILY_COLORS = {
    "fourier": "#0072B2",  # blue
    "nystroem": "#D55E00",  # vermillion
    "ika": "#009E73",  # bluish green
    "dot-product": "#CC79A7",  # reddish purple
    "binning": "#8C6D1F",  # ochre
    "chi2": "#56B4E9",  # sky blue
}
#: Colours of families registered later, in turn.
SPARE_COLORS = ("#7A5195", "#6B8E23", "#B8860B", "#17BECF")
#: The colour of the methods the registry does not know.
OTHER_COLOR = "#4D4D4D"
#: Line styles and markers of the members of a family, in turn (the first member of a
#: family, usually the baseline of its pairs, is drawn solid with circles).
LINESTYLES: tuple[Any, ...] = (
    "-",
    "--",
    ":",
    "-.",
    (0, (5, 1.5, 1, 1.5, 1, 1.5)),
    (0, (8, 2)),
    (0, (1, 1)),
    (0, (3, 1, 1, 1)),
)
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
#: The family of the methods the registry does not know.
OTHER = "other"


@dataclasses.dataclass(frozen=True)
class MethodLook:
    """The drawing of one method: its family, member index, colour, legend label and the
    kernel the label names."""

    method: str
    family: str
    family_name: str
    color: str
    index: int
    label: str
    kernel: str | None = None

    @property
    def linestyle(self) -> Any:
        return LINESTYLES[self.index % len(LINESTYLES)]

    @property
    def marker(self) -> str:
        return MARKERS[self.index % len(MARKERS)]

    def style(self) -> dict[str, Any]:
        """The keyword arguments of ``Axes.plot`` (color, linestyle, marker, label)."""
        return {
            "color": self.color,
            "linestyle": self.linestyle,
            "marker": self.marker,
            "label": self.label,
        }


def _spec(method: str) -> Any:
    """The registered method named ``method`` (or an alias of one), or None."""
    from ..experiments import resolve_method

    try:
        return resolve_method(method)
    except ValueError:
        return None


def _family_color(family: str) -> str:
    """The colour of ``family``; a family that is not built in takes a spare colour."""
    if family in FAMILY_COLORS:
        return FAMILY_COLORS[family]
    if family == OTHER:
        return OTHER_COLOR
    from ..experiments import METHOD_FAMILIES, get_method, method_names

    later = list(dict.fromkeys(
        get_method(n).family for n in method_names()
        if get_method(n).family and get_method(n).family not in FAMILY_COLORS
    ))  # fmt: skip
    if family in later:
        return SPARE_COLORS[later.index(family) % len(SPARE_COLORS)]
    return SPARE_COLORS[len(METHOD_FAMILIES) % len(SPARE_COLORS)]


def _member_index(spec: Any) -> int:
    """The place of ``spec`` among the registered methods of its family."""
    from ..experiments import get_method, method_names

    members = [n for n in method_names() if get_method(n).family == spec.family]
    return members.index(spec.name) if spec.name in members else 0


def _with_kernel(label: str, kernel: str | None) -> str:
    from ..experiments import kernel_label

    return f"{label} · {kernel_label(kernel)}" if kernel else label


def look(
    method: str, *, kernel: str | None = None, label: str | None = None, index: int | None = None
) -> MethodLook:
    """How ``method`` is drawn.

    ``kernel``: the kernel named in its label (default: the method's own); ``label``: the
    label before the kernel (default: the registry's); ``index``: the line style and
    marker of a method of no family (default: picked from its name).
    """
    from ..experiments import METHOD_FAMILIES

    spec = _spec(method)
    kernel = kernel or (spec.kernel if spec is not None else None)
    label = label or (spec.display_label if spec is not None else method)
    if spec is None or not spec.family:
        if index is None:
            index = zlib.crc32(method.encode()) % len(MARKERS)
        return MethodLook(
            method, OTHER, "other methods", OTHER_COLOR, index, _with_kernel(label, kernel), kernel
        )
    return MethodLook(
        method,
        spec.family,
        METHOD_FAMILIES.get(spec.family, spec.family),
        _family_color(spec.family),
        _member_index(spec),
        _with_kernel(label, kernel),
        kernel,
    )


def looks(methods: Iterable[tuple[str, str, str | None]]) -> dict[str, MethodLook]:
    """The look of each ``(shown name, registry name, kernel)``, keyed by the shown name.

    A shown name other than the registry name (a label the study gave) is the legend
    label; the methods of no family are told apart by their order.
    """
    out: dict[str, MethodLook] = {}
    n_other = 0
    for shown, name, kernel in methods:
        given = shown if shown != name else None
        out[shown] = look(name, kernel=kernel, label=given, index=n_other)
        n_other += out[shown].family == OTHER
    return out


def method_style(method: str, *, kernel: str | None = None) -> dict[str, Any]:
    """The colour, line style, marker and label a method is drawn with in the figures.

    Every method of a family (:data:`~kernelmaps.experiments.METHOD_FAMILIES`: the
    Fourier-type maps, the Nyström landmark rules, IKA, the dot-product maps, random
    binning, the χ² samplers) has the family's colour; its members differ by line style
    and marker, so the two methods of a pair the study compares
    (:data:`~kernelmaps.experiments.STUDY_PAIRS`) are told apart at a glance.  The label
    names the kernel the method approximates (``"TensorSketch · polynomial"``), so curves
    of different kernels are not taken for comparable ones.

    Parameters
    ----------
    method : str
        A registered method (:func:`~kernelmaps.experiments.method_names`) or an alias
        of one (:data:`~kernelmaps.experiments.METHOD_ALIASES`).  Another name is drawn
        in dark grey with a line style and marker picked from the name, and labelled
        with the name itself.
    kernel : str, default=None
        The kernel named in the label; default: the method's own
        (:attr:`MethodSpec.kernel <kernelmaps.experiments.MethodSpec>`), none for a
        name the registry does not know.

    Returns
    -------
    dict
        ``color`` (a hex colour), ``linestyle``, ``marker`` and ``label``: keyword
        arguments of :meth:`matplotlib.axes.Axes.plot`.

    Examples
    --------
    >>> from kernelmaps.plotting import method_style
    >>> mc, qmc = method_style("rff-mc"), method_style("rff-sobol")
    >>> mc["label"], qmc["label"]
    ('RFF, Monte Carlo · Gaussian', "QMC RFF, Sobol' · Gaussian")
    >>> [mc[key] == qmc[key] for key in ("color", "linestyle", "marker")]
    [True, False, False]
    >>> method_style("tensorsketch")["label"], method_style("binning")["label"]
    ('TensorSketch · polynomial', 'random binning · Laplacian')
    >>> method_style("nystroem-uniform", kernel="laplacian")["label"]
    'Nyström, uniform · Laplacian'

    Drawn with matplotlib (``ax.plot(x, y, **method_style("rff-mc"))``).
    """
    return look(method, kernel=kernel).style()
