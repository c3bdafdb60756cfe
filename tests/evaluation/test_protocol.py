from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from xlnel.analysis.protocol import (
    ProtocolSample,
    galperin2022,
    galperin2022_pipeline,
    gold_term_candidate,
    matcher_scorer,
    protocol_sample,
    tie_candidates,
)
from xlnel.cli.main import app
from xlnel.config import FilterConfig, load_config
from xlnel.filtering.base import CandidateFilter
from xlnel.io import read_documents
from xlnel.pipeline import Pipeline, train
from xlnel.types import Candidate, Document, Link, Span

#: Scores the stub filter gives to the gold terms; every other candidate keeps its own score.
GOLD_TERM_SCORES = {"bbb": 0.9, "ddd": 0.2}


class StubFilter(CandidateFilter):
    """Known scores: a gold term's from GOLD_TERM_SCORES, anything else its matcher score."""

    registered_name = "test.stub"

    def __init__(self, threshold: float = 0.5, level: str = "span") -> None:
        super().__init__(FilterConfig(threshold=threshold, select_level=level), "en")
        self.seen: list[list[Candidate]] = []

    def fit(self, documents, candidates, progress=False):
        return self

    def score_batch(self, documents, candidates, progress=False):
        self.seen.extend(list(c) for c in candidates)
        return [np.array([GOLD_TERM_SCORES.get(c.name, c.score) for c in cands])
                for cands in candidates]

    def save(self, directory: Path) -> None:
        raise NotImplementedError

    @classmethod
    def load(cls, directory, config, lang):
        raise NotImplementedError


def cand(text: str, start: int, end: int, cid: str, name: str, score: float) -> Candidate:
    return Candidate(Span(start, end, text[start:end]), cid, name, score)


def link(text: str, start: int, end: int, *ids: str) -> Link:
    return Link(start, end, text[start:end], ids)


A = "aaa bbb ccc ddd eee"
B = "xxx yyy zzz"
C = "nothing here"


@pytest.fixture()
def corpus() -> tuple[list[Document], list[list[Candidate]]]:
    """3 gold mentions in 2 documents (zzz unreached), and a document without gold.

    Ties: a0, b1 (exact, correct) and bc2 (partial) to bbb; d3 (partial "dd") and e4 to ddd.
    Positives: bbb in b1's context, ddd in d3's. Pool: a0, bc2, e4, n5, h6 (b1 is correct and a
    context, d3 a context).
    """
    docs = [Document("A", A, (link(A, 4, 7, "C1"), link(A, 12, 15, "C2"))),
            Document("B", B, (link(B, 8, 11, "C3"),)),
            Document("C", C)]
    cands = [[cand(A, 0, 3, "C9", "a0", 0.5), cand(A, 4, 7, "C1", "b1", 0.9),
              cand(A, 5, 11, "C7", "bc2", 0.6), cand(A, 13, 15, "C2", "d3", 0.7),
              cand(A, 16, 19, "C8", "e4", 0.3)],
             [],
             [cand(C, 0, 7, "C9", "n5", 0.4), cand(C, 8, 12, "C9", "h6", 0.2)]]
    return docs, cands


def test_sample_by_hand(corpus):
    docs, cands = corpus
    filt = StubFilter()
    sample = protocol_sample(docs, cands, filt)
    # bbb accepted (0.9), ddd rejected (0.2); zzz has no tied candidate
    assert sample.positive_scores.tolist() == [0.9, 0.2]
    assert sample.pool_scores.tolist() == [0.5, 0.6, 0.3, 0.4, 0.2]  # a0 bc2 e4 n5 h6
    assert sample.unreached == 1
    # positives are shown with the gold term, in the context candidate's span and score
    swapped = filt.seen[3]
    assert [c.name for c in swapped] == ["a0", "bbb", "bc2", "ddd", "e4"]
    assert swapped[3].span == cands[0][3].span and swapped[3].score == 0.7
    assert swapped[3].concept_id == "C2"


def test_given_plain_scores_replace_the_plain_pass(corpus):
    docs, cands = corpus
    full = protocol_sample(docs, cands, StubFilter())
    filt = StubFilter()
    plain = [np.array([c.score for c in cs]) for cs in cands]
    given = protocol_sample(docs, cands, filt, plain_scores=plain)
    assert len(filt.seen) == 3  # only the gold-term pass, one list per document
    assert given.pool_scores.tolist() == full.pool_scores.tolist()
    assert given.positive_scores.tolist() == full.positive_scores.tolist()
    with pytest.raises(ValueError, match="one score per candidate"):
        protocol_sample(docs, cands, filt, plain_scores=plain[:2])


def test_scores_by_hand(corpus):
    docs, cands = corpus
    s = galperin2022(docs, cands, StubFilter(), seed=0)
    picked = np.random.default_rng(0).integers(0, 5, size=4).tolist()
    assert picked == [4, 3, 2, 1]  # h6 0.2, n5 0.4, e4 0.3, bc2 0.6: one accepted
    assert (s.tp, s.fp, s.fn) == (1, 1, 2)  # fn: ddd rejected + zzz unreached
    assert (s.positives, s.negatives, s.reached, s.unreached, s.pool) == (2, 4, 2, 1, 5)
    assert s.precision == pytest.approx(0.5)
    assert s.recall == pytest.approx(1 / 3)
    assert s.f1 == pytest.approx(2 * 0.5 / 3 / (0.5 + 1 / 3))
    assert s.seed == 0 and s.threshold == 0.5 and s.level == "span"
    assert s.to_dict()["protocol"] == "galperin2022"


def test_seed_determines_the_negatives(corpus):
    docs, cands = corpus
    filt = StubFilter()
    assert galperin2022(docs, cands, filt, seed=7) == galperin2022(docs, cands, filt, seed=7)
    fps = {galperin2022(docs, cands, filt, seed=s).fp for s in range(10)}
    assert len(fps) > 1
    sample = protocol_sample(docs, cands, filt)
    assert sample.draw(3) == galperin2022(docs, cands, filt, seed=3)
    assert sample.draw(3, negatives_per_positive=5).negatives == 10


def test_concept_level_counts_only_mentions_with_ids(corpus):
    docs, cands = corpus
    text = A
    docs[0] = Document("A", text, (link(text, 4, 7, "C1"), link(text, 12, 15)))
    cands[0][1] = cand(text, 4, 7, "C5", "b1", 0.9)  # right span, wrong concept
    s = protocol_sample(docs, cands, StubFilter(level="concept"))
    # ddd (no id) is left out, so every candidate of A ties to bbb
    assert s.positive_scores.tolist() == [0.9]
    assert s.level == "concept"
    # b1 is the context of bbb, so not pooled even though wrong at concept level
    assert len(s.pool_scores) == 6  # a0 bc2 d3 e4 n5 h6
    span = protocol_sample(docs, cands, StubFilter(level="span"))
    assert span.positive_scores.tolist() == [0.9, 0.2]


def test_correct_links_stay_out_of_the_pool():
    text = "bbb bbb"
    doc = Document("A", text, (link(text, 0, 3, "C1"),))
    cands = [cand(text, 0, 3, "C1", "x", 0.9), cand(text, 0, 3, "C1", "y", 0.8),
             cand(text, 4, 7, "C1", "z", 0.7)]
    s = protocol_sample([doc], [cands], StubFilter())
    assert s.pool_scores.tolist() == [0.7]  # y is a correct link but not the context


def test_ties_by_nearest_start_without_boundary_check():
    text = "0123456789abcdefghij"
    doc = Document("A", text, (link(text, 8, 10), link(text, 12, 14), link(text, 12, 16)))
    cands = [cand(text, 0, 2, "C", "n", 0.1),    # no overlap at all: nearest start is 8
             cand(text, 9, 18, "C", "n", 0.1),   # partial overlap with the first
             cand(text, 10, 13, "C", "n", 0.1),  # starts 2 from 8 and 12: nearer end wins
             cand(text, 12, 15, "C", "n", 0.1),  # same start twice: ends 14 and 16 tie -> first
             cand(text, 12, 16, "C", "n", 0.1)]
    assert tie_candidates(doc, cands).tolist() == [0, 0, 1, 1, 2]
    assert tie_candidates(Document("B", text), cands).tolist() == [-1] * 5
    assert tie_candidates(doc, []).tolist() == []


def test_partial_overlap_reaches_and_is_the_context():
    text = "take metformin daily"
    doc = Document("A", text, (link(text, 5, 14, "C6"),))
    partial = cand(text, 6, 20, "C9", "etformin daily", 0.8)
    s = protocol_sample([doc], [[partial]], StubFilter())
    assert s.unreached == 0 and s.positive_scores.tolist() == [0.8]
    shown = gold_term_candidate(partial, doc.entities[0])
    assert (shown.name, shown.concept_id, shown.span) == ("metformin", "C6", partial.span)
    assert shown.score == 0.8 and gold_term_candidate(partial, doc.entities[0], 0.3).score == 0.3


def test_name_scorer_gives_positives_the_gold_terms_score():
    text = "take metformin daily"
    doc = Document("A", text, (link(text, 5, 14, "C6"),))
    cands = [cand(text, 5, 14, "C6", "metformin hydrochloride", 0.6)]
    asked = []

    def scorer(texts, names):
        asked.append((list(texts), list(names)))
        return np.array([1.0])

    filt = StubFilter()  # scores "metformin" by its candidate score
    s = protocol_sample([doc], [cands], filt, name_scores=scorer)
    assert asked == [(["metformin"], ["metformin"])]
    assert s.positive_scores.tolist() == [1.0]
    assert filt.seen[1][0].score == 1.0 and filt.seen[0][0].score == 0.6
    assert galperin2022([doc], [cands], filt).tp == 1  # 0.6 kept: still above 0.5


def test_empty_and_errors(corpus):
    docs, cands = corpus
    s = galperin2022([], [], StubFilter())
    assert (s.precision, s.recall, s.f1, s.tp, s.fp, s.fn) == (0.0, 0.0, 0.0, 0, 0, 0)
    only_unreached = galperin2022(docs[1:2], cands[1:2], StubFilter())
    assert (only_unreached.fn, only_unreached.negatives, only_unreached.pool) == (1, 0, 0)
    with pytest.raises(ValueError, match="candidate lists"):
        galperin2022(docs, cands[:1], StubFilter())
    with pytest.raises(ValueError, match="overlap"):
        galperin2022(docs, cands, StubFilter(), level="overlap")
    with pytest.raises(ValueError, match="at least 0"):
        protocol_sample(docs, cands, StubFilter()).draw(0, -1)
    with pytest.raises(ValueError, match="threshold"):
        ProtocolSample.concat([protocol_sample(docs, cands, StubFilter(0.5)),
                               protocol_sample(docs, cands, StubFilter(0.6))])


def test_batches_combine_to_the_whole(corpus):
    docs, cands = corpus
    filt = StubFilter()
    parts = [protocol_sample(docs[i:i + 1], cands[i:i + 1], filt) for i in range(3)]
    assert ProtocolSample.concat(parts).draw(5) == galperin2022(docs, cands, filt, seed=5)


@pytest.fixture()
def tiny_pipeline(tmp_path, tiny_config) -> Path:
    train(load_config(tiny_config), tmp_path / "pipe")
    return tmp_path / "pipe"


def test_pipeline_wrapper_matches_components(tiny_pipeline):
    pipe = Pipeline.load(tiny_pipeline)
    gold = read_documents(tiny_pipeline / "test.jsonl")
    cands = pipe.candidates(gold)
    whole = galperin2022(gold, cands, pipe.filter, seed=1,
                         name_scores=matcher_scorer(pipe.generator))
    batched = galperin2022_pipeline(tiny_pipeline, tiny_pipeline / "test.jsonl", seed=1,
                                    batch_size=2)
    assert batched == whole
    kept = galperin2022_pipeline(pipe, gold, seed=1, rescore=False)
    assert kept == galperin2022(gold, cands, pipe.filter, seed=1)
    assert whole.positives + whole.unreached == sum(len(d.entities) for d in gold)
    assert whole.negatives == 2 * whole.positives


def test_cli(tiny_pipeline):
    runner = CliRunner()
    gold = str(tiny_pipeline / "test.jsonl")
    args = ["evaluate", gold, "--pipeline", str(tiny_pipeline), "--protocol", "galperin2022"]
    r = runner.invoke(app, [*args, "--seed", "3", "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["seed"] == 3 and out["protocol"] == "galperin2022"
    expected = galperin2022_pipeline(tiny_pipeline, gold, seed=3)
    assert out == expected.to_dict()
    r = runner.invoke(app, args)
    assert r.exit_code == 0 and "not end-to-end" in r.stdout
    r = runner.invoke(app, ["evaluate", gold, "--protocol", "galperin2022"])
    assert r.exit_code != 0 and "--pipeline" in r.output
    r = runner.invoke(app, ["evaluate", gold, "--pipeline", str(tiny_pipeline),
                            "--protocol", "nope"])
    assert r.exit_code != 0 and "galperin2022" in r.output
    r = runner.invoke(app, ["evaluate", gold])
    assert r.exit_code != 0 and "PRED" in r.output


def test_context_prefers_the_gold_span_then_the_best_name():
    text = "lithium carbonate was given"
    doc = Document("A", text, (link(text, 0, 17, "C1"),))
    cands = [cand(text, 0, 7, "C2", "lithium", 1.0),             # same start, better score
             cand(text, 0, 17, "C1", "lithium carbonates", 0.8),  # the gold span
             cand(text, 0, 17, "C3", "carbonate", 0.9)]           # the gold span's top name
    filt = StubFilter()
    protocol_sample([doc], [cands], filt)
    assert [c.name for c in filt.seen[1]] == ["lithium", "lithium carbonates",
                                              "lithium carbonate"]
