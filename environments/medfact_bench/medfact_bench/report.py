"""How a MedFact-Bench run is reported (the shared machinery does the rest)."""

from medhal.report import ReportSpec

from medfact_bench.scoring import LABELS
from medfact_bench.taskset import ENV_ID, FULL_SIZE

REPORT = ReportSpec(
    benchmark=ENV_ID,
    title="MedFact-Bench (zero-shot claim verification)",
    task_type="MedFactTask",
    gold_field="label",
    pred_key="pred_label",
    classes=LABELS,
    correct_metric="accuracy",
    parsed_metric="parseable_score",
    rate_metrics=("strict_format",),
    group_fields=("dataset",),
    full_size=FULL_SIZE,
    notes=(
        "macro_accuracy is the unweighted mean of the component accuracies (the paper's primary "
        "metric); it is paper-comparable only when all 14,274 items are present.",
        "INVALID = no integer -2..2 in the first <score> block; ERROR = the rollout failed. Both count as wrong.",
    ),
)
