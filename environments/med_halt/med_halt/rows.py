"""One dataset row of a Med-HALT set -> what the model sees and what counts as right.

Rows arrive from the Hub (typed columns: PMID as an int, empty cells as None), from the
authors' CSVs (every cell a string, empty cells ""), or from JSON dumps that stringified
values ("None", "2015.0"). A column the set reads as text (question, options, answers,
titles, links) keeps the literal text "None": an exam option can be called "None", and it
is data. Only optional metadata columns (`metadata_cell`) read "None"/"nan" as missing,
as the dumps wrote them. Only the columns a set
needs are required, so column subsets of the official files load too: an IR row needs
`id`, the column the question is built from and the gold column.

Gold answers. Reasoning sets carry `correct_answer`; the fake set's right answer is to
decline. An IR row's gold is the requested field (`Title` or `url`); for a fake paper it
is "Unknown". Column-subset copies of the *2title sets overwrite `Title` of fake rows with
a real source title and keep the official gold in `original_title`, so `original_title`
is the gold whenever it is present.

Clusters (`source_question`). Every row has its own uuid in `id`: no id is shared between
sets (on the IR sets, whose 4,916 PMIDs are the same papers in all four sets, the ids are
disjoint). FCT and NOTA are built from the same exam questions, keep the question text and
rewrite only the options, so the normalised question text links an FCT item to its NOTA
twin (and duplicates within a set). Fake questions are newly written and carry no link to
a source question, so each is its own cluster. IR items link through the PMID of the
source paper; a row without a PMID column takes it from its gold link, and a fake paper
with neither is its own cluster.
"""

from __future__ import annotations

import ast
import hashlib
import math
import re
import unicodedata
from typing import Any

from med_halt.benchmark import (
    ABSTRACT2LINK,
    FAKE,
    FCT,
    LINK2TITLE,
    PMID2TITLE,
    SETS,
    TITLE2LINK,
    TITLE_SETS,
    SetSpec,
)
from medhal.kit.datasets import DatasetError

UNKNOWN = "Unknown"
"""The gold answer of an IR question about a paper that does not exist."""
DECLINE_GOLD = "I do not know"
"""The gold recorded for a fake question (the set has no answer column); any declining
answer counts (see scoring)."""
SPLIT_TYPES = ("train", "val", "test", "dev")
PROPOSED_KEY = "correct answer"
"""Key of the proposed (student) answer inside an FCT row's options."""

_IR_INPUT = {
    PMID2TITLE.config: ("PMID", "Pmid"),
    LINK2TITLE.config: ("url", "url"),
    TITLE2LINK.config: ("Title", "paper_title"),
    ABSTRACT2LINK.config: ("Abstract", "paper_abstract"),
}
"""IR set -> (dataset column the question is built from, key of the model's input dict)."""

_PUBMED_URL = re.compile(
    r"^\s*(?:https?://)?(?:www\.)?(?:pubmed\.ncbi\.nlm\.nih\.gov/|ncbi\.nlm\.nih\.gov/pubmed/)(\d+)/?\s*$",
    re.IGNORECASE,
)


RowItem = tuple[dict[str, Any], dict[str, Any]]
"""(model input, task fields): the dict shown to the model after `Input: ` (rendered with
Python's str, as upstream), and the values of the `MedHaltData` fields the row fixes
(`source_id`, `gold`, `source_question`, and the set's own: `split_type`,
`source_dataset`, `choices`, `proposed_answer`, `verdict_gold`, `decline_options`,
`paper_exists`)."""


def cell(value: Any) -> str:
    """A text cell; only a true null (None, NaN) is missing and becomes ""."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value)


def metadata_cell(value: Any) -> str:
    """An optional metadata cell (source collection, paper kind, existence flag, PMID):
    also "None"/"nan" as written by dumps that stringified missing values are missing."""
    text = cell(value)
    return "" if text.strip() in ("None", "nan", "NaN") else text


def normalize_text(text: str) -> str:
    """Case-, punctuation- and whitespace-insensitive form of a text."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(re.sub(r"[\W_]+", " ", text).split())


_AROUND = " *_`'\"\u201c\u201d\u2018\u2019"
_FINAL = _AROUND + ".,;:!?\u3002\u3001"
"""What `option_key` strips: marks around a text, and final punctuation after it (NFKC makes
full-width punctuation ASCII; the ideographic full stop and comma are listed)."""


def option_key(text: Any) -> str:
    """Med-HALT's one equality rule for an answer and an option (or a gold) text, in a
    dict or in prose alike: Unicode compatibility forms (NFKC), letter case, runs of
    spaces, surrounding quotes and Markdown marks, and final sentence punctuation (. , ; :
    ! ?) do not count; every other character does ("Rh+" and "Rh-" stay two options,
    "Mitral stenosis." and "mitral  stenosis" are one)."""
    folded = " ".join(unicodedata.normalize("NFKC", str(text)).casefold().split())
    return folded.lstrip(_AROUND).rstrip(_FINAL)


def same_option(answer: Any, option: Any) -> bool:
    """Whether an answer names an option (or a gold text) under `option_key`."""
    return option_key(answer) == option_key(option)


def pubmed_id(value: Any) -> str | None:
    """The PMID in a PubMed link (either URL form), else None."""
    match = _PUBMED_URL.match(str(value))
    return match.group(1) if match else None


def _required(row: dict, column: str, where: str) -> str:
    if column not in row:
        raise DatasetError(f"{where}: column {column!r} is missing")
    value = cell(row[column])
    if not value.strip():
        raise DatasetError(f"{where}: field {column!r} is empty")
    return value


def _pmid(row: dict, where: str) -> str:
    text = _required(row, "PMID", where).strip()
    match = re.fullmatch(r"(\d+)(?:\.0+)?", text)
    if not match:
        raise DatasetError(f"{where}: field 'PMID' is {text!r}, not a PubMed id")
    return match.group(1)


def parse_options(text: str, where: str) -> dict[str, Any]:
    """An `options` cell: a Python dict literal, read with `ast.literal_eval` (never eval)."""
    try:
        options = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError) as e:
        raise DatasetError(
            f"{where}: field 'options' is not a Python dict literal ({type(e).__name__})"
        ) from e
    if not isinstance(options, dict) or not options:
        raise DatasetError(f"{where}: field 'options' is not a non-empty dict")
    if not all(isinstance(k, str) for k in options):
        raise DatasetError(f"{where}: field 'options' has a non-string key")
    return options


def choices(options: dict[str, Any]) -> dict[str, str]:
    """The options a model chooses from, by their index ('0', '1', ...), as text: an FCT
    row's `correct answer` entry (the proposed answer) is not one of them."""
    return {key.strip(): cell(value) for key, value in options.items() if key.strip().isdecimal()}


def same_text(a: Any, b: str) -> bool:
    """The IR `exact` rule's comparison of an answer with a gold text: case and surrounding
    blanks ignored, as upstream compares (an exam option is compared by `same_option`)."""
    return str(a).strip().lower() == b.strip().lower()


def question_cluster(question: str) -> str:
    return "question:" + hashlib.sha1(normalize_text(question).encode()).hexdigest()[:16]


def is_decline_text(text: str) -> bool:
    """Whether a text says that the answer is not known ("I do not know", "I don't know")."""
    return re.search(r"\b(?:do not|don t|dont) know\b", normalize_text(text)) is not None


def reasoning_item(spec: SetSpec, row: dict, where: str) -> RowItem:
    source_id = _required(row, "id", where)
    question = _required(row, "question", where)
    options = parse_options(_required(row, "options", where), where)
    split_type = _required(row, "split_type", where).strip()
    if split_type not in SPLIT_TYPES:
        raise DatasetError(f"{where}: field 'split_type' is {split_type!r}, not one of {SPLIT_TYPES}")
    model_input = {"Question": question, "Options": options}
    common = {
        "source_id": source_id,
        "split_type": split_type,
        "source_dataset": metadata_cell(row.get("dataset")),
        "choices": choices(options),
    }
    if spec is FAKE:
        declines = tuple(str(v) for v in options.values() if is_decline_text(str(v)))
        fake = {"gold": DECLINE_GOLD, "source_question": f"fake:{source_id}", "decline_options": declines}
        return model_input, {**common, **fake}
    # An exam question's options must all have text, and the gold must be one of them (as the
    # scoring compares): otherwise the item can never be answered right. The fake set's
    # options are not checked: its right answer is to decline, and the official file has
    # empty options (reasoning_fake.csv row 502).
    for key, text in options.items():
        if key != PROPOSED_KEY and (text is None or not str(text).strip()):
            raise DatasetError(f"{where}: field 'options' entry {key!r} is empty (no option text)")
    gold = _required(row, "correct_answer", where)
    proposed = options.get(PROPOSED_KEY)
    if spec is FCT and (proposed is None or not str(proposed).strip()):
        raise DatasetError(f"{where}: field 'options' has no {PROPOSED_KEY!r} entry (the proposed answer)")
    if not any(same_option(text, gold) for text in options.values() if text is not None):
        raise DatasetError(
            f"{where}: field 'correct_answer' {gold[:80]!r} is not the text of any option "
            "(the item could never be answered right)"
        )
    if spec is not FCT:
        return model_input, {**common, "gold": gold, "source_question": question_cluster(question)}
    verdict = "yes" if same_option(proposed, gold) else "no"
    return model_input, {
        **common,
        "gold": gold,
        "source_question": question_cluster(question),
        "proposed_answer": str(proposed),
        "verdict_gold": verdict,
    }


def _paper_exists(row: dict, gold: str, where: str) -> bool:
    kind = metadata_cell(row.get("pubmed_data_type")).strip()
    if kind:
        if kind not in ("real_data", "fake_data"):
            raise DatasetError(f"{where}: field 'pubmed_data_type' is {kind!r}, not real_data or fake_data")
        exists = kind == "real_data"
    else:
        flag = metadata_cell(row.get("is_paper_exists")).strip().lower()
        exists = flag == "yes" if flag else gold.strip().lower() != UNKNOWN.lower()
    if not exists and gold.strip().lower() != UNKNOWN.lower():
        raise DatasetError(
            f"{where}: a fake paper whose gold is {gold[:80]!r}, not {UNKNOWN!r} (a column-subset "
            "file that overwrote the gold? its official gold column must be present)"
        )
    return exists


def ir_item(spec: SetSpec, row: dict, where: str) -> RowItem:
    source_id = _required(row, "id", where)
    column, input_key = _IR_INPUT[spec.config]
    value = _pmid(row, where) if column == "PMID" else _required(row, column, where)
    if spec.config in TITLE_SETS:
        gold_column = "original_title" if "original_title" in row else "Title"
    else:
        gold_column = "url"
    gold = _required(row, gold_column, where).strip()
    exists = _paper_exists(row, gold, where)
    if "PMID" in row and metadata_cell(row["PMID"]).strip():
        pmid = _pmid(row, where)
    else:
        pmid = pubmed_id(gold) or pubmed_id(metadata_cell(row.get("url")))
    cluster = f"pmid:{pmid}" if pmid else f"row:{spec.config}:{source_id}"
    fields = {"source_id": source_id, "gold": gold, "source_question": cluster, "paper_exists": exists}
    return {input_key: value}, fields


def to_item(spec: SetSpec, row: dict, where: str) -> RowItem:
    if spec.config in _IR_INPUT:
        return ir_item(spec, row, where)
    return reasoning_item(spec, row, where)


def item_text(model_input: dict[str, Any], fields: dict[str, Any]) -> tuple[str, str]:
    """The question and answer text of an item (what its evaluation fingerprint is made
    of, `medhal.kit.roles`): the exam question or the paper field asked about, and the gold."""
    question = model_input.get("Question", next(iter(model_input.values())))
    return str(question), str(fields["gold"])


def evaluation_items(set_name: str, rows: list[dict], origin: str) -> list[tuple[str, str]]:
    """The items of a set's rows on its evaluation side (every row; FCT's test rows), each
    row checked as loading checks it."""
    spec = SETS[set_name]
    items = []
    for number, row in enumerate(rows, start=1):
        model_input, fields = to_item(spec, row, f"{origin}: row {number}")
        if spec is FCT and fields["split_type"] != "test":
            continue
        items.append(item_text(model_input, fields))
    return items
