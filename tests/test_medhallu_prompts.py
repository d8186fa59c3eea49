"""Reading the prompt out of the authors' script, the binary variant, and the messages built.

The authors' script is not available offline: extraction is tested on scripts of the same
shape that we write (our own text, or the authors' strings from the shared JSON copy,
written at test time only)."""

from __future__ import annotations

import difflib
import json

import pytest

from medhal.assets import AssetError
from medhallu.prompts import extract_prompts, remove_not_sure, render_knowledge, user_message
from medhallu.taskset import PROMPT_ASSET, load_prompts
pytest_plugins = ["tests.medhallu_fixtures"]
# This module also imports helpers from the fixtures plugin; register it for assertion
# rewriting first, as pytest would when loading it as a plugin.
pytest.register_assert_rewrite("tests.medhallu_fixtures")
from tests.medhallu_fixtures import INVENTED, install_prompt_asset, official_strings, prompt_script  # noqa: E402


def test_extracts_our_invented_script_without_running_it():
    prompts = extract_prompts(prompt_script(INVENTED), "invented.py")  # the script would SystemExit if run
    assert prompts.system == INVENTED["system_prompt"]
    assert prompts.no_knowledge.format_string() == INVENTED["create_prompt"]
    assert prompts.with_knowledge.format_string() == INVENTED["create_prompt_withknowledge"]
    assert prompts.no_knowledge.render(question="Q?", option1="A.") == INVENTED["create_prompt"].format(question="Q?", option1="A.")


def test_extracts_the_official_strings(shared_data):
    strings = official_strings(shared_data)
    prompts = extract_prompts(prompt_script(strings), "official-shape.py")
    assert prompts.system == strings["system_prompt"]
    assert prompts.no_knowledge.format_string() == strings["create_prompt"]
    assert prompts.with_knowledge.format_string() == strings["create_prompt_withknowledge"]


def test_literal_braces_survive_extraction():
    strings = {**INVENTED, "create_prompt": "Q: {question} {{not a field}}\nA: {option1} and `2` if unsure.\nPick `2` when lost.\n"}
    prompts = extract_prompts(prompt_script(strings), "braces.py")
    assert prompts.no_knowledge.render(question="q", option1="a").startswith("Q: q {not a field}\nA: a")
    assert prompts.no_knowledge.format_string() == strings["create_prompt"]


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("def broken(:\n", "broken.py:1: not parseable Python"),
        ("x = 1\n", "expected one module-level string constant 'system_prompt'"),
        ('system_prompt = "s"\ndef create_prompt(question, option1):\n    prompt = f"{question}"\n    return prompt\n',
         "create_prompt_withknowledge not found"),
        (prompt_script(INVENTED).replace("def create_prompt(question, option1)", "def create_prompt(question, answer)"),
         "create_prompt takes ['question', 'answer'], expected ['question', 'option1']"),
        (prompt_script(INVENTED).replace("{option1}", "{option1.upper()}", 1), "a field other than a plain {name}"),
        (prompt_script(INVENTED).replace("{question}", "{knowledge}", 1), "of one of ['question', 'option1']: '{knowledge}'"),
        (prompt_script(INVENTED).replace("{option1}", "{option1!r}", 1), "a field other than a plain {name}"),
        (prompt_script(INVENTED).replace('prompt = f"""', 'prompt = """', 1), "something other than an f-string"),
    ],
)
def test_extraction_errors_name_file_and_line(source, message):
    with pytest.raises(AssetError) as info:
        extract_prompts(source, "broken.py")
    assert message in str(info.value)
    assert str(info.value).startswith("broken.py")


def test_field_error_names_its_line():
    source = prompt_script(INVENTED).replace("{option1}", "{option1.upper()}", 1)
    line = next(i for i, text in enumerate(source.split("\n"), start=1) if "def create_prompt(" in text) + 1
    with pytest.raises(AssetError, match=rf"^broken.py:{line}: "):
        extract_prompts(source, "broken.py")


def _only_deletions(before: str, after: str) -> bool:
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    return all(op[0] in ("equal", "delete") for op in matcher.get_opcodes())


def _cut(text: str, start: int, end: int) -> tuple[str, str]:
    return text[:start] + text[end:], text[start:end]


def test_binary_variant_removes_exactly_the_not_sure_sentences(shared_data):
    official = extract_prompts(prompt_script(official_strings(shared_data)), "official-shape.py")
    binary = remove_not_sure(official)
    pairs = [
        (official.system, binary.system),
        (official.no_knowledge.format_string(), binary.no_knowledge.format_string()),
        (official.with_knowledge.format_string(), binary.with_knowledge.format_string()),
    ]
    for before, after in pairs:
        # 1. the clause offering `2`, up to (not including) its sentence's full stop
        start = before.index(" and `2` if ")
        expected, clause = _cut(before, start, before.index(".", start))
        assert "unsure" in clause and expected[start] == "."
        # 2. the sentence asking for `2` when unsure, with the space or newline after it
        start = expected.index("If you are unsure")
        end = expected.index(".", start) + 1
        expected, sentence = _cut(expected, start, end + (expected[end] in " \n"))
        assert "`2`" in sentence
        assert after == expected
        assert _only_deletions(before, after)
        assert "`2`" not in after and "unsure" not in after and "'0'" in after and "'1'" in after
    assert "'1' if the answer is hallucinated. Do not" in binary.system
    assert "Dont be verbose\nYour Judgement:" in binary.no_knowledge.format_string()


def test_binary_variant_of_our_text():
    binary = remove_not_sure(extract_prompts(prompt_script(INVENTED), "invented.py"))
    assert binary.system == (
        "\nYou check short answers to clinical questions.\n"
        "Reply '0' if the answer is supported and '1' if it is made up. Reply with the digit only.\n"
    )
    assert binary.no_knowledge.format_string() == "\nQ: {question}\nA: {option1}\nDigit '0' or '1'.\nDigit:\n"


def test_binary_variant_refuses_unexpected_text():
    strings = {**INVENTED, "system_prompt": "Reply '0' or '1'. No third option here.\n"}
    with pytest.raises(AssetError, match="system prompt should have one clause offering `2`.*found 0 and 0"):
        remove_not_sure(extract_prompts(prompt_script(strings), "other.py"))


def test_user_message_is_the_authors_single_turn(shared_data):
    strings = official_strings(shared_data)
    prompts = extract_prompts(prompt_script(strings), "official-shape.py")
    question, answer, contexts = "Does it work?", "Yes, in 9 of 10 cases.", ["First context.", "It's second."]
    expected_plain = strings["system_prompt"] + " " + strings["create_prompt"].format(question=question, option1=answer)
    assert user_message(prompts, question, answer, None) == expected_plain
    expected_knowledge = strings["system_prompt"] + " " + strings["create_prompt_withknowledge"].format(
        question=question, option1=answer, knowledge=str(contexts)
    )
    assert user_message(prompts, question, answer, contexts) == expected_knowledge
    assert "World Knowledge: ['First context.', \"It's second.\"]\n" in expected_knowledge


def test_render_knowledge_is_the_list_repr():
    assert render_knowledge(["a", "b"]) == "['a', 'b']"


def test_load_prompts_reads_the_asset(official_asset, shared_data):
    strings = official_strings(shared_data)
    assert load_prompts(not_sure=True).system == strings["system_prompt"]
    assert "`2`" not in load_prompts(not_sure=False).system
    provenance = PROMPT_ASSET.provenance()
    assert provenance["sha256"] == json.loads(official_asset["MEDHAL_ASSET_SHA256"])[PROMPT_ASSET.name]
    assert provenance["pinned_sha256"] == PROMPT_ASSET.sha256


def test_asset_with_wrong_hash_is_refused(tmp_path, monkeypatch):
    install_prompt_asset(tmp_path, prompt_script(INVENTED), monkeypatch)
    monkeypatch.delenv("MEDHAL_ASSET_SHA256")
    try:
        with pytest.raises(AssetError, match=f"expected {PROMPT_ASSET.sha256}"):
            load_prompts(not_sure=True)
    finally:
        PROMPT_ASSET.__dict__.pop("data", None)


def test_missing_asset_says_how_to_supply_it(tmp_path, monkeypatch):
    monkeypatch.setenv("MEDHAL_ASSETS_DIR", str(tmp_path))
    PROMPT_ASSET.__dict__.pop("data", None)
    with pytest.raises(AssetError, match="raw.githubusercontent.com/MedHallu/MedHalu/3c49c8ba"):
        load_prompts(not_sure=True)


def test_bad_override_variable(monkeypatch):
    monkeypatch.setenv("MEDHAL_ASSET_SHA256", "[not json")
    with pytest.raises(AssetError, match="MEDHAL_ASSET_SHA256 is not valid JSON"):
        PROMPT_ASSET.expected_sha256
