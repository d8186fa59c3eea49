"""Med-HALT (Pal et al., 2023): what this environment is, declared in one place.

The dataset and its pinned revision, the authors' prompt files (pinned assets), the
seven test sets and the defaults. Light on purpose: reports and the CLI import it
without importing verifiers.

Each test set is one configuration of the Hub dataset. The reasoning family asks
multiple-choice questions (False Confidence Test, None of the Above, Fake Questions);
the memory family asks for a PubMed paper's title or link (the information-retrieval,
IR, sets). A set fixes the upstream prompt folder, the reply keys that carry the answer
and the number of rows in the complete set.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from medhal.kit.assets import Asset, BundledFile
from medhal.kit.datasets import HubDataset
from medhal.kit.fetch import HubSplit, Needs
from medhal.kit.published import load as load_published

ENV_ID = "med-halt"
DATASET = HubDataset(id="openlifescienceai/Med-HALT", revision="d1e8d04295742df7abc485062344fe328e141395")
"""One configuration per test set, each with one split (`train`) holding the whole set;
the revision is the head of the dataset's main branch."""
PROMPT_COMMIT = "3dfe1e4efa4f565a610e90328500b14c16c1e81c"
PROMPTS_URL = f"https://raw.githubusercontent.com/medhalt/medhalt/{PROMPT_COMMIT}/medhalt/prompts"

DEFAULT_PROMPT_VERSION = "v0"
DEFAULT_NUM_SHOTS = 2
DEFAULT_SHOT_SEED = 0
PAPER_POINTS_RIGHT, PAPER_POINTS_WRONG = 1.0, -0.25
"""Eq. 1 of the paper: a right answer earns a point, a wrong one (a format error included)
costs a quarter point. The reports' paper score and the `paper_points` metric; as a reward,
the `task.wrong_reward = -0.25` option."""

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
    "correct_answer",
    "answer",
    "correct answer",
    "corrent_answer",
    "Correct Answer",
    "Answer",
    "Correct_answer",
    "Correct answer",
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
TRAINABLE = (FCT.config,)
"""The sets a run may train on (`role = train`), and then only rows of the source exams'
train, val or dev splits: FCT's test rows are the evaluation side. NOTA, fake and IR are
evaluation-only: NOTA rewrites FCT's exam questions (an FCT question trained on is a NOTA
item seen), every fake question and IR paper has one answer that is right by construction
(README, "Constant answers and RL"), and the four IR sets ask about the same papers."""
TRAINING_SPLIT_TYPES = ("train", "val", "dev")
EVALUATION_SETS = {name: f"medhalt/{name}" for name in SETS}
"""The evaluation sets whose items' fingerprints ship with the environment (for FCT: its
test rows), each with the stem of its file in a data directory (`medhal fetch -o DIR`)."""
EVAL_FINGERPRINTS = Path(__file__).parent / "eval_fingerprints.json"
"""Fingerprints of the evaluation sets' items (`medhal.kit.roles`), written by
`scripts/eval_fingerprints.py` from the real files: a training load holding any is refused."""
TITLE_SETS = (PMID2TITLE.config, LINK2TITLE.config)
LINK_SETS = (TITLE2LINK.config, ABSTRACT2LINK.config)


_PROMPT_SHA256 = {
    "reasoning_FCT": (
        "7cca99c89d84bd4ec34c4e651d9e8d62d8588bd2092e5c0bbcdb4eaa845a4bcc",
        "e4d1a0160948676732abfe7ac2bfd6711aff29dabd3a3a53bb37a015c0c6a319",
    ),
    "Reasoning_Nota": (
        "2d770ab4385e92913c67617c9b2f3feccd4c26c84f20774af7bdefd754c33194",
        "de26a1a556c26417cd54bb550dd272d4e5bd10d325b27b6173584e07970e6b13",
    ),
    "reasoning_Fake": (
        "974d135adae8b6578c4705cc209283ba8d4ee7c1e62e282e042aa9c15a72ca67",
        "e69519550966fa57c17b898b9cd65341a389d0d37f1f423b1a795a45c2df6b7d",
    ),
    "IR_pmid2title": (
        "095055e8f66b1d5a8e56f004b22a544f620525ecfc3d1777f36c2c080e776d6e",
        "781fdd4b59c97722be8e0a8f3deb3c05702ef3a05ab044eb7694689b7f9cda57",
    ),
    "IR_pubmedlink2title": (
        "b3f089cd5335508442dd0d2d53c9a86d3dc36f97e35461a340c7a19d27f1c535",
        "83984ab01adcd91671e83489e0086839edf2387f0c025fbcba53587384b19099",
    ),
    "IR_title2pubmedlink": (
        "833eac91ee128a777e360c2f94522189d9f139a5a8e6853abea2278ed70685e3",
        "b5c9b3164d5fe76f1219f166b7da3d66e010858b0d80fa899bcd3e012cb94ae4",
    ),
    "IR_abstract2pubmedlink": (
        "5695ade37ae2d324ccafb1f25040bc189dff9e9ffdc36da9943c662a6ecf58f8",
        "de73bda2366d8437ffa86e39f5ea0d617915086cff9d21af34cb4a70ee6b98f8",
    ),
}
"""Prompt folder -> sha256 of (prompts.json, shots.json) at PROMPT_COMMIT."""


@dataclass(frozen=True)
class PromptFiles:
    prompts: Asset | BundledFile
    shots: Asset | BundledFile


def _asset(prompt_dir: str, file: str, sha256: str) -> Asset:
    return Asset(f"medhalt/prompts/{prompt_dir}/{file}", f"{PROMPTS_URL}/{prompt_dir}/{file}", sha256)


PROMPT_FILES: dict[str, PromptFiles] = {
    spec.config: PromptFiles(
        _asset(spec.prompt_dir, "prompts.json", _PROMPT_SHA256[spec.prompt_dir][0]),
        _asset(spec.prompt_dir, "shots.json", _PROMPT_SHA256[spec.prompt_dir][1]),
    )
    for spec in SETS.values()
}
"""Test set -> its pinned prompt assets."""

FETCH = {
    name: Needs(
        data=(HubSplit(HubDataset(DATASET.id, DATASET.revision, name, DATASET.split), f"medhalt/{name}"),),
        assets=(PROMPT_FILES[name].prompts, PROMPT_FILES[name].shots),  # type: ignore[arg-type]
    )
    for name in SETS
}
"""What `medhal fetch` downloads per setting (a test set): its rows, stored as
`<dir>/medhalt/<config>.<ext>` (so `--taskset.dataset-path <dir>/medhalt` serves every set),
and its prompt files (`MEDHAL_ASSETS_DIR=<dir>`)."""

DEMO_DIR = Path(__file__).parent / "demo"
DEMO_PROMPT_FILES: dict[str, PromptFiles] = {
    name: PromptFiles(
        BundledFile(
            DEMO_DIR / "prompts" / name / "prompts.json", f"med_halt/demo/prompts/{name}/prompts.json"
        ),
        BundledFile(DEMO_DIR / "prompts" / name / "shots.json", f"med_halt/demo/prompts/{name}/shots.json"),
    )
    for name in SETS
}
"""Prompts written by medhal in the authors' file format, for demo runs on machines that
cannot fetch the pinned ones (`prompts = demo`, allowed only with the demo rows)."""
DEMO_OPTIONS = {"subset": "all", "dataset_path": str(DEMO_DIR), "num_shots": 2, "shot_seed": 0}
"""Taskset options for a demo run over all seven sets: 21 rows written by medhal (see
demo/README.md), not Med-HALT data."""

PUBLISHED = load_published(Path(__file__).parent / "published.csv")
"""Accuracy and Score per set from the paper's Tables 2 and 3 (the authors' formulas)."""
