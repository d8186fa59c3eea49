"""`medhal fetch` against a local Hub and asset mirror (tests/medhal/fake_hub.py): every pinned
split and prompt asset lands where the environments read it offline, hash-checked and
resumable, and every failure is one line with exit 2. No network: HF_ENDPOINT and
--asset-mirror point at 127.0.0.1."""

from __future__ import annotations

import hashlib
import io
import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from medhal.commands.fetch import declared
from medhal.kit.fetch import (
    MANIFEST,
    Check,
    FetchError,
    HubSplit,
    Needs,
    choose,
    fetch,
    matches,
    split_files,
    split_patterns,
)
from tests.medhal.fake_hub import FakeHub, Repo, git_blob_id
from tests.running import clean_exit_2, medhal_main

ENVS = ("medhallu", "med-halt", "medfact-bench")
MEDFACT_FILE = (
    "/datasets/ncbi/MedFact-Bench/resolve/249028caf7ad5a3e63331269a606f4b2696693ed/"
    "data/train-00000-of-00001.parquet"
)


def parquet(rows: list[dict]) -> bytes:
    out = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), out)
    return out.getvalue()


def jsonl_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().split("\n") if line.strip()]  # not at U+2028


def card(configs: str) -> bytes:
    return f"---\nlicense: mit\nconfigs:\n{configs}---\n\n# A dataset card\n".encode()


def standin_assets() -> dict[str, bytes]:
    """Each pinned prompt asset's stand-in: the demo prompt medhal wrote in the same shape."""
    from med_halt.benchmark import DEMO_PROMPT_FILES, PROMPT_FILES
    from medhallu.benchmark import DEMO_PROMPT, PROMPT_ASSET

    assets = {PROMPT_ASSET.name: DEMO_PROMPT.path.read_bytes()}
    for name, pinned in PROMPT_FILES.items():
        assets[pinned.prompts.name] = DEMO_PROMPT_FILES[name].prompts.data
        assets[pinned.shots.name] = DEMO_PROMPT_FILES[name].shots.data
    return assets


def demo_hub() -> FakeHub:
    """The three Hub repositories at their pinned revisions, holding the demo rows (written by
    medhal) in the upstream layouts: MedHallu and MedFact-Bench declare their configs in the
    card (parquet shards), Med-HALT has a folder per config holding its csv and a card without
    configs."""
    from med_halt.benchmark import DATASET as MEDHALT
    from med_halt.benchmark import DEMO_DIR, SETS
    from medfact_bench.benchmark import DATASET as MEDFACT
    from medfact_bench.benchmark import DEMO_OPTIONS
    from medhallu.benchmark import DATASET as MEDHALLU
    from medhallu.benchmark import DEMO_ROWS

    medhallu_rows = parquet(jsonl_rows(DEMO_ROWS))
    hub = FakeHub(assets=standin_assets())
    hub.repos[(MEDHALLU.id, MEDHALLU.revision)] = Repo(
        {
            "README.md": card(
                "".join(
                    f"- config_name: {c}\n  data_files:\n  - split: train\n    path: {c}/train-*\n"
                    for c in ("pqa_labeled", "pqa_artificial")
                )
            ),
            "pqa_labeled/train-00000-of-00001.parquet": medhallu_rows,
            "pqa_artificial/train-00000-of-00001.parquet": medhallu_rows,
            ".gitattributes": b"*.parquet filter=lfs\n",
        },
        lfs={"pqa_labeled/train-00000-of-00001.parquet", "pqa_artificial/train-00000-of-00001.parquet"},
    )
    hub.repos[(MEDHALT.id, MEDHALT.revision)] = Repo(
        {
            "README.md": b"# Med-HALT\n",
            **{f"{n}/{n}.csv": (DEMO_DIR / f"{n}.csv").read_bytes() for n in SETS},
        },
        lfs={f"{n}/{n}.csv" for n in SETS},
    )
    hub.repos[(MEDFACT.id, MEDFACT.revision)] = Repo(
        {
            "README.md": card(
                "- config_name: default\n  data_files:\n  - split: train\n    path: data/train-*\n"
            ),
            "data/train-00000-of-00001.parquet": parquet(jsonl_rows(Path(DEMO_OPTIONS["dataset_path"]))),
        },
        lfs={"data/train-00000-of-00001.parquet"},
    )
    return hub


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch):
    hub = demo_hub().start()
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    monkeypatch.setenv(
        "MEDHAL_ASSET_SHA256", json.dumps({k: hashlib.sha256(v).hexdigest() for k, v in hub.assets.items()})
    )
    monkeypatch.delenv("MEDHAL_ASSETS_DIR", raising=False)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    yield hub
    hub.stop()


def load(env_id: str, **options) -> list:
    from medhal.kit.lines import taskset_class
    from medhal.kit.options import taskset_config

    return taskset_class(env_id)(taskset_config(env_id, options)).select()


def run_fetch(out: Path, hub: FakeHub, *args: str):
    return medhal_main("fetch", *args, "-o", str(out), "--asset-mirror", f"{hub.url}/assets")


def test_every_environment_fetched_then_run_offline(hub: FakeHub, tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "data"
    proc = run_fetch(out, hub)
    assert proc.returncode == 0, proc.stderr
    lines = [line.split() for line in proc.stdout.splitlines() if line.strip().startswith("downloaded")]
    assert len(lines) == 10 + 15  # 10 splits; 14 Med-HALT prompt files and the MedHallu script
    for name in (
        "medhallu/pqa_labeled.parquet",
        "medhallu/pqa_artificial.parquet",
        "medhalt/reasoning_nota.csv",
        "medhalt/IR_abstract2pubmedlink.csv",
        "medfact/medfact_bench.parquet",
        "medhallu/Detection/detection_vllm_notsurecase.py",
        "medhalt/prompts/Reasoning_Nota/shots.json",
    ):
        assert (out / name).is_file(), name
    assert not list(out.rglob("*.part"))
    manifest = {e["path"]: e for e in json.loads((out / MANIFEST).read_text())["files"]}
    entry = manifest["medhallu/pqa_labeled.parquet"]
    assert entry["dataset"] == "UTAustin-AIHealth/MedHallu"
    assert entry["revision"] == "515060458a945c633debc6fd5baac7764416b724"
    assert entry["file"] == "pqa_labeled/train-00000-of-00001.parquet"
    assert entry["sha256"] == hashlib.sha256((out / "medhallu/pqa_labeled.parquet").read_bytes()).hexdigest()
    assert "--taskset.dataset-path" in proc.stdout and "MEDHAL_ASSETS_DIR" in proc.stdout

    # Offline, from the directory alone: the environments load every task with the pinned
    # prompts (stand-ins of the same shape, hash-overridden) and the fetched rows.
    hub.stop()
    monkeypatch.setenv("MEDHAL_ASSETS_DIR", str(out))
    assert len(load("medhallu", dataset_path=str(out / "medhallu/pqa_labeled.parquet"))) == 6
    assert len(load("med-halt", dataset_path=str(out / "medhalt"))) == 21
    medfact = load("medfact-bench", dataset_path=str(out / "medfact/medfact_bench.parquet"))
    assert len(medfact) == 6
    assert medfact[0].data.provenance["sha256"] == manifest["medfact/medfact_bench.parquet"]["sha256"]


def test_a_second_run_downloads_nothing(hub: FakeHub, tmp_path: Path) -> None:
    out = tmp_path / "data"
    assert run_fetch(out, hub, "medhallu", "--setting", "pqa_labeled").returncode == 0
    hub.log.clear()
    proc = run_fetch(out, hub, "medhallu", "--setting", "pqa_labeled")
    assert proc.returncode == 0, proc.stderr
    assert [line.split()[0] for line in proc.stdout.splitlines()[:2]] == ["verified", "verified"]
    assert hub.gets(".parquet") == [] and hub.gets(".py") == []


def test_the_hugging_face_token_goes_to_the_hub_only(hub: FakeHub, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HF_TOKEN", "hf_test_token")
    assert run_fetch(tmp_path, hub, "medhallu", "--setting", "pqa_labeled").returncode == 0
    sent = hub.authorization
    hub_paths = [p for p in sent if p.startswith(("/api/datasets/", "/datasets/"))]
    assert len(hub_paths) == 3  # the file list, the dataset card, the split
    assert all(sent[p] == "Bearer hf_test_token" for p in hub_paths), sent
    assert sent["/assets/medhallu/Detection/detection_vllm_notsurecase.py"] is None


def test_a_cut_download_continues_where_it_stopped(hub: FakeHub, tmp_path: Path) -> None:
    chosen = choose(["medfact-bench"], declared)
    hub.cut[MEDFACT_FILE] = 100
    with pytest.raises(FetchError, match=r"cannot download medfact/medfact_bench\.parquet"):
        list(fetch(chosen, tmp_path))
    part = tmp_path / "medfact/medfact_bench.parquet.part"
    assert part.stat().st_size == 100
    assert not (tmp_path / "medfact/medfact_bench.parquet").exists()
    (done,) = fetch(chosen, tmp_path)
    assert done.status == "resumed"
    assert hub.gets(".parquet") == [None, "bytes=100-"]
    assert done.sha256 == hashlib.sha256(done.path.read_bytes()).hexdigest()
    assert pq.read_table(done.path).num_rows == 6


def test_a_part_that_is_not_a_prefix_is_downloaded_again(hub: FakeHub, tmp_path: Path) -> None:
    part = tmp_path / "medfact/medfact_bench.parquet.part"
    part.parent.mkdir(parents=True)
    part.write_bytes(b"garbage from an older file")
    (done,) = fetch(choose(["medfact-bench"], declared), tmp_path)
    assert done.status == "downloaded"
    assert hub.gets(".parquet") == ["bytes=26-", None]
    assert pq.read_table(done.path).num_rows == 6


def test_a_server_that_ignores_ranges_sends_the_file_again(hub: FakeHub, tmp_path: Path) -> None:
    path = MEDFACT_FILE
    hub.ignore_range.add(path)
    part = tmp_path / "medfact/medfact_bench.parquet.part"
    part.parent.mkdir(parents=True)
    part.write_bytes(hub.body(path)[:50])
    (done,) = fetch(choose(["medfact-bench"], declared), tmp_path)
    assert done.status == "downloaded"
    assert pq.read_table(done.path).num_rows == 6


def test_wrong_bytes_are_refused_and_nothing_is_kept(hub: FakeHub, tmp_path: Path) -> None:
    hub.wrong.add("/assets/medhallu/Detection/detection_vllm_notsurecase.py")
    proc = run_fetch(tmp_path, hub, "medhallu")
    clean_exit_2(
        proc, "medhal fetch: error:", "detection_vllm_notsurecase.py", "expected", "nothing was kept"
    )
    assert not list(tmp_path.rglob("*.py*"))


def test_a_changed_hub_file_is_refused(hub: FakeHub, tmp_path: Path) -> None:
    hub.wrong.add(
        "/datasets/UTAustin-AIHealth/MedHallu/resolve/515060458a945c633debc6fd5baac7764416b724/"
        "pqa_labeled/train-00000-of-00001.parquet"
    )
    proc = run_fetch(tmp_path, hub, "medhallu", "--setting", "pqa_labeled")
    clean_exit_2(proc, "pqa_labeled/train-00000-of-00001.parquet", "sha256", "expected")
    assert not (tmp_path / "medhallu/pqa_labeled.parquet").exists()


def test_no_network_is_one_line(hub: FakeHub, tmp_path: Path, monkeypatch) -> None:
    hub.stop()
    proc = run_fetch(tmp_path, hub, "medfact-bench")
    clean_exit_2(proc, "cannot download", "no network?")


def test_a_missing_upstream_file_is_one_line(hub: FakeHub, tmp_path: Path) -> None:
    del hub.assets["medhalt/prompts/IR_pmid2title/shots.json"]
    proc = run_fetch(tmp_path, hub, "med-halt", "--setting", "IR_pmid2title")
    clean_exit_2(proc, "medhalt/prompts/IR_pmid2title/shots.json", "HTTP 404")


def test_a_full_disk_is_one_line(hub: FakeHub, tmp_path: Path) -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    target = tmp_path / "medfact"
    target.mkdir()
    (target / "medfact_bench.parquet.part").symlink_to("/dev/full")  # every write: ENOSPC
    proc = run_fetch(tmp_path, hub, "medfact-bench")
    clean_exit_2(proc, "cannot write", "medfact_bench.parquet.part", "No space left on device")


def test_a_directory_that_cannot_be_written_is_one_line(hub: FakeHub, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    proc = run_fetch(blocker / "data", hub, "medfact-bench")
    clean_exit_2(proc, "cannot write", "a-file")


def test_unknown_environment_or_setting_is_one_line(tmp_path: Path) -> None:
    clean_exit_2(medhal_main("fetch", "no-such-env", "-o", str(tmp_path)), "no-such-env", "installed")
    clean_exit_2(
        medhal_main("fetch", "medhallu", "--setting", "pqa_unlabeled", "-o", str(tmp_path)),
        "unknown setting 'pqa_unlabeled'",
        "pqa_labeled, pqa_artificial",
    )
    assert not list(tmp_path.iterdir())


def test_list_names_every_pinned_file_without_network() -> None:
    proc = medhal_main("fetch", "--list")
    assert proc.returncode == 0
    assert (
        "UTAustin-AIHealth/MedHallu@515060458a945c633debc6fd5baac7764416b724 config pqa_artificial"
        in proc.stdout
    )
    assert proc.stdout.count("asset medhalt/prompts/") == 14


@pytest.mark.parametrize("env_id", ENVS)
def test_each_environment_declares_its_pinned_data_and_assets(env_id: str) -> None:
    from medhal.reports.registry import benchmark_module

    module = benchmark_module(env_id)
    needs = declared(env_id)
    assert needs, env_id
    for setting in needs.values():
        for split in setting.data:
            assert (split.dataset.id, split.dataset.revision) == (module.DATASET.id, module.DATASET.revision)
    chosen = choose([env_id], declared)
    assert len({s.target for s in chosen.splits}) == len(chosen.splits)


def test_choose_merges_what_settings_share() -> None:
    chosen = choose(["medhallu"], declared)
    assert [s.dataset.config for s in chosen.splits] == ["pqa_labeled", "pqa_artificial"]
    assert len(chosen.assets) == 1  # both configs read the same script


def test_a_setting_with_nothing_declared_fetches_nothing() -> None:
    chosen = choose(["x"], lambda env: {"s": Needs()})
    assert chosen.splits == () and chosen.assets == () and chosen.settings == {"x": ("s",)}


# ------------------------------------------------------------------------------ card parsing


def test_card_data_files_in_every_declared_form() -> None:
    assert split_patterns({"data_files": "data/*.csv"}, "train") == ["data/*.csv"]
    assert split_patterns({"data_files": ["a.csv", "b.csv"]}, "train") == ["a.csv", "b.csv"]
    assert split_patterns({"data_files": {"test": "t/*.parquet"}}, "test") == ["t/*.parquet"]
    entries = {
        "data_files": [{"split": "train", "path": "tr/*"}, {"split": "test", "path": ["te/a", "te/b"]}]
    }
    assert split_patterns(entries, "test") == ["te/a", "te/b"]
    assert split_patterns(entries, "validation") == []


def test_card_patterns_stay_within_one_folder_unless_double_star() -> None:
    assert matches("pqa_labeled/train-00000-of-00001.parquet", "pqa_labeled/train-*")
    assert not matches("pqa_labeled/old/train-0.parquet", "pqa_labeled/train-*")
    assert matches("data/deep/train-0.parquet", "data/**/train-*")
    assert not matches("pqa_artificial/train-0.parquet", "pqa_labeled/train-*")


def test_a_split_with_several_files_is_refused(tmp_path: Path) -> None:
    from medhal.kit.datasets import HubDataset
    from medhal.kit.fetch import RepoFile

    files = {
        p: RepoFile(p, 1, Check("sha256", "0")) for p in ("data/train-0.parquet", "data/train-1.parquet")
    }
    configs = [{"config_name": "default", "data_files": [{"split": "train", "path": "data/train-*"}]}]
    split = HubSplit(HubDataset("x/y", "r"), "x/y")
    assert len(split_files(files, configs, split)) == 2


def test_git_blob_ids_are_checked_like_git() -> None:
    # `printf 'hello\n' | git hash-object --stdin`
    assert git_blob_id(b"hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a"


def test_check_reads_files_as_git_and_sha256(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"hello\n")
    assert Check("git-blob", "").of(path) == "ce013625030ba8dba906f756967f9e9ca394464a"
    assert Check("sha256", "").of(path) == hashlib.sha256(b"hello\n").hexdigest()


# ------------------------------------------------------------------------------ real bytes


def test_real_assets_and_rows_fetched_then_loaded(shared_data: Path, tmp_path: Path, monkeypatch) -> None:
    """The pinned MedHallu script (its real bytes, no hash override) and the real 1,000
    `pqa_labeled` rows, served as the Hub serves them (parquet), load as a complete run."""
    from medhallu.benchmark import DATASET, PROMPT_ASSET

    script = (shared_data / PROMPT_ASSET.name).read_bytes()
    rows = parquet(jsonl_rows(shared_data / "medhallu" / "pqa_labeled.jsonl"))
    hub = FakeHub(assets={PROMPT_ASSET.name: script})
    hub.repos[(DATASET.id, DATASET.revision)] = Repo(
        {
            "README.md": card(
                "- config_name: pqa_labeled\n  data_files:\n  - split: train\n    path: pqa_labeled/train-*\n"
            ),
            "pqa_labeled/train-00000-of-00001.parquet": rows,
        },
        lfs={"pqa_labeled/train-00000-of-00001.parquet"},
    )
    hub.start()
    try:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        monkeypatch.delenv("MEDHAL_ASSET_SHA256", raising=False)
        monkeypatch.delenv("MEDHAL_ASSETS_DIR", raising=False)
        proc = run_fetch(tmp_path, hub, "medhallu", "--setting", "pqa_labeled")
    finally:
        hub.stop()
    assert proc.returncode == 0, proc.stderr
    monkeypatch.setenv("MEDHAL_ASSETS_DIR", str(tmp_path))
    tasks = load("medhallu", dataset_path=str(tmp_path / "medhallu/pqa_labeled.parquet"))
    assert len(tasks) == 2000
    assert tasks[0].data.provenance["prompt"]["asset"]["sha256"] == PROMPT_ASSET.sha256
    assert os.environ["MEDHAL_ASSETS_DIR"] == str(tmp_path)
