"""``xlnel.crf_tagger.v1``: a transformer + CRF mention tagger over BIO word tags.

Documents are split into sentences (:mod:`xlnel.ner.sentences`), sentences into the words of
:func:`xlnel.candidates.spans.tokenize`, and words into the encoder's sub-tokens; a sentence
longer than ``max_length`` sub-tokens is cut between words into several chunks. Each word is
represented by the encoder's state of its first sub-token (the other sub-tokens only give
context), so a linear emission layer gives one score per BIO label per word, and a CRF
(``pytorch-crf``) over those word emissions is decoded with Viterbi. The training loss is the
cross-entropy of the emissions plus ``crf_weight`` x the CRF negative log-likelihood (mean over
the batch).

Gold entities are aligned to whole words (see :mod:`xlnel.ner.bio`). Because Hebrew glues
prepositions and the article onto the next word, a third of the Camoni mentions start inside a
word (``בסוכרת`` -> ``סוכרת``); a second linear layer on the same word state predicts how many
characters (0 to ``max_prefix``) a mention skips at the start of its first word, trained on
``B`` words only, so the spans come out with the gold offsets and ``Span.stripped_prefix``.

The labels are ``O`` plus ``B-``/``I-`` for each entity type of the training documents. torch,
transformers and pytorch-crf are imported only when a model is built or loaded.
"""

from __future__ import annotations

import json
import logging
import math
import random
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from tqdm import tqdm

from xlnel.candidates.spans import tokenize
from xlnel.config import NerConfig, validate_options
from xlnel.dictionary.dft import split_documents
from xlnel.errors import ArtifactError, ConfigError
from xlnel.io._atomic import atomic_dir
from xlnel.ner.base import SpanTagger, register_tagger
from xlnel.ner.bio import bio_labels, decode_bio, encode_bio, entity_types
from xlnel.numbers import Float, Int
from xlnel.types import Document, Link, Span
from xlnel.version import __version__

if TYPE_CHECKING:
    import torch

    from xlnel.ner._network import Chunk, TaggerNetwork

logger = logging.getLogger(__name__)

INFERENCE_OPTIONS = frozenset({"device", "inference_batch_size"})
"""Options that a loaded tagger takes from the config; the others stay as trained."""


class CrfTaggerOptions(BaseModel):
    """Settings of ``xlnel.crf_tagger.v1`` (``ner.options`` in the pipeline config).

    Attributes:
        model: Registered model name, Hugging Face id or local folder of the encoder.
        lr: Peak AdamW learning rate of the encoder.
        head_lr: Peak learning rate of the emission, prefix and CRF layers (new, so faster).
        epochs: Most training epochs (early stopping may end sooner).
        batch_size: Sentence chunks per training step.
        max_length: Most sub-tokens in a chunk, special tokens included; at most what the
            model reads (refused otherwise).
        warmup_ratio: Share of the steps with a linearly rising learning rate.
        weight_decay: AdamW weight decay (not applied to biases and layer norms).
        seed: Seed of the dev split, layer initialisation, dropout and shuffling.
        device: ``cpu``, ``cuda`` or ``auto``.
        freeze_embeddings: Keep the embedding layer fixed; ``None`` = only on CPU.
        dev_fraction: Share of the training documents held out for early stopping on span F1;
            0 = no dev set (all epochs run, the last one is kept), as when the held-out
            documents hold no gold entity (a warning says so).
        patience: Epochs without dev improvement before training stops.
        crf_weight: Weight of the CRF negative log-likelihood in the loss.
        dropout: Dropout on the word states.
        max_prefix: Most characters a mention may skip at the start of its first word.
        inference_batch_size: Chunks per forward pass when tagging.
    """

    model_config = ConfigDict(extra="forbid")

    model: str = "multilingual-e5-small"
    lr: Float = Field(5e-5, gt=0)
    head_lr: Float = Field(1e-3, gt=0)
    epochs: Int = Field(3, ge=1)
    batch_size: Int = Field(16, ge=1)
    max_length: Int = Field(128, ge=8)
    warmup_ratio: Float = Field(0.1, ge=0.0, lt=1.0)
    weight_decay: Float = Field(0.01, ge=0.0)
    seed: Int = Field(0, ge=0, lt=2**32)
    device: Literal["cpu", "cuda", "auto"] = "auto"
    freeze_embeddings: bool | None = None
    dev_fraction: Float = Field(0.1, ge=0.0, lt=1.0)
    patience: Int = Field(1, ge=1)
    crf_weight: Float = Field(0.1, ge=0.0)
    dropout: Float = Field(0.1, ge=0.0, lt=1.0)
    max_prefix: Int = Field(4, ge=0, le=16)
    inference_batch_size: Int = Field(64, ge=1)


def parse_options(options: dict[str, Any]) -> CrfTaggerOptions:
    """Validate ``ner.options`` for the CRF tagger.

    Raises:
        ConfigError: Naming the bad key, its value and what is allowed.
    """
    return validate_options(CrfTaggerOptions, options, "ner.options", "crf-tagger")


@register_tagger
class CrfTagger(SpanTagger):
    """Transformer + CRF BIO tagger.

    Attributes:
        options: The validated options.
        labels: BIO labels, ``O`` first; set by :meth:`fit` or :meth:`load`.
        report: What training did (chunks, dropped entities, loss and dev F1 per epoch).
    """

    registered_name = "xlnel.crf_tagger.v1"
    inference_options = INFERENCE_OPTIONS

    def __init__(self, config: NerConfig, lang: str) -> None:
        super().__init__(config, lang)
        self.options = parse_options(config.options)
        self.labels: list[str] = []
        self.report: dict[str, Any] = {}
        self._network: TaggerNetwork | None = None
        self._tokenizer: Any = None
        self._device: torch.device | None = None

    # ----------------------------------------------------------------- model
    def _build(self, source: str, labels: list[str], for_training: bool) -> None:
        from transformers import AutoModel, AutoTokenizer

        from xlnel.models.devices import resolve_device
        from xlnel.models.torch_utils import check_max_length, seed_everything
        from xlnel.ner._network import TaggerNetwork

        opts = self.options
        self._device = resolve_device(opts.device, "ner.options.device")
        seed_everything(opts.seed)
        self._tokenizer = AutoTokenizer.from_pretrained(source)
        if self._tokenizer.cls_token_id is None or self._tokenizer.sep_token_id is None:
            raise ConfigError(f"ner.options.model={opts.model!r}: the tokenizer has no CLS/SEP "
                              "tokens; the tagger needs an encoder tokenizer (BERT, XLM-R)")
        # A saved tagger is read from safetensors only: a pickled weights file is never loaded.
        from xlnel.models.quiet import no_progress_bars

        with no_progress_bars():
            encoder = AutoModel.from_pretrained(source, **({} if for_training else
                                                           {"use_safetensors": True}))
        check_max_length(opts.max_length, self._tokenizer, encoder.config,
                         "ner.options.max_length", opts.model)
        self.labels = list(labels)
        network = TaggerNetwork(encoder, len(labels), opts.max_prefix + 1, opts.dropout)
        freeze = opts.freeze_embeddings
        if freeze is None:
            freeze = self._device.type == "cpu"
        if freeze and for_training:
            module = getattr(encoder, "embeddings", None) or encoder.get_input_embeddings()
            frozen = 0
            for param in module.parameters():
                param.requires_grad_(False)
                frozen += param.numel()
            logger.info("froze %d embedding parameters", frozen)
        self._network = network.to(self._device)

    def _require_network(self) -> TaggerNetwork:
        if self._network is None:
            raise RuntimeError(f"{self.registered_name}: call fit() or load() first")
        return self._network

    # ----------------------------------------------------------------- features
    def _chunks(self, documents: Sequence[Document],
                words: Sequence[Sequence[tuple[int, int]]]) -> list[Chunk]:
        from xlnel.ner._network import make_chunks

        out: list[Chunk] = []
        for i, (doc, doc_words) in enumerate(zip(documents, words, strict=True)):
            out.extend(make_chunks(self._tokenizer, i, doc.text, doc_words,
                                   self.options.max_length))
        return out

    def _training_chunks(self, documents: Sequence[Document]) -> list[Chunk]:
        """Chunks with word targets; warns once about gold entities that had to be dropped."""
        from xlnel.ner._network import IGNORE

        words = [tokenize(d.text) for d in documents]
        chunks = self._chunks(documents, words)
        index = {label: i for i, label in enumerate(self.labels)}
        alignments = [encode_bio(w, d.entities, self.options.max_prefix)
                      for d, w in zip(documents, words, strict=True)]
        for chunk in chunks:
            al = alignments[chunk.doc]
            chunk.tags = [index[al.tags[w]] for w in chunk.words]
            chunk.prefixes = [al.prefixes[w] if al.tags[w].startswith("B-") else IGNORE
                              for w in chunk.words]
        overlaps = sum(a.dropped_overlaps for a in alignments)
        empty = sum(a.dropped_empty for a in alignments)
        if overlaps or empty:
            logger.warning("crf tagger: %d overlapping gold entities left out (the longest of "
                           "each overlapping group is kept), %d covering no word", overlaps,
                           empty)
        self.report.update(dropped_overlapping=overlaps, dropped_no_word=empty)
        return chunks

    # ----------------------------------------------------------------- training
    def fit(self, documents: Sequence[Document], progress: bool = False) -> CrfTagger:
        """Fine-tune the encoder and train the layers on top; early stop on dev span F1.

        Raises:
            ValueError: If no document has a gold entity, or none covers a word.
        """
        from xlnel.models.registry import resolve_model
        from xlnel.models.torch_utils import restore_state

        types = entity_types(documents)
        if not types:
            raise ValueError(f"{self.registered_name} needs training documents with gold "
                             f"entities; got {len(documents)} documents without any")
        opts = self.options
        dev, train = split_documents(documents, opts.dev_fraction, opts.seed)
        if dev and not any(d.entities for d in dev):
            # every epoch would score F1 0 there: early stopping would keep the first one
            logger.warning("crf tagger: the %d dev documents hold no gold entity to stop "
                           "early on; training on all %d documents without a dev split",
                           len(dev), len(documents))
        if not any(d.entities for d in dev) or not any(d.entities for d in train):
            dev, train = [], list(documents)
        self.report = {"train_documents": len(train), "dev_documents": len(dev)}
        self._build(resolve_model(opts.model), bio_labels(types), for_training=True)
        chunks = [c for c in self._training_chunks(train) if c.words]
        if not any(tag for c in chunks for tag in c.tags):  # label 0 is O
            raise ValueError(f"{self.registered_name}: no gold entity of the {len(train)} "
                             "training documents covers a word (punctuation or white space "
                             "only), so there is no mention to learn")
        self.report["train_chunks"] = len(chunks)
        logger.info("crf tagger: %d labels, %d training chunks from %d documents, %d dev "
                    "documents", len(self.labels), len(chunks), len(train), len(dev))
        best = self._train(chunks, dev, progress)
        if best is not None:
            restore_state(self._require_network(), best)
        self._require_network().eval()
        return self

    def _train(self, chunks: list[Chunk], dev: Sequence[Document],
               progress: bool) -> dict[str, torch.Tensor] | None:
        """Run the epochs; return the best dev epoch's trainable parameters (None: no dev)."""
        from transformers import get_linear_schedule_with_warmup

        from xlnel.models.torch_utils import trainable_state

        opts, network = self.options, self._require_network()
        rng = random.Random(opts.seed)
        steps = math.ceil(len(chunks) / opts.batch_size) * opts.epochs
        optimizer = self._optimizer(network)
        scheduler = get_linear_schedule_with_warmup(optimizer, int(opts.warmup_ratio * steps),
                                                    steps)
        best_f1, best_state, stale = -1.0, None, 0
        epochs: list[dict[str, float]] = []
        for epoch in range(1, opts.epochs + 1):
            loss = self._train_epoch(_bucketed_batches(chunks, opts.batch_size, rng), optimizer,
                                     scheduler, progress, f"tagger epoch {epoch}")
            record: dict[str, float] = {"epoch": epoch, "loss": round(loss, 5)}
            if dev:
                f1 = self._dev_f1(dev)
                record["dev_span_f1"] = round(f1, 5)
                if f1 > best_f1 + 1e-9:
                    best_f1, best_state, stale = f1, trainable_state(network), 0
                else:
                    stale += 1
            epochs.append(record)
            logger.info("crf tagger %s", record)
            if dev and stale >= opts.patience:
                logger.info("early stop after epoch %d (best dev span F1 %.4f)", epoch, best_f1)
                break
        self.report.update(epochs=epochs,
                           best_dev_span_f1=None if best_state is None else round(best_f1, 5))
        return best_state

    def _dev_f1(self, dev: Sequence[Document]) -> float:
        from xlnel.evaluation.metrics import evaluate

        spans = self.predict_batch(dev)
        pred = [Document(d.id, d.text, tuple(Link(s.start, s.end, s.text) for s in doc_spans))
                for d, doc_spans in zip(dev, spans, strict=True)]
        return evaluate(dev, pred, level="span").f1

    def _optimizer(self, network: TaggerNetwork) -> torch.optim.Optimizer:
        import torch

        from xlnel.models.torch_utils import skips_weight_decay

        opts = self.options
        groups: dict[tuple[bool, bool], list[torch.nn.Parameter]] = {}
        for name, param in network.named_parameters():
            if not param.requires_grad:
                continue
            head = not name.startswith("encoder.")
            no_decay = skips_weight_decay(name)
            groups.setdefault((head, no_decay), []).append(param)
        return torch.optim.AdamW(
            [{"params": params, "lr": opts.head_lr if head else opts.lr,
              "weight_decay": 0.0 if no_decay else opts.weight_decay}
             for (head, no_decay), params in groups.items()])

    def _train_epoch(self, batches: list[list[Chunk]], optimizer: Any, scheduler: Any,
                     progress: bool, desc: str) -> float:
        """One pass over the batches; returns the mean loss."""
        import torch

        from xlnel.ner._network import collate

        opts, network = self.options, self._require_network()
        assert self._device is not None  # set with the network
        network.train()
        total = 0.0
        params = [p for p in network.parameters() if p.requires_grad]
        for chunks in tqdm(batches, desc=desc, unit="batch", disable=not progress):
            batch = collate(chunks, self._tokenizer.pad_token_id, self._device,
                            with_targets=True)
            loss = network.loss(batch, opts.crf_weight)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            optimizer.step()
            scheduler.step()
            total += loss.detach().item()
        network.eval()
        return total / max(1, len(batches))

    # ----------------------------------------------------------------- prediction
    def predict_batch(self, documents: Sequence[Document],
                      progress: bool = False) -> list[list[Span]]:
        """Mention spans of each document: Viterbi tags per chunk, decoded per document."""
        import torch

        from xlnel.models.torch_utils import length_batches
        from xlnel.ner._network import collate

        network = self._require_network()
        assert self._device is not None  # set with the network
        words = [tokenize(d.text) for d in documents]
        chunks = [c for c in self._chunks(documents, words) if c.words]
        tags = [["O"] * len(w) for w in words]
        prefixes = [[0] * len(w) for w in words]
        batches = list(length_batches([len(c.input_ids) for c in chunks],
                                      self.options.inference_batch_size))
        was_training = network.training
        network.eval()
        with torch.inference_mode():
            for idx in tqdm(batches, desc="tagging", unit="batch", disable=not progress):
                batch = [chunks[i] for i in idx]
                paths, prefix_ids = network.decode(
                    collate(batch, self._tokenizer.pad_token_id, self._device, False))
                for chunk, path, pre in zip(batch, paths, prefix_ids, strict=True):
                    for w, label, p in zip(chunk.words, path, pre, strict=True):
                        tags[chunk.doc][w] = self.labels[label]
                        prefixes[chunk.doc][w] = p
        network.train(was_training)
        return [decode_bio(d.text, w, t, p)
                for d, w, t, p in zip(documents, words, tags, prefixes, strict=True)]

    # ----------------------------------------------------------------- persistence
    def save(self, directory: Path) -> None:
        """Write ``model/`` (encoder and tokenizer), ``head.safetensors`` and ``tagger.json``,
        replacing ``directory`` whole and atomically: no file of an earlier save stays beside
        them, and an interrupted save leaves the earlier folder as it was."""
        from safetensors.torch import save_file

        from xlnel.models.quiet import no_progress_bars

        network = self._require_network()
        with atomic_dir(directory) as tmp, no_progress_bars():
            network.encoder.save_pretrained(tmp / "model")
            self._tokenizer.save_pretrained(tmp / "model")
            save_file(network.head_state(), str(tmp / "head.safetensors"))
            meta = {"xlnel_version": __version__, "tagger": self.registered_name,
                    "labels": self.labels, "options": self.options.model_dump(mode="json"),
                    "training": self.report}
            (tmp / "tagger.json").write_text(json.dumps(meta, indent=2, ensure_ascii=False),
                                             encoding="utf-8")

    @classmethod
    def load(cls, directory: Path, config: NerConfig, lang: str) -> CrfTagger:
        """Read a tagger written by :meth:`save` (from local files only).

        The trained options are kept, except ``device`` and ``inference_batch_size``, which
        ``config.options`` may change.

        Raises:
            ArtifactError: If a file is missing, the folder holds another tagger, or the saved
                layers do not fit its labels.
        """
        from safetensors.torch import load_file

        directory = Path(directory)
        path = directory / "tagger.json"
        if not path.is_file() or not (directory / "model").is_dir() \
                or not (directory / "head.safetensors").is_file():
            raise ArtifactError(f"saved crf tagger in {directory} lacks tagger.json, model/ "
                                "or head.safetensors")
        meta = json.loads(path.read_text(encoding="utf-8"))
        if meta.get("tagger") != cls.registered_name:
            raise ArtifactError(f"{path} holds tagger {meta.get('tagger')!r}, "
                                f"not {cls.registered_name!r}")
        options = dict(meta["options"])
        # Compare validated values: YAML reads ``5e-5`` as a string that validates to 5e-05.
        given = parse_options(config.options).model_dump(include=set(config.options))
        for key, value in given.items():
            if key in INFERENCE_OPTIONS:
                options[key] = value
            elif options.get(key) != value:
                logger.warning("ner option %s=%r ignored: the saved tagger was trained with %r",
                               key, value, options.get(key))
        tagger = cls(config.model_copy(update={"options": options}), lang)
        tagger.report = dict(meta.get("training", {}))
        tagger._build(str(directory / "model"), list(meta["labels"]), for_training=False)
        network = tagger._require_network()
        try:
            missing, unexpected = network.load_state_dict(
                load_file(str(directory / "head.safetensors")), strict=False)
        except RuntimeError as e:  # layers of another size: the labels or max_prefix differ
            raise ArtifactError(f"{directory / 'head.safetensors'} does not fit the "
                                f"{len(tagger.labels)} labels of tagger.json: {e}") from None
        if unexpected or any(not k.startswith("encoder.") for k in missing):
            raise ArtifactError(f"{directory / 'head.safetensors'} does not fit the tagger: "
                                f"missing {missing[:5]}, unexpected {unexpected[:5]}")
        network.eval()
        return tagger


def _bucketed_batches(chunks: Sequence[Chunk], size: int,
                      rng: random.Random) -> list[list[Chunk]]:
    """Shuffled batches of chunks of similar length.

    Sentences vary from a few sub-tokens to ``max_length``; batching neighbours by length within
    pools of 50 batches cuts the padding (and a CPU epoch's time) several times over while the
    batches stay random.
    """
    order = list(chunks)
    rng.shuffle(order)
    pool = 50 * size
    batches: list[list[Chunk]] = []
    for lo in range(0, len(order), pool):
        part = sorted(order[lo:lo + pool], key=lambda c: len(c.input_ids))
        batches.extend(part[i:i + size] for i in range(0, len(part), size))
    rng.shuffle(batches)
    return batches
