"""The authors' detection prompt, read out of their script, and the variants we derive.

The prompt text is not ours to redistribute, so it is never stored here: the authors'
script is a pinned asset, and `extract_prompts` reads three strings out of its syntax
tree (it parses the file and never executes it):

- `system_prompt`, a module-level string constant;
- `create_prompt(question, option1)` and
  `create_prompt_withknowledge(question, option1, knowledge)`, each of which builds an
  f-string assigned to `prompt`. Only plain `{name}` fields are allowed in it, and each
  must be a parameter of its function, so rendering cannot run anything.

The authors send one user message, the system prompt and the user template joined by a
space (their system role is commented out); the knowledge field receives the Python list
of PubMedQA contexts, so the model sees that list's repr. `user_message` reproduces both.

The variant without "not sure" is ours: `remove_not_sure` cuts, from each of the three
strings, the clause that offers `2` in the sentence listing the answers and the sentence
that tells the model to choose `2` when unsure, and checks that no mention of `2` is left.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, replace

from medhal.kit.assets import AssetError

SYSTEM_VARIABLE = "system_prompt"
TEMPLATE_VARIABLE = "prompt"
NO_KNOWLEDGE_FUNCTION = "create_prompt"
KNOWLEDGE_FUNCTION = "create_prompt_withknowledge"
FIELDS = {
    NO_KNOWLEDGE_FUNCTION: ("question", "option1"),
    KNOWLEDGE_FUNCTION: ("question", "option1", "knowledge"),
}
"""The parameters each template function must take; every field must be one of them."""


@dataclass(frozen=True)
class Field:
    name: str


@dataclass(frozen=True)
class Template:
    """An f-string's pieces: literal text and named fields, in order."""

    parts: tuple[str | Field, ...]

    def render(self, **values: str) -> str:
        return "".join(p if isinstance(p, str) else values[p.name] for p in self.parts)


@dataclass(frozen=True)
class DetectionPrompts:
    system: str
    no_knowledge: Template
    with_knowledge: Template


def _template_of(func: ast.FunctionDef, where: str) -> Template:
    params = [a.arg for a in func.args.args]
    expected = FIELDS[func.name]
    if tuple(params) != expected:
        raise AssetError(f"{where}:{func.lineno}: {func.name} takes {params}, expected {list(expected)}")
    values = [
        node.value
        for node in func.body
        if isinstance(node, ast.Assign)
        and [getattr(t, "id", None) for t in node.targets] == [TEMPLATE_VARIABLE]
    ]
    if len(values) != 1:
        raise AssetError(
            f"{where}:{func.lineno}: {func.name} should assign {TEMPLATE_VARIABLE!r} exactly once, "
            f"found {len(values)}"
        )
    value = values[0]
    if not isinstance(value, ast.JoinedStr):
        raise AssetError(
            f"{where}:{value.lineno}: {func.name} assigns {TEMPLATE_VARIABLE!r} something other "
            "than an f-string"
        )
    parts: list[str | Field] = []
    for piece in value.values:
        if isinstance(piece, ast.Constant) and isinstance(piece.value, str):
            parts.append(piece.value)
        elif (
            isinstance(piece, ast.FormattedValue)
            and isinstance(piece.value, ast.Name)
            and piece.conversion == -1
            and piece.format_spec is None
            and piece.value.id in expected
        ):
            parts.append(Field(piece.value.id))
        else:
            raise AssetError(
                f"{where}:{piece.lineno}: {func.name}'s f-string has a field other than a plain "
                f"{{name}} of one of {list(expected)}: {ast.unparse(piece)!r}"
            )
    return Template(tuple(parts))


def extract_prompts(source: str, where: str) -> DetectionPrompts:
    """The system prompt and both user templates from the script's source text."""
    try:
        tree = ast.parse(source, filename=where)
    except SyntaxError as e:
        raise AssetError(f"{where}:{e.lineno}: not parseable Python ({e.msg})") from e
    systems = [
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and [getattr(t, "id", None) for t in node.targets] == [SYSTEM_VARIABLE]
    ]
    if len(systems) != 1 or not (isinstance(systems[0], ast.Constant) and isinstance(systems[0].value, str)):
        raise AssetError(
            f"{where}: expected one module-level string constant {SYSTEM_VARIABLE!r}, "
            f"found {len(systems)} assignments"
        )
    functions = {
        node.name: node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name in FIELDS
    }
    missing = [name for name in FIELDS if name not in functions]
    if missing:
        raise AssetError(f"{where}: function(s) {', '.join(missing)} not found at module level")
    return DetectionPrompts(
        system=systems[0].value,
        no_knowledge=_template_of(functions[NO_KNOWLEDGE_FUNCTION], where),
        with_knowledge=_template_of(functions[KNOWLEDGE_FUNCTION], where),
    )


# A clause offering `2` runs from " and `2` if" to the end of its sentence; a sentence
# about `2` is one that mentions it, starting a line or following ". ".
_NOT_SURE_CLAUSE = re.compile(r" and `2` if [^.\n]*(?=\.)")
_NOT_SURE_SENTENCE = re.compile(r"(?:(?<=\n)|(?<=\. ))[^.\n]*`2`[^.\n]*\.(?: |\n)?")


def _without_not_sure(text: str, what: str) -> str:
    text, clauses = _NOT_SURE_CLAUSE.subn("", text)
    text, sentences = _NOT_SURE_SENTENCE.subn("", text)
    if (clauses, sentences) != (1, 1) or "`2`" in text:
        raise AssetError(
            f"prompt asset: the {what} should have one clause offering `2` and one sentence "
            f"asking for `2` when unsure; found {clauses} and {sentences}"
            + (", and `2` still appears" if "`2`" in text else "")
            + " (is this the pinned file?)"
        )
    return text


def remove_not_sure(prompts: DetectionPrompts) -> DetectionPrompts:
    def template(t: Template, what: str) -> Template:
        # The not-sure text sits in one literal part (after the last field); edit that part.
        last = max(i for i, p in enumerate(t.parts) if isinstance(p, str))
        parts = list(t.parts)
        parts[last] = _without_not_sure(parts[last], what)
        return replace(t, parts=tuple(parts))

    return DetectionPrompts(
        system=_without_not_sure(prompts.system, "system prompt"),
        no_knowledge=template(prompts.no_knowledge, f"{NO_KNOWLEDGE_FUNCTION} template"),
        with_knowledge=template(prompts.with_knowledge, f"{KNOWLEDGE_FUNCTION} template"),
    )


def render_knowledge(contexts: list[str]) -> str:
    """How the authors' f-string shows the knowledge: the repr of the list of contexts."""
    return str(list(contexts))


def user_message(prompts: DetectionPrompts, question: str, answer: str, knowledge: list[str] | None) -> str:
    """The single user turn the authors send: system prompt, a space, the user template."""
    if knowledge is None:
        user = prompts.no_knowledge.render(question=question, option1=answer)
    else:
        user = prompts.with_knowledge.render(
            question=question, option1=answer, knowledge=render_knowledge(knowledge)
        )
    return f"{prompts.system} {user}"
