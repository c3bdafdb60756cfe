"""``xlnel.cross_encoder.v1``: a transformer reads each candidate in context and scores it.

Each candidate becomes the pair ``[CLS] window [SEP] name [SEP]``: the window is the span with
``window`` words on each side, cut from the original text, the span itself between ``[`` and
``]`` (``mark_span``); the name is the dictionary name proposed for it. A sequence classifier
(``AutoModelForSequenceClassification`` with one output logit and a binary cross-entropy loss,
so the sigmoid of the logit is the probability that the candidate is a real mention of that
name's concept) is fine-tuned on the filter's training documents. Only the ``top_k_per_span``
best names of each span by matcher score are read by the transformer; the others score 0.

With ``prefilter`` (a cascade for CPUs), a cheap filter (``xlnel.gbdt.v1``) is trained first;
the transformer then reads only the candidates that filter scores at least a cut, chosen on its
out-of-fold scores to keep ``prefilter_recall`` of the positive training candidates, and the
final score is the transformer's or the mean of both (``combine``, chosen on the dev split).

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
from typing import TYPE_CHECKING, Any

import numpy as np
from tqdm import tqdm

from xlnel.config import FilterConfig
from xlnel.errors import ArtifactError, ConfigError
from xlnel.filtering._cross_encoder_data import (
    DevPart,
    combine,
    dev_split,
    epoch_examples,
    f1_at,
    negatives_per_epoch,
    recall_cut,
    training_pairs,
)
from xlnel.filtering._pair_encoder import PairEncoder
from xlnel.filtering._pairs import candidate_windows, top_k_mask
from xlnel.filtering.base import CandidateFilter, register_filter
from xlnel.filtering.cross_encoder_options import (
    INFERENCE_OPTIONS,
    parse_options,
    prefilter_config,
)
from xlnel.filtering.labels import label_candidates
from xlnel.io._atomic import atomic_dir
from xlnel.linkers.decide import choose_threshold
from xlnel.types import Candidate, Document
from xlnel.version import __version__

if TYPE_CHECKING:
    import torch

logger = logging.getLogger(__name__)

@register_filter
class CrossEncoderFilter(CandidateFilter):
    """Fine-tuned cross-encoder over (context window, dictionary name) pairs.

    Attributes:
        options: The validated options.
        report: What training did (pair counts, epochs, dev F1 per epoch); saved with the
            model.
    """

    registered_name = "xlnel.cross_encoder.v1"
    inference_options = INFERENCE_OPTIONS

    def __init__(self, config: FilterConfig, lang: str) -> None:
        super().__init__(config, lang)
        self.options = parse_options(config.options)
        #: The cascade's prefilter config (``None`` without a cascade), checked here so that a
        #: bad name or option fails before any training.
        self.prefilter_config = prefilter_config(self.options, config.select_level, lang)
        self.report: dict[str, Any] = {}
        self._model: Any = None
        self._tokenizer: Any = None
        self._encoder: PairEncoder | None = None
        self._quantized: Any = None
        self._device: Any = None  # torch.device once a model is loaded
        self._prefilter: CandidateFilter | None = None
        #: Prefilter score a candidate needs to be read by the transformer (cascade only).
        self.cut: float | None = None
        #: How the cascade's final score is made (``cross_encoder`` without a cascade).
        self.combine_mode: str = "cross_encoder"

    # ----------------------------------------------------------------- model
    def build_model(self) -> CrossEncoderFilter:
        """Load the encoder named by ``options.model`` as a one-logit classifier for training.

        The classification head is new (seeded) unless the checkpoint already has a one-logit
        head. :meth:`fit` calls it; call it alone to score with an untrained head (speed tests).
        """
        from xlnel.models.registry import resolve_model
        from xlnel.models.torch_utils import seed_everything

        seed_everything(self.options.seed)
        self._load_model(resolve_model(self.options.model), for_training=True)
        return self

    def _load_model(self, source: str, for_training: bool) -> None:
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        from xlnel.models import torch_utils
        from xlnel.models.devices import resolve_device
        from xlnel.models.quiet import no_progress_bars

        self._device = resolve_device(self.options.device, "filter.options.device")
        head: dict[str, Any] = {"num_labels": 1, "ignore_mismatched_sizes": True}
        self._tokenizer = AutoTokenizer.from_pretrained(source)
        self._encoder = PairEncoder(self._tokenizer, self.options.max_length)
        # A saved filter is read from safetensors only: a pickled weights file is never loaded.
        with no_progress_bars():
            model = AutoModelForSequenceClassification.from_pretrained(
                source, **(head if for_training else {"use_safetensors": True}))
        torch_utils.check_max_length(self.options.max_length, self._tokenizer, model.config,
                                     "filter.options.max_length", self.options.model)
        freeze = self.options.freeze_embeddings
        if freeze is None:
            freeze = self._device.type == "cpu"
        if for_training and self.options.train_layers is not None:
            if self.options.freeze_embeddings is False:
                raise ConfigError("filter.options: train_layers keeps the embeddings fixed; "
                                  "it cannot be combined with freeze_embeddings: false")
            try:
                frozen = torch_utils.freeze_lower_layers(model, self.options.train_layers)
            except ValueError as e:
                raise ConfigError(f"filter.options.train_layers: {e}") from None
            logger.info("froze %d parameters (embeddings and all but the top %d layers)",
                        frozen, self.options.train_layers)
        elif freeze and for_training:
            logger.info("froze %d embedding parameters", torch_utils.freeze_embeddings(model))
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
            from xlnel.models.torch_utils import quantize_int8

            self._quantized = quantize_int8(self._model)
        return self._quantized

    # ----------------------------------------------------------------- scoring
    def score_batch(self, documents: Sequence[Document],
                    candidates: Sequence[Sequence[Candidate]],
                    progress: bool = False) -> list[np.ndarray]:
        """P(real mention) of each candidate; names outside the span's top k score 0.

        Each distinct (window, name) pair is scored once; pairs are batched by length. In a
        cascade, candidates below the prefilter's cut are not read by the transformer.
        """
        model = self._inference_model()
        if self._prefilter is None:
            return self._score(model, documents, candidates, progress)
        pre = self._prefilter.score_batch(documents, candidates)
        return self._cascade(model, documents, candidates, pre, self.combine_mode, progress)

    def _cascade(self, model: Any, documents: Sequence[Document],
                 candidates: Sequence[Sequence[Candidate]], pre: Sequence[np.ndarray],
                 mode: str, progress: bool = False) -> list[np.ndarray]:
        """Final scores from the prefilter's scores ``pre`` and the transformer's."""
        assert self.cut is not None
        allowed = [np.asarray(p) >= self.cut for p in pre]
        probs = self._score(model, documents, candidates, progress, allowed)
        return [combine(np.asarray(p, dtype=np.float64), c, mode)
                for p, c in zip(pre, probs, strict=True)]

    def _top_k(self, cands: Sequence[Candidate], allowed: np.ndarray | None = None
               ) -> tuple[np.ndarray, list[Candidate]]:
        """Indices and candidates among the ``top_k_per_span`` of their span (and allowed)."""
        mask = top_k_mask(cands, self.options.top_k_per_span)
        if allowed is not None:
            mask &= allowed
        keep = np.flatnonzero(mask)
        return keep, [cands[int(i)] for i in keep]

    def _score(self, model: Any, documents: Sequence[Document],
               candidates: Sequence[Sequence[Candidate]], progress: bool = False,
               allowed: Sequence[np.ndarray] | None = None) -> list[np.ndarray]:
        """The transformer's probabilities; 0 outside the top k (and outside ``allowed``)."""
        from xlnel.models.torch_utils import predict

        keys: dict[tuple[str, str], int] = {}
        slots: list[tuple[np.ndarray, list[int]]] = []
        for i, (doc, cands) in enumerate(zip(documents, candidates, strict=True)):
            keep, kept = self._top_k(cands, None if allowed is None else allowed[i])
            windows = candidate_windows(doc, kept, self.options.window,
                                        self.options.mark_span)
            ids = [keys.setdefault((w, c.name), len(keys)) for w, c in zip(windows, kept,
                                                                           strict=True)]
            slots.append((keep, ids))
        assert self._encoder is not None
        encoded = self._encoder([w for w, _ in keys], [n for _, n in keys])
        # the int8 copy always runs on the CPU
        device = self._device if model is self._model else _cpu()
        probs = predict(model, encoded, self._tokenizer.pad_token_id,
                        self.options.inference_batch_size, device, progress,
                        self.options.inference_dtype)
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
        from xlnel.models.torch_utils import restore_state, seed_everything

        if not documents:
            raise ValueError(f"{self.registered_name} needs annotated training documents, "
                             "got none (does dft.R leave any to the filter?)")
        opts = self.options
        seed_everything(opts.seed)
        self.report = {}
        # out-of-fold prefilter scores: every document scored by a model that did not see it
        pre = self._fit_prefilter(documents, candidates, progress)
        allowed = None if pre is None else [p >= self.cut for p in pre]
        dev_idx, train_idx = dev_split(documents, opts.dev_fraction, opts.seed)
        has_dev = bool(dev_idx)
        dev_idx = dev_idx or train_idx  # no dev split: the threshold comes from training data
        train_docs = [documents[i] for i in train_idx]
        train_cands = [candidates[i] for i in train_idx]
        dev = DevPart([documents[i] for i in dev_idx], [candidates[i] for i in dev_idx],
                      None if pre is None else [pre[i] for i in dev_idx])
        pos, neg = self._training_pairs(
            train_docs, train_cands, None if allowed is None else [allowed[i] for i in train_idx])
        self.build_model()
        best = self._train(pos, neg, dev if has_dev else None, progress)
        if best is not None:
            restore_state(self._model, best)
        self._quantized = None
        self._set_threshold(dev, progress)
        return self

    def _fit_prefilter(self, documents: Sequence[Document],
                       candidates: Sequence[Sequence[Candidate]],
                       progress: bool) -> list[np.ndarray] | None:
        """Train the cascade's prefilter; set :attr:`cut`; return its out-of-fold scores."""
        if self.prefilter_config is None:
            return None
        from xlnel.filtering.base import filter_class

        name, level = self.prefilter_config.name, self.config.select_level
        pre = filter_class(name)(self.prefilter_config, self.lang)
        pre.fit(documents, candidates, progress=progress)
        oof = getattr(pre, "oof_scores", None)
        if not oof:
            raise ConfigError(f"filter.options.prefilter: {name} gives no out-of-fold scores "
                              "to choose the cut on; use xlnel.gbdt.v1")
        labels = np.concatenate([label_candidates(d, c, level)
                                 for d, c in zip(documents, candidates, strict=True)])
        scores = np.concatenate(oof)
        self.cut = recall_cut(scores, labels, self.options.prefilter_recall)
        kept = scores >= self.cut
        self._prefilter = pre
        self.report["prefilter"] = {
            "name": name, "cut": round(self.cut, 6),
            "candidates_kept": round(float(kept.mean()), 4) if kept.size else 0.0,
            "positives_kept": round(float(labels[kept].sum() / max(1, labels.sum())), 4)}
        logger.info("prefilter %s: cut %.4f keeps %.1f%% of the training candidates and "
                    "%.1f%% of the positives (out of fold)", name, self.cut,
                    100 * self.report["prefilter"]["candidates_kept"],
                    100 * self.report["prefilter"]["positives_kept"])
        return [np.asarray(s, dtype=np.float64) for s in oof]

    def _training_pairs(self, documents: Sequence[Document],
                        candidates: Sequence[Sequence[Candidate]],
                        allowed: Sequence[np.ndarray] | None = None
                        ) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        kept = [self._top_k(cands, None if allowed is None else allowed[i])[1]
                for i, cands in enumerate(candidates)]
        pos, neg = training_pairs(documents, kept, self.config.select_level,
                                  self.options.window, self.options.mark_span)
        logger.info("cross-encoder training pairs: %d positive, %d negative (1:%.1f) in %d "
                    "documents", len(pos), len(neg), len(neg) / max(1, len(pos)),
                    len(documents))
        if not pos:
            raise ValueError("no candidate of the filter's training documents matches a gold "
                             "mention: check the dictionary and the candidate settings")
        self.report.update(positive_pairs=len(pos), negative_pairs=len(neg))
        return pos, neg

    def _train(self, pos: list[tuple[str, str]], neg: list[tuple[str, str]],
               dev: DevPart | None, progress: bool) -> dict[str, torch.Tensor] | None:
        """Run the epochs; return the best dev epoch's trainable parameters (None: no dev)."""
        from transformers import get_linear_schedule_with_warmup

        from xlnel.models.torch_utils import trainable_state

        opts = self.options
        rng = random.Random(opts.seed)
        per_epoch = len(pos) + negatives_per_epoch(len(pos), len(neg), opts.neg_ratio)
        steps = math.ceil(math.ceil(per_epoch / opts.batch_size) / opts.grad_accum) * opts.epochs
        optimizer = self._optimizer()
        scheduler = get_linear_schedule_with_warmup(optimizer, int(opts.warmup_ratio * steps),
                                                    steps)
        best_f1, best_state, stale = -1.0, None, 0
        epochs: list[dict[str, float]] = []
        for epoch in range(1, opts.epochs + 1):
            examples = epoch_examples(pos, neg, opts.neg_ratio, rng)
            loss = self._train_epoch(examples, optimizer, scheduler, progress,
                                     f"cross-encoder epoch {epoch}")
            record = {"epoch": epoch, "loss": round(loss, 5)}
            if dev is not None:
                scores = self._dev_scores(self._model, dev, "cross_encoder")
                t, f1 = choose_threshold(dev.documents, dev.candidates, scores,
                                         self.config.select_level)
                record.update(dev_f1=round(f1, 5), dev_threshold=round(t, 5))
                if f1 > best_f1 + 1e-9:
                    best_f1, best_state, stale = f1, trainable_state(self._model), 0
                else:
                    stale += 1
            epochs.append(record)
            logger.info("cross-encoder %s", record)
            if dev is not None and stale >= opts.patience:
                logger.info("early stop after epoch %d (best dev F1 %.4f)", epoch, best_f1)
                break
        self.report.update(epochs=epochs, dev_documents=0 if dev is None else len(dev.documents),
                           best_dev_f1=None if best_state is None else round(best_f1, 5))
        return best_state

    def _optimizer(self) -> torch.optim.Optimizer:
        from xlnel.models.torch_utils import adamw

        return adamw(self._model, self.options.lr, self.options.weight_decay)

    def _train_epoch(self, examples: list[tuple[str, str, float]], optimizer: Any,
                     scheduler: Any, progress: bool, desc: str) -> float:
        """One pass over ``examples``; returns the mean loss."""
        import torch

        from xlnel.models.torch_utils import to_device

        opts, model = self.options, self._model
        assert self._encoder is not None
        model.train()
        loss_fn = torch.nn.BCEWithLogitsLoss()
        n_batches = math.ceil(len(examples) / opts.batch_size)
        total = 0.0
        optimizer.zero_grad()
        for b in tqdm(range(n_batches), desc=desc, unit="batch", disable=not progress):
            chunk = examples[b * opts.batch_size:(b + 1) * opts.batch_size]
            pairs = self._encoder([e[0] for e in chunk], [e[1] for e in chunk])
            batch = to_device(pairs.batch(range(len(chunk)), self._tokenizer.pad_token_id),
                              self._device)
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

    def _dev_scores(self, model: Any, dev: DevPart, mode: str,
                    progress: bool = False) -> list[np.ndarray]:
        """Scores of the dev part; in a cascade from its out-of-fold prefilter scores."""
        if dev.prefilter is None:
            return self._score(model, dev.documents, dev.candidates, progress)
        return self._cascade(model, dev.documents, dev.candidates, dev.prefilter, mode,
                             progress)

    def _set_threshold(self, dev: DevPart, progress: bool) -> None:
        """Choose the combination and the threshold on ``dev`` with the model that will
        score (int8 when quantising)."""
        level = self.config.select_level
        modes = ["cross_encoder"]
        if self._prefilter is not None:
            modes = ["cross_encoder", "mean"] if self.options.combine == "auto" else \
                [self.options.combine]
        if self.config.threshold is not None and len(modes) == 1:
            # nothing to choose: do not spend a scoring pass on the dev split
            self.threshold, self.combine_mode = self.config.threshold, modes[0]
            return
        model = self._inference_model()
        if dev.prefilter is not None and len(modes) > 1:
            # the transformer reads the same pairs in every mode: score once, combine each way
            probs = self._dev_scores(model, dev, "cross_encoder", progress)
            by_mode = {m: [combine(p, c, m) for p, c in zip(dev.prefilter, probs, strict=True)]
                       for m in modes}
        else:
            by_mode = {modes[0]: self._dev_scores(model, dev, modes[0], progress)}
        best: tuple[float, float, str] | None = None
        for mode, scores in by_mode.items():
            if self.config.threshold is not None:
                t = self.config.threshold
                f1 = f1_at(dev, scores, t, level)
            else:
                t, f1 = choose_threshold(dev.documents, dev.candidates, scores, level)
            self.report.setdefault("dev_f1_by_combine", {})[mode] = round(f1, 5)
            if best is None or f1 > best[1] + 1e-12:
                best = (t, f1, mode)
        assert best is not None
        self.threshold, f1, self.combine_mode = best
        self.report.update(threshold=self.threshold, threshold_f1=round(f1, 5),
                           combine=self.combine_mode)
        logger.info("cross-encoder threshold %.4f, combine %s (%s F1 %.4f on %d documents)",
                    self.threshold, self.combine_mode, level, f1, len(dev.documents))

    # ----------------------------------------------------------------- persistence
    def save(self, directory: Path) -> None:
        """Write ``model/`` (weights and tokenizer, fp32), ``filter.json`` and a cascade's
        ``prefilter/``, replacing ``directory`` whole and atomically (no earlier file stays)."""
        if self._model is None:
            raise RuntimeError(f"{self.registered_name}: nothing to save before fit()")
        from xlnel.models.quiet import no_progress_bars

        with atomic_dir(directory) as tmp, no_progress_bars():
            self._model.save_pretrained(tmp / "model")
            self._tokenizer.save_pretrained(tmp / "model")
            if self._prefilter is not None:
                self._prefilter.save(tmp / "prefilter")
            meta = {"xlnel_version": __version__, "filter": self.registered_name,
                    "threshold": self.threshold, "options": self.options.model_dump(mode="json"),
                    "prefilter_cut": self.cut, "combine": self.combine_mode,
                    "training": self.report}
            (tmp / "filter.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")

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
        if f.prefilter_config is not None:
            from xlnel.filtering.base import filter_class

            name = f.prefilter_config.name
            if meta.get("prefilter_cut") is None or not (directory / "prefilter").is_dir():
                raise ArtifactError(f"saved cross-encoder in {directory} names prefilter "
                                    f"{name} but lacks prefilter/ or its cut")
            f._prefilter = filter_class(name).load(directory / "prefilter",
                                                   f.prefilter_config, lang)
            f.cut = float(meta["prefilter_cut"])
            f.combine_mode = str(meta.get("combine", "cross_encoder"))
        f.threshold = (float(meta["threshold"]) if config.threshold is None
                       else config.threshold)
        return f


def _cpu() -> torch.device:
    import torch

    return torch.device("cpu")
