"""The types an environment declares its report with: columns, statistics, item view, headline, spec.

An environment says what its report is in `report.py`, from these small types: the counts one
item adds (`Columns` over a NamedTuple), the statistics over their totals (`Columns.ratio`,
`f1`, `linear`, or any function of the totals), the headline its paper gives (`Lead`), and the
`ReportSpec` that holds them with its groups, classes and published figures. The report engine
(`medhal.reports`) reads a spec; no environment imports the engine. numpy is the only import
beyond the kit: a statistic is a vectorised function of column totals, evaluated on every
bootstrap resample at once (imported where a statistic is evaluated, so that declaring a
report, or importing a module that names these types, stays light).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from medhal.kit.published import Published

if TYPE_CHECKING:
    import numpy as np

Statistic = Callable[["np.ndarray"], "np.ndarray"]
"""Column totals (n, width) -> one value per row (n,)."""
BASE_COLUMNS = ("n", "correct", "parsed", "error")
"""Columns every report counts itself, for every item: 1, right, read, errored."""


def safe_ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den elementwise, 0.0 where den == 0 (the `safe_div` convention)."""
    import numpy as np

    num = np.asarray(num, dtype=float)
    den = np.asarray(den, dtype=float)
    out = np.zeros(np.broadcast(num, den).shape)
    np.divide(num, den, out=out, where=den != 0)
    return out


def ratio(num: int, den: int) -> Statistic:
    """Total of column `num` over total of column `den`: an accuracy or a rate."""
    return lambda totals: safe_ratio(totals[:, num], totals[:, den])


def f1_ratio(tp: int, predicted: int, gold: int) -> Statistic:
    """F1 = 2·TP / (predicted positives + gold positives), from three columns."""
    return lambda totals: safe_ratio(2 * totals[:, tp], totals[:, predicted] + totals[:, gold])


@dataclass(frozen=True)
class Lead:
    """What a benchmark's paper reports as its result."""

    statistic: str
    """The report statistic (`f1_paper`, `macro_accuracy`, `paper_score`)."""
    name: str
    """The paper's name for it, as a reader sees it first ("F1 of the hallucinated class")."""
    per: str | None = None
    """A group field when the paper gives the figure per group (Med-HALT: per test set);
    None: one figure for the whole run."""


ACCURACY = Lead("accuracy", "accuracy")
"""The headline of a benchmark that declares none."""


@dataclass(frozen=True)
class Ratio:
    """Total of column `num` over total of column `den` (an accuracy, a rate), a figure
    that does not apply where nothing is in its denominator: Med-HALT's IR accuracy of a
    run of reasoning sets is no figure at all, not 0 (`_figures` reports None)."""

    num: int
    den: int

    def __call__(self, totals: np.ndarray) -> np.ndarray:
        return safe_ratio(totals[:, self.num], totals[:, self.den])


class Columns:
    """The columns of a benchmark's per-item vector, and statistics over them by name: the
    `BASE_COLUMNS`, then the benchmark's own counts, named by the fields of `counts` (a
    NamedTuple class whose instances `ReportSpec.item_counts` returns)."""

    def __init__(self, counts: type[tuple[float, ...]] | None = None) -> None:
        own: tuple[str, ...] = getattr(counts, "_fields", ())
        if counts is not None and not own:
            raise ValueError(f"counts must be a NamedTuple class, got {counts!r}")
        clash = sorted(set(own) & set(BASE_COLUMNS))
        if clash:
            raise ValueError(f"{counts.__name__} repeats the base columns {clash}")  # type: ignore[union-attr]
        self.counts = counts
        self.names = (*BASE_COLUMNS, *own)
        self.index = {name: i for i, name in enumerate(self.names)}

    def __getitem__(self, name: str) -> int:
        return self.index[name]

    def ratio(self, num: str, den: str) -> Statistic:
        return Ratio(self[num], self[den])

    def f1(self, tp: str, predicted: str, gold: str) -> Statistic:
        return f1_ratio(self[tp], self[predicted], self[gold])

    def linear(self, weights: Mapping[str, float], den: str | float) -> Statistic:
        """(sum of weight * column) / den, where den is a column or a constant."""
        import numpy as np

        pairs = [(self[name], w) for name, w in weights.items()]

        def statistic(totals: np.ndarray) -> np.ndarray:
            num = np.zeros(len(totals))
            for i, w in pairs:
                num = num + w * totals[:, i]
            denominator = totals[:, self[den]] if isinstance(den, str) else np.full(len(totals), float(den))
            return safe_ratio(num, denominator)

        return statistic


@dataclass(frozen=True)
class ItemView:
    """One rollout under one reading convention, as a benchmark's `item_counts` sees it."""

    data: Mapping[str, Any]
    """The task's data (`task.data`)."""
    gold: str | None
    pred: str
    """The label read (a class, or a benchmark's own answer text), INVALID or ERROR."""
    correct: bool
    parsed: bool
    errored: bool
    metrics: Mapping[str, float]
    convention: str = "medhal"
    """The reading convention this view is under (a benchmark may record outcomes per
    convention, e.g. `<outcome>_<convention>`)."""


@dataclass(frozen=True)
class ReportSpec:
    benchmark: str
    """The environment id; every trace's `task.data.benchmark` must equal it."""
    title: str
    columns: Columns
    item_counts: Callable[[ItemView], tuple[float, ...]] | None = None
    """The benchmark's own counts of one item under one convention, an instance of
    `columns.counts` (None when the benchmark counts nothing beyond the `BASE_COLUMNS`)."""
    statistics: Mapping[str, Statistic] = field(default_factory=dict)
    """Figures reported, by name, as functions of column totals (accuracy, parse_rate and
    error_rate are always reported)."""
    headline: tuple[str, ...] = ("accuracy",)
    """Statistics shown for every convention, with intervals, in the table by reading
    convention."""
    lead: Lead = ACCURACY
    """The benchmark's headline as its paper reports it, shown first everywhere
    (`medhal.reports.headline`)."""
    group_fields: tuple[str, ...] = ()
    """TaskData fields to break results down by."""
    macro_field: str | None = None
    """The field whose groups the macro figures average over (unweighted)."""
    macro_groups: tuple[str, ...] = ()
    """Every value of `macro_field` in the complete benchmark, in display order."""
    macro_statistics: Mapping[str, Statistic] = field(
        default_factory=lambda: {"accuracy": ratio(BASE_COLUMNS.index("correct"), BASE_COLUMNS.index("n"))}
    )
    """Figures averaged over the macro groups, as functions of the totals of the
    `BASE_COLUMNS` (n, correct, parsed, error) of one group."""
    cluster_field: str | None = None
    """TaskData field naming the source an item shares with others (bootstrap clusters)."""
    provenance_field: str | None = None
    """TaskData field within which every trace must share one provenance (e.g. a test set
    loaded from its own file); None: one provenance for the whole run."""
    gold_field: str | None = None
    classes: tuple[str, ...] = ()
    """Gold classes: a confusion matrix and per-class precision/recall/F1 when given."""
    pred_only_classes: tuple[str, ...] = ()
    """Predicted labels that are never gold (an abstention): extra confusion columns."""
    full_size: int | None = None
    """Items of the complete benchmark: a run is paper-comparable only with all of them."""
    notes: tuple[str, ...] = ()
    published: tuple[Published, ...] = ()
    group_sizes: Mapping[str, int] = field(default_factory=dict)
    """Items of each complete macro group (a test set, a component): a run that covers one
    group completely is comparable with the figures published for that group."""
    figure_labels: Mapping[str, str] = field(default_factory=dict)
    """A reader's name for each of the benchmark's statistics ("F1, paper convention"),
    shown beside the code name in report.md and report.html (`figure_labels`)."""
    content_fields: tuple[str, ...] | None = None
    """The task-data fields the environment's TaskData subclass declares (beside
    BenchmarkData's, which every report digests: `BENCHMARK_FIELDS`): what says which item
    a task is, so that two runs are paired task by task only where these agree
    (`content_digest`). verifiers' own TaskData fields are never among them: they differ by
    verifiers line (0.2 writes `timeout` and `resources`, 0.4 `artifacts`, `skills`, ...), and
    the same item must pair with itself on every line. None: every field but `RUN_FIELDS`
    (for a benchmark that declares nothing)."""
    vote_key: Callable[[ItemView], str] | None = None
    """One rollout's answer as the benchmark's rule compares it: the rollouts of a task whose
    keys are equal gave the same answer, and a majority vote counts keys. A benchmark whose
    rule accepts several spellings of one answer (Med-HALT compares case- and space-blind
    texts, any phrasing of "I do not know") must give them one key, or one right answer
    spelt two ways splits its votes. None: the label read (`ItemView.pred`: a class,
    INVALID or ERROR), right for a benchmark whose readings are its classes."""
