"""Output files are written all or nothing: a failure half-way leaves the old file as it
was and no temporary file behind."""

from __future__ import annotations

import pytest

from medhal.kit.files import atomic_open, atomic_write_text


def leftovers(directory) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if ".tmp-" in p.name)


def test_write_replaces_the_file(tmp_path):
    target = tmp_path / "report.json"
    target.write_text("old")
    assert atomic_write_text(target, "new ✓") == target
    assert target.read_text(encoding="utf-8") == "new ✓"
    assert leftovers(tmp_path) == []


def test_failure_keeps_the_old_file(tmp_path):
    target = tmp_path / "traces.jsonl"
    target.write_text("good old line\n")
    with pytest.raises(RuntimeError, match="scoring failed"), atomic_open(target, "w") as f:
        f.write("half of a new")
        raise RuntimeError("scoring failed")
    assert target.read_text() == "good old line\n"
    assert leftovers(tmp_path) == []


def test_unencodable_text_keeps_the_old_file(tmp_path):
    target = tmp_path / "report.md"
    target.write_text("old")
    with pytest.raises(UnicodeEncodeError):
        atomic_write_text(target, "fine, then \ud800")
    assert target.read_text() == "old" and leftovers(tmp_path) == []


def test_new_file_is_not_created_on_failure(tmp_path):
    with pytest.raises(ValueError), atomic_open(tmp_path / "new.json", "wb") as f:
        f.write(b"{")
        raise ValueError("boom")
    assert list(tmp_path.iterdir()) == []


def test_only_whole_file_writes(tmp_path):
    with pytest.raises(ValueError, match="mode must be 'w' or 'wb'"), atomic_open(tmp_path / "x", "a"):
        pass
