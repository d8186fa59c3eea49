"""How a Card-Check run is reported: accuracy, the yes/no figures and the confusion matrix,
under every reading convention. Light: imports no verifiers."""

from __future__ import annotations

from card_check.benchmark import ENV_ID, FULL_SIZE, PUBLISHED
from card_check.replies import LABELS
from medhal.kit.report_spec import Columns, ReportSpec

REPORT = ReportSpec(
    benchmark=ENV_ID,
    content_fields=("card", "statement", "label", "invalid_reward"),
    title="Card-Check (a benchmark made up for medhal's tests)",
    columns=Columns(),
    headline=("accuracy", "parse_rate"),
    gold_field="label",
    classes=LABELS,
    full_size=FULL_SIZE,
    published=PUBLISHED,
    notes=(
        "The six cards are ours and describe drugs that do not exist: a score says nothing about a model.",
    ),
)
