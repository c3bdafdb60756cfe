"""The dense candidate generator: exact search, index switching, back-off, persistence."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("faiss")

from tests.linkers.conftest import NAMES  # noqa: E402
from xlnel.candidates.base import generator_class  # noqa: E402
from xlnel.candidates.spans import generate_spans  # noqa: E402
from xlnel.config import CandidatesConfig  # noqa: E402
from xlnel.dictionary.dictionary import Dictionary  # noqa: E402
from xlnel.errors import ArtifactError, ConfigError  # noqa: E402
from xlnel.linkers.dense import DenseCandidateGenerator  # noqa: E402
from xlnel.normalization import normalize_string  # noqa: E402
from xlnel.types import Document, Span  # noqa: E402

DOCS = [Document("d1", "The patient has diabetes mellitus and takes insulin daily."),
        Document("d2", "Severe high blood pressure with migraine pain.")]


def make_config(model: Path, threshold: float = 0.0, top_m: int = 3,
                **options: Any) -> CandidatesConfig:
    opts = {"model": str(model), "pooling": "mean", "prefix": "", "device": "cpu",
            "switch_threshold": None, **options}
    return CandidatesConfig(generator="xlnel.dense.v1", threshold=threshold, top_m=top_m,
                            options=opts)


def dictionary() -> Dictionary:
    d = Dictionary()
    for name, cid in NAMES.items():
        d.add(name, cid)
    return d


@pytest.fixture(scope="module")
def fitted(tiny_encoder_dir: Path) -> DenseCandidateGenerator:
    return DenseCandidateGenerator(make_config(tiny_encoder_dir), "en").fit(dictionary())


def test_registered_under_its_name() -> None:
    assert generator_class("xlnel.dense.v1") is DenseCandidateGenerator


def test_bad_options_name_the_key(tiny_encoder_dir: Path) -> None:
    with pytest.raises(ConfigError, match="candidates.options.nlsit"):
        DenseCandidateGenerator(make_config(tiny_encoder_dir, nlsit=4), "en")
    with pytest.raises(ConfigError, match="candidates.options.index"):
        DenseCandidateGenerator(make_config(tiny_encoder_dir, index="lsh"), "en")


def test_exact_index_returns_brute_force_top_m(fitted: DenseCandidateGenerator) -> None:
    assert fitted.encoder is not None
    keys = [normalize_string(n) for n in NAMES]
    names = fitted.encoder.encode(keys)
    spans = generate_spans(DOCS[0].text, "en", max_words=3)
    queries = fitted.encoder.encode([normalize_string(s.text) for s in spans])
    sims = queries @ names.T
    cands = fitted.generate(DOCS[0])
    for row, span in enumerate(spans):
        expected = sorted(range(len(keys)), key=lambda j: -sims[row, j])[:3]
        got = [c for c in cands if c.span == span]
        got_names = [normalize_string(c.name) for c in got]
        assert set(got_names) == {keys[j] for j in expected}
        for c in got:
            assert c.score == pytest.approx(sims[row, keys.index(normalize_string(c.name))],
                                            abs=1e-5)


def test_threshold_and_exact_name_match(tiny_encoder_dir: Path) -> None:
    gen = DenseCandidateGenerator(make_config(tiny_encoder_dir, threshold=0.995), "en")
    gen.fit(dictionary())
    cands = gen.generate(DOCS[0])
    assert {(c.span.text, c.concept_id) for c in cands} == {
        ("diabetes mellitus", "D1"), ("diabetes", "D1"), ("insulin", "C1")}
    assert all(c.score >= 0.999 for c in cands)


@pytest.mark.parametrize("kind", ["ivf", "hnsw"])
def test_approximate_indexes_find_exact_names(tiny_encoder_dir: Path, kind: str) -> None:
    gen = DenseCandidateGenerator(make_config(tiny_encoder_dir, threshold=0.995, index=kind,
                                              nlist=2, nprobe=2), "en")
    gen.fit(dictionary())
    assert ("insulin", "C1") in {(c.span.text, c.concept_id) for c in gen.generate(DOCS[0])}


def test_index_switching_prefers_annotations(tiny_encoder_dir: Path) -> None:
    d = dictionary()
    # an annotation pair whose name is also a KB name of another concept
    d.add("sugar disease", "D1", "annotation")
    gen = DenseCandidateGenerator(make_config(tiny_encoder_dir, top_m=5,
                                              switch_threshold=0.995), "en").fit(d)
    assert gen._small is not None and gen._small.ntotal == 1
    doc = Document("x", "sugar disease and asthma")
    by_text: dict[str, list] = {}
    for c in gen.generate(doc):
        by_text.setdefault(c.span.text, []).append(c)
    # exact annotation hit: only the small index is used (it holds one name)
    assert [c.concept_id for c in by_text["sugar disease"]] == ["D1"]
    # no annotation match: the big index wins with its top 5
    assert len(by_text["asthma"]) == 5 and by_text["asthma"][0].concept_id == "D2"
    off = DenseCandidateGenerator(make_config(tiny_encoder_dir, top_m=5), "en").fit(d)
    assert len([c for c in off.generate(doc) if c.span.text == "sugar disease"]) == 5


def test_backoff_links_sub_spans_with_exact_offsets(tiny_encoder_dir: Path) -> None:
    gen = DenseCandidateGenerator(make_config(tiny_encoder_dir, threshold=0.995), "en")
    gen.fit(dictionary())
    doc = Document("b", "He has severe asthma with migraine and insulin pump problems.")
    start = doc.text.index("severe")
    mention = Span(start, doc.text.index(" problems"), doc.text[start:doc.text.index(" problems")])
    other = Span(0, 2, "He")
    cands = gen.generate(doc, [mention, other])
    got = sorted({(c.span.start, c.span.end, c.span.text, c.concept_id) for c in cands})
    for s, e, text, _ in got:
        assert doc.text[s:e] == text
    # "insulin pump" (2 words) is linked before its single words; "with"/"and" are stop words
    assert [(t, cid) for _, _, t, cid in got] == [("asthma", "D2"), ("migraine", "D5"),
                                                  ("insulin pump", "C4")]
    nobackoff = DenseCandidateGenerator(make_config(tiny_encoder_dir, threshold=0.995,
                                                    backoff=False), "en").fit(dictionary())
    assert nobackoff.generate(doc, [mention, other]) == []


def test_merge_tfidf_keeps_max_per_span_and_concept(tiny_encoder_dir: Path) -> None:
    gen = DenseCandidateGenerator(make_config(tiny_encoder_dir, threshold=0.5,
                                              merge_tfidf=True), "en").fit(dictionary())
    cands = gen.generate(DOCS[1])
    keys = [(c.span, c.concept_id) for c in cands]
    assert len(keys) == len(set(keys))
    hbp = [c for c in cands if c.span.text == "high blood pressure" and c.concept_id == "D3"]
    assert hbp and hbp[0].score == pytest.approx(1.0, abs=1e-5)


def test_save_load_round_trip(fitted: DenseCandidateGenerator, tiny_encoder_dir: Path,
                              tmp_path: Path) -> None:
    fitted.save(tmp_path / "gen")
    back = DenseCandidateGenerator.load(tmp_path / "gen", fitted.config, "en")
    for doc in DOCS:
        a, b = fitted.generate(doc), back.generate(doc)
        assert [(c.span, c.concept_id, c.name) for c in a] == \
               [(c.span, c.concept_id, c.name) for c in b]
        assert np.allclose([c.score for c in a], [c.score for c in b], atol=1e-6)


def test_save_load_with_annotation_index_and_aligned_encoder(
        tiny_encoder_dir: Path, tmp_path: Path) -> None:
    from xlnel.linkers.encoder import EntityEncoder

    aligned = tmp_path / "aligned"
    EntityEncoder(str(tiny_encoder_dir), pooling="cls", prefix="", device="cpu").save(aligned)
    d = dictionary()
    d.add("sugar disease", "D1", "annotation")
    config = make_config(aligned, switch_threshold=0.99)
    gen = DenseCandidateGenerator(config, "en").fit(d)
    gen.save(tmp_path / "gen")
    assert (tmp_path / "gen" / "encoder" / "config.json").is_file()
    back = DenseCandidateGenerator.load(tmp_path / "gen", config, "en")
    doc = Document("x", "sugar disease and asthma")
    assert [(c.span, c.concept_id) for c in gen.generate(doc)] == \
           [(c.span, c.concept_id) for c in back.generate(doc)]


@pytest.mark.parametrize("filter_name", ["xlnel.similarity.v1", "xlnel.gbdt.v1"])
def test_pipeline_with_dense_generator(tiny_encoder_dir: Path, tiny_kb: Path,
                                       tiny_docs: Path, tmp_path: Path,
                                       filter_name: str) -> None:
    from xlnel.config import load_config
    from xlnel.pipeline import Pipeline, train

    config = load_config(None, {
        "data.train": str(tiny_docs), "dictionary.kb": [f"tsv:{tiny_kb}"],
        "candidates.generator": "xlnel.dense.v1", "candidates.threshold": 0.9,
        "candidates.options": {"model": str(tiny_encoder_dir), "pooling": "mean",
                               "prefix": "", "device": "cpu", "switch_threshold": 0.999},
        "filter.name": filter_name})
    train(config, tmp_path / "pipe")
    pipe = Pipeline.load(tmp_path / "pipe")
    doc = Document("t", "She has asthma and takes metformin.")
    linked = pipe.link(doc)
    assert {(e.text, e.concept_id) for e in linked.entities} >= {("asthma", "C4"),
                                                                 ("metformin", "C6")}
    # the index's device and search settings change when linking (a pipeline trained on a
    # GPU links on a CPU); what the index was built with does not
    moved = Pipeline.load(tmp_path / "pipe", {"candidates.options.device": "auto",
                                              "candidates.options.batch_size": 2})
    assert moved.link(doc) == linked
    with pytest.raises(ConfigError, match="candidates.options.pooling is fixed by training"):
        Pipeline.load(tmp_path / "pipe", {"candidates.options.pooling": "cls"})


@pytest.mark.slow
def test_real_multilingual_e5_small_links_across_scripts(tmp_path: Path) -> None:
    """The offline multilingual-e5-small finds exact names and close variants."""
    d = Dictionary()
    for name, cid in {"diabetes mellitus": "D1", "סוכרת": "D1", "insulin": "C1",
                      "אינסולין": "C1", "asthma": "D2", "hypertension": "D3",
                      "metformin": "C2"}.items():
        d.add(name, cid)
    config = CandidatesConfig(generator="xlnel.dense.v1", threshold=0.9, top_m=3,
                              options={"device": "cpu", "switch_threshold": None})
    gen = DenseCandidateGenerator(config, "he").fit(d)
    doc = Document("h", "החולה מקבל אינסולין כל בוקר")
    cands = [c for c in gen.generate(doc) if c.span.text == "אינסולין"]
    assert cands and cands[0].concept_id == "C1" and cands[0].score > 0.99
    assert gen.nearest(["Insulins"])[0][0][0] == "C1"
    assert gen.nearest(["Hypertension"])[0][0][0] == "D3"
    gen.save(tmp_path / "gen")
    back = DenseCandidateGenerator.load(tmp_path / "gen", config, "he")
    assert [(c.span, c.concept_id) for c in back.generate(doc)] == \
           [(c.span, c.concept_id) for c in gen.generate(doc)]


def test_saving_over_an_earlier_generator_leaves_none_of_its_parts(
        tiny_encoder_dir: Path, tmp_path: Path) -> None:
    """A folder saved twice holds the second generator only: the first one's annotation
    index, TF-IDF index and encoder copy, read back beside the new names, would point at rows
    that do not exist."""
    from xlnel.linkers.encoder import EntityEncoder

    aligned = tmp_path / "aligned"
    EntityEncoder(str(tiny_encoder_dir), pooling="mean", prefix="", device="cpu").save(aligned)
    first = dictionary()
    first.add("sugar disease", "D1", "annotation")
    first.add("blood sugar problems", "D1", "annotation")
    folder = tmp_path / "gen"
    DenseCandidateGenerator(make_config(aligned, switch_threshold=0.99, merge_tfidf=True),
                            "en").fit(first).save(folder)
    assert {"annotations.faiss", "tfidf", "encoder"} <= {p.name for p in folder.iterdir()}
    second = Dictionary()
    second.add("asthma", "X2")
    second.add("hypertension", "X3")
    config = make_config(tiny_encoder_dir, switch_threshold=0.99)
    gen = DenseCandidateGenerator(config, "en").fit(second)
    gen.save(folder)
    assert not {"annotations.faiss", "annotation_ids.npy", "tfidf"} & {
        p.name for p in folder.iterdir()}
    back = DenseCandidateGenerator.load(folder, config, "en")
    doc = Document("x", "sugar disease and asthma")
    assert [(c.span, c.concept_id) for c in back.generate(doc)] == \
           [(c.span, c.concept_id) for c in gen.generate(doc)]


def test_a_local_model_folder_is_copied_so_the_folder_links_anywhere(
        tiny_encoder_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A local model named by a relative path is copied: a reference alone would not load
    from another working folder, nor once the model folder is gone or retrained."""
    import shutil

    shutil.copytree(tiny_encoder_dir, tmp_path / "models" / "tiny")
    monkeypatch.chdir(tmp_path)
    config = make_config(Path("models/tiny"))
    gen = DenseCandidateGenerator(config, "en").fit(dictionary())
    gen.save(tmp_path / "gen")
    assert (tmp_path / "gen" / "encoder" / "model.safetensors").is_file()
    shutil.rmtree(tmp_path / "models")
    monkeypatch.chdir(tmp_path / "gen")
    back = DenseCandidateGenerator.load(tmp_path / "gen", config, "en")
    for doc in DOCS:
        assert [(c.span, c.concept_id, c.score) for c in back.generate(doc)] == \
               [(c.span, c.concept_id, c.score) for c in gen.generate(doc)]


def test_a_loaded_aligned_generator_saves_into_its_own_folder(
        tiny_encoder_dir: Path, tmp_path: Path) -> None:
    from xlnel.linkers.encoder import EntityEncoder

    aligned = tmp_path / "aligned"
    EntityEncoder(str(tiny_encoder_dir), pooling="mean", prefix="", device="cpu").save(aligned)
    config = make_config(aligned)
    DenseCandidateGenerator(config, "en").fit(dictionary()).save(tmp_path / "gen")
    back = DenseCandidateGenerator.load(tmp_path / "gen", config, "en")
    back.save(tmp_path / "gen")
    again = DenseCandidateGenerator.load(tmp_path / "gen", config, "en")
    assert [(c.span, c.concept_id) for c in again.generate(DOCS[0])] == \
           [(c.span, c.concept_id) for c in back.generate(DOCS[0])]


def test_load_refuses_indexes_of_another_save(fitted: DenseCandidateGenerator,
                                              tiny_encoder_dir: Path, tmp_path: Path) -> None:
    fitted.save(tmp_path / "gen")
    small = Dictionary()
    small.add("asthma", "X2")
    DenseCandidateGenerator(make_config(tiny_encoder_dir), "en").fit(small).save(
        tmp_path / "other")
    (tmp_path / "gen" / "index.faiss").write_bytes(
        (tmp_path / "other" / "index.faiss").read_bytes())
    with pytest.raises(ArtifactError, match="holds 1 vectors but targets.json 10 names"):
        DenseCandidateGenerator.load(tmp_path / "gen", fitted.config, "en")
    # a file that is no index at all: FAISS's RuntimeError becomes an ArtifactError
    (tmp_path / "gen" / "index.faiss").write_bytes(b"garbage")
    with pytest.raises(ArtifactError, match="index.faiss is not a FAISS index"):
        DenseCandidateGenerator.load(tmp_path / "gen", fitted.config, "en")


class _Touch:
    """Unpickling this creates the marker file: the proof that a pickle was executed."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (Path.touch, (self.marker,))


def test_the_encoder_copy_is_read_from_safetensors_only(tiny_encoder_dir: Path,
                                                        tmp_path: Path) -> None:
    """A saved generator's encoder copy holding a pickled weights file instead of safetensors
    is refused as a saved filter's model is, with a ConfigError and without unpickling."""
    import torch

    from xlnel.linkers.encoder import EntityEncoder

    aligned = tmp_path / "aligned"
    EntityEncoder(str(tiny_encoder_dir), pooling="mean", prefix="", device="cpu").save(aligned)
    config = make_config(aligned)
    DenseCandidateGenerator(config, "en").fit(dictionary()).save(tmp_path / "gen")
    copy = tmp_path / "gen" / "encoder"
    (copy / "model.safetensors").unlink()
    marker = tmp_path / "pwned"
    torch.save({"weight": _Touch(marker)}, copy / "pytorch_model.bin")
    with pytest.raises(ConfigError, match="cannot load encoder"):
        DenseCandidateGenerator.load(tmp_path / "gen", config, "en")
    assert not marker.exists()


@pytest.mark.parametrize("pooling", ["mean", "cls"])
def test_threshold_one_keeps_every_exact_name(tiny_encoder_dir: Path, pooling: str) -> None:
    """float32 cosines of a text with itself stray to 0.99999994 or 1.0000001: rounded, a
    threshold of 1 keeps every exact name, and no score passes 1."""
    gen = DenseCandidateGenerator(make_config(tiny_encoder_dir, threshold=1.0,
                                              pooling=pooling), "en").fit(dictionary())
    doc = Document("x", " and ".join(NAMES))
    cands = gen.generate(doc)
    assert {c.span.text for c in cands} == set(NAMES)
    assert all(c.score == 1.0 for c in cands)
    scores = [s for hits in gen.search([normalize_string(n) for n in NAMES], 5)
              for _, s in hits]
    assert all(-1.0 <= s <= 1.0 and s == round(s, 6) for s in scores)


def test_search_takes_k_as_given(fitted: DenseCandidateGenerator) -> None:
    """k=0 is refused, not read as 'not given' (None alone means top_m)."""
    assert [len(h) for h in fitted.search(["asthma"], 1)] == [1]
    assert [len(h) for h in fitted.search(["asthma"])] == [fitted.config.top_m]
    with pytest.raises(ValueError, match="got 0"):
        fitted.search(["asthma"], 0)


def test_texts_without_letters_have_no_neighbours(fitted: DenseCandidateGenerator) -> None:
    """'...' normalises to nothing: it is not embedded, so it gets no (meaningless) names."""
    near = fitted.nearest(["...", "asthma", " - ", "asthma"], 2)
    assert near[0] == near[2] == []
    assert near[1] == near[3] and near[1][0][:2] == ("D2", "asthma")
    assert fitted.nearest(["..."]) == [[]]


@pytest.mark.parametrize("merge_tfidf", [False, True])
def test_spans_for_another_number_of_documents_are_refused(tiny_encoder_dir: Path,
                                                           merge_tfidf: bool) -> None:
    from xlnel.candidates.tfidf_generator import TfidfCandidateGenerator

    gens = [DenseCandidateGenerator(make_config(tiny_encoder_dir, merge_tfidf=merge_tfidf),
                                    "en").fit(dictionary()),
            TfidfCandidateGenerator(CandidatesConfig(), "en").fit(dictionary())]
    docs = [Document("a", "asthma"), Document("b", "migraine")]
    for gen in gens:
        for spans in ([[Span(0, 6, "asthma")]], [[], [], []]):
            with pytest.raises(ValueError, match=rf"spans given for {len(spans)} documents, "
                                                 r"but there are 2 documents"):
                gen.generate_batch(docs, spans)
        assert gen.generate_batch(docs, [[Span(0, 6, "asthma")], []])[1] == []
