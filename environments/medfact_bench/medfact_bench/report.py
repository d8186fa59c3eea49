"""How a MedFact-Bench run is reported: accuracy, macro over the five components (the
paper's primary metric), per-class figures and the confusion matrix, under every reading
convention. Light: imports no verifiers."""

from __future__ import annotations

from medfact_bench.benchmark import COMPONENTS, ENV_ID, FULL_SIZE, PUBLISHED
from medfact_bench.replies import LABELS
from medhal.kit.report_spec import Columns, Lead, ReportSpec

REPORT = ReportSpec(
    benchmark=ENV_ID,
    # What says which item a task is: the fields MedFactData declares (taskset.py; the test of
    # content digests, tests/medhal/test_compare_identity.py, keeps the two alike).
    content_fields=("dataset", "claim", "label", "invalid_reward"),
    title="MedFact-Bench (zero-shot claim verification)",
    columns=Columns(),
    lead=Lead("macro_accuracy", "macro accuracy over the components"),
    headline=("accuracy", "parse_rate"),
    group_fields=("dataset",),
    macro_field="dataset",
    macro_groups=tuple(COMPONENTS),
    gold_field="label",
    classes=LABELS,
    full_size=FULL_SIZE,
    published=PUBLISHED,
    group_sizes=COMPONENTS,
    notes=(
        (
            "macro_accuracy is the unweighted mean of the component accuracies (the paper's primary "
            "metric); it is paper-comparable only when all 14,274 items are present, once each."
        ),
        (
            "INVALID = no score could be read under the run's convention; ERROR = the rollout failed. "
            "Both count as wrong. The strict convention's parse rate is the share of replies in "
            "exactly the format the prompt asks for."
        ),
    ),
)
