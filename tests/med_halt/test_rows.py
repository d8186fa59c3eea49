"""One Med-HALT row -> (model input, task fields) (`med_halt.rows`), on rows written here
in every set's schema: golds, clusters, the cells' shapes (CSV text, Hub types, dumps
that stringified missing values), and bad rows refused with row and field named.

The literal text "None" in a text column is data (an exam option can be called "None");
only a truly missing cell (null, NaN, empty) is refused, and only optional metadata
columns read "None"/"nan" as missing (issue 9 item 3)."""

from __future__ import annotations

import math

import pytest

from med_halt.benchmark import SETS
from med_halt.rows import (
    DECLINE_GOLD,
    cell,
    is_decline_text,
    metadata_cell,
    normalize_text,
    parse_options,
    pubmed_id,
    question_cluster,
    to_item,
)
from medhal.kit.datasets import DatasetError

OPTIONS = "{'0': 'Liver', '1': 'Pancreas', '2': 'Spleen', '3': 'None of the above'}"
WHERE = "nota.csv: row 4"


def nota_row(**extra) -> dict:
    return {
        "id": "ours-1",
        "dataset": "medmcqa",
        "question": "Which organ makes insulin?",
        "options": OPTIONS,
        "correct_answer": "Pancreas",
        "correct_index": 1,
        "split_type": "test",
        "subject_name": "",
        "topic_name": "",
        "year": "",
        "exam_name": "",
        **extra,
    }


def fct_row(**extra) -> dict:
    fields = {
        "options": "{'0': 'Liver', '1': 'Pancreas', 'correct answer': 'Liver'}",
        "student_answer": "Liver",
        "student_index": 0,
    }
    return nota_row(**{**fields, **extra})


def fake_row(**extra) -> dict:
    return {
        "id": "k-1",
        "subject_name": "",
        "topic_name": "",
        "split_type": "train",
        "dataset": "medmcqa",
        "len": 5,
        "year": "",
        "exam_name": "",
        "question": "Which moon dust cures glass-bone fever?",
        "options": "{'0': 'Grey dust', '1': 'I do not know', '2': \"Conceding defeat, I don't know\"}",
        **extra,
    }


def ir_row(**extra) -> dict:
    return {
        "id": "p-1",
        "PMID": "31231025",
        "Title": "A trial of hand-hygiene reminders",
        "url": "https://ncbi.nlm.nih.gov/pubmed/31231025",
        "Abstract": "We put reminders by the basins.",
        "pubmed_data_type": "real_data",
        "is_paper_exists": "Yes",
        **extra,
    }


def item(name: str, row: dict):
    return to_item(SETS[name], row, WHERE)


# ------------------------------------------------------------------------ reasoning sets


def test_nota_row():
    model_input, fields = item("reasoning_nota", nota_row())
    assert model_input == {
        "Question": "Which organ makes insulin?",
        "Options": {"0": "Liver", "1": "Pancreas", "2": "Spleen", "3": "None of the above"},
    }
    assert fields == {
        "source_id": "ours-1",
        "split_type": "test",
        "source_dataset": "medmcqa",
        "choices": {"0": "Liver", "1": "Pancreas", "2": "Spleen", "3": "None of the above"},
        "gold": "Pancreas",
        "source_question": question_cluster("Which organ makes insulin?"),
    }
    assert (
        fields["source_question"].startswith("question:")
        and len(fields["source_question"]) == len("question:") + 16
    )


def test_fct_row_records_the_proposed_answer_and_the_verdict_gold():
    model_input, fields = item("reasoning_FCT", fct_row())
    assert model_input["Options"]["correct answer"] == "Liver"
    assert "correct answer" not in fields["choices"]  # the proposed answer is no option to choose
    assert (fields["gold"], fields["proposed_answer"], fields["verdict_gold"]) == ("Pancreas", "Liver", "no")
    _, right = item("reasoning_FCT", fct_row(options="{'0': 'Liver', 'correct answer': ' pancreas '}"))
    assert right["verdict_gold"] == "yes"  # case and outer spaces ignored


def test_fake_row_declines_and_is_its_own_cluster():
    model_input, fields = item("reasoning_fake", fake_row())
    assert fields["gold"] == "I do not know" and fields["source_question"] == "fake:k-1"
    assert fields["decline_options"] == ("I do not know", "Conceding defeat, I don't know")
    assert "correct_answer" not in fields and model_input["Options"]["0"] == "Grey dust"


def test_fct_and_nota_of_one_question_share_a_cluster():
    """The cluster is the normalised question text: case, spacing and punctuation aside."""
    _, fct = item("reasoning_FCT", fct_row(question="Which organ makes insulin?"))
    _, nota = item("reasoning_nota", nota_row(question="which organ  makes INSULIN"))
    assert fct["source_question"] == nota["source_question"]
    _, other = item("reasoning_nota", nota_row(question="Which organ makes glucagon?"))
    assert other["source_question"] != nota["source_question"]


def test_hub_typed_cells_read_as_csv_text_does():
    """The Hub gives ints and None where the CSV gives text and "": same item."""
    _, from_csv = item("reasoning_nota", nota_row(correct_index="1", dataset=""))
    _, from_hub = item("reasoning_nota", nota_row(correct_index=1, dataset=None))
    assert from_csv == from_hub and from_hub["source_dataset"] == ""


# -------------------------------------------------------------- "None" is data, null is not


def test_the_text_none_in_a_gold_cell_is_data():
    model_input, fields = item(
        "reasoning_nota", nota_row(options="{'0': 'None', '1': 'Both'}", correct_answer="None")
    )
    assert fields["gold"] == "None" and model_input["Options"]["0"] == "None"
    _, fct = item(
        "reasoning_FCT", fct_row(options="{'0': 'None', 'correct answer': 'None'}", correct_answer="None")
    )
    assert (fct["gold"], fct["proposed_answer"], fct["verdict_gold"]) == ("None", "None", "yes")


@pytest.mark.parametrize("missing", [None, float("nan"), "", "   "])
def test_a_truly_missing_gold_is_refused_naming_row_and_field(missing):
    with pytest.raises(DatasetError, match=r"^nota\.csv: row 4: field 'correct_answer' is empty$"):
        item("reasoning_nota", nota_row(correct_answer=missing))


def test_a_missing_gold_column_is_refused():
    row = nota_row()
    del row["correct_answer"]
    with pytest.raises(DatasetError, match=r"^nota\.csv: row 4: column 'correct_answer' is missing$"):
        item("reasoning_nota", row)


def test_cell_keeps_the_text_none_and_metadata_cell_does_not():
    assert (
        cell("None") == "None" and cell(None) == "" and cell(float("nan")) == "" and cell(2015.0) == "2015.0"
    )
    for missing in ("None", "nan", "NaN", " None ", None, float("nan"), ""):
        assert metadata_cell(missing) == ""
    assert metadata_cell("real_data") == "real_data"


def test_stringified_missing_metadata_is_missing():
    """Dumps wrote missing metadata as "None"/"nan": the source collection is then empty,
    and a paper's existence comes from its gold."""
    _, fields = item("reasoning_nota", nota_row(dataset="None"))
    assert fields["source_dataset"] == ""
    _, real = item("IR_pmid2title", ir_row(pubmed_data_type="None", is_paper_exists="nan"))
    assert real["paper_exists"] is True
    _, fake = item("IR_pmid2title", ir_row(Title="Unknown", pubmed_data_type="nan", is_paper_exists="None"))
    assert fake["paper_exists"] is False and fake["gold"] == "Unknown"


# -------------------------------------------------------------------------- bad reasoning rows


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"question": ""}, "field 'question' is empty"),
        ({"id": None}, "field 'id' is empty"),
        ({"options": "['Liver', 'Pancreas']"}, "field 'options' is not a non-empty dict"),
        ({"options": "{}"}, "field 'options' is not a non-empty dict"),
        (
            {"options": "{'0': 'Liver', '1': __import__('os')}"},
            r"field 'options' is not a Python dict literal \(ValueError\)",
        ),
        ({"options": "{'0': 'a'"}, r"field 'options' is not a Python dict literal \(SyntaxError\)"),
        ({"options": "{0: 'Liver'}"}, "field 'options' has a non-string key"),
        (
            {"correct_answer": "Kidney"},
            r"field 'correct_answer' 'Kidney' is not the text of any option \(the item could never",
        ),
        ({"options": "{'0': 'Liver', '1': 'Pancreas', '2': ''}"}, "field 'options' entry '2' is empty"),
        ({"options": "{'0': 'Liver', '1': 'Pancreas', '2': '  '}"}, "field 'options' entry '2' is empty"),
        ({"options": "{'0': None, '1': 'Pancreas'}"}, "field 'options' entry '0' is empty"),
        (
            {"split_type": "holdout"},
            r"field 'split_type' is 'holdout', not one of \('train', 'val', 'test', 'dev'\)",
        ),
    ],
)
def test_bad_reasoning_rows_name_row_and_field(change, message):
    with pytest.raises(DatasetError, match=f"^nota\\.csv: row 4: {message}"):
        item("reasoning_nota", nota_row(**change))


@pytest.mark.parametrize(
    "options",
    [
        "{'0': 'Liver', '1': 'Pancreas'}",
        "{'0': 'Liver', 'correct answer': '  '}",
        "{'0': 'Liver', 'correct answer': None}",
    ],
)
def test_fct_row_without_a_proposed_answer_is_refused(options):
    with pytest.raises(
        DatasetError, match=r"^nota\.csv: row 4: field 'options' has no 'correct answer' entry"
    ):
        item("reasoning_FCT", fct_row(options=options))


def test_options_are_read_without_running_code():
    assert parse_options("{'a': 1, 'b': [2, 3]}", WHERE) == {"a": 1, "b": [2, 3]}
    with pytest.raises(DatasetError, match="not a Python dict literal"):
        parse_options("{'a': (lambda: 1)()}", WHERE)


# ------------------------------------------------------------------------------ IR sets


@pytest.mark.parametrize(
    ("name", "model_input", "gold"),
    [
        ("IR_pmid2title", {"Pmid": "31231025"}, "A trial of hand-hygiene reminders"),
        (
            "IR_pubmedlink2title",
            {"url": "https://ncbi.nlm.nih.gov/pubmed/31231025"},
            "A trial of hand-hygiene reminders",
        ),
        (
            "IR_title2pubmedlink",
            {"paper_title": "A trial of hand-hygiene reminders"},
            "https://ncbi.nlm.nih.gov/pubmed/31231025",
        ),
        (
            "IR_abstract2pubmedlink",
            {"paper_abstract": "We put reminders by the basins."},
            "https://ncbi.nlm.nih.gov/pubmed/31231025",
        ),
    ],
)
def test_ir_rows(name, model_input, gold):
    got_input, fields = item(name, ir_row())
    assert got_input == model_input
    assert fields == {
        "source_id": "p-1",
        "gold": gold,
        "source_question": "pmid:31231025",
        "paper_exists": True,
    }


def test_original_title_is_the_gold_of_title_sets_when_present():
    """Column-subset copies overwrote a fake paper's Title and kept the gold in original_title."""
    row = ir_row(
        Title="A real source title",
        original_title="Unknown",
        pubmed_data_type="fake_data",
        is_paper_exists="No",
    )
    _, fields = item("IR_pubmedlink2title", row)
    assert (fields["gold"], fields["paper_exists"]) == ("Unknown", False)


def test_ir_fake_paper_with_overwritten_gold_is_refused():
    row = ir_row(Title="A real source title", pubmed_data_type="fake_data")
    with pytest.raises(
        DatasetError,
        match=r"^nota\.csv: row 4: a fake paper whose gold is 'A real source title', not 'Unknown'",
    ):
        item("IR_pmid2title", row)


def test_ir_paper_existence_from_the_flag_or_the_gold():
    _, by_flag = item("IR_title2pubmedlink", ir_row(pubmed_data_type="", is_paper_exists="No", url="Unknown"))
    assert by_flag["paper_exists"] is False
    _, by_gold = item("IR_title2pubmedlink", ir_row(pubmed_data_type="", is_paper_exists="", url="unknown"))
    assert by_gold["paper_exists"] is False
    with pytest.raises(DatasetError, match="field 'pubmed_data_type' is 'maybe', not real_data or fake_data"):
        item("IR_title2pubmedlink", ir_row(pubmed_data_type="maybe"))


def test_ir_cluster_from_the_gold_link_without_a_pmid_and_own_cluster_for_a_fake_paper():
    row = ir_row()
    del row["PMID"]
    _, from_link = item("IR_title2pubmedlink", row)
    assert from_link["source_question"] == "pmid:31231025"
    _, stringified = item("IR_title2pubmedlink", ir_row(PMID="None"))
    assert stringified["source_question"] == "pmid:31231025"
    fake = ir_row(url="Unknown", pubmed_data_type="fake_data", is_paper_exists="No")
    del fake["PMID"]
    assert item("IR_title2pubmedlink", fake)[1]["source_question"] == "row:IR_title2pubmedlink:p-1"


@pytest.mark.parametrize("pmid", ["35020963", "35020963.0", 35020963, 35020963.0, " 35020963 "])
def test_pmid_cells_in_every_shape(pmid):
    model_input, fields = item("IR_pmid2title", ir_row(PMID=pmid))
    assert model_input == {"Pmid": "35020963"} and fields["source_question"] == "pmid:35020963"


@pytest.mark.parametrize(
    ("pmid", "message"),
    [
        ("3502e963", "field 'PMID' is '3502e963', not a PubMed id"),
        ("PMC123", "field 'PMID' is 'PMC123'"),
        ("", "field 'PMID' is empty"),
    ],
)
def test_bad_pmid_is_refused(pmid, message):
    with pytest.raises(DatasetError, match=f"^nota\\.csv: row 4: {message}"):
        item("IR_pmid2title", ir_row(PMID=pmid))


@pytest.mark.parametrize("name", ["IR_pmid2title", "IR_title2pubmedlink"])
def test_ir_subset_without_the_needed_column_is_refused(name):
    row = ir_row()
    del row["PMID" if name == "IR_pmid2title" else "Title"]
    with pytest.raises(
        DatasetError,
        match=f"^nota\\.csv: row 4: column '{'PMID' if name == 'IR_pmid2title' else 'Title'}' is missing$",
    ):
        item(name, row)


# ------------------------------------------------------------------------------ helpers


@pytest.mark.parametrize(
    "form",
    [
        "https://pubmed.ncbi.nlm.nih.gov/{}",
        "https://pubmed.ncbi.nlm.nih.gov/{}/",
        "pubmed.ncbi.nlm.nih.gov/{}",
        "https://www.ncbi.nlm.nih.gov/pubmed/{}",
        "http://ncbi.nlm.nih.gov/pubmed/{}",
        " HTTPS://NCBI.NLM.NIH.GOV/PUBMED/{} ",
    ],
)
def test_pubmed_link_forms(form):
    assert pubmed_id(form.format(31231025)) == "31231025"


@pytest.mark.parametrize(
    "text",
    [
        "Unknown",
        "https://pubmed.ncbi.nlm.nih.gov/",
        "https://example.org/pubmed/1",
        "31231025",
        None,
        math.pi,
    ],
)
def test_not_a_pubmed_link(text):
    assert pubmed_id(text) is None


def test_normalize_text_and_decline_text():
    assert normalize_text("  Hand-Hygiene:  a STUDY. ") == "hand hygiene a study"
    assert normalize_text("\uff21\uff22") == "ab"  # NFKC: full-width letters
    for text in ("I do not know", "i don't know.", "I dont know the answer", "E. I DO NOT KNOW"):
        assert is_decline_text(text), text
    for text in ("I know", "do not knowingly", "unknown"):
        assert not is_decline_text(text), text


def test_a_gold_is_found_among_the_options_as_the_scoring_compares():
    _, fields = item("reasoning_nota", nota_row(correct_answer="  pancreas "))
    assert fields["gold"] == "  pancreas "


def test_an_fct_gold_found_in_no_option_is_refused():
    row = fct_row(options="{'0': 'Liver', '1': 'Spleen', 'correct answer': 'Liver'}")
    with pytest.raises(DatasetError, match=r"^nota\.csv: row 4: field 'correct_answer' 'Pancreas' is not"):
        item("reasoning_FCT", row)


def test_a_fake_question_may_have_an_empty_option():
    """The official fake set has them (reasoning_fake.csv row 502); declining stays right."""
    _, fields = item("reasoning_fake", fake_row(options="{'0': 'A', '1': '', '2': 'I do not know'}"))
    assert fields["gold"] == DECLINE_GOLD
