"""Both branches' spill notices are read by the one reader: main's `Output too large …` and dev's
`<persisted-output …>` (reference-dev §4.7, its template reproduced here)."""

from __future__ import annotations

from pathlib import PurePosixPath

from memory_core.spill_notice import spill_notice


def dev_notice(path: str, size: int, preview: str, write_note: str = "") -> str:
    # Mycel dev's spill_buffer/spill.py replacement text, field by field.
    return (
        f'<persisted-output path="{path}" bytes="{size}">\nSize: {size} bytes\n'
        "Use Read to inspect the full persisted output.\nPreview (first 2048 bytes):\n"
        f"{preview}\n...{write_note}\n</persisted-output>"
    )


def test_mains_notice_names_its_size_path_and_workspace() -> None:
    found = spill_notice(
        "Output too large (60000 bytes). Full output saved to: /w/.leon/tool-results/c1.txt\n\nhead"
    )
    assert found is not None
    assert (found.size, found.path, found.workspace) == (
        60000,
        "/w/.leon/tool-results/c1.txt",
        PurePosixPath("/w"),
    )


def test_devs_persisted_output_notice_is_read_the_same_way() -> None:
    found = spill_notice(dev_notice("/work/space/.leon/tool-results/call_7.txt", 73_412, "line 1\nline 2"))
    assert found is not None
    assert (found.size, found.path) == (73_412, "/work/space/.leon/tool-results/call_7.txt")
    assert found.workspace == PurePosixPath("/work/space")


def test_a_dev_path_with_quotes_and_bytes_in_it_is_kept_whole() -> None:
    odd = '/w/.leon/tool-results/a" bytes="1.txt'
    found = spill_notice(dev_notice(odd, 51_000, "x"))
    assert found is not None
    assert (found.size, found.path) == (51_000, odd)


def test_results_that_only_mention_a_notice_are_not_spills() -> None:
    for text in (
        "the tool said: Output too large (5 bytes). Full output saved to: /x",
        'quoted: <persisted-output path="/x" bytes="5">',
        "<persisted-output>",
        "",
    ):
        assert spill_notice(text) is None, text
