"""FairRankTune 0.0.7's ``Metrics`` API, computed by frameaudit.

A drop-in for code written against FairRankTune: replace ``from FairRankTune import Metrics``
with ``from frameaudit.compat import fairranktune as Metrics`` and every call keeps its
arguments and its return shape. The wide input is reshaped (vectorised) into tidy Polars frames
and the numbers come from :mod:`frameaudit.fair`.

Input, as in FairRankTune:

* ``ranking_df``: a pandas DataFrame with one column per ranking and one row per position,
  top first; missing cells (NaN/None) are dropped and the positions of each column renumbered
  1, 2, ...;
* ``item_group_dict``: item → group. It defines the group universe and the group sizes,
  including items that are never ranked;
* ``relevance_df`` / ``ctr_df``: laid out like ``ranking_df`` and paired with it by column
  position and row order, after dropping their own missing cells.

Group metrics return ``(value, {group: V_g})`` with the groups in ``np.unique`` order (the keys
are numpy scalars, the values ``numpy.float64``); NDKL and IAA return a ``numpy.float64``.
Undefined values (0/0) are NaN here, as in FairRankTune.

FairRankTune's conventions that are reproduced (frameaudit's own API differs, see the
"Differences" page of the documentation):

* ARP: per-ranking favoured-pair fractions are **summed** over rankings (values up to the
  number of rankings) instead of pooling pair counts;
* ``LTwo`` is the unsquared norm ‖V‖₂ and ``Variance`` uses ddof 0 (0 for a single group);
* NDKL smooths both distributions with ε = 1e-7, uses the ranking's own group mix as the
  reference and accepts a single ranking;
* per-group values of the EXP family are summed over rankings and divided by the group sizes
  of ``item_group_dict``.

Where FairRankTune crashes, this module raises a :class:`~frameaudit.FrameAuditError` or
computes a documented value instead:

* a ranked item missing from ``item_group_dict`` (FairRankTune: ``KeyError``) → error;
* ARP on rankings that do not hold every item of ``item_group_dict`` (FairRankTune:
  ``KeyError``/``IndexError``) → each ranking's fractions are computed on the items it holds;
  a group without an item in a ranking adds nothing to its sum (NaN if it is in no ranking);
* ARP on a ranking whose items all belong to one group (FairRankTune: ``ZeroDivisionError``)
  → error;
* NDKL on more than one ranking (FairRankTune: ``AssertionError``) → error;
* a ``relevance_df``/``ctr_df`` column with fewer values than its ranking (FairRankTune:
  ``IndexError``) → error; extra values are ignored, as in FairRankTune.

Where FairRankTune has a bug, this module follows the documented definition:

* IAA is amortized over **all** rankings (FairRankTune returns inside its loop and reads only
  the first ranking); for one ranking the numbers agree;
* ``MaxAbsDiff`` is NaN whenever a deviation |V_g − mean V| is NaN (FairRankTune's loop skips
  NaN: it returns the int 0 when V holds NaN, and the largest finite deviation, e.g. inf, when
  a V_g is inf);
* an unknown ``combo`` raises an error listing the seven (FairRankTune returns ``None``);
* ERBR requires relevance exactly 0 or 1 (FairRankTune's check never fires) and EXPU, EXPRU
  and IAA require relevance / ctr in [0, 1] (FairRankTune's IAA check never fires);
* ``p`` must lie in (0, 1] and ``decay`` in [0, 1); an item may appear once per ranking
  (FairRankTune counts a repeated item twice). NDKL, computed on the ranking's sequence of
  groups, does not check repeated items.
"""

# ruff: noqa: N802  (the function names are FairRankTune's)

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import pandas as pd
import polars as pl

from frameaudit import fair
from frameaudit._params import Choice
from frameaudit.exceptions import InvalidDtypeError, InvalidParameterError, InvalidValueError
from frameaudit.fair.ranking import COMBOS, Combo

__all__ = ["ARP", "AWRF", "ERBE", "ERBP", "ERBR", "EXP", "EXPRU", "EXPU", "IAA", "NDKL"]

_RANKING, _RANK, _ITEM, _GROUP = "ranking", "rank", "item", "group"
_EPSILON = 1e-7  # FairRankTune's smoothing of NDKL's distributions

PerGroup = tuple[np.float64, dict[Any, np.float64]]


@dataclass(frozen=True)
class _Rankings:
    """FairRankTune's wide input as tidy frames, items and groups replaced by integer codes."""

    tidy: pl.DataFrame  # ranking (column position), rank (renumbered), item (code)
    mapping: pl.DataFrame  # item (code) → group (code)
    labels: np.ndarray[Any, Any]  # group labels in np.unique order; a group's code indexes it


def _long(frame: Any, name: str) -> tuple[np.ndarray[Any, Any], ...]:
    """(column position, renumbered position, value) of every non-missing cell, column-major."""
    if not isinstance(frame, pd.DataFrame):
        msg = (
            f"{name}: expected a pandas DataFrame with one column per ranking and one row per "
            f"position, got {type(frame).__name__}"
        )
        raise InvalidParameterError(msg)
    cells = frame.to_numpy(dtype=object).T
    present = ~pd.isna(cells)
    rank = np.cumsum(present, axis=1)
    ranking = np.broadcast_to(np.arange(cells.shape[0])[:, None], cells.shape)
    return ranking[present], rank[present], cells[present]


def _rankings(ranking_df: Any, item_group_dict: Any) -> _Rankings:
    ranking, rank, items = _long(ranking_df, "ranking_df")
    if not isinstance(item_group_dict, Mapping):
        msg = f"item_group_dict: expected a dict item → group, got {type(item_group_dict).__name__}"
        raise InvalidParameterError(msg)
    codes = pd.Index(list(item_group_dict)).get_indexer(items)
    unmapped = codes < 0
    if unmapped.any():
        column = ranking_df.columns[ranking[unmapped][0]]
        msg = (
            f"item_group_dict: {unmapped.sum()} ranked item(s) are not keys of item_group_dict "
            f"(e.g. {items[unmapped][0]!r} in ranking_df column {column!r}); every ranked item "
            "needs a group"
        )
        raise InvalidValueError(msg)
    labels, groups = np.unique(_labels(item_group_dict), return_inverse=True)
    tidy = pl.DataFrame({_RANKING: ranking, _RANK: rank, _ITEM: codes})
    mapping = pl.DataFrame({_ITEM: np.arange(len(groups)), _GROUP: groups})
    return _Rankings(tidy, mapping, labels)


def _labels(item_group_dict: Mapping[Any, Any]) -> list[Any]:
    """The group labels, checked: each is a value, and no two that differ only in type.

    FairRankTune takes the groups from ``np.unique`` of the labels, which turns labels of mixed
    types into text: 1 and "1" (or True and "True") would silently become one group.
    """
    values = list(item_group_dict.values())
    for item, label in item_group_dict.items():
        if label is None or (isinstance(label, float) and math.isnan(label)):
            msg = (
                f"item_group_dict: the group of item {item!r} is {label!r}; every item needs a "
                "group label"
            )
            raise InvalidValueError(msg)
    seen: dict[str, Any] = {}
    for label in values:
        other = seen.setdefault(str(label), label)
        if type(other) is not type(label):
            msg = (
                f"item_group_dict: the group labels {other!r} ({type(other).__name__}) and "
                f"{label!r} ({type(label).__name__}) differ only in type, and FairRankTune's "
                "groups (np.unique) would merge them; give every group a label of one type"
            )
            raise InvalidValueError(msg)
    return values


def _with_values(tidy: pl.DataFrame, frames: Mapping[str, tuple[str, Any]]) -> pl.DataFrame:
    """Pair each value frame (name → (parameter, frame)) with the rankings by column and row."""
    for value, (name, frame) in frames.items():
        ranking, rank, cells = _long(frame, name)
        try:
            numbers = cells.astype(np.float64)
        except (TypeError, ValueError):
            msg = f"{name}: expected numbers, found e.g. {cells[0]!r}"
            raise InvalidDtypeError(msg) from None
        paired = pl.DataFrame({_RANKING: ranking, _RANK: rank, value: numbers})
        tidy = tidy.join(paired, on=[_RANKING, _RANK], how="left")
        missing = tidy.filter(pl.col(value).is_null())
        if missing.height:
            msg = (
                f"{name}: {missing.height} ranked item(s) have no value (e.g. position "
                f"{missing.item(0, _RANK)} of ranking_df column {missing.item(0, _RANKING)}); "
                f"{name} pairs with ranking_df by column position and row order and needs as "
                "many values per column"
            )
            raise InvalidValueError(msg)
    return tidy


def _combined(values: np.ndarray[Any, Any], labels: np.ndarray[Any, Any], combo: str) -> PerGroup:
    """FairRankTune's ``(combo value, {group: V_g})`` from the per-group values.

    One group: frameaudit leaves the combo undefined (nothing compared, SPEC §1); FairRankTune
    compares the group with itself, which is the combo of the value next to its own copy
    (LTwo and Variance, which depend on the count, are rescaled below).
    """
    single = len(values) == 1
    frame = pl.DataFrame({"v": np.repeat(values, 2) if single else values})
    result = fair.combine(frame, metric="v", combo=cast("Combo", combo)).item()
    value = math.nan if result is None else float(result)
    if single and combo == "LTwo":
        value /= 2.0  # ‖(v, v)‖² = 2v²
    if combo == "LTwo":
        value = math.sqrt(value)
    elif combo == "Variance":
        # ddof 1 → ddof 0; for one group frameaudit's is 0/0 and FairRankTune's 0 (finite V).
        count = len(values)
        finite = bool(np.isfinite(values).all())
        value = value * (count - 1) / count if count > 1 else (0.0 if finite else math.nan)
    return np.float64(value), dict(zip(labels, values, strict=True))


def _group_metric(
    metric: Callable[..., Any],
    ranking_df: Any,
    item_group_dict: Any,
    combo: Any,
    values: Mapping[str, tuple[str, Any]] | None = None,
    **options: Any,
) -> PerGroup:
    Choice(COMBOS).check("combo", combo)
    rankings = _rankings(ranking_df, item_group_dict)
    tidy = _with_values(rankings.tidy, values or {})
    per_group = metric(
        tidy,
        rank=_RANK,
        group=_GROUP,
        ranking=_RANKING,
        item=_ITEM,
        groups=rankings.mapping,
        combo=None,
        **options,
    )
    vals = np.full(len(rankings.labels), np.nan)
    vals[per_group[_GROUP].to_numpy()] = per_group[metric.__name__].to_numpy()
    return _combined(vals, rankings.labels, combo)


def EXP(ranking_df: pd.DataFrame, item_group_dict: Mapping[Any, Any], combo: str) -> PerGroup:
    """Group exposure, as FairRankTune's EXP; see :func:`frameaudit.fair.exp`.

    Parameters
    ----------
    ranking_df
        One column per ranking, rows = positions top-first, values = item ids.
    item_group_dict
        Item → group, for every item (ranked or not).
    combo
        One of ``frameaudit.fair.COMBOS``.

    Returns
    -------
    ``(value, {group: average exposure})``, numpy floats, groups in ``np.unique`` order.

    Examples
    --------
    >>> import pandas as pd
    >>> from frameaudit.compat import fairranktune as Metrics
    >>> ranking_df = pd.DataFrame({"r1": ["a", "b", "c", "d"], "r2": ["b", "d", "a", "c"]})
    >>> item_group_dict = {"a": "x", "b": "y", "c": "x", "d": "y"}
    >>> value, per_group = Metrics.EXP(ranking_df, item_group_dict, "MinMaxRatio")
    >>> round(float(value), 6), {str(g): round(float(v), 6) for g, v in per_group.items()}
    (0.902746, {'x': 1.215338, 'y': 1.346268})

    """
    return _group_metric(fair.exp, ranking_df, item_group_dict, combo)


def EXPU(
    ranking_df: pd.DataFrame,
    item_group_dict: Mapping[Any, Any],
    relevance_df: pd.DataFrame,
    combo: str,
) -> PerGroup:
    """Exposure utility, as FairRankTune's EXPU; see :func:`frameaudit.fair.expu`.

    Parameters
    ----------
    ranking_df, item_group_dict, combo
        As for :func:`EXP`.
    relevance_df
        Relevance in [0, 1], laid out like ``ranking_df``.

    Returns
    -------
    ``(value, {group: exposure / relevance})``.

    Examples
    --------
    >>> import pandas as pd
    >>> from frameaudit.compat import fairranktune as Metrics
    >>> ranking_df = pd.DataFrame({"r1": ["a", "b", "c", "d"]})
    >>> relevance_df = pd.DataFrame({"r1": [1.0, 0.5, 0.5, 0.25]})
    >>> value, _ = Metrics.EXPU(ranking_df, {"a": 0, "b": 1, "c": 0, "d": 1}, relevance_df,
    ...                         "MaxMinDiff")
    >>> round(float(value), 6)
    0.415475

    """
    values = {"relevance": ("relevance_df", relevance_df)}
    return _group_metric(fair.expu, ranking_df, item_group_dict, combo, values)


def EXPRU(
    ranking_df: pd.DataFrame,
    item_group_dict: Mapping[Any, Any],
    relevance_df: pd.DataFrame,
    ctr_df: pd.DataFrame,
    combo: str,
) -> PerGroup:
    """Exposure realized utility, as FairRankTune's EXPRU; see :func:`frameaudit.fair.expru`.

    Parameters
    ----------
    ranking_df, item_group_dict, combo
        As for :func:`EXP`.
    relevance_df, ctr_df
        Relevance and click-through rate in [0, 1], laid out like ``ranking_df``.

    Returns
    -------
    ``(value, {group: ctr / relevance})``.

    Examples
    --------
    >>> import pandas as pd
    >>> from frameaudit.compat import fairranktune as Metrics
    >>> ranking_df = pd.DataFrame({"r1": ["a", "b", "c", "d"]})
    >>> relevance_df = pd.DataFrame({"r1": [1.0, 0.5, 0.5, 0.25]})
    >>> ctr_df = pd.DataFrame({"r1": [0.5, 0.25, 0.25, 0.25]})
    >>> value, _ = Metrics.EXPRU(ranking_df, {"a": 0, "b": 1, "c": 0, "d": 1}, relevance_df,
    ...                          ctr_df, "MaxMinRatio")
    >>> round(float(value), 6)
    1.333333

    """
    values = {"relevance": ("relevance_df", relevance_df), "ctr": ("ctr_df", ctr_df)}
    return _group_metric(fair.expru, ranking_df, item_group_dict, combo, values)


def AWRF(
    ranking_df: pd.DataFrame, item_group_dict: Mapping[Any, Any], p: float, combo: str
) -> PerGroup:
    """Attention-weighted rank fairness, as FairRankTune's AWRF; see :func:`frameaudit.fair.awrf`.

    Parameters
    ----------
    ranking_df, item_group_dict, combo
        As for :func:`EXP`.
    p
        Share of attention of the top position, in (0, 1].

    Returns
    -------
    ``(value, {group: average attention})``.

    Examples
    --------
    >>> import pandas as pd
    >>> from frameaudit.compat import fairranktune as Metrics
    >>> ranking_df = pd.DataFrame({"r1": ["a", "b", "c", "d"]})
    >>> value, per_group = Metrics.AWRF(ranking_df, {"a": 0, "b": 1, "c": 0, "d": 1}, 0.5, "LTwo")
    >>> round(float(value), 6), [float(v) for v in per_group.values()]
    (34.938562, [31.25, 15.625])

    """
    return _group_metric(fair.awrf, ranking_df, item_group_dict, combo, p=p)


def ERBE(
    ranking_df: pd.DataFrame, item_group_dict: Mapping[Any, Any], decay: float, combo: str
) -> PerGroup:
    """RBP exposure equality, as FairRankTune's ERBE; see :func:`frameaudit.fair.erbe`.

    Parameters
    ----------
    ranking_df, item_group_dict, combo
        As for :func:`EXP`.
    decay
        The RBP patience γ, in [0, 1).

    Returns
    -------
    ``(value, {group: total RBP exposure})``.

    Examples
    --------
    >>> import pandas as pd
    >>> from frameaudit.compat import fairranktune as Metrics
    >>> ranking_df = pd.DataFrame({"r1": ["a", "b", "c", "d"]})
    >>> value, _ = Metrics.ERBE(ranking_df, {"a": 0, "b": 1, "c": 0, "d": 1}, 0.5, "Variance")
    >>> float(value)
    0.0244140625

    """
    return _group_metric(fair.erbe, ranking_df, item_group_dict, combo, decay=decay)


def ERBP(
    ranking_df: pd.DataFrame, item_group_dict: Mapping[Any, Any], decay: float, combo: str
) -> PerGroup:
    """RBP exposure proportionality, as FairRankTune's ERBP; see :func:`frameaudit.fair.erbp`.

    Parameters
    ----------
    ranking_df, item_group_dict, combo
        As for :func:`EXP`.
    decay
        The RBP patience γ, in [0, 1).

    Returns
    -------
    ``(value, {group: average RBP exposure})``.

    Examples
    --------
    >>> import pandas as pd
    >>> from frameaudit.compat import fairranktune as Metrics
    >>> ranking_df = pd.DataFrame({"r1": ["a", "b", "c"]})
    >>> value, _ = Metrics.ERBP(ranking_df, {"a": 0, "b": 1, "c": 1}, 0.5, "MinMaxRatio")
    >>> float(value)
    0.375

    """
    return _group_metric(fair.erbp, ranking_df, item_group_dict, combo, decay=decay)


def ERBR(
    ranking_df: pd.DataFrame,
    item_group_dict: Mapping[Any, Any],
    relevance_df: pd.DataFrame,
    decay: float,
    combo: str,
) -> PerGroup:
    """RBP exposure ∝ relevance, as FairRankTune's ERBR; see :func:`frameaudit.fair.erbr`.

    Parameters
    ----------
    ranking_df, item_group_dict, combo
        As for :func:`EXP`.
    relevance_df
        Binary relevance (exactly 0 or 1), laid out like ``ranking_df``.
    decay
        The RBP patience γ, in [0, 1).

    Returns
    -------
    ``(value, {group: RBP exposure / relevant items})``.

    Examples
    --------
    >>> import pandas as pd
    >>> from frameaudit.compat import fairranktune as Metrics
    >>> ranking_df = pd.DataFrame({"r1": ["a", "b", "c", "d"]})
    >>> relevance_df = pd.DataFrame({"r1": [1, 1, 0, 1]})
    >>> value, _ = Metrics.ERBR(ranking_df, {"a": 0, "b": 1, "c": 0, "d": 1}, relevance_df,
    ...                         0.5, "MaxMinDiff")
    >>> float(value)
    0.46875

    """
    values = {"relevance": ("relevance_df", relevance_df)}
    return _group_metric(fair.erbr, ranking_df, item_group_dict, combo, values, decay=decay)


def ARP(ranking_df: pd.DataFrame, item_group_dict: Mapping[Any, Any], combo: str) -> PerGroup:
    """Attribute rank parity, as FairRankTune's ARP; see :func:`frameaudit.fair.arp`.

    Each group's value is the sum over rankings of its favoured-pair fraction in that ranking
    (FairRankTune's convention; :func:`frameaudit.fair.arp` pools the pair counts instead).

    Parameters
    ----------
    ranking_df, item_group_dict, combo
        As for :func:`EXP`. Rankings may hold a subset of the items; every ranking needs
        items of at least two groups.

    Returns
    -------
    ``(value, {group: summed favoured-pair fractions})``.

    Examples
    --------
    >>> import pandas as pd
    >>> from frameaudit.compat import fairranktune as Metrics
    >>> ranking_df = pd.DataFrame({"r1": ["a", "b", "c", "d"], "r2": ["b", "d", "a", "c"]})
    >>> value, per_group = Metrics.ARP(ranking_df, {"a": 0, "b": 1, "c": 0, "d": 1}, "MaxMinDiff")
    >>> float(value), [float(v) for v in per_group.values()]
    (0.5, [0.75, 1.25])

    """
    Choice(COMBOS).check("combo", combo)
    rankings = _rankings(ranking_df, item_group_dict)
    one_group = (
        rankings.tidy.join(rankings.mapping, on=_ITEM)
        .group_by(_RANKING)
        .agg(pl.col(_GROUP).n_unique())
        .filter(pl.col(_GROUP) < 2)
    )
    if one_group.height:
        msg = (
            f"ranking_df: {one_group.height} ranking(s) hold items of one group only (e.g. "
            f"column {ranking_df.columns[one_group.item(0, _RANKING)]!r}); ARP compares mixed "
            "pairs, so every ranking needs items of two groups or more"
        )
        raise InvalidValueError(msg)
    per_ranking = fair.arp(
        rankings.tidy,
        rank=_RANK,
        group=_GROUP,
        ranking=_RANKING,
        item=_ITEM,
        groups=rankings.mapping,
        by=_RANKING,
        combo=None,
    )
    summed = per_ranking.group_by(_GROUP).agg(
        pl.when(pl.col("arp").count() > 0).then(pl.col("arp").sum())
    )
    vals = np.full(len(rankings.labels), np.nan)
    vals[summed[_GROUP].to_numpy()] = summed["arp"].to_numpy()
    return _combined(vals, rankings.labels, combo)


def NDKL(ranking_df: pd.DataFrame, item_group_dict: Mapping[Any, Any]) -> np.float64:
    """NDKL (normalized discounted KL-divergence), as FairRankTune's NDKL.

    FairRankTune's smoothed variant: KL((P_i + ε) ‖ (D + ε)) with ε = 1e-7, D the group mix
    of the ranking itself; :func:`frameaudit.fair.ndkl` is exact.

    Parameters
    ----------
    ranking_df
        One column (one ranking).
    item_group_dict
        Item → group.

    Returns
    -------
    The NDKL value (0 is most fair).

    Notes
    -----
    O(n·G) time and memory (cumulative group counts of the n prefixes).

    Examples
    --------
    >>> import pandas as pd
    >>> from frameaudit.compat import fairranktune as Metrics
    >>> ranking_df = pd.DataFrame({"r1": ["a", "c", "b", "d"]})
    >>> round(float(Metrics.NDKL(ranking_df, {"a": 0, "b": 1, "c": 0, "d": 1})), 6)
    0.452368

    """
    if not isinstance(ranking_df, pd.DataFrame) or ranking_df.shape[1] != 1:
        found = ranking_df.shape[1] if isinstance(ranking_df, pd.DataFrame) else "no"
        msg = (
            f"ranking_df: NDKL is computed on a single ranking (one column), found {found} "
            "column(s); for one value per ranking use frameaudit.fair.ndkl(frame, ..., by=<the "
            "ranking column>) on tidy input"
        )
        raise InvalidParameterError(msg)
    rankings = _rankings(ranking_df, item_group_dict)
    if not rankings.tidy.height:
        raise InvalidValueError("ranking_df: the ranking holds no items")
    groups = rankings.mapping[_GROUP].to_numpy()[rankings.tidy[_ITEM].to_numpy()]
    present = np.unique(groups, return_inverse=True)[1]
    counts = np.cumsum(np.eye(present.max() + 1)[present], axis=0)
    size = np.arange(1.0, len(present) + 1.0)
    prefix = counts / size[:, None] + _EPSILON
    target = counts[-1] / len(present) + _EPSILON
    weights = 1.0 / np.log2(size + 1.0)
    divergence = (prefix * np.log(prefix / target)).sum(axis=1)
    return np.float64(weights @ divergence / weights.sum())


def IAA(ranking_df: pd.DataFrame, relevance_df: pd.DataFrame) -> np.float64:
    """Inequity of amortized attention, as FairRankTune's IAA; see :func:`frameaudit.fair.iaa`.

    Amortized over every ranking (FairRankTune reads only the first one): Σ over items of
    |Σ attention − Σ relevance|, attention 1/log2(k+1). Items are matched across rankings by id.

    Parameters
    ----------
    ranking_df
        One column per ranking, rows = positions top-first, values = item ids.
    relevance_df
        Relevance in [0, 1], laid out like ``ranking_df``.

    Returns
    -------
    The IAA value (0 is most fair).

    Examples
    --------
    >>> import pandas as pd
    >>> from frameaudit.compat import fairranktune as Metrics
    >>> ranking_df = pd.DataFrame({"r1": ["a", "b", "c"]})
    >>> relevance_df = pd.DataFrame({"r1": [1.0, 0.5, 0.5]})
    >>> round(float(Metrics.IAA(ranking_df, relevance_df)), 6)
    0.13093

    """
    ranking, rank, items = _long(ranking_df, "ranking_df")
    tidy = pl.DataFrame({_RANKING: ranking, _RANK: rank, _ITEM: pd.factorize(items)[0]})
    tidy = _with_values(tidy, {"relevance": ("relevance_df", relevance_df)})
    result = fair.iaa(tidy, rank=_RANK, relevance="relevance", ranking=_RANKING, item=_ITEM)
    return np.float64(result.item())
