"""Synonym alignment: hard pair mining, multi-similarity loss, training, evaluation, CLI."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from typer.testing import CliRunner  # noqa: E402

from xlnel.errors import ConfigError  # noqa: E402
from xlnel.linkers.align import (  # noqa: E402
    AlignOptions,
    align_encoder,
    batch_loss,
    concept_batches,
    evaluate_encoder,
    limit_pairs,
    mine_hard_pairs,
    multi_similarity_loss,
    parse_align_options,
    synonym_groups,
    train_alignment,
)

GROUPS = {"D1": ["diabetes", "diabetes mellitus", "type diabetes"],
          "D3": ["hypertension", "high blood pressure"],
          "C1": ["insulin", "insulin pump"], "D2": ["asthma", "severe asthma"],
          "D5": ["migraine", "migraine pain"]}


def test_ms_loss_golden_value() -> None:
    # S01 = 0.6 (positive), S02 = 0.8, S12 = 0.96 (negatives); anchor 2 has no positive
    emb = torch.tensor([[1.0, 0.0], [0.6, 0.8], [0.8, 0.6]])
    labels = torch.tensor([0, 0, 1])
    pos_term = 0.5 * math.log(1 + math.exp(-2 * (0.6 - 1)))
    anchor0 = pos_term + math.log(1 + math.exp(50 * (0.8 - 1))) / 50
    anchor1 = pos_term + math.log(1 + math.exp(50 * (0.96 - 1))) / 50
    expected = (anchor0 + anchor1 + 0.0) / 3
    loss = multi_similarity_loss(emb, labels, alpha=2, beta=50, base=1, margin=0.2)
    assert float(loss) == pytest.approx(expected, rel=1e-5)
    assert expected == pytest.approx(0.39124, abs=1e-4)


def test_miner_drops_easy_pairs() -> None:
    emb = torch.tensor([[1.0, 0.0], [0.6, 0.8], [0.8, 0.6]])
    sim = emb @ emb.T
    pos, neg = mine_hard_pairs(sim, torch.tensor([0, 0, 1]), margin=0.2)
    assert pos.tolist() == [[False, True, False], [True, False, False], [False] * 3]
    assert neg.tolist() == [[False, False, True], [False, False, True], [False] * 3]
    # positives far more similar than any negative are easy: nothing is kept
    easy = torch.tensor([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    pos, neg = mine_hard_pairs(easy @ easy.T, torch.tensor([0, 0, 1]), margin=0.2)
    assert not pos.any() and not neg.any()
    assert float(multi_similarity_loss(easy, torch.tensor([0, 0, 1]))) == 0.0


def test_batches_hold_several_names_per_concept() -> None:
    batches = concept_batches(GROUPS, batch_size=4, names_per_concept=2,
                              rng=random.Random(0))
    assert sum(len(b) for b in batches) == 10
    for batch in batches:
        labels = [label for _, label in batch]
        assert all(labels.count(x) == 2 for x in set(labels))
    limited = limit_pairs({**GROUPS, "X": ["only one"]}, 5, random.Random(0))
    assert "X" not in limited and 5 <= sum(map(len, limited.values())) <= 7


def test_options_validation() -> None:
    with pytest.raises(ConfigError, match="bacth_size"):
        parse_align_options({"bacth_size": 3})
    with pytest.raises(ConfigError, match="names_per_concept"):
        parse_align_options({"names_per_concept": 1})
    # a batch of one concept has no negative pair: the loss would be 0 at every step
    with pytest.raises(ConfigError, match=r"batch_size=7 .* allowed: batch_size >= 8"):
        parse_align_options({"batch_size": 7})
    with pytest.raises(ConfigError, match=r"allowed: batch_size >= 4"):
        align_encoder([], "unused", [], AlignOptions(batch_size=3, names_per_concept=2))
    assert parse_align_options({"batch_size": 4, "names_per_concept": 2}).batch_size == 4


def test_align_needs_two_concepts_with_synonyms(tmp_path: Path) -> None:
    """One concept gives batches without a negative pair: the loss is 0 and nothing is
    learned, so it is refused before the model is loaded (the model named does not exist)."""
    kb = tmp_path / "kb.tsv"
    kb.write_text("concept_id\tname\nD1\tdiabetes\nD1\tsugar\nD2\tasthma\n", encoding="utf-8")
    with pytest.raises(ValueError, match="1 concept.* needs at least two"):
        align_encoder([f"tsv:{kb}"], tmp_path / "out", [], {"model": "no-such-model"})
    kb.write_text("concept_id\tname\nD1\tdiabetes\nD1\tsugar\nD2\tasthma\nD2\twheeze\n",
                  encoding="utf-8")
    with pytest.raises(ValueError, match="1 concept.* within max_pairs=2"):
        align_encoder([f"tsv:{kb}"], tmp_path / "out", [], {"model": "no-such-model",
                                                           "max_pairs": 2})


def _separation(enc: object, fixed: list[tuple[str, int]]) -> float:
    """Mean positive cosine minus mean negative cosine of the toy names."""
    with torch.no_grad():
        emb = torch.from_numpy(enc.encode([n for n, _ in fixed]))  # type: ignore[attr-defined]
    labels = torch.tensor([label for _, label in fixed])
    sim = emb @ emb.T
    same = labels[:, None] == labels[None, :]
    pos = same & ~torch.eye(len(labels), dtype=torch.bool)
    return float(sim[pos].mean() - sim[~same].mean())


def test_loss_decreases_on_a_toy_set(tiny_encoder_dir: Path) -> None:
    from xlnel.linkers.encoder import EntityEncoder

    enc = EntityEncoder(str(tiny_encoder_dir), pooling="mean", prefix="", device="cpu")
    opts = AlignOptions(model=str(tiny_encoder_dir), batch_size=10, names_per_concept=2,
                        lr=3e-3, epochs=30, device="cpu", freeze_embeddings=False, seed=0)
    fixed = [(n, i) for i, names in enumerate(GROUPS.values()) for n in names]
    with torch.no_grad():
        before = float(batch_loss(enc, fixed, opts))
    gap_before = _separation(enc, fixed)
    report = train_alignment(enc, GROUPS, opts)
    with torch.no_grad():
        after = float(batch_loss(enc, fixed, opts))
    assert report["steps"] == 30
    assert report["last_loss"] < report["first_loss"]
    assert after < before
    # synonyms end up much closer to each other than to other concepts' names
    assert _separation(enc, fixed) > gap_before + 0.05


def test_align_and_evaluate_end_to_end(tiny_encoder_dir: Path, tmp_path: Path) -> None:
    from tests.conftest import make_documents

    kb = tmp_path / "kb.tsv"
    kb.write_text("concept_id\tname\n" + "".join(f"{c}\t{n}\n" for c, ns in GROUPS.items()
                                                  for n in ns), encoding="utf-8")
    extra = tmp_path / "dft.tsv"
    extra.write_text("name\tconcept_id\tsource\nsugar\tD1\tannotation\n", encoding="utf-8")
    assert synonym_groups([f"tsv:{kb}"], [extra])["D1"] == [
        "diabetes", "diabetes mellitus", "type diabetes", "sugar"]
    report = align_encoder([f"tsv:{kb}"], tmp_path / "aligned", [extra],
                           {"model": str(tiny_encoder_dir), "pooling": "mean", "prefix": "",
                            "epochs": 2, "max_steps": 3, "batch_size": 8, "device": "cpu"})
    # two batches an epoch (the fifth concept joins the second); max_steps cuts the second
    assert report["steps"] == 3 and report["concepts"] == 5
    meta = json.loads((tmp_path / "aligned" / "xlnel_encoder.json").read_text())
    assert meta["pooling"] == "mean" and meta["alignment"]["steps"] == 3
    gold = tmp_path / "gold.jsonl"
    docs = [d for d in make_documents(1) if d["entities"]]
    for d in docs:  # ids of the tiny KB of tests/conftest.py -> ours
        for e in d["entities"]:
            e["concept_id"] = {"C1": "D1", "C2": "D3", "C3": "C1", "C4": "D2", "C5": "D5",
                               "C6": "C9"}[e["concept_id"]]
    gold.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    result = evaluate_encoder(str(tmp_path / "aligned"), [f"tsv:{kb}"], gold, k=2,
                              options={"device": "cpu"})
    assert result["mentions"] == 11 and result["mentions_in_dictionary"] == 10
    # every mention with a known concept is itself a name (after normalisation)
    assert result["unseen_mentions"] == 0
    assert 0.0 <= result["accuracy@1"] <= result["accuracy@2"] <= 1.0
    # exact names (diabetes, insulin, migraine...) are found at rank 1
    assert result["in_dictionary_accuracy@1"] >= 0.5


def test_cli_align_and_evaluate(tiny_encoder_dir: Path, tmp_path: Path) -> None:
    from xlnel.cli.main import app

    kb = tmp_path / "kb.tsv"
    kb.write_text("concept_id\tname\n" + "".join(f"{c}\t{n}\n" for c, ns in GROUPS.items()
                                                  for n in ns), encoding="utf-8")
    runner = CliRunner()
    res = runner.invoke(app, ["encoder", "align", "--kb", f"tsv:{kb}", "--model",
                              str(tiny_encoder_dir), "--out", str(tmp_path / "enc"),
                              "--max-steps", "1", "--batch-size", "8", "--device", "cpu",
                              "--prefix", ""])
    assert res.exit_code == 0, res.output
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps({"id": "g", "text": "asthma", "entities": [
        {"start": 0, "end": 6, "text": "asthma", "concept_id": "D2"}]}) + "\n")
    res = runner.invoke(app, ["encoder", "evaluate", "--kb", f"tsv:{kb}", "--gold", str(gold),
                              "--model", str(tmp_path / "enc"), "--device", "cpu"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["accuracy@1"] == 1.0
    res = runner.invoke(app, ["encoder", "align", "--kb", f"tsv:{tmp_path / 'none.tsv'}",
                              "--out", str(tmp_path / "x")])
    assert res.exit_code == 1 and "not found" in res.output


def test_align_refuses_outputs_that_would_destroy_data_before_training(tmp_path: Path) -> None:
    """An --out that is a file, an unrelated folder or an input is refused before the model is
    even loaded (the model named here does not exist), and nothing is touched."""
    from xlnel.cli.main import app
    from xlnel.errors import OutputError

    kb = tmp_path / "kb.tsv"
    kb.write_text("concept_id\tname\nD1\tdiabetes\nD1\tsugar\n", encoding="utf-8")
    notes = tmp_path / "work" / "notes.txt"
    notes.parent.mkdir()
    notes.write_text("keep me", encoding="utf-8")
    model = tmp_path / "aligned"  # an earlier aligned encoder, fine-tuned again
    model.mkdir()
    (model / "xlnel_encoder.json").write_text("{}", encoding="utf-8")
    options = {"model": "no-such-model", "device": "cpu"}
    for out, why in [(kb, "is a file"), (notes.parent, "not an encoder"),
                     (tmp_path, "holds the input")]:
        with pytest.raises(OutputError, match=why):
            align_encoder([f"tsv:{kb}"], out, [], options)
    with pytest.raises(OutputError, match="is the input"):
        align_encoder([f"tsv:{kb}"], model, [], {**options, "model": str(model)})
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(notes.parent)
        with pytest.raises(OutputError, match="working folder .* new or encoder folder"):
            align_encoder([f"tsv:{kb}"], ".", [], options)
    res = CliRunner().invoke(app, ["encoder", "align", "--kb", f"tsv:{kb}", "--model",
                                   "no-such-model", "--out", str(notes.parent)])
    assert res.exit_code == 1 and "not an encoder" in res.output
    assert notes.read_text(encoding="utf-8") == "keep me"
    assert kb.read_text(encoding="utf-8").startswith("concept_id")
    assert sorted(p.name for p in model.iterdir()) == ["xlnel_encoder.json"]


def test_evaluate_refuses_gold_without_linked_mentions_before_embedding(tmp_path: Path) -> None:
    """Gold without linked mentions is refused before the dictionary is embedded (minutes on
    a CPU) rather than reported as nulls; the model named here is never loaded."""
    kb = tmp_path / "kb.tsv"
    kb.write_text("concept_id\tname\nD1\tdiabetes\n", encoding="utf-8")
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps({"id": "g", "text": "asthma", "entities": [
        {"start": 0, "end": 6, "text": "asthma"}]}) + "\n", encoding="utf-8")
    for text in ("", gold.read_text(encoding="utf-8")):
        gold.write_text(text, encoding="utf-8")
        with pytest.raises(ValueError, match="gold.jsonl holds no mention with a concept id"):
            evaluate_encoder("no-such-model", [f"tsv:{kb}"], gold)


def test_last_batch_of_a_single_concept_is_merged_into_the_one_before() -> None:
    """Five concepts, two a batch: the fifth alone would be a step of zero loss (no negative
    pair); it joins the second batch, whose first four names are what the seed gave."""
    batches = concept_batches(GROUPS, batch_size=4, names_per_concept=2, rng=random.Random(0))
    assert len(batches) == 2
    assert [sorted({label for _, label in b}) for b in batches] == [[0, 1], [0, 1, 2]]
    rng = random.Random(0)
    concepts = sorted(GROUPS)
    rng.shuffle(concepts)
    expected = [[(n, j) for j, cid in enumerate(concepts[lo:lo + 2])
                 for n in rng.sample(GROUPS[cid], 2)] for lo in (0, 2, 4)]
    assert batches[0] == expected[0]
    assert batches[1] == expected[1] + [(n, 2) for n, _ in expected[2]]
    # an epoch that divides evenly is left as it is
    four = {cid: GROUPS[cid] for cid in sorted(GROUPS)[:4]}
    assert [len(b) for b in concept_batches(four, 4, 2, random.Random(0))] == [4, 4]


def test_evaluate_names_a_bad_option_as_given(tmp_path: Path) -> None:
    """A bad option is named by the caller's key (the CLI's --pooling), not by the dense
    generator's config key, and before the model is loaded."""
    from xlnel.cli.main import app

    kb = tmp_path / "kb.tsv"
    kb.write_text("concept_id\tname\nD1\tdiabetes\n", encoding="utf-8")
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps({"id": "g", "text": "diabetes", "entities": [
        {"start": 0, "end": 8, "text": "diabetes", "concept_id": "D1"}]}) + "\n")
    with pytest.raises(ConfigError, match=r"options: pooling: .*got 'max'") as err:
        evaluate_encoder("no-such-model", [f"tsv:{kb}"], gold, options={"pooling": "max"})
    assert "candidates.options" not in str(err.value)
    for command in ("evaluate", "align"):
        args = ["encoder", command, "--kb", f"tsv:{kb}", "--model", "no-such-model",
                "--pooling", "max"]
        args += ["--gold", str(gold)] if command == "evaluate" else ["--out", str(tmp_path / "o")]
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 2, res.output
        assert "--pooling" in res.output and "candidates.options" not in res.output


def test_evaluate_counts_mentions_without_text_as_misses(tiny_encoder_dir: Path,
                                                           tmp_path: Path) -> None:
    kb = tmp_path / "kb.tsv"
    kb.write_text("concept_id\tname\n" + "".join(f"{c}\t{n}\n" for c, ns in GROUPS.items()
                                                  for n in ns), encoding="utf-8")
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps({"id": "g", "text": "asthma ...", "entities": [
        {"start": 0, "end": 6, "text": "asthma", "concept_id": "D2"},
        {"start": 7, "end": 10, "text": "...", "concept_id": "D2"}]}) + "\n")
    result = evaluate_encoder(str(tiny_encoder_dir), [f"tsv:{kb}"], gold, k=2,
                              options={"device": "cpu", "pooling": "mean", "prefix": ""})
    assert result["mentions"] == 2 and result["empty_mentions"] == 1
    assert result["accuracy@1"] == result["accuracy@2"] == 0.5
