"""Reading the prompt out of the authors' script (the real one, from shared data, read as
text and never run), the binary variant, the messages built, the pinned asset and its
hash, and the demo prompt written by medhal.

The authors' strings are compared with the shared JSON copy, an independent copy of the
same strings; no prompt text is written into this file."""

from __future__ import annotations

import difflib
import json

import pytest

from medhal.kit.assets import AssetError, sha256_file
from medhallu.benchmark import DEMO_PROMPT, PROMPT_ASSET
from medhallu.prompts import Template, extract_prompts, remove_not_sure, render_knowledge, user_message
from medhallu.taskset import load_prompts
from tests.medhallu.fixtures import (
    INVENTED,
    PINNED_SHA256,
    authors_script,
    install_prompt_asset,
    official_strings,
    prompt_script,
)


def format_string(template: Template) -> str:
    """The template as the authors' f-string text: `{name}` placeholders, literal braces doubled."""
    return "".join(
        p.replace("{", "{{").replace("}", "}}") if isinstance(p, str) else "{" + p.name + "}"
        for p in template.parts
    )


@pytest.fixture
def real_source(shared_data) -> str:
    return authors_script(shared_data).read_text(encoding="utf-8")


def test_the_pinned_hash_is_the_shared_scripts():
    assert PROMPT_ASSET.sha256 == PINNED_SHA256
    assert PROMPT_ASSET.name == "medhallu/Detection/detection_vllm_notsurecase.py"
    assert PROMPT_ASSET.url == (
        "https://raw.githubusercontent.com/MedHallu/MedHalu/3c49c8ba80e47720333e508821967167ba048d49"
        "/Detection/detection_vllm_notsurecase.py"
    )


def test_shared_script_is_the_pinned_file(shared_data):
    assert sha256_file(authors_script(shared_data)) == PINNED_SHA256


def test_extracts_our_invented_script_without_running_it():
    prompts = extract_prompts(prompt_script(INVENTED), "invented.py")  # the script would SystemExit if run
    assert prompts.system == INVENTED["system_prompt"]
    assert format_string(prompts.no_knowledge) == INVENTED["create_prompt"]
    assert format_string(prompts.with_knowledge) == INVENTED["create_prompt_withknowledge"]
    assert prompts.no_knowledge.render(question="Q?", option1="A.") == INVENTED["create_prompt"].format(
        question="Q?", option1="A."
    )


def test_extracts_the_authors_strings_from_their_script(shared_data, real_source):
    strings = official_strings(shared_data)
    prompts = extract_prompts(real_source, "detection_vllm_notsurecase.py")
    assert prompts.system == strings["system_prompt"]
    assert format_string(prompts.no_knowledge) == strings["create_prompt"]
    assert format_string(prompts.with_knowledge) == strings["create_prompt_withknowledge"]


def test_literal_braces_survive_extraction():
    strings = {
        **INVENTED,
        "create_prompt": "Q: {question} {{not a field}}\nA: {option1} and `2` if unsure.\nPick `2` when lost.\n",  # noqa: E501
    }
    prompts = extract_prompts(prompt_script(strings), "braces.py")
    assert prompts.no_knowledge.render(question="q", option1="a").startswith("Q: q {not a field}\nA: a")
    assert format_string(prompts.no_knowledge) == strings["create_prompt"]


# Edits of the real script (first occurrence: inside create_prompt, lines 38-47) and the
# message each must give. Line 38 is `def create_prompt`, line 39 its `prompt = f"""`.
REAL_EDITS = [
    (
        "def create_prompt(question, option1)",
        "def create_prompt(question, answer)",
        "broken.py:38: create_prompt takes ['question', 'answer'], expected ['question', 'option1']",
    ),
    ("{option1}", "{option1.upper()}", "a field other than a plain {name}"),
    ("{question}", "{knowledge}", "of one of ['question', 'option1']: '{knowledge}'"),
    ("{option1}", "{option1!r}", "a field other than a plain {name}"),
    (
        'prompt = f"""',
        'prompt = """',
        "broken.py:39: create_prompt assigns 'prompt' something other than an f-string",
    ),
    (
        "def create_prompt_withknowledge(",
        "def create_prompt_with_knowledge(",
        "create_prompt_withknowledge not found",
    ),
    ("system_prompt = ", "system_text = ", "expected one module-level string constant 'system_prompt'"),
    ("\ndef clear_gpu_memory", "\ndef clear_gpu_memory(:", "broken.py:64: not parseable Python"),
]


@pytest.mark.parametrize(("old", "new", "message"), REAL_EDITS, ids=[m for _, _, m in REAL_EDITS])
def test_extraction_errors_name_file_and_line(real_source, old, new, message):
    assert old in real_source
    with pytest.raises(AssetError) as info:
        extract_prompts(real_source.replace(old, new, 1), "broken.py")
    assert message in str(info.value)
    assert str(info.value).startswith("broken.py")
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("def broken(:\n", "broken.py:1: not parseable Python"),
        ("x = 1\n", "expected one module-level string constant 'system_prompt'"),
        (
            (
                'system_prompt = "s"\n'
                'def create_prompt(question, option1):\n    prompt = f"{question}"\n    return prompt\n'
            ),
            "create_prompt_withknowledge not found",
        ),
        ('system_prompt = f"{x}"\n', "expected one module-level string constant 'system_prompt'"),
    ],
)
def test_extraction_errors_on_small_sources(source, message):
    with pytest.raises(AssetError) as info:
        extract_prompts(source, "broken.py")
    assert message in str(info.value) and str(info.value).startswith("broken.py")


def test_field_error_names_its_line(real_source):
    # The field sits on line 41 of the script, inside the f-string that starts on line 39:
    # Python 3.11 reports the f-string's first line, 3.12+ the field's own line.
    with pytest.raises(AssetError, match=r"^broken.py:(39|41): create_prompt's f-string"):
        extract_prompts(real_source.replace("{option1}", "{option1.upper()}", 1), "broken.py")


# ------------------------------------------------------------------- the binary variant


def _only_deletions(before: str, after: str) -> bool:
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    return all(op[0] in ("equal", "delete") for op in matcher.get_opcodes())


def _expected_binary(before: str) -> str:
    """The not-sure text cut by hand: (1) the clause from " and `2` if " up to (not
    including) its sentence's full stop; (2) the one sentence still mentioning `2`, from
    its start (after ". " or a newline) through its full stop and one following blank."""
    start = before.index(" and `2` if ")
    text = before[:start] + before[before.index(".", start) :]
    mention = text.index("`2`")
    assert text.count("`2`") == 1
    begin = max(text.rfind(". ", 0, mention) + 2, text.rfind("\n", 0, mention) + 1)
    end = text.index(".", mention) + 1
    if text[end : end + 1] in (" ", "\n"):
        end += 1
    return text[:begin] + text[end:]


def test_binary_variant_removes_exactly_the_not_sure_sentences(shared_data, real_source):
    official = extract_prompts(real_source, "detection_vllm_notsurecase.py")
    binary = remove_not_sure(official)
    pairs = [
        (official.system, binary.system, 0),
        (format_string(official.no_knowledge), format_string(binary.no_knowledge), 1),
        (format_string(official.with_knowledge), format_string(binary.with_knowledge), 1),
    ]
    for before, after, lines_removed in pairs:
        assert after == _expected_binary(before)
        assert _only_deletions(before, after)
        assert "`2`" not in after and "unsure" not in after and "'0'" in after and "'1'" in after
        # in the templates the sentence asking for `2` is a whole line; in the system prompt
        # it sits inside a paragraph
        assert before.count("\n") - after.count("\n") == lines_removed
    # the templates keep their fields and their last line
    assert format_string(binary.no_knowledge).endswith(
        format_string(official.no_knowledge).rstrip("\n").rsplit("\n", 1)[1] + "\n"
    )
    assert "{knowledge}" in format_string(binary.with_knowledge)


def test_binary_variant_of_our_text():
    binary = remove_not_sure(extract_prompts(prompt_script(INVENTED), "invented.py"))
    assert binary.system == (
        "\nYou check short answers to clinical questions.\n"
        "Reply '0' if the answer is supported and '1' if it is made up. Reply with the digit only.\n"
    )
    assert format_string(binary.no_knowledge) == "\nQ: {question}\nA: {option1}\nDigit '0' or '1'.\nDigit:\n"


def test_binary_variant_refuses_unexpected_text():
    strings = {**INVENTED, "system_prompt": "Reply '0' or '1'. No third option here.\n"}
    with pytest.raises(AssetError, match=r"system prompt should have one clause offering `2`.*found 0 and 0"):
        remove_not_sure(extract_prompts(prompt_script(strings), "other.py"))


# ------------------------------------------------------------------------- the messages


def test_user_message_is_the_authors_single_turn(shared_data, real_source):
    strings = official_strings(shared_data)
    prompts = extract_prompts(real_source, "detection_vllm_notsurecase.py")
    question, answer, contexts = "Does it work?", "Yes, in 9 of 10 cases.", ["First context.", "It's second."]
    expected_plain = (
        strings["system_prompt"] + " " + strings["create_prompt"].format(question=question, option1=answer)
    )
    assert user_message(prompts, question, answer, None) == expected_plain
    expected_knowledge = (
        strings["system_prompt"]
        + " "
        + strings["create_prompt_withknowledge"].format(
            question=question, option1=answer, knowledge=str(contexts)
        )
    )
    assert user_message(prompts, question, answer, contexts) == expected_knowledge
    assert "['First context.', \"It's second.\"]\n" in expected_knowledge


def test_render_knowledge_is_the_list_repr():
    assert render_knowledge(["a", "b"]) == "['a', 'b']"
    assert render_knowledge(["it's"]) == '["it\'s"]'


# ------------------------------------------------------------------- the pinned asset


def test_load_prompts_reads_the_pinned_asset(assets_dir, shared_data):
    strings = official_strings(shared_data)
    assert load_prompts(not_sure=True).system == strings["system_prompt"]
    assert format_string(load_prompts(not_sure=True).no_knowledge) == strings["create_prompt"]
    assert "`2`" not in load_prompts(not_sure=False).system
    assert PROMPT_ASSET.provenance() == {
        "name": PROMPT_ASSET.name,
        "url": PROMPT_ASSET.url,
        "sha256": PINNED_SHA256,
    }


def test_hash_override_accepts_a_stand_in_and_records_both_hashes(tmp_path, monkeypatch):
    """The one test of MEDHAL_ASSET_SHA256: a stand-in file is read only because its hash
    is named, and provenance records its hash next to the pinned one."""
    env = install_prompt_asset(tmp_path, prompt_script(INVENTED), monkeypatch)
    stand_in = json.loads(env["MEDHAL_ASSET_SHA256"])[PROMPT_ASSET.name]
    assert stand_in == sha256_file(tmp_path / PROMPT_ASSET.name) != PINNED_SHA256
    assert load_prompts(not_sure=True).system == INVENTED["system_prompt"]
    assert PROMPT_ASSET.provenance() == {
        "name": PROMPT_ASSET.name,
        "url": PROMPT_ASSET.url,
        "sha256": stand_in,
        "pinned_sha256": PINNED_SHA256,
    }
    monkeypatch.delenv("MEDHAL_ASSET_SHA256")  # without the override the same file is refused
    with pytest.raises(AssetError, match=f"sha256 {stand_in}, expected {PINNED_SHA256}"):
        load_prompts(not_sure=True)


def test_a_changed_script_is_refused(shared_data, tmp_path, monkeypatch):
    copy = tmp_path / PROMPT_ASSET.name
    copy.parent.mkdir(parents=True)
    copy.write_bytes(authors_script(shared_data).read_bytes() + b"\n# one more line\n")
    monkeypatch.setenv("MEDHAL_ASSETS_DIR", str(tmp_path))
    with pytest.raises(AssetError, match=f"expected {PINNED_SHA256}") as info:
        load_prompts(not_sure=True)
    assert str(copy) in str(info.value)


def test_missing_asset_says_how_to_supply_it(tmp_path, monkeypatch):
    monkeypatch.setenv("MEDHAL_ASSETS_DIR", str(tmp_path))
    with pytest.raises(AssetError, match=r"raw\.githubusercontent\.com/MedHallu/MedHalu/3c49c8ba") as info:
        load_prompts(not_sure=True)
    assert "MEDHAL_ASSETS_DIR" in str(info.value) and PROMPT_ASSET.name in str(info.value)


def test_bad_override_variable(monkeypatch):
    monkeypatch.setenv("MEDHAL_ASSET_SHA256", "[not json")
    with pytest.raises(AssetError, match="MEDHAL_ASSET_SHA256 is not valid JSON"):
        _ = PROMPT_ASSET.expected_sha256
    monkeypatch.setenv("MEDHAL_ASSET_SHA256", "[1, 2]")
    with pytest.raises(AssetError, match="must be a JSON object"):
        _ = PROMPT_ASSET.expected_sha256


# -------------------------------------------------------------------- the demo prompt


def test_demo_prompt_is_ours_and_needs_no_asset(shared_data, tmp_path, monkeypatch):
    monkeypatch.setenv("MEDHAL_ASSETS_DIR", str(tmp_path))  # empty: the pinned script is not there
    demo = load_prompts(not_sure=True, source="demo")
    official = official_strings(shared_data)
    assert demo.system != official["system_prompt"]
    assert format_string(demo.no_knowledge) != official["create_prompt"]
    assert "`2`" in demo.system and "{question}" in format_string(demo.no_knowledge)
    assert "{knowledge}" in format_string(demo.with_knowledge)
    binary = load_prompts(not_sure=False, source="demo")
    assert "`2`" not in binary.system and "`2`" not in format_string(binary.with_knowledge)
    assert _only_deletions(demo.system, binary.system)
    provenance = DEMO_PROMPT.provenance()
    assert provenance == {
        "name": "medhallu/demo/detection_prompt.py.txt",
        "written_by": "medhal (demo prompt, not the benchmark's)",
        "sha256": sha256_file(DEMO_PROMPT.path),
    }
