"""Synonym alignment of an entity encoder (SapBERT's self-alignment pre-training).

The encoder is fine-tuned on (name, concept id) pairs of knowledge bases and of DFT
dictionaries so that the names of one concept lie close together, whatever their language.
Each batch holds ``batch_size // names_per_concept`` concepts with up to ``names_per_concept``
names each. Within a batch every name is an anchor; online hard pair mining keeps, per anchor,

* the negative pairs more similar than its least similar positive minus ``margin``, and
* the positive pairs less similar than its most similar negative plus ``margin``,

and the multi-similarity loss (Wang et al., 2019) of the kept pairs is minimised::

    L = 1/n sum_i [ 1/alpha log(1 + sum_{p in P_i} exp(-alpha (S_ip - base)))
                  + 1/beta  log(1 + sum_{k in N_i} exp( beta (S_ik - base))) ]

with alpha 2, beta 50, base 1 and margin 0.2 by default (SapBERT's settings).

:func:`evaluate_encoder` measures accuracy@1/@k of linking gold mentions (their text alone) to
the right concept by nearest dictionary name.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from tqdm import tqdm

from xlnel.config import validate_options
from xlnel.dictionary.dictionary import Dictionary
from xlnel.errors import ConfigError
from xlnel.io import load_kb
from xlnel.io._atomic import atomic_dir
from xlnel.linkers.encoder import Pooling
from xlnel.normalization import normalize_string
from xlnel.numbers import Float, Int

if TYPE_CHECKING:
    import torch

    from xlnel.linkers.encoder import EntityEncoder

logger = logging.getLogger(__name__)


class AlignOptions(BaseModel):
    """Settings of :func:`align_encoder`.

    Attributes:
        model: Encoder to fine-tune (registered name, Hugging Face id or folder).
        pooling / prefix / max_length: How texts are embedded (``None``: the model folder's
            recorded settings, else mean pooling, ``"query: "``, 32 tokens).
        lang: Language rules of the name normalisation (as the dense generator applies).
        epochs: Passes over the concepts.
        batch_size: Names per batch; at least 2 x ``names_per_concept``, so that a batch
            holds two concepts.
        names_per_concept: Most names of one concept in a batch (at least 2).
        lr / weight_decay: AdamW settings.
        margin: Margin of the hard pair miner.
        alpha / beta / base: Multi-similarity loss settings (base is SapBERT's lambda).
        max_pairs: Most (name, concept) pairs used, whole concepts sampled with ``seed``;
            ``None`` = all.
        max_steps: Stop after this many batches; ``None`` = run every epoch.
        seed: Seed of the sampling and of torch.
        device: ``cpu``, ``cuda`` or ``auto``.
        freeze_embeddings: Keep the token embeddings fixed; ``None`` = only on CPU.
    """

    model_config = ConfigDict(extra="forbid")

    model: str = "multilingual-e5-small"
    pooling: Pooling | None = None
    prefix: str | None = None
    max_length: Int | None = Field(None, ge=4)
    lang: str = "en"
    epochs: Int = Field(1, ge=1)
    batch_size: Int = Field(64, ge=2)
    names_per_concept: Int = Field(4, ge=2)
    lr: Float = Field(2e-5, gt=0)
    weight_decay: Float = Field(0.01, ge=0)
    margin: Float = Field(0.2, ge=0)
    alpha: Float = Field(2.0, gt=0)
    beta: Float = Field(50.0, gt=0)
    base: Float = 1.0
    max_pairs: Int | None = Field(None, ge=2)
    max_steps: Int | None = Field(None, ge=1)
    seed: Int = Field(0, ge=0, lt=2**32)
    device: Literal["cpu", "cuda", "auto"] = "auto"
    freeze_embeddings: bool | None = None


def parse_align_options(options: dict[str, Any]) -> AlignOptions:
    """Validate alignment settings.

    Raises:
        ConfigError: Naming the bad key, its value and what is allowed.
    """
    return check_batch_size(validate_options(AlignOptions, options, "", "alignment"))


def check_batch_size(options: AlignOptions) -> AlignOptions:
    """Refuse batches that cannot hold two concepts.

    The loss compares the names of one batch: a batch of a single concept has no negative
    pair, so the miner keeps no pair and the loss is 0 at every step (nothing is learned).

    Raises:
        ConfigError: Naming both settings and the smallest batch allowed.
    """
    least = 2 * options.names_per_concept
    if options.batch_size < least:
        raise ConfigError(f"batch_size={options.batch_size} holds one concept of "
                          f"names_per_concept={options.names_per_concept} names: the loss "
                          "compares names of different concepts within a batch, so nothing "
                          f"would be learned; allowed: batch_size >= {least} (2 x "
                          "names_per_concept)")
    return options


# --------------------------------------------------------------------------- loss
def mine_hard_pairs(sim: torch.Tensor, labels: torch.Tensor,
                    margin: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Masks of the hard positive and hard negative pairs of a similarity matrix.

    Anchor i keeps negative k when ``S_ik > min_p S_ip - margin`` and positive p when
    ``S_ip < max_k S_ik + margin``; an anchor without positives or without negatives keeps
    nothing of the missing kind's counterpart.
    """
    import torch

    same = labels[:, None] == labels[None, :]
    eye = torch.eye(len(labels), dtype=torch.bool, device=labels.device)
    pos, neg = same & ~eye, ~same
    s = sim.detach()
    inf = torch.tensor(float("inf"), device=s.device, dtype=s.dtype)
    min_pos = torch.where(pos, s, inf).min(dim=1, keepdim=True).values
    max_neg = torch.where(neg, s, -inf).max(dim=1, keepdim=True).values
    return pos & (s < max_neg + margin), neg & (s > min_pos - margin)


def multi_similarity_loss(embeddings: torch.Tensor, labels: torch.Tensor, alpha: float = 2.0,
                          beta: float = 50.0, base: float = 1.0,
                          margin: float = 0.2) -> torch.Tensor:
    """Multi-similarity loss over the hard pairs of a batch of unit vectors.

    Args:
        embeddings: ``(n, d)`` L2-normalised vectors.
        labels: ``(n,)`` concept indices.
        alpha / beta / base: Loss settings; margin: the miner's margin.

    Returns:
        The mean over the n anchors (anchors without kept pairs count 0).
    """
    import torch

    sim = embeddings @ embeddings.T
    pos, neg = mine_hard_pairs(sim, labels, margin)
    zero = torch.zeros_like(sim)
    pos_sum = torch.where(pos, torch.exp(-alpha * (sim - base)), zero).sum(dim=1)
    neg_sum = torch.where(neg, torch.exp(beta * (sim - base)), zero).sum(dim=1)
    loss = torch.log1p(pos_sum) / alpha + torch.log1p(neg_sum) / beta
    return loss.mean()


# --------------------------------------------------------------------------- data
def synonym_groups(kb: Sequence[str] = (), dictionaries: Sequence[str | Path] = (),
                   lang: str = "en") -> dict[str, list[str]]:
    """Distinct normalised names of each concept, from knowledge bases and dictionary TSVs."""
    d = Dictionary()
    for spec in kb:
        d.extend(Dictionary.from_concepts(load_kb(spec)))
    for path in dictionaries:
        d.extend(Dictionary.load(path))
    groups: dict[str, dict[str, None]] = {}
    for entry in d:
        key = normalize_string(entry.name, lang)
        if key:
            groups.setdefault(entry.concept_id, {})[key] = None
    return {cid: list(names) for cid, names in groups.items()}


def limit_pairs(groups: dict[str, list[str]], max_pairs: int | None,
                rng: random.Random) -> dict[str, list[str]]:
    """Concepts with 2+ names, sampled (whole concepts) until ``max_pairs`` names."""
    usable = sorted(cid for cid, names in groups.items() if len(names) >= 2)
    if max_pairs is None:
        return {cid: groups[cid] for cid in usable}
    rng.shuffle(usable)
    out: dict[str, list[str]] = {}
    total = 0
    for cid in usable:
        if total >= max_pairs:
            break
        out[cid] = groups[cid]
        total += len(groups[cid])
    return out


def concept_batches(groups: dict[str, list[str]], batch_size: int, names_per_concept: int,
                    rng: random.Random) -> list[list[tuple[str, int]]]:
    """One epoch of batches of (name, concept index); concepts shuffled, names sampled.

    Each batch holds ``batch_size // names_per_concept`` concepts. When the concepts left for
    the last batch are a single one, they are merged into the batch before (which then holds
    up to ``names_per_concept`` names more than ``batch_size``): a batch of one concept has no
    negative pair and would add a step of zero loss. The other batches are those the same
    seed gives without the merge.
    """
    concepts = sorted(groups)
    rng.shuffle(concepts)
    per_batch = max(1, batch_size // names_per_concept)
    batches: list[list[tuple[str, int]]] = []
    for lo in range(0, len(concepts), per_batch):
        batch: list[tuple[str, int]] = []
        for j, cid in enumerate(concepts[lo:lo + per_batch]):
            names = groups[cid]
            chosen = rng.sample(names, min(names_per_concept, len(names)))
            batch.extend((name, j) for name in chosen)
        if per_batch > 1 and lo + 1 == len(concepts) and batches:
            batches[-1].extend((name, per_batch) for name, _ in batch)
        elif len(batch) > 1:
            batches.append(batch)
    return batches


# --------------------------------------------------------------------------- training
def _optimizer(encoder: EntityEncoder, options: AlignOptions) -> torch.optim.Optimizer:
    from xlnel.models.torch_utils import adamw

    return adamw(encoder.model, options.lr, options.weight_decay)


def batch_loss(encoder: EntityEncoder, batch: Sequence[tuple[str, int]],
               options: AlignOptions) -> torch.Tensor:
    """The multi-similarity loss of one batch of (normalised name, concept index)."""
    import torch

    features = encoder.tokenize([name for name, _ in batch])
    tensors = encoder.collate(features, range(len(batch)))
    labels = torch.tensor([label for _, label in batch], device=encoder.device)
    return multi_similarity_loss(encoder.forward(tensors), labels, options.alpha, options.beta,
                                 options.base, options.margin)


def train_alignment(encoder: EntityEncoder, groups: dict[str, list[str]],
                    options: AlignOptions, progress: bool = False) -> dict[str, Any]:
    """Fine-tune ``encoder`` in place on synonym groups; returns a report of the losses.

    Raises:
        ConfigError: If a batch cannot hold two concepts (:func:`check_batch_size`).
    """
    import torch

    from xlnel.models.torch_utils import freeze_embeddings, seed_everything

    check_batch_size(options)
    seed_everything(options.seed)
    rng = random.Random(options.seed)
    freeze = options.freeze_embeddings
    if freeze is None:
        freeze = encoder.device.type == "cpu"
    if freeze:
        logger.info("froze %d embedding parameters", freeze_embeddings(encoder.model))
    optimizer = _optimizer(encoder, options)
    encoder.model.train()
    losses: list[float] = []
    step, t0 = 0, time.perf_counter()
    for epoch in range(1, options.epochs + 1):
        batches = concept_batches(groups, options.batch_size, options.names_per_concept, rng)
        if options.max_steps is not None:
            batches = batches[:max(0, options.max_steps - step)]
        for batch in tqdm(batches, desc=f"alignment epoch {epoch}", unit="batch",
                          disable=not progress):
            loss = batch_loss(encoder, batch, options)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(
                [p for p in encoder.model.parameters() if p.requires_grad], 1.0)
            optimizer.step()
            losses.append(float(loss.detach()))
            step += 1
        if options.max_steps is not None and step >= options.max_steps:
            break
    encoder.model.eval()
    window = max(1, min(20, len(losses) // 5))
    return {"steps": step, "seconds": round(time.perf_counter() - t0, 1),
            "first_loss": _mean(losses[:window]), "last_loss": _mean(losses[-window:]),
            "loss_window": window}


def _mean(values: Sequence[float]) -> float | None:
    return round(sum(values) / len(values), 5) if values else None


def align_encoder(kb: Sequence[str], out: str | Path, dictionaries: Sequence[str | Path] = (),
                  options: AlignOptions | dict[str, Any] | None = None,
                  progress: bool = False) -> dict[str, Any]:
    """Fine-tune an encoder on synonym pairs and save it as a standard model folder.

    Args:
        kb: Knowledge-base specs (``tsv:PATH``, ``term2cui:PATH``...).
        out: Folder to write (replaced atomically); usable as the dense generator's
            ``options.model``.
        dictionaries: Dictionary TSVs (``xlnel dictionary build`` output, DFT pairs).
        options: :class:`AlignOptions` or a dict of them.
        progress: Show a progress bar.

    Returns:
        The training report (also saved in the folder's ``xlnel_encoder.json``).

    Raises:
        OutputError: If ``out`` is a file, holds other files than an encoder folder's, or is,
            holds or lies inside an input (the model folder included); checked before any
            work.
        ValueError: If fewer than two concepts have two or more names.
    """
    from xlnel.linkers.encoder import EntityEncoder

    opts = check_batch_size(options) if isinstance(options, AlignOptions) \
        else parse_align_options(options or {})
    out = _check_out(out, kb, dictionaries, opts.model)
    groups = limit_pairs(synonym_groups(kb, dictionaries, opts.lang), opts.max_pairs,
                         random.Random(opts.seed))
    if len(groups) < 2:  # the loss needs names of another concept as negatives
        cut = "" if opts.max_pairs is None else f" within max_pairs={opts.max_pairs}"
        raise ValueError(f"{len(groups)} concept(s) with two or more distinct names{cut}: "
                         "alignment needs at least two, whose names it tells apart")
    n_names = sum(len(v) for v in groups.values())
    logger.info("aligning on %d names of %d concepts", n_names, len(groups))
    encoder = EntityEncoder(opts.model, opts.pooling, opts.prefix, opts.max_length, opts.device,
                            opts.batch_size)
    report = {"concepts": len(groups), "names": n_names,
              **train_alignment(encoder, groups, opts, progress),
              "options": opts.model_dump(mode="json"), "kb": list(kb),
              "dictionaries": [str(p) for p in dictionaries]}
    with atomic_dir(out) as tmp:
        encoder.save(tmp, extra={"alignment": report})
    return report


def _check_out(out: str | Path, kb: Sequence[str], dictionaries: Sequence[str | Path],
               model: str) -> Path:
    """The folder :func:`align_encoder` may replace (see :func:`check_model_output`)."""
    from xlnel.io.kb import kb_files
    from xlnel.linkers.encoder import ENCODER_FILE
    from xlnel.outputs import check_model_output

    inputs = [path for spec in kb for path in kb_files(spec)] + [Path(p) for p in dictionaries]
    if Path(model).exists():  # a local model folder, read before the output replaces it
        inputs.append(Path(model))
    return check_model_output(out, inputs, ENCODER_FILE, "an encoder")


# --------------------------------------------------------------------------- evaluation
def evaluate_encoder(model: str, kb: Sequence[str], gold: str | Path,
                     dictionaries: Sequence[str | Path] = (), lang: str = "en",
                     k: int = 5, options: dict[str, Any] | None = None,
                     progress: bool = False) -> dict[str, Any]:
    """Accuracy@1 and @k of linking gold mentions (text only) by nearest dictionary name.

    A mention counts as correct at k when one of the first k distinct concepts of its nearest
    names is one of its gold concept ids. Mentions without a concept id are skipped; a
    mention whose text normalises to nothing (punctuation only) has no nearest name and
    counts as a miss (``empty_mentions``). The accuracy is also given over the mentions whose
    concept is in the dictionary, and over those of them whose text is not itself a
    dictionary name (``unseen``: no exact match).

    Args:
        model: Encoder (registered name, Hugging Face id or folder).
        kb: Knowledge-base specs giving the names.
        gold: Annotated documents (JSONL, PubTator, BRAT).
        dictionaries: Extra dictionary TSVs.
        lang: Normalisation rules of names and mentions.
        k: The larger cut-off.
        options: More ``xlnel.dense.v1`` options (pooling, prefix, device, batch_size...).
        progress: Log progress (the embedding of a large dictionary takes minutes on CPU).

    Raises:
        ConfigError: If an option is unknown or invalid, named as a key of ``options``.
        ValueError: If the gold documents hold no mention with a concept id.
    """
    from xlnel.config import CandidatesConfig
    from xlnel.io import read_documents
    from xlnel.linkers.dense import DenseCandidateGenerator, DenseOptions

    t0 = time.perf_counter()
    opts = {"switch_threshold": None, **(options or {}), "model": model}
    # checked here, where the keys are the caller's, not those of the generator's config
    # (candidates.options.pooling) that it is built with below
    validate_options(DenseOptions, opts, "", "dense encoder")
    # the gold is read first: a bad or empty file fails before the dictionary is embedded
    mentions = [(e.text, set(e.concept_ids)) for doc in read_documents(gold)
                for e in doc.entities if e.concept_ids]
    if not mentions:
        raise ValueError(f"{gold} holds no mention with a concept id: nothing to evaluate")
    d = Dictionary()
    for spec in kb:
        d.extend(Dictionary.from_concepts(load_kb(spec)))
    for path in dictionaries:
        d.extend(Dictionary.load(path))
    config = CandidatesConfig(generator="xlnel.dense.v1", threshold=0.0, top_m=max(20, 4 * k),
                              options=opts)
    generator = DenseCandidateGenerator(config, lang).fit(d)
    texts = list(dict.fromkeys(text for text, _ in mentions))
    ranked: dict[str, list[str]] = {}
    for lo in tqdm(range(0, len(texts), 2048), desc="mentions", disable=not progress):
        chunk = texts[lo:lo + 2048]
        for text, hits in zip(chunk, generator.nearest(chunk), strict=True):
            ranked[text] = list(dict.fromkeys(cid for cid, _, _ in hits))[:k]
    keys = {normalize_string(name, lang) for name in d.names}
    unseen = {t for t in texts if normalize_string(t, lang) not in keys}
    empty = sum(not normalize_string(t, lang) for t, _ in mentions)
    return {"model": model, "kb": list(kb), "dictionaries": [str(p) for p in dictionaries],
            "gold": str(gold), "dictionary_names": len(d.names), "empty_mentions": empty,
            **_accuracies(mentions, ranked, d.concept_ids(), unseen, k),
            "seconds": round(time.perf_counter() - t0, 1)}


def _accuracies(mentions: Sequence[tuple[str, set[str]]], ranked: dict[str, list[str]],
                known: set[str], unseen: set[str], k: int) -> dict[str, Any]:
    """Accuracies over all mentions, those whose concept is in the dictionary, and those
    whose text is no dictionary name (after normalisation)."""
    def acc(rows: Sequence[tuple[str, set[str]]], cut: int) -> float | None:
        if not rows:
            return None
        good = sum(bool(set(ranked[text][:cut]) & ids) for text, ids in rows)
        return round(good / len(rows), 4)

    inside = [(t, ids) for t, ids in mentions if ids & known]
    new = [(t, ids) for t, ids in inside if t in unseen]
    return {"mentions": len(mentions), "distinct_mentions": len(ranked),
            "mentions_in_dictionary": len(inside), "unseen_mentions": len(new), "k": k,
            "accuracy@1": acc(mentions, 1), f"accuracy@{k}": acc(mentions, k),
            "in_dictionary_accuracy@1": acc(inside, 1),
            f"in_dictionary_accuracy@{k}": acc(inside, k),
            "unseen_accuracy@1": acc(new, 1), f"unseen_accuracy@{k}": acc(new, k)}

