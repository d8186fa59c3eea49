"""The seven Med-HALT test sets and what tells them apart.

Each set is one configuration of the Hub dataset. The reasoning family asks
multiple-choice questions (False Confidence Test, None of the Above, Fake Questions);
the memory family asks for a PubMed paper's title or link (the information-retrieval,
IR, sets). A set fixes the upstream prompt folder, the reply key that carries the answer
and the number of rows in the complete set.
"""

from __future__ import annotations

from dataclasses import dataclass

REASONING = "reasoning"
MEMORY = "memory"


@dataclass(frozen=True)
class SetSpec:
    config: str
    """Hub configuration name, also the `<config>.<ext>` file name in a local directory."""
    family: str
    """`reasoning` or `memory`."""
    prompt_dir: str
    """Folder of the set's prompts.json and shots.json in the authors' repository."""
    size: int
    """Rows in the complete set (the paper's Table 7 sizes)."""
    answer_keys: tuple[str, ...]
    """Reply keys holding the answer, in order of preference (the first present wins)."""


# The authors' scorer reads the FCT answer from any of these keys (misspellings included,
# because models copy them from the shots), in this order.
FCT_ANSWER_KEYS = (
    "correct_answer", "answer", "correct answer", "corrent_answer",
    "Correct Answer", "Answer", "Correct_answer", "Correct answer",
)

FCT = SetSpec("reasoning_FCT", REASONING, "reasoning_FCT", 18_866, FCT_ANSWER_KEYS)
NOTA = SetSpec("reasoning_nota", REASONING, "Reasoning_Nota", 18_866, ("cop",))
FAKE = SetSpec("reasoning_fake", REASONING, "reasoning_Fake", 1_858, ("cop",))
PMID2TITLE = SetSpec("IR_pmid2title", MEMORY, "IR_pmid2title", 4_916, ("paper_title",))
LINK2TITLE = SetSpec("IR_pubmedlink2title", MEMORY, "IR_pubmedlink2title", 4_916, ("paper_title",))
TITLE2LINK = SetSpec("IR_title2pubmedlink", MEMORY, "IR_title2pubmedlink", 4_916, ("url",))
ABSTRACT2LINK = SetSpec("IR_abstract2pubmedlink", MEMORY, "IR_abstract2pubmedlink", 4_916, ("url",))

SETS: dict[str, SetSpec] = {
    s.config: s for s in (FCT, NOTA, FAKE, PMID2TITLE, LINK2TITLE, TITLE2LINK, ABSTRACT2LINK)
}
"""Every set, in the fixed order tasks are loaded in."""

SUBSETS: dict[str, tuple[str, ...]] = {
    **{name: (name,) for name in SETS},
    REASONING: tuple(n for n, s in SETS.items() if s.family == REASONING),
    MEMORY: tuple(n for n, s in SETS.items() if s.family == MEMORY),
    "all": tuple(SETS),
}
"""Values of the `subset` option and the sets each one selects."""

FULL_SIZE = sum(s.size for s in SETS.values())  # 59,254
TITLE_SETS = (PMID2TITLE.config, LINK2TITLE.config)
LINK_SETS = (TITLE2LINK.config, ABSTRACT2LINK.config)
