"""The study's verdicts: for each pair of methods it compares, where the second one wins.

The kernel approximation study (Deshmukh) compares its methods in pairs: random Fourier
features against their quasi-Monte Carlo form, uniform against k-means Nyström, random
Maclaurin against compact random feature maps; the later methods are compared with their
baselines in the same way.  A verdict counts, over the (data set, D) points where both
methods of a pair have results, the points where the second method (the challenger) is
better than the first (the baseline), and the points where it is *significantly* better.

The rule, for one point: with ``m_b, s_b, n_b`` and ``m_c, s_c, n_c`` the mean, standard
deviation (``ddof=1``) and number of seeds of the baseline and the challenger, the
challenger wins when its mean is better (lower for an error, higher for an accuracy:
``metric_higher_is_better``), and wins
significantly when the difference of the means exceeds two standard errors of that
difference,

    |m_c - m_b| > 2 sqrt(s_b^2 / n_b + s_c^2 / n_c),

the two-standard-error rule of the study's protocol (about a 5 % two-sided level for
normal means; the seeds of the two methods draw independent features, so the variances
add).  A point with one seed in either method has no standard error: it counts as a win,
a tie or a loss, and never as significant.  Equal means are a tie.

:data:`STUDY_PAIRS` is the one place where a pair is added.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ._summary import metric_higher_is_better, metric_title, summarize

__all__ = [
    "ONE_SEED",
    "RULE",
    "STUDY_PAIRS",
    "Verdict",
    "format_verdicts",
    "study_verdicts",
    "verdicts_record",
    "write_verdicts",
]

#: The pairs the study compares, as (baseline, challenger, label), registry names of
#: :func:`~kernelmaps.experiments.method_names`.  A pair is reported when both of its
#: methods are in the results; a name that is not registered (yet) simply never is.
STUDY_PAIRS: tuple[tuple[str, str, str], ...] = (
    # The study's own pairs.
    ("rff-mc", "rff-sobol", "RFF vs QMC RFF (Sobol')"),
    ("rff-mc", "rff-halton", "RFF vs QMC RFF (Halton)"),
    ("nystroem-uniform", "nystroem-kmeans", "uniform vs k-means Nyström"),
    ("rmfm", "crfm", "RMFM vs CRFM"),
    # The newer methods against their baselines.
    ("rff-mc", "rff-orthogonal", "RFF vs orthogonal RFF"),
    ("rff-mc", "fastfood", "RFF vs Fastfood"),
    ("rff-mc", "sorf", "RFF vs SORF"),
    ("nystroem-uniform", "nystroem-leverage", "uniform vs leverage-score Nyström"),
    ("nystroem-uniform", "nystroem-rpcholesky", "uniform vs RPCholesky Nyström"),
    ("nystroem-uniform", "ika", "uniform Nyström vs IKA"),
    ("crfm", "tensorsketch", "CRFM vs TensorSketch"),
)

#: The significance rule, once, as the report and ``results.json`` state it.
RULE = (
    "significantly: the means over seeds differ by more than two standard errors of their "
    "difference, 2 sqrt(s1^2/n1 + s2^2/n2) (s: standard deviation over the n seeds)"
)
#: What the report says instead of :data:`RULE` when no point has two seeds.
ONE_SEED = "one seed: no significance test (it needs two seeds or more of each method)"


@dataclasses.dataclass(frozen=True)
class Verdict:
    """How the challenger of a pair fares against its baseline on one metric.

    Attributes
    ----------
    label : str
        The pair's label (:data:`STUDY_PAIRS`).
    baseline, challenger : str
        The methods as the results name them (their labels when the study gives some).
    metric : str
    higher_is_better : bool
    n_points : int
        (data set, D) points where both methods have results for the same kernel.
    wins, ties, losses : int
        Points where the challenger's mean is better, equal, worse.
    significant_wins, significant_losses : int
        Points where it is better (worse) by more than two standard errors.
    n_tested : int
        Points where both methods have two seeds or more (significance is tested there).
    points : tuple of dict
        Per point: data set, D, both means, standard error (``None`` with one seed) and
        the outcome (``"win"``, ``"tie"``, ``"loss"``, prefixed ``"significant "``).
    """

    label: str
    baseline: str
    challenger: str
    metric: str
    higher_is_better: bool
    n_points: int
    wins: int
    ties: int
    losses: int
    significant_wins: int
    significant_losses: int
    n_tested: int
    points: tuple[dict[str, Any], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able dict (the points as a list)."""
        out = dataclasses.asdict(self)
        out["points"] = [dict(p) for p in self.points]
        return out


def _point(base: dict[str, Any], chal: dict[str, Any], higher: bool) -> dict[str, Any]:
    """The outcome at one point, from the two summaries over seeds."""
    gain = chal["mean"] - base["mean"] if higher else base["mean"] - chal["mean"]
    se: float | None = None
    if base["n"] > 1 and chal["n"] > 1:
        se = math.sqrt(base["std"] ** 2 / base["n"] + chal["std"] ** 2 / chal["n"])
    outcome = "win" if gain > 0 else "loss" if gain < 0 else "tie"
    if se is not None and outcome != "tie" and abs(gain) > 2 * se:
        outcome = "significant " + outcome
    return {
        "dataset": base["dataset"],
        "n_components": base["n_components"],
        "baseline_mean": base["mean"],
        "challenger_mean": chal["mean"],
        "baseline_seeds": base["n"],
        "challenger_seeds": chal["n"],
        "standard_error": se,
        "outcome": outcome,
    }


def study_verdicts(
    rows: Iterable[dict[str, Any]],
    metric: str,
    methods: Mapping[str, str] | None = None,
    pairs: Sequence[tuple[str, str, str]] = STUDY_PAIRS,
) -> list[Verdict]:
    """The verdict of every pair whose two methods are both in ``rows``, on ``metric``.

    Parameters
    ----------
    rows : iterable of dict
        A tidy result table (:func:`~kernelmaps.experiments.run_experiment`), one row per
        data set, method, n_components, seed and metric.
    metric : str
        The metric judged; its direction is
        ``metric_higher_is_better``.  A metric with
        no direction (``n_features_out``) has no verdict.
    methods : mapping, default=None
        The registry name of each method as the rows name it (a study may label its
        methods); by default a method's name in the rows is its registry name.  A
        registry name with several labels gives a verdict for each combination.
    pairs : sequence of (baseline, challenger, label), default=STUDY_PAIRS

    Returns
    -------
    list of Verdict
        In the order of ``pairs``; a pair with a method absent from the rows is left out.
        Points are compared only where both methods approximate the same kernel; points
        whose means are not finite are left out.

    Examples
    --------
    >>> from kernelmaps.experiments._verdicts import study_verdicts
    >>> rows = [{"dataset": "letter", "method": m, "kernel": "rbf", "n_components": 64,
    ...          "seed": s, "metric": "fro_error", "value": v}
    ...         for m, values in [("rff-mc", [0.30, 0.32, 0.31]), ("rff-sobol", [0.20, 0.21, 0.19])]
    ...         for s, v in enumerate(values)]
    >>> v, = study_verdicts(rows, "fro_error")
    >>> v.label, v.n_points, v.wins, v.significant_wins
    ("RFF vs QMC RFF (Sobol')", 1, 1, 1)
    """
    higher = metric_higher_is_better(metric)
    if higher is None:
        return []
    summary = [
        s for s in summarize(rows, metric) if math.isfinite(s["mean"]) and math.isfinite(s["std"])
    ]
    shown = list(dict.fromkeys(s["method"] for s in summary))
    names = {m: (methods or {}).get(m, m) for m in shown}
    cells = {(s["dataset"], s["method"], s["n_components"]): s for s in summary}
    verdicts = []
    for baseline, challenger, label in pairs:
        for base_name in (m for m in shown if names[m] == baseline):
            for chal_name in (m for m in shown if names[m] == challenger):
                points = []
                for (dataset, method, d), base in cells.items():
                    chal = cells.get((dataset, chal_name, d))
                    if method != base_name or chal is None:
                        continue
                    if base.get("kernel") != chal.get("kernel"):
                        continue  # not the same kernel: the errors do not compare
                    points.append(_point(base, chal, higher))
                outcomes = [p["outcome"] for p in points]
                verdicts.append(
                    Verdict(
                        label=label,
                        baseline=base_name,
                        challenger=chal_name,
                        metric=metric,
                        higher_is_better=higher,
                        n_points=len(points),
                        wins=sum(o.endswith("win") for o in outcomes),
                        ties=outcomes.count("tie"),
                        losses=sum(o.endswith("loss") for o in outcomes),
                        significant_wins=outcomes.count("significant win"),
                        significant_losses=outcomes.count("significant loss"),
                        n_tested=sum(p["standard_error"] is not None for p in points),
                        points=tuple(points),
                    )
                )
    return verdicts


def _line(v: Verdict, label_width: int) -> str:
    text = f"{v.challenger} beats {v.baseline} at {v.wins} of {v.n_points} points"
    if v.n_tested:
        text += f", significantly at {v.significant_wins}"
        if v.n_tested < v.n_points:
            text += f" (tested at {v.n_tested}; the others have one seed)"
    extra = []
    if v.ties:
        extra.append(f"ties at {v.ties}")
    if v.significant_losses:
        extra.append(f"significantly worse at {v.significant_losses}")
    if extra:
        text += "; " + ", ".join(extra)
    return f"  {v.label + ':':<{label_width + 1}} {text}"


def format_verdicts(verdicts: Sequence[Verdict]) -> str:
    """The verdicts as text: per metric a heading and one line per pair; the rule once.

    ``verdicts`` may hold those of several metrics (:func:`study_verdicts` of each),
    shown in blocks, one per metric, in their order; the significance rule closes the
    text (or says that one seed allows no test).  An empty list gives an empty string.

    Examples
    --------
    >>> from kernelmaps.experiments._verdicts import format_verdicts, study_verdicts
    >>> rows = [{"dataset": "letter", "method": m, "kernel": "rbf", "n_components": d,
    ...          "seed": 0, "metric": "fro_error", "value": v / d}
    ...         for m, v in [("nystroem-uniform", 2.0), ("nystroem-kmeans", 1.0)]
    ...         for d in (16, 64)]
    >>> print(format_verdicts(study_verdicts(rows, "fro_error")))
    verdicts on the relative Frobenius error (lower is better), at each (data set, D) both ran:
      uniform vs k-means Nyström: nystroem-kmeans beats nystroem-uniform at 2 of 2 points
    one seed: no significance test (it needs two seeds or more of each method)
    """
    if not verdicts:
        return ""
    width = max(len(v.label) for v in verdicts)
    lines: list[str] = []
    for metric in dict.fromkeys(v.metric for v in verdicts):
        block = [v for v in verdicts if v.metric == metric]
        better = "higher" if block[0].higher_is_better else "lower"
        if lines:
            lines.append("")
        lines.append(
            f"verdicts on the {metric_title(metric)} ({better} is better), at each "
            "(data set, D) both ran:"
        )
        lines.extend(_line(v, width) for v in block)
    lines.append(RULE if any(v.n_tested for v in verdicts) else ONE_SEED)
    return "\n".join(lines)


def verdicts_record(
    rows: Sequence[dict[str, Any]],
    methods: Mapping[str, str] | None = None,
    pairs: Sequence[tuple[str, str, str]] = STUDY_PAIRS,
) -> dict[str, Any]:
    """The verdicts of every metric of ``rows`` that has a direction, as JSON-able data.

    Returns ``{"rule": RULE, "pairs": [...], "by_metric": {metric: [verdict, ...]}}``
    with each verdict as :meth:`Verdict.to_dict`.

    Examples
    --------
    >>> from kernelmaps.experiments._verdicts import verdicts_record
    >>> rows = [{"dataset": "letter", "method": m, "kernel": "polynomial", "n_components": 16,
    ...          "seed": 0, "metric": "accuracy", "value": v}
    ...         for m, v in [("rmfm", 0.8), ("crfm", 0.9)]]
    >>> [(v["challenger"], v["wins"]) for v in verdicts_record(rows)["by_metric"]["accuracy"]]
    [('crfm', 1)]
    """
    metrics = list(dict.fromkeys(str(r["metric"]) for r in rows))
    by_metric = {}
    for metric in metrics:
        found = study_verdicts(rows, metric, methods, pairs)
        if found:
            by_metric[metric] = [v.to_dict() for v in found]
    return {"rule": RULE, "pairs": [list(p) for p in pairs], "by_metric": by_metric}


def _registry_names(provenance: Any) -> dict[str, str]:
    """The registry name of each method as the results name it, from the provenance."""
    config = provenance.get("config") if isinstance(provenance, dict) else None
    methods = config.get("methods") if isinstance(config, dict) else None
    names: dict[str, str] = {}
    for m in methods if isinstance(methods, list) else []:
        if isinstance(m, dict) and isinstance(m.get("name"), str):
            names[str(m.get("label") or m["name"])] = m["name"]
    return names


def write_verdicts(out_dir: str | Path) -> dict[str, Any]:
    """Add the verdicts to ``results.json`` in ``out_dir`` (its ``verdicts`` key).

    The verdicts are computed from the file's own rows (with the methods' registry names
    from its provenance), under the folder's run lock, and the file is replaced whole
    (``_atomic.atomic_write``).  Returns the record written.  Raises
    ``OutputFolderInUseError`` when another run holds the folder.

    Examples
    --------
    >>> import json, tempfile
    >>> from pathlib import Path
    >>> from kernelmaps.experiments._verdicts import write_verdicts
    >>> folder = Path(tempfile.mkdtemp())
    >>> rows = [{"dataset": "letter", "method": m, "kernel": "rbf", "n_components": 8,
    ...          "seed": 0, "metric": "fro_error", "value": v}
    ...         for m, v in [("rff-mc", 0.5), ("rff-orthogonal", 0.4)]]
    >>> _ = (folder / "results.json").write_text(json.dumps({"results": rows}))
    >>> _ = write_verdicts(folder)
    >>> v, = json.loads((folder / "results.json").read_text())["verdicts"]["by_metric"]["fro_error"]
    >>> v["label"], v["wins"], v["n_points"]
    ('RFF vs orthogonal RFF', 1, 1)
    """
    from .._atomic import atomic_write
    from ._folder_lock import _FolderLock

    folder = Path(out_dir)
    path = folder / "results.json"
    with _FolderLock(folder):
        data = json.loads(path.read_text(encoding="utf-8"))
        rows = [r for r in data.get("results", []) if isinstance(r, dict)]
        record = verdicts_record(rows, _registry_names(data.get("provenance")))
        # Before the long list of rows, where a reader of the file sees them.
        data = {k: v for k, v in data.items() if k not in ("results", "verdicts")} | {
            "verdicts": record,
            "results": data.get("results", []),
        }
        with atomic_write(path) as fh:
            json.dump(data, fh, indent=1, default=str)
    return record
