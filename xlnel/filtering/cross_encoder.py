"""``xlnel.cross_encoder.v1``: a transformer reads each candidate in context and scores it.

Each candidate becomes the pair ``[CLS] window [SEP] name [SEP]``: the window is the span with
``window`` words on each side, cut from the original text, the span itself between ``[`` and
``]`` (``mark_span``); the name is the dictionary name proposed for it. A sequence classifier
(``AutoModelForSequenceClassification`` with one output logit and a binary cross-entropy loss,
so the sigmoid of the logit is the probability that the candidate is a real mention of that
name's concept) is fine-tuned on the filter's training documents. Only the ``top_k_per_span``
best names of each span by matcher score are read by the transformer; the others score 0.

The model is any Hugging Face id or local folder, or a name registered in
:mod:`xlnel.models.registry` (``multilingual-e5-small``, built offline). torch and transformers
are imported only when a model is built or loaded.
"""

from __future__ import annotations

import json
import logging
import math
import random
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field
from tqdm import tqdm

from xlnel import __version__
from xlnel.config import FilterConfig, validate_options
from xlnel.errors import ArtifactError, ConfigError
from xlnel.filtering._pairs import candidate_windows, top_k_mask
from xlnel.filtering.base import CandidateFilter, register_filter
from xlnel.filtering.labels import label_candidates
from xlnel.linkers.decide import choose_threshold
from xlnel.types import Candidate, Document

if TYPE_CHECKING:
    import torch

logger = logging.getLogger(__name__)

INFERENCE_OPTIONS = frozenset({"device", "quantize", "inference_batch_size"})
"""Options that a loaded filter takes from the config; the others stay as trained."""


class CrossEncoderOptions(BaseModel):
    """Settings of ``xlnel.cross_encoder.v1`` (``filter.options`` in the pipeline config).

    Attributes:
        model: Registered model name, Hugging Face id or local folder of the encoder.
        window: Words of context on each side of the span.
        mark_span: Put ``[`` and ``]`` around the span inside the window. Without them the
            model cannot tell apart spans that differ only by a stripped Hebrew prefix or by a
            word at the window's edge (they get the same window).
        lr: Peak learning rate of AdamW.
        epochs: Most training epochs (early stopping may end sooner).
        batch_size: Pairs per training step (before gradient accumulation).
        max_length: Longest tokenised pair; longer ones are truncated.
        warmup_ratio: Share of the steps with a linearly rising learning rate.
        weight_decay: AdamW weight decay (not applied to biases and layer norms).
        seed: Seed of the dev split, negative sampling, head initialisation and shuffling.
        device: ``cpu``, ``cuda`` or ``auto``.
        freeze_embeddings: Keep the embedding layer fixed; ``None`` = only on CPU.
        train_layers: Train only the top N transformer layers and the head; the embeddings
            and lower layers stay fixed (about half the cost of a CPU step). ``None`` = all
            layers.
        grad_accum: Steps whose gradients are summed before each update.
        top_k_per_span: Names per span, best matcher scores first, read by the transformer;
            ``None`` = all.
        neg_ratio: Most negatives per positive in an epoch, sampled afresh each epoch;
            ``None`` = all negatives.
        dev_fraction: Share of the training documents (by document) held out for early
            stopping and the threshold; 0 = no dev set (threshold chosen on training data).
        patience: Epochs without dev improvement before training stops.
        quantize: Score with int8 dynamically quantised linear layers (CPU only).
        inference_batch_size: Pairs per forward pass when scoring.
    """

    model_config = ConfigDict(extra="forbid")

    model: str = "multilingual-e5-small"
    window: int = Field(2, ge=0)
    mark_span: bool = True
    lr: float = Field(2e-5, gt=0)
    epochs: int = Field(3, ge=1)
    batch_size: int = Field(32, ge=1)
    max_length: int = Field(64, ge=8)
    warmup_ratio: float = Field(0.1, ge=0.0, lt=1.0)
    weight_decay: float = Field(0.01, ge=0.0)
    seed: int = 0
    device: Literal["cpu", "cuda", "auto"] = "auto"
    freeze_embeddings: bool | None = None
    train_layers: int | None = Field(None, ge=0)
    grad_accum: int = Field(1, ge=1)
    top_k_per_span: int | None = Field(5, ge=1)
    neg_ratio: float | None = Field(4.0, gt=0)
    dev_fraction: float = Field(0.2, ge=0.0, lt=1.0)
    patience: int = Field(1, ge=1)
    quantize: bool = False
    inference_batch_size: int = Field(128, ge=1)


def parse_options(options: dict[str, Any]) -> CrossEncoderOptions:
    """Validate ``filter.options`` for the cross-encoder.

    Raises:
        ConfigError: Naming the bad key, its value and what is allowed.
    """
    return validate_options(CrossEncoderOptions, options, "filter.options", "cross-encoder")


def _split_indices(n: int, fraction: float, seed: int) -> tuple[list[int], list[int]]:
    """(dev, train) document indices: ``round(fraction * n)`` seeded random ones for dev."""
    order = list(range(n))
    random.Random(seed).shuffle(order)
    n_dev = round(fraction * n)
    if n_dev == 0 or n_dev == n:
        return [], list(range(n))
    dev = set(order[:n_dev])
    return sorted(dev), [i for i in range(n) if i not in dev]


@register_filter
class CrossEncoderFilter(CandidateFilter):
    """Fine-tuned cross-encoder over (context window, dictionary name) pairs.

    Attributes:
        options: The validated options.
        report: What training did (pair counts, epochs, dev F1 per epoch); saved with the
            model.
    """

    registered_name = "xlnel.cross_encoder.v1"

    def __init__(self, config: FilterConfig, lang: str) -> None:
        super().__init__(config, lang)
        self.options = parse_options(config.options)
        self.report: dict[str, Any] = {}
        self._model: Any = None
        self._tokenizer: Any = None
        self._quantized: Any = None
        self._device: Any = None  # torch.device once a model is loaded

    # ----------------------------------------------------------------- model
    def build_model(self) -> CrossEncoderFilter:
        """Load the encoder named by ``options.model`` as a one-logit classifier for training.

        The classification head is new (seeded) unless the checkpoint already has a one-logit
        head. :meth:`fit` calls it; call it alone to score with an untrained head (speed tests).
        """
        from xlnel.filtering._torch_utils import seed_everything
        from xlnel.models.registry import resolve_model

        seed_everything(self.options.seed)
        self._load_model(resolve_model(self.options.model), for_training=True)
        return self

    def _load_model(self, source: str, for_training: bool) -> None:
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        from xlnel.filtering._torch_utils import freeze_embeddings, freeze_lower_layers
        from xlnel.models.devices import resolve_device

        self._device = resolve_device(self.options.device, "filter.options.device")
        head: dict[str, Any] = {"num_labels": 1, "ignore_mismatched_sizes": True}
        self._tokenizer = AutoTokenizer.from_pretrained(source)
        model = AutoModelForSequenceClassification.from_pretrained(
            source, **(head if for_training else {}))
        freeze = self.options.freeze_embeddings
        if freeze is None:
            freeze = self._device.type == "cpu"
        if for_training and self.options.train_layers is not None:
            if self.options.freeze_embeddings is False:
                raise ConfigError("filter.options: train_layers keeps the embeddings fixed; "
                                  "it cannot be combined with freeze_embeddings: false")
            try:
                frozen = freeze_lower_layers(model, self.options.train_layers)
            except ValueError as e:
                raise ConfigError(f"filter.options.train_layers: {e}") from None
            logger.info("froze %d parameters (embeddings and all but the top %d layers)",
                        frozen, self.options.train_layers)
        elif freeze and for_training:
            logger.info("froze %d embedding parameters", freeze_embeddings(model))
        self._model = model.to(self._device)
        self._quantized = None
        if self.options.quantize and self._device.type != "cpu":
            logger.warning("quantize=True is ignored on %s: int8 kernels are CPU only",
                           self._device)

    def _inference_model(self) -> Any:
        if self._model is None:
            raise RuntimeError(f"{self.registered_name}: call fit() or load() before scoring")
        if not self.options.quantize or self._device.type != "cpu":
            return self._model
        if self._quantized is None:
            from xlnel.filtering._torch_utils import quantize_int8

            self._quantized = quantize_int8(self._model)
        return self._quantized

    # ----------------------------------------------------------------- scoring
    def score_batch(self, documents: Sequence[Document],
                    candidates: Sequence[Sequence[Candidate]],
                    progress: bool = False) -> list[np.ndarray]:
        """P(real mention) of each candidate; names outside the span's top k score 0.

        Each distinct (window, name) pair is scored once; pairs are batched by length.
        """
        return self._score(self._inference_model(), documents, candidates, progress)

    def _top_k(self, cands: Sequence[Candidate]) -> tuple[np.ndarray, list[Candidate]]:
        """Indices and candidates among the ``top_k_per_span`` of their span."""
        keep = np.flatnonzero(top_k_mask(cands, self.options.top_k_per_span))
        return keep, [cands[int(i)] for i in keep]

    def _score(self, model: Any, documents: Sequence[Document],
               candidates: Sequence[Sequence[Candidate]],
               progress: bool = False) -> list[np.ndarray]:
        from xlnel.filtering._torch_utils import encode_pairs, predict

        keys: dict[tuple[str, str], int] = {}
        slots: list[tuple[np.ndarray, list[int]]] = []
        for doc, cands in zip(documents, candidates, strict=True):
            keep, kept = self._top_k(cands)
            windows = candidate_windows(doc, kept, self.options.window,
                                        self.options.mark_span)
            ids = [keys.setdefault((w, c.name), len(keys)) for w, c in zip(windows, kept,
                                                                           strict=True)]
            slots.append((keep, ids))
        pairs = list(keys)
        features = encode_pairs(self._tokenizer, [w for w, _ in pairs], [n for _, n in pairs],
                                self.options.max_length)
        # the int8 copy always runs on the CPU
        device = self._device if model is self._model else _cpu()
        probs = predict(model, features, self._tokenizer.pad_token_id,
                        self.options.inference_batch_size, device, progress)
        out: list[np.ndarray] = []
        for (keep, ids), cands in zip(slots, candidates, strict=True):
            scores = np.zeros(len(cands), dtype=np.float64)
            scores[keep] = probs[ids]
            out.append(scores)
        return out

    # ----------------------------------------------------------------- training
    def fit(self, documents: Sequence[Document], candidates: Sequence[Sequence[Candidate]],
            progress: bool = False) -> CrossEncoderFilter:
        """Fine-tune the encoder on ``documents``; pick the epoch and threshold on a dev split.

        Raises:
            ValueError: If there are no documents, or no positive pair among their candidates.
        """
        from xlnel.filtering._torch_utils import restore_state, seed_everything

        if not documents:
            raise ValueError(f"{self.registered_name} needs annotated training documents, "
                             "got none (does dft.R leave any to the filter?)")
        opts = self.options
        seed_everything(opts.seed)
        dev_idx, train_idx = _split_indices(len(documents), opts.dev_fraction, opts.seed)
        train_docs = [documents[i] for i in train_idx]
        train_cands = [candidates[i] for i in train_idx]
        dev_docs = [documents[i] for i in dev_idx]
        dev_cands = [candidates[i] for i in dev_idx]
        pos, neg = self._training_pairs(train_docs, train_cands)
        self.build_model()
        best = self._train(pos, neg, dev_docs, dev_cands, progress)
        if best is not None:
            restore_state(self._model, best)
        self._quantized = None
        self._set_threshold(dev_docs or train_docs, dev_cands or train_cands, progress)
        return self

    def _training_pairs(self, documents: Sequence[Document],
                        candidates: Sequence[Sequence[Candidate]]
                        ) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        label_of: dict[tuple[str, str], bool] = {}
        for doc, cands in zip(documents, candidates, strict=True):
            keep, kept = self._top_k(cands)
            # the level the threshold is chosen at (as the GBDT filter does): at span level a
            # name without a concept id (a names-list entry) is not a false negative
            labels = label_candidates(doc, kept, level=self.config.select_level)
            windows = candidate_windows(doc, kept, self.options.window,
                                        self.options.mark_span)
            # one pair per distinct text: a name under two concept ids, one of them gold, is
            # a positive (the transformer reads only the text)
            for window, cand, label in zip(windows, kept, labels, strict=True):
                key = (window, cand.name)
                label_of[key] = label_of.get(key, False) or bool(label)
        pos = [key for key, label in label_of.items() if label]
        neg = [key for key, label in label_of.items() if not label]
        logger.info("cross-encoder training pairs: %d positive, %d negative (1:%.1f) in %d "
                    "documents", len(pos), len(neg), len(neg) / max(1, len(pos)),
                    len(documents))
        if not pos:
            raise ValueError("no candidate of the filter's training documents matches a gold "
                             "mention: check the dictionary and the candidate settings")
        self.report = {"positive_pairs": len(pos), "negative_pairs": len(neg)}
        return pos, neg

    def _negatives_per_epoch(self, n_pos: int, n_neg: int) -> int:
        cap = self.options.neg_ratio
        return n_neg if cap is None else min(n_neg, math.ceil(cap * n_pos))

    def _epoch_examples(self, pos: list[tuple[str, str]], neg: list[tuple[str, str]],
                        rng: random.Random) -> list[tuple[str, str, float]]:
        n_neg = self._negatives_per_epoch(len(pos), len(neg))
        negatives = neg if n_neg == len(neg) else rng.sample(neg, n_neg)
        examples = [(w, n, 1.0) for w, n in pos] + [(w, n, 0.0) for w, n in negatives]
        rng.shuffle(examples)
        return examples

    def _train(self, pos: list[tuple[str, str]], neg: list[tuple[str, str]],
               dev_docs: list[Document], dev_cands: list[Sequence[Candidate]],
               progress: bool) -> dict[str, torch.Tensor] | None:
        """Run the epochs; return the best dev epoch's trainable parameters (None: no dev)."""
        from transformers import get_linear_schedule_with_warmup

        from xlnel.filtering._torch_utils import trainable_state

        opts = self.options
        rng = random.Random(opts.seed)
        per_epoch = len(pos) + self._negatives_per_epoch(len(pos), len(neg))
        steps = math.ceil(math.ceil(per_epoch / opts.batch_size) / opts.grad_accum) * opts.epochs
        optimizer = self._optimizer()
        scheduler = get_linear_schedule_with_warmup(optimizer, int(opts.warmup_ratio * steps),
                                                    steps)
        best_f1, best_state, stale = -1.0, None, 0
        epochs: list[dict[str, float]] = []
        for epoch in range(1, opts.epochs + 1):
            loss = self._train_epoch(self._epoch_examples(pos, neg, rng), optimizer, scheduler,
                                     progress, f"cross-encoder epoch {epoch}")
            record = {"epoch": epoch, "loss": round(loss, 5)}
            if dev_docs:
                scores = self._score(self._model, dev_docs, dev_cands)
                t, f1 = choose_threshold(dev_docs, dev_cands, scores, self.config.select_level)
                record.update(dev_f1=round(f1, 5), dev_threshold=round(t, 5))
                if f1 > best_f1 + 1e-9:
                    best_f1, best_state, stale = f1, trainable_state(self._model), 0
                else:
                    stale += 1
            epochs.append(record)
            logger.info("cross-encoder %s", record)
            if dev_docs and stale >= opts.patience:
                logger.info("early stop after epoch %d (best dev F1 %.4f)", epoch, best_f1)
                break
        self.report.update(epochs=epochs, dev_documents=len(dev_docs),
                           best_dev_f1=None if best_state is None else round(best_f1, 5))
        return best_state

    def _optimizer(self) -> torch.optim.Optimizer:
        from xlnel.filtering._torch_utils import adamw

        return adamw(self._model, self.options.lr, self.options.weight_decay)

    def _train_epoch(self, examples: list[tuple[str, str, float]], optimizer: Any,
                     scheduler: Any, progress: bool, desc: str) -> float:
        """One pass over ``examples``; returns the mean loss."""
        import torch

        from xlnel.filtering._torch_utils import collate, encode_pairs

        opts, model = self.options, self._model
        model.train()
        loss_fn = torch.nn.BCEWithLogitsLoss()
        n_batches = math.ceil(len(examples) / opts.batch_size)
        total = 0.0
        optimizer.zero_grad()
        for b in tqdm(range(n_batches), desc=desc, unit="batch", disable=not progress):
            chunk = examples[b * opts.batch_size:(b + 1) * opts.batch_size]
            features = encode_pairs(self._tokenizer, [e[0] for e in chunk],
                                    [e[1] for e in chunk], opts.max_length)
            batch = collate(features, self._tokenizer.pad_token_id, self._device)
            labels = torch.tensor([e[2] for e in chunk], device=self._device)
            loss = loss_fn(model(**batch).logits[:, 0].float(), labels)
            (loss / opts.grad_accum).backward()
            total += loss.detach().item()
            if (b + 1) % opts.grad_accum == 0 or b + 1 == n_batches:
                torch.nn.utils.clip_grad_norm_(
                    [p for p in model.parameters() if p.requires_grad], 1.0)
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad()
        model.eval()
        return total / max(1, n_batches)

    def _set_threshold(self, documents: Sequence[Document],
                       candidates: Sequence[Sequence[Candidate]], progress: bool) -> None:
        """Choose the threshold with the model that will score (int8 when quantising)."""
        if self.config.threshold is not None:
            self.threshold = self.config.threshold
            return
        scores = self.score_batch(documents, candidates, progress)
        self.threshold, f1 = choose_threshold(documents, candidates, scores,
                                              self.config.select_level)
        self.report.update(threshold=self.threshold, threshold_f1=round(f1, 5))
        logger.info("cross-encoder threshold %.4f (%s F1 %.4f on %d documents)",
                    self.threshold, self.config.select_level, f1, len(documents))

    # ----------------------------------------------------------------- persistence
    def save(self, directory: Path) -> None:
        """Write ``model/`` (weights and tokenizer, fp32) and ``filter.json``."""
        if self._model is None:
            raise RuntimeError(f"{self.registered_name}: nothing to save before fit()")
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        self._model.save_pretrained(directory / "model")
        self._tokenizer.save_pretrained(directory / "model")
        meta = {"xlnel_version": __version__, "filter": self.registered_name,
                "threshold": self.threshold, "options": self.options.model_dump(mode="json"),
                "training": self.report}
        (directory / "filter.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")

    @classmethod
    def load(cls, directory: Path, config: FilterConfig, lang: str) -> CrossEncoderFilter:
        """Read a filter written by :meth:`save`.

        The trained options are kept, except ``device``, ``quantize`` and
        ``inference_batch_size``, which ``config.options`` may change; a threshold in
        ``config`` wins over the saved one.

        Raises:
            ArtifactError: If ``filter.json`` or ``model/`` is missing, or the folder holds
                another filter.
        """
        directory = Path(directory)
        path = directory / "filter.json"
        if not path.is_file() or not (directory / "model").is_dir():
            raise ArtifactError(f"saved cross-encoder in {directory} lacks filter.json or "
                                "model/")
        meta = json.loads(path.read_text(encoding="utf-8"))
        if meta.get("filter") != cls.registered_name:
            raise ArtifactError(f"{path} holds filter {meta.get('filter')!r}, "
                                f"not {cls.registered_name!r}")
        options = dict(meta["options"])
        # Compare validated values: YAML reads ``1e-4`` as a string that validates to 0.0001.
        given = parse_options(config.options).model_dump(include=set(config.options))
        for key, value in given.items():
            if key in INFERENCE_OPTIONS:
                options[key] = value
            elif options.get(key) != value:
                logger.warning("filter option %s=%r ignored: the saved model was trained "
                               "with %r", key, value, options.get(key))
        f = cls(config.model_copy(update={"options": options}), lang)
        f.report = dict(meta.get("training", {}))
        f._load_model(str(directory / "model"), for_training=False)
        f.threshold = (float(meta["threshold"]) if config.threshold is None
                       else config.threshold)
        return f


def _cpu() -> torch.device:
    import torch

    return torch.device("cpu")
