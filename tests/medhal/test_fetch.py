"""`medhal fetch` against a local Hub and asset mirror (tests/medhal/fake_hub.py): every pinned
split and prompt asset lands where the environments read it offline, hash-checked and
resumable, and every failure is one line with exit 2. No network: HF_ENDPOINT and
--asset-mirror point at 127.0.0.1."""

from __future__ import annotations

import errno
import hashlib
import io
import itertools
import json
import os
import threading
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import medhal.kit.fetch as fetch_module
from medhal.commands.fetch import declared
from medhal.kit.confined import Confined
from medhal.kit.fetch import (
    LOCK,
    MANIFEST,
    Check,
    FetchError,
    Needs,
    choose,
    digests,
    fetch,
    matches,
    split_files,
    split_patterns,
)
from tests.medhal.fake_hub import FakeHub, Repo, git_blob_id
from tests.running import clean_exit_2, medhal_main

ENVS = ("medhallu", "med-halt", "medfact-bench")
MEDFACT = ("ncbi/MedFact-Bench", "249028caf7ad5a3e63331269a606f4b2696693ed")
MEDFACT_FILE = f"/datasets/{MEDFACT[0]}/resolve/{MEDFACT[1]}/data/train-00000-of-00001.parquet"
MEDFACT_CARD = f"/datasets/{MEDFACT[0]}/resolve/{MEDFACT[1]}/README.md"
MEDFACT_TREE = f"/api/datasets/{MEDFACT[0]}/tree/{MEDFACT[1]}"


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


def test_a_full_disk_is_blamed_on_the_file_that_filled_it(hub: FakeHub, tmp_path: Path, monkeypatch) -> None:
    """The disk fills while the split downloads (the script before it is done): the one line
    names the split's `.part`, not the manifest, whose write fails after it (issue 33, 11)."""
    if not Path("/proc/self/fd").is_dir():
        pytest.skip("no /proc/self/fd to tell which file a write goes to")
    real_write = os.write

    def full_disk(fd: int, data) -> int:
        if os.readlink(f"/proc/self/fd/{fd}").endswith((".parquet.part", ".json.part")):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", full_disk)
    proc = run_fetch(tmp_path, hub, "medhallu", "--setting", "pqa_labeled")
    line = clean_exit_2(proc, "cannot write", "pqa_labeled.parquet.part", "No space left on device")
    assert MANIFEST not in line
    assert "downloaded" in proc.stdout  # the script came first, and stays


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
    from medhal.kit.fetch import RepoFile

    files = {
        p: RepoFile(p, 1, Check("sha256", "0")) for p in ("data/train-0.parquet", "data/train-1.parquet")
    }
    configs = [{"config_name": "default", "data_files": [{"split": "train", "path": "data/train-*"}]}]
    assert len(split_files(files, configs, None, "train")) == 2
    too_many = [{"config_name": "default", "data_files": [{"split": "train", "path": ["p"] * 101}]}]
    with pytest.raises(ValueError, match="101 data-file patterns"):
        split_files(files, too_many, "default", "train")


def test_git_blob_ids_are_checked_like_git() -> None:
    # `printf 'hello\n' | git hash-object --stdin`
    assert git_blob_id(b"hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a"


def test_check_reads_files_as_git_and_sha256(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"hello\n")
    with Confined(tmp_path) as directory:
        git, sha256 = digests(directory, "f", Check("git-blob", ""))
        assert git == "ce013625030ba8dba906f756967f9e9ca394464a"
        assert (
            sha256
            == digests(directory, "f", Check("sha256", ""))[0]
            == hashlib.sha256(b"hello\n").hexdigest()
        )


# -------------------------------------------------------------------- the directory: nothing followed


@pytest.mark.parametrize(
    "name",
    [
        "medfact/medfact_bench.parquet.part",
        "medfact/medfact_bench.parquet",
        f"{MANIFEST}.part",
        MANIFEST,
        LOCK,
    ],
)
def test_a_link_inside_the_directory_is_refused_and_what_it_names_is_untouched(
    hub: FakeHub, tmp_path: Path, name: str
) -> None:
    """A symbolic link at any name fetch writes or reads (issue 33, 7): before, a link at
    `<file>.part` had the download appended to the file it named, and one at the manifest's
    `.part` had it overwritten, and the fetch succeeded."""
    out, victim = tmp_path / "data", tmp_path / "victim"
    victim.write_bytes(b"not medhal's to write")
    (out / name).parent.mkdir(parents=True, exist_ok=True)
    (out / name).symlink_to(victim)
    proc = run_fetch(out, hub, "medfact-bench")
    clean_exit_2(proc, f"{out / name} is a symbolic link", "remove it")
    assert victim.read_bytes() == b"not medhal's to write"
    assert (out / name).is_symlink()


@pytest.mark.parametrize("folder", ["medfact", ".medhal-fetch", ".medhal-fetch/ncbi"])
def test_a_linked_folder_inside_the_directory_is_not_written_through(
    hub: FakeHub, tmp_path: Path, folder: str
) -> None:
    """`medhal-data/medhalt -> /etc`: nothing is written where the link points."""
    out, elsewhere = tmp_path / "data", tmp_path / "elsewhere"
    elsewhere.mkdir()
    (out / folder).parent.mkdir(parents=True, exist_ok=True)
    (out / folder).symlink_to(elsewhere, target_is_directory=True)
    proc = run_fetch(out, hub, "medfact-bench")
    clean_exit_2(proc, f"{out / folder} is a symbolic link")
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize(
    "name", ["medfact/medfact_bench.parquet.part", "medfact/medfact_bench.parquet", MANIFEST]
)
def test_a_fifo_is_refused_not_waited_on(hub: FakeHub, tmp_path: Path, name: str) -> None:
    """Before, a FIFO at `<file>.part` had fetch wait for a reader for ever."""
    (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(tmp_path / name)
    clean_exit_2(run_fetch(tmp_path, hub, "medfact-bench"), f"{tmp_path / name} is a FIFO")


def test_a_file_where_a_folder_must_be_is_one_line(hub: FakeHub, tmp_path: Path) -> None:
    (tmp_path / "medfact").write_text("a file")
    clean_exit_2(
        run_fetch(tmp_path, hub, "medfact-bench"), f"{tmp_path / 'medfact'} is a file where a folder"
    )


def test_the_output_directory_itself_may_be_a_link(hub: FakeHub, tmp_path: Path) -> None:
    """The directory the user names is the user's choice: a link there is followed."""
    real, link = tmp_path / "big-disk", tmp_path / "medhal-data"
    real.mkdir()
    link.symlink_to(real, target_is_directory=True)
    proc = run_fetch(link, hub, "medfact-bench")
    assert proc.returncode == 0, proc.stderr
    assert pq.read_table(real / "medfact/medfact_bench.parquet").num_rows == 6


def test_a_second_fetch_into_the_same_directory_is_refused_naming_the_first(
    hub: FakeHub, tmp_path: Path
) -> None:
    """Two fetches into one directory (issue 33, 11): before, both failed, one blaming a
    corrupt upstream. The second is refused in one line naming the first; the first ends well."""
    hub.drip[MEDFACT_CARD] = 0.005  # holds the first fetch inside the directory for a moment
    chosen = choose(["medfact-bench"], declared)
    first: list[object] = []
    worker = threading.Thread(target=lambda: first.extend(fetch(chosen, tmp_path)))
    worker.start()
    try:
        while not hub.gets("README.md") and worker.is_alive():
            threading.Event().wait(0.01)
        with pytest.raises(FetchError, match=rf"another medhal fetch \(pid {os.getpid()} on "):
            list(fetch(chosen, tmp_path))
    finally:
        worker.join()
    assert [f.status for f in first] == ["downloaded"]  # type: ignore[attr-defined]
    hub.drip.clear()
    (done,) = fetch(chosen, tmp_path)  # the lock went with the first fetch
    assert done.status == "verified"


def test_a_held_lock_names_its_holder(hub: FakeHub, tmp_path: Path) -> None:
    with Confined(tmp_path) as directory, directory.locked(LOCK, "pid 4242 on another-host, since noon"):
        proc = run_fetch(tmp_path, hub, "medfact-bench")
    clean_exit_2(
        proc, f"{tmp_path} is being filled by another medhal fetch (pid 4242 on another-host, since noon)"
    )
    assert not (tmp_path / "medfact").exists()


def test_the_confined_directory_removes_and_replaces_links_never_what_they_name(tmp_path: Path) -> None:
    from medhal.kit.confined import Unsafe

    victim = tmp_path / "victim"
    victim.write_bytes(b"keep")
    root = tmp_path / "root"
    root.mkdir()
    (root / "a").symlink_to(victim)
    (root / "b").symlink_to(victim)
    (root / "new").write_bytes(b"new")
    with Confined(root) as directory:
        for how in ("read", "write", "append", "update"):
            with pytest.raises(Unsafe, match="is a symbolic link"), directory.open("a", how):
                pass
        with pytest.raises(Unsafe, match="not a path inside"):
            directory.size("../victim")
        directory.remove("a")
        directory.replace("new", "b")
    assert (
        victim.read_bytes() == b"keep" and not (root / "a").exists() and (root / "b").read_bytes() == b"new"
    )


# ------------------------------------------------------------------------------ a hostile Hub mirror


def test_a_listing_that_names_itself_as_next_page_ends(hub: FakeHub, tmp_path: Path) -> None:
    """Before, a `Link: rel=next` to the page itself looped for ever."""
    hub.next_link[MEDFACT_TREE] = lambda request: hub.url + request
    clean_exit_2(run_fetch(tmp_path, hub, "medfact-bench"), "next page", "was read already")
    assert len(hub.gets(MEDFACT_TREE)) == 1


def test_a_listing_without_end_stops_at_the_page_limit(hub: FakeHub, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(fetch_module, "MAX_LISTING_PAGES", 5)
    page = itertools.count(2)
    hub.next_link[MEDFACT_TREE] = lambda request: f"{hub.url}{MEDFACT_TREE}?cursor={next(page)}"
    clean_exit_2(run_fetch(tmp_path, hub, "medfact-bench"), "more than 5 pages")
    assert len(hub.gets(MEDFACT_TREE)) == 5


@pytest.mark.parametrize("where", ["another port", "another host name"])
def test_a_next_page_on_another_host_is_refused_and_gets_no_token(
    hub: FakeHub, tmp_path: Path, monkeypatch, where: str
) -> None:
    """Before, the token went to whatever host a `next` link named."""
    monkeypatch.setenv("HF_TOKEN", "hf_secret_token")
    elsewhere = FakeHub().start()
    try:
        host = elsewhere.url if where == "another port" else hub.url.replace("127.0.0.1", "localhost")
        hub.next_link[MEDFACT_TREE] = lambda request: f"{host}{MEDFACT_TREE}?cursor=2"
        proc = run_fetch(tmp_path, hub, "medfact-bench")
    finally:
        elsewhere.stop()
    clean_exit_2(proc, f"the listing's next page is {host}", "refused", "endpoint's host only")
    assert elsewhere.log == [] and len(hub.gets(MEDFACT_TREE)) == 1


def test_a_redirect_to_another_host_gets_no_token(hub: FakeHub, tmp_path: Path, monkeypatch) -> None:
    """The Hub sends LFS files from its CDN: the redirect is followed, the token stays behind."""
    monkeypatch.setenv("HF_TOKEN", "hf_secret_token")
    cdn = FakeHub(assets={"split.parquet": hub.body(MEDFACT_FILE) or b""}).start()
    try:
        hub.redirect[MEDFACT_FILE] = f"{cdn.url}/assets/split.parquet"
        proc = run_fetch(tmp_path, hub, "medfact-bench")
    finally:
        cdn.stop()
    assert proc.returncode == 0, proc.stderr
    assert cdn.authorization == {"/assets/split.parquet": None}
    assert hub.authorization[MEDFACT_FILE] == "Bearer hf_secret_token"


def test_a_file_streamed_past_its_listed_size_is_cut_there(hub: FakeHub, tmp_path: Path) -> None:
    """Before, a file streamed without end was written without limit."""
    hub.endless.add(MEDFACT_FILE)
    proc = run_fetch(tmp_path, hub, "medfact-bench")
    clean_exit_2(proc, "the server sent more than the", "bytes the listing gives", "nothing was kept")
    assert not list(tmp_path.rglob("*.parquet*"))


def test_an_asset_streamed_without_end_is_cut_at_the_bound(hub: FakeHub, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(fetch_module, "MAX_UNLISTED_BYTES", 1 << 20)
    hub.endless.add("/assets/medhallu/Detection/detection_vllm_notsurecase.py")
    proc = run_fetch(tmp_path, hub, "medhallu", "--setting", "pqa_labeled")
    clean_exit_2(proc, "more than the 1,048,576 bytes a file with no listed size may have")
    assert not list(tmp_path.rglob("*.py*"))


@pytest.mark.parametrize("path", [MEDFACT_TREE, MEDFACT_FILE], ids=["listing", "file"])
@pytest.mark.parametrize("way", ["drips", "stalls"])
def test_a_slow_mirror_is_given_up_at_the_deadline(hub: FakeHub, tmp_path: Path, path: str, way: str) -> None:
    """One byte at a time, each in time for a read timeout (before: never given up), or
    nothing at all for longer than the deadline."""
    size = len(hub.body(path) or b"")
    if way == "drips":
        hub.drip[path] = 0.02  # the whole answer would take size / 50 s
    else:
        hub.stall[path] = 3.0
    proc = run_fetch(tmp_path, hub, "medfact-bench", "--deadline", "0.5")
    clean_exit_2(proc, "no complete answer within 0.5 s", "--deadline")
    part = tmp_path / "medfact/medfact_bench.parquet.part"
    assert size > 200 and (not part.exists() or part.stat().st_size < size)


def card_with(header: str) -> bytes:
    return f"---\n{header}\n---\n# A card\n".encode()


def alias_bomb(levels: int = 9) -> str:
    """Nine lines that stand for 10**9 copies of one pattern (the "billion laughs")."""
    lines = ['l0: &l0 ["data/train-*", "data/train-*", "data/train-*", "data/train-*", "data/train-*"]']
    for n in range(1, levels):
        lines.append(f"l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * 10)}]")
    return (
        "\n".join(lines)
        + f"\nconfigs:\n- config_name: default\n  data_files:\n  - split: train\n    path: *l{levels - 1}"
    )


@pytest.mark.parametrize(
    "header, fragment",
    [
        (alias_bomb(), "YAML alias"),
        ("configs: " + "[" * 5000 + "]" * 5000, "nests [ and { more than 100 deep (line 2)"),
        ("configs:" + "".join(f"\n{' ' * n}- " for n in range(2, 2000, 2)) + "x", "cannot be read"),
        ("configs: [unclosed", "cannot be read at line"),
        ("when: 2024-13-45", "cannot be read"),
    ],
    ids=["alias bomb", "deep brackets", "deep indentation", "bad YAML", "bad date"],
)
def test_a_hostile_dataset_card_is_one_line(hub: FakeHub, tmp_path: Path, header: str, fragment: str) -> None:
    """Before, the alias bomb ended in MemoryError."""
    hub.repos[MEDFACT].files["README.md"] = card_with(header)
    clean_exit_2(
        run_fetch(tmp_path, hub, "medfact-bench"), "ncbi/MedFact-Bench@249028ca", "README.md", fragment
    )


def test_card_values_that_are_no_patterns_are_ignored() -> None:
    assert split_patterns({"data_files": {"train": 5}}, "train") == []
    assert split_patterns({"data_files": [{"split": "train", "path": [1, ["x"], "a/*"]}]}, "train") == ["a/*"]
    assert split_patterns({"data_files": 3.5}, "train") == []


def listing_entry(**fields) -> dict:
    return {"type": "file", "path": "data/train-0.parquet", "size": 10, "oid": "a" * 40, **fields}


@pytest.mark.parametrize(
    "body, fragment",
    [
        (json.dumps([listing_entry()]).replace("10", "1e400"), "size is not a whole number"),
        (b"[" * 200_000 + b"]" * 200_000, "nested too deeply"),
        (json.dumps({"files": []}), "a JSON list of entries expected"),
        (json.dumps([5]), "entry 1: not a JSON object"),
        (json.dumps([listing_entry(size=True)]), "size is not a whole number"),
        (json.dumps([listing_entry(size="10")]), "size is not a whole number"),
        (json.dumps([listing_entry(size=-1)]), "size is not a whole number"),
        (json.dumps([listing_entry(path=["a"])]), "path is not a text"),
        (json.dumps([listing_entry(oid=None)]), "oid is not a git blob id"),
        (json.dumps([listing_entry(lfs={"oid": "x"})]), "lfs.oid is not a sha256"),
        (json.dumps([listing_entry(lfs=[1])]), "lfs.oid is not a sha256"),
        (b"\xff\xfe[]", "UTF-16"),
        (b"<html>busy</html>", "not valid JSON"),
    ],
    ids=lambda v: str(v)[:30],
)
def test_a_hostile_listing_is_one_line(hub: FakeHub, tmp_path: Path, body, fragment: str) -> None:
    """Before, `"size": 1e400` and a listing nested 200,000 deep ended in tracebacks."""
    hub.listing[MEDFACT] = body.encode() if isinstance(body, str) else body
    clean_exit_2(run_fetch(tmp_path, hub, "medfact-bench"), MEDFACT_TREE, "not a Hub file listing", fragment)


def test_a_listing_page_past_its_bound_is_one_line(hub: FakeHub, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(fetch_module, "MAX_PAGE_BYTES", 100)
    clean_exit_2(run_fetch(tmp_path, hub, "medfact-bench"), MEDFACT_TREE, "longer than the 100 bytes read")


def test_server_text_reaches_the_terminal_printable(hub: FakeHub, tmp_path: Path) -> None:
    """ESC sequences in listed file names (retitle the terminal, clear it) are shown, not sent."""
    hub.repos[MEDFACT].files["data/train-\x1b]0;owned\x07\x1b[2J.parquet"] = b"x"
    proc = run_fetch(tmp_path, hub, "medfact-bench")
    clean_exit_2(proc, "2 data files", "data/train-\\x1b]0;owned\\x07\\x1b[2J.parquet")
    assert "\x1b" not in proc.stderr + proc.stdout and "\x07" not in proc.stderr + proc.stdout


# ------------------------------------------------------------------------------ mirror URLs, the manifest


@pytest.mark.parametrize(
    "url, fragment",
    [
        ("http://[::1", "is not a URL"),
        ("http://mirror\x1b[2J/assets", "control character"),
        ("http://mirror/a ssets", "space or control character"),
        ("", "an empty URL"),
        ("ftp://mirror/assets", "http:// or https://"),
        ("mirror/assets", "http:// or https://"),
        ("http://mirror:port/assets", "is not a URL"),
        ("http://mirror/assets?x=1", "base URL only"),
    ],
)
def test_a_bad_asset_mirror_is_one_line(tmp_path: Path, url: str, fragment: str) -> None:
    """Before, `http://[::1` and control characters ended in tracebacks, and `''` silently
    meant the pinned URLs."""
    proc = medhal_main("fetch", "medhallu", "-o", str(tmp_path / "data"), "--asset-mirror", url)
    clean_exit_2(proc, "argument --asset-mirror", fragment)
    assert "\x1b" not in proc.stderr and not (tmp_path / "data").exists()


def test_a_bad_hub_endpoint_is_one_line(tmp_path: Path) -> None:
    proc = medhal_main("fetch", "medfact-bench", "-o", str(tmp_path), env={"HF_ENDPOINT": "http://[::1"})
    clean_exit_2(proc, "HF_ENDPOINT: http://[::1 is not a URL")


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "soon"])
def test_a_bad_deadline_is_one_line(tmp_path: Path, value: str) -> None:
    clean_exit_2(medhal_main("fetch", "-o", str(tmp_path), "--deadline", value), "--deadline", repr(value))


def test_credentials_in_a_mirror_url_are_never_shown(hub: FakeHub, tmp_path: Path) -> None:
    """Before, `user:password@` in a mirror URL was printed with every error naming it."""
    secret = hub.url.replace("http://", "http://someone:s3cret@")
    proc = medhal_main(
        "fetch",
        "medhallu",
        "--setting",
        "pqa_labeled",
        "-o",
        str(tmp_path),
        "--asset-mirror",
        f"{secret}/none",
    )
    clean_exit_2(proc, "HTTP 404", "http://***@127.0.0.1")
    hub.stop()
    down = medhal_main("fetch", "medfact-bench", "-o", str(tmp_path), env={"HF_ENDPOINT": secret})
    clean_exit_2(down, "cannot download", "http://***@127.0.0.1")
    for shown in (proc, down):
        assert "s3cret" not in shown.stdout + shown.stderr and "someone" not in shown.stdout + shown.stderr


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_a_previous_manifest_is_carried_only_where_it_still_holds(hub: FakeHub, tmp_path: Path) -> None:
    """Before, an entry whose path was a list ended in a traceback, and every earlier entry was
    carried unverified. Now each is carried only when its file is there with the sha256
    recorded; each other one is dropped with a line saying why."""
    assert run_fetch(tmp_path, hub, "medfact-bench").returncode == 0
    (good,) = json.loads((tmp_path / MANIFEST).read_text())["files"]
    (tmp_path / "kept.csv").write_bytes(b"kept")
    (tmp_path / "changed.csv").write_bytes(b"after")
    (tmp_path / "linked.csv").symlink_to(tmp_path / "kept.csv")
    bad = [
        {"path": 5, "sha256": "0" * 64},
        {"path": ["a"], "sha256": "0" * 64},
        {"path": "../outside.csv", "sha256": "0" * 64},
        {"path": "kept.csv", "sha256": 7},
        {"path": "kept.csv", "sha256": sha256_hex(b"kept"), "size": 10**2000},
        "not an entry",
        {"path": "gone.csv", "sha256": "0" * 64},
        {"path": "changed.csv", "sha256": sha256_hex(b"before")},
        {"path": "linked.csv", "sha256": sha256_hex(b"kept")},
    ]
    carried = {"path": "kept.csv", "sha256": sha256_hex(b"kept"), "size": 4}
    (tmp_path / MANIFEST).write_text(json.dumps({"files": [good, *bad, carried]}))
    proc = run_fetch(tmp_path, hub, "medhallu", "--setting", "pqa_labeled")
    assert proc.returncode == 0, proc.stderr
    dropped = [line for line in proc.stdout.splitlines() if line.split()[:1] == ["dropped"]]
    assert len(dropped) == len(bad), proc.stdout
    for reason in ("no longer in the directory", "changed since it was recorded", "is a symbolic link"):
        assert sum(reason in line for line in dropped) == 1, (reason, dropped)
    assert sum("entry" in line and "of the previous manifest" in line for line in dropped) == 6
    paths = [e["path"] for e in json.loads((tmp_path / MANIFEST).read_text())["files"]]
    assert paths == sorted(
        [
            good["path"],
            "kept.csv",
            "medhallu/Detection/detection_vllm_notsurecase.py",
            "medhallu/pqa_labeled.parquet",
        ]
    )


def test_an_unreadable_manifest_is_written_anew_with_a_line(hub: FakeHub, tmp_path: Path) -> None:
    (tmp_path / MANIFEST).write_bytes(b"[" * 100_000)
    proc = run_fetch(tmp_path, hub, "medfact-bench")
    assert proc.returncode == 0, proc.stderr
    assert f"dropped  {MANIFEST}  (from the manifest: unreadable" in proc.stdout
    assert [e["path"] for e in json.loads((tmp_path / MANIFEST).read_text())["files"]] == [
        "medfact/medfact_bench.parquet"
    ]


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
