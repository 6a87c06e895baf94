"""The program cache (rsp.lars.cache): a program file loaded again comes from the cache without
parsing, and any change of the text, a broken entry or a disabled cache falls back to parsing."""

from __future__ import annotations

import pytest

import rsp.lars
from rsp.errors import ProgramError
from rsp.lars import cache, load

PROGRAM = "q(A, B) :- [10] <> p(A, B).\nr(X) :- q(X, _Y).\n"
WARNED = "i(X) :- p(X).\nh(X) :- [3] <> i(X).\n"  # a window over a predicate derived by plain heads


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("RSP_CACHE_DIR", str(folder))
    return folder


@pytest.fixture
def parses(monkeypatch) -> list[str]:
    """Records every time a program text is really parsed."""
    seen: list[str] = []
    real = rsp.lars.parse

    def counting(text: str, source: str = "<string>"):
        seen.append(text)
        return real(text, source)

    monkeypatch.setattr(rsp.lars, "parse", counting)
    return seen


def test_a_program_loaded_again_is_not_parsed_again(tmp_path, cache_dir, parses) -> None:
    path = tmp_path / "p.lars"
    path.write_text(PROGRAM)
    first = load(path)
    second = load(path)
    assert parses == [PROGRAM]
    assert second == first and str(second) == str(first)
    assert len(list((cache_dir / "programs").iterdir())) == 1


def test_warnings_and_strata_survive_the_cache(tmp_path, cache_dir, parses) -> None:
    path = tmp_path / "w.lars"
    path.write_text(WARNED)
    first = load(path)
    assert first.warnings and load(path).warnings == first.warnings
    assert load(path).strata == first.strata and len(parses) == 1


def test_an_edited_file_is_parsed_again(tmp_path, cache_dir, parses) -> None:
    path = tmp_path / "p.lars"
    path.write_text(PROGRAM)
    load(path)
    path.write_text(PROGRAM + "s(X) :- [2] [] p(X, X).\n")
    assert "s(X)" in str(load(path))
    assert len(parses) == 2


def test_errors_are_reported_every_time_and_not_cached(tmp_path, cache_dir, parses) -> None:
    path = tmp_path / "bad.lars"
    path.write_text("q(X) :- [10] <> p(X)\n")
    for _ in range(2):
        with pytest.raises(ProgramError, match=r"bad\.lars:"):
            load(path)
    assert len(parses) == 2 and not (cache_dir / "programs").exists()


def test_a_broken_entry_is_a_miss(tmp_path, cache_dir, parses) -> None:
    path = tmp_path / "p.lars"
    path.write_text(PROGRAM)
    load(path)
    (entry,) = (cache_dir / "programs").iterdir()
    entry.write_bytes(b"not a pickle")
    assert str(load(path)) == str(load(path, cache=False))
    assert len(parses) == 3  # the broken entry, then the uncached load; the entry was rewritten
    load(path)
    assert len(parses) == 3


def test_a_stale_fingerprint_is_a_miss(tmp_path, cache_dir, parses, monkeypatch) -> None:
    path = tmp_path / "p.lars"
    path.write_text(PROGRAM)
    load(path)
    monkeypatch.setattr(cache.CACHE, "_fingerprint", ("another rsp",))
    load(path)
    assert len(parses) == 2


def test_an_empty_cache_dir_setting_turns_the_cache_off(tmp_path, monkeypatch, parses) -> None:
    monkeypatch.setenv("RSP_CACHE_DIR", "")
    path = tmp_path / "p.lars"
    path.write_text(PROGRAM)
    load(path)
    load(path)
    assert len(parses) == 2 and cache.directory() is None


def test_an_unwritable_cache_is_not_an_error(tmp_path, monkeypatch, parses) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("RSP_CACHE_DIR", str(blocker / "sub"))  # below a file: cannot be created
    path = tmp_path / "p.lars"
    path.write_text(PROGRAM)
    assert str(load(path)) == str(load(path))
    assert len(parses) == 2
