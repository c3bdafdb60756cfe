from __future__ import annotations

from benchmarks.decision_variants import VARIANTS, cells


def test_bc5cdr_train_cells_never_read_dev() -> None:
    configs = cells("bc5cdr-train")
    assert [c.data.fold for c in configs] == [0, 1, 2, 3, 4]
    assert all(c.data.test is None and c.data.folds == 5 for c in configs)
    assert {c.data.train for c in configs} == {cells("bc5cdr")[0].data.train}
    # the shipped decisions are those of the BC5CDR config, not of a cell's own
    assert all(c.linker == cells("bc5cdr")[0].linker for c in configs)


def test_camoni_cells_are_the_five_folds() -> None:
    assert [c.data.fold for c in cells("diabetes")] == [0, 1, 2, 3, 4]


def test_shipped_is_a_variant() -> None:
    assert "shipped" in VARIANTS and "no-lexicon" in VARIANTS


def _link(rule, cfg, doc, cands, scores, t, lex):
    """One document linked under a variant as a cell links it (windowed path, one window)."""
    from xlnel.linkers.windows import link_windowed

    linker, threshold = rule(cfg, t)
    [linked] = link_windowed([doc], lambda docs: ([cands], [scores]), threshold, linker, lex)
    return linked


def test_threshold_offsets_move_only_the_threshold() -> None:
    import numpy as np

    from xlnel.linkers.lexicon import AnnotationLexicon
    from xlnel.types import Candidate, Document, Span

    cfg = cells("diabetes")[0]
    doc = Document(id="d", text="aa bb")
    cands = [Candidate(span=Span(0, 2, "aa"), concept_id="C1", name="aa", score=1.0),
             Candidate(span=Span(3, 5, "bb"), concept_id="C2", name="bb", score=1.0)]
    scores = np.array([0.52, 0.46])
    lex = AnnotationLexicon.fit([], cfg.lang)
    linked = {name: [link.text for link in _link(VARIANTS[name], cfg, doc, cands, scores, 0.5,
                                                 lex).entities]
              for name in ("shipped", "threshold-0.05", "threshold+0.05")}
    assert linked == {"shipped": ["aa"], "threshold-0.05": ["aa", "bb"], "threshold+0.05": []}


def test_every_variant_runs_on_every_corpus_config() -> None:
    # a variant's linker section is validated as a config's: turning the lexicon off where
    # the config dates the release from it (bc5cdr-mesh) must turn the release check off too
    import numpy as np

    from xlnel.linkers.lexicon import AnnotationLexicon
    from xlnel.types import Candidate, Document, Span

    doc = Document(id="d", text="aa bb")
    cands = [Candidate(span=Span(0, 2, "aa"), concept_id="D000001", name="aa", score=1.0)]
    for corpus in ("bc5cdr", "bc5cdr-train", "bc5cdr-mesh-train", "diabetes"):
        cfg = cells(corpus)[0]
        lex = AnnotationLexicon.fit([], cfg.lang)
        for name, rule in VARIANTS.items():
            linker, _ = rule(cfg, 0.5)
            # the windows were scored with the config's settings: a variant keeps them
            assert (linker.window_chars, linker.window_overlap) == \
                (cfg.linker.window_chars, cfg.linker.window_overlap), (corpus, name)
            assert _link(rule, cfg, doc, cands, np.array([0.9]), 0.5, lex).id == "d", \
                (corpus, name)
