"""The spaCy component: spans agree with ``xlnel link``, batching, targets, alignment, disk."""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

import pytest
import tomllib

spacy = pytest.importorskip("spacy")
from spacy import displacy  # noqa: E402

import xlnel  # noqa: E402
from xlnel.spacy_component import XlnelLinker  # noqa: E402

EN = ["She has diabetes and high blood pressure.", "Asthma and a migraine.", "Nothing here."]
HE = "הוא חולה בסוכרת ויתר לחץ דם, והאינסולין עוזר."


def _nlp(lang: str, pipeline: Path, **config: object) -> spacy.language.Language:
    nlp = spacy.blank(lang)
    nlp.add_pipe("xlnel_linker", config={"pipeline": str(pipeline), **config})
    return nlp


def test_ents_agree_with_xlnel_link(en_pipeline: Path) -> None:
    nlp = _nlp("en", en_pipeline)
    links = xlnel.load(en_pipeline).link(EN)
    for doc, expected in zip(nlp.pipe(EN, batch_size=2), links, strict=True):
        assert [(e.start_char, e.end_char, e.kb_id_) for e in doc.ents] == [
            (x.start, x.end, x.concept_id) for x in expected]
        for ent, link in zip(doc.ents, expected, strict=True):
            assert ent._.xlnel["score"] == link.score
            assert ent._.xlnel["concept_name"] == link.concept_name
            assert ent._.xlnel["alignment"] == "exact" and ent.label_ == "Disorder"
    assert [(e.text, e._.xlnel["source"]) for e in nlp(EN[0]).ents] == [
        ("diabetes", "kb"), ("high blood pressure", "kb")]


def test_pipe_links_a_batch_at_a_time(en_pipeline: Path, monkeypatch: pytest.MonkeyPatch
                                      ) -> None:
    nlp = _nlp("en", en_pipeline, batch_size=2)
    linker = nlp.get_pipe("xlnel_linker")
    sizes: list[int] = []
    real = linker.pipeline.link
    monkeypatch.setattr(linker.pipeline, "link",
                        lambda texts: sizes.append(len(texts)) or real(texts))
    assert len(list(nlp.pipe(EN * 2))) == 6
    assert sizes == [2, 2, 2]


def test_hebrew_prefix_expands_to_the_whole_token(he_pipeline: Path,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    nlp = _nlp("he", he_pipeline)
    doc = nlp(HE)
    links = xlnel.load(he_pipeline).link(HE)
    assert [(x.text, x.concept_name) for x in links] == [
        ("סוכרת", "Diabetes mellitus"), ("ויתר לחץ דם", "Hypertension"),
        ("האינסולין", "Insulin")]
    got = [(e.text, e.kb_id_, e._.xlnel["alignment"], e._.xlnel["start_char"]) for e in doc.ents]
    # spaCy's Hebrew tokenizer keeps one-letter prefixes on their word ("בסוכרת"), where xlnel
    # links "סוכרת": the span grows to the whole token, and _.xlnel keeps xlnel's offsets.
    assert got == [("בסוכרת", "C1", "expand", links[0].start),
                   ("ויתר לחץ דם", "C2", "exact", links[1].start),
                   ("והאינסולין", "C3", "expand", links[2].start)]
    with caplog.at_level(logging.WARNING, logger="xlnel.spacy_component"):
        strict = _nlp("he", he_pipeline, alignment_mode="strict")(HE)
    assert [e.kb_id_ for e in strict.ents] == ["C2"]
    # links left out are said, not only logged at debug level
    assert any("2 link(s) off token boundaries left out" in r.message for r in caplog.records)


def test_existing_entities_send_links_to_spans(en_pipeline: Path) -> None:
    nlp = spacy.blank("en")
    ruler = nlp.add_pipe("entity_ruler")
    ruler.add_patterns([{"label": "PERSON", "pattern": "She"}])
    nlp.add_pipe("xlnel_linker", config={"pipeline": str(en_pipeline)})
    doc = nlp(EN[0])
    assert [e.text for e in doc.ents] == ["She"]
    assert [s.kb_id_ for s in doc.spans["xlnel"]] == ["C1", "C2"]
    forced = _nlp("en", en_pipeline, target="spans", spans_key="links")(EN[1])
    assert not forced.ents and [s.text for s in forced.spans["links"]] == ["Asthma", "migraine"]


def test_displacy_renders(en_pipeline: Path) -> None:
    html = displacy.render(_nlp("en", en_pipeline)(EN[0]), style="ent", page=False)
    assert "diabetes" in html and "Disorder" in html


def test_to_disk_keeps_a_reference(en_pipeline: Path, tmp_path: Path) -> None:
    _nlp("en", en_pipeline).to_disk(tmp_path / "nlp")
    loaded = spacy.load(tmp_path / "nlp")
    assert loaded.get_pipe("xlnel_linker").pipeline_ref == str(en_pipeline.resolve())
    assert [e.kb_id_ for e in loaded(EN[1]).ents] == ["C4", "C5"]


def test_bad_config_is_refused(en_pipeline: Path) -> None:
    with pytest.raises(ValueError, match="target 'all'"):
        XlnelLinker(None, "x", str(en_pipeline), target="all")
    with pytest.raises(ValueError, match="alignment_mode"):
        XlnelLinker(None, "x", str(en_pipeline), alignment_mode="loose")


def test_entry_point_names_the_factory() -> None:
    pyproject = Path(__file__).parents[2] / "pyproject.toml"
    entry = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["entry-points"]
    module, _, attr = entry["spacy_factories"]["xlnel_linker"].partition(":")
    assert (module, attr) == ("xlnel.spacy_component", "make_linker")


def test_alternatives_setting_reaches_the_spans(en_pipeline: Path) -> None:
    nlp = _nlp("en", en_pipeline, alternatives=2)
    linker = nlp.get_pipe("xlnel_linker")
    assert linker.pipeline.config.linker.alternatives == 2
    assert _nlp("en", en_pipeline).get_pipe("xlnel_linker").pipeline.config.linker \
        .alternatives == 0
    (link,) = xlnel.load(en_pipeline).link("Asthma.")
    alternatives = (("C5", 0.5, 0.45), ("C1", 0.25, 0.41))
    doc = linker.set_links(nlp.make_doc("Asthma."), [replace(link, alternatives=alternatives)])
    assert doc.ents[0]._.xlnel["alternatives"] == list(alternatives)
    with pytest.raises(ValueError, match="alternatives must be 0 or more, got -1"):
        XlnelLinker(None, "x", str(en_pipeline), alternatives=-1)


def test_links_that_widen_to_one_token_keep_their_own_data(en_pipeline: Path) -> None:
    nlp = _nlp("en", en_pipeline)
    text = "asthma;hypertension"  # one token for spaCy, two links for xlnel
    assert [x.concept_id for x in xlnel.load(en_pipeline).link(text)] == ["C4", "C2"]
    doc = nlp(text)
    spans = doc.spans["xlnel"]
    assert [(s.text, s.kb_id_, s._.xlnel["concept_id"], s._.xlnel["alignment"])
            for s in spans] == [(text, "C4", "C4", "expand"), (text, "C2", "C2", "expand")]
    assert [s._.xlnel["start_char"] for s in spans] == [0, 7]
    (ent,) = _nlp("en", en_pipeline, target="ents")(text).ents
    assert ent._.xlnel["concept_id"] == ent.kb_id_
    again = spacy.tokens.Doc(nlp.vocab).from_bytes(doc.to_bytes())
    assert [s._.xlnel["concept_id"] for s in again.spans["xlnel"]] == ["C4", "C2"]


def test_target_ents_keeps_the_entities_already_there(en_pipeline: Path) -> None:
    def nlp_with_ruler(**config: object) -> spacy.language.Language:
        nlp = spacy.blank("en")
        nlp.add_pipe("entity_ruler").add_patterns([
            {"label": "PERSON", "pattern": "She"}, {"label": "RISK", "pattern": "diabetes"}])
        nlp.add_pipe("xlnel_linker", config={"pipeline": str(en_pipeline), "target": "ents",
                                             **config})
        return nlp

    kept = nlp_with_ruler()(EN[0])
    assert [(e.text, e.label_) for e in kept.ents] == [
        ("She", "PERSON"), ("diabetes", "RISK"), ("high blood pressure", "Disorder")]
    replaced = nlp_with_ruler(overwrite_ents=True)(EN[0])
    assert [(e.text, e.label_) for e in replaced.ents] == [
        ("She", "PERSON"), ("diabetes", "Disorder"), ("high blood pressure", "Disorder")]


def test_pipe_refuses_a_batch_size_below_one(en_pipeline: Path) -> None:
    nlp = _nlp("en", en_pipeline)
    with pytest.raises(ValueError, match="batch_size must be at least 1, got 0"):
        list(nlp.pipe(EN, batch_size=0))


def test_a_pipeline_named_in_the_load_config_wins_over_the_saved_one(
        en_pipeline: Path, he_pipeline: Path, tmp_path: Path) -> None:
    _nlp("en", en_pipeline).to_disk(tmp_path / "nlp")
    moved = {"components": {"xlnel_linker": {"pipeline": str(he_pipeline)}}}
    loaded = spacy.load(tmp_path / "nlp", config=moved)
    assert loaded.get_pipe("xlnel_linker").pipeline_ref == str(he_pipeline)
    again = spacy.load(tmp_path / "nlp")
    assert again.get_pipe("xlnel_linker").pipeline_ref == str(en_pipeline.resolve())
