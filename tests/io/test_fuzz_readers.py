"""Property-based fuzzing of every reader: valid files parse exactly; changed files parse into
something consistent or raise :class:`~xlnel.errors.XlnelError`, never another exception.

``benchmarks/fuzz_readers.py`` runs the same properties with many more examples.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings

from tests.io.fuzz_cases import CASES, changed_files, check_mutated, check_valid

FUZZ = settings(max_examples=15, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

#: Inputs the fuzzer found that once raised something other than a FormatError.
REGRESSIONS: dict[str, list[dict[str, bytes]]] = {
    # json.loads raised RecursionError on deeply nested arrays
    "jsonl": [{"c.jsonl": b"[" * 5000 + b"\n"}],
    # a header naming a column twice made rows index past their padded end: IndexError
    "kb_tsv": [{"kb.tsv": b"concept_id\tid\tname\tid\tname\tpreferred\nC1\t0\t0\n"}],
    # the text file was decoded without naming its line: UnicodeDecodeError
    "brat": [{"d1.txt": b"\x80", "d1.ann": b""}],
    # dictionary and pair files were opened in text mode: UnicodeDecodeError
    "dictionary": [{"dictionary.tsv": b"\x80"}],
    "pairs": [{"p.tsv": b"\x80"}],
    "tagged_pairs": [{"p.tsv": b"\x80"}],
    # an XML declaration naming an encoding Python does not know: LookupError
    "bioc": [{"c.xml": b"<?xml version='1.0' encoding='TF-8'?><collection/>"}],
    # a lost line end puts an annotation into the abstract, whose tabs PubTator writes as spaces
    "pubtator": [{"c.pubtator": b"1000|t|0\n1000|a|1000\t0\t1\t0\tDisease\t-1\n\n"},
                 {"c.pubtator": b"1|t|0\n1|a|\r0\n\n"}],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_valid_files_parse_exactly(name: str) -> None:
    case = CASES[name]

    @FUZZ
    @given(case.valid)
    def check(valid: tuple[dict[str, bytes], Any]) -> None:
        check_valid(case, *valid)

    check()


@pytest.mark.parametrize("name", sorted(CASES))
def test_changed_files_parse_or_raise_format_error(name: str) -> None:
    case = CASES[name]

    @FUZZ
    @given(changed_files(case))
    def check(files: dict[str, bytes]) -> None:
        check_mutated(case, files)

    for files in REGRESSIONS.get(name, []):
        check = example(files)(check)
    check()
