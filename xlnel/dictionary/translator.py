"""Character-level attention encoder-decoder translating names into another language.

A bidirectional GRU reads the normalised English name; a GRU decoder with Luong ("general")
attention writes the target rendering. Pairs tagged with a kind (``translation`` /
``transliteration``, see :mod:`xlnel.dictionary.pairs`) put a kind token before the source so
either rendering can be asked for. Both vocabularies come from the data: nothing is Hebrew-specific.
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Annotated, Literal

import torch
import torch.nn.functional as F
from pydantic import BaseModel, ConfigDict, Field
from safetensors.torch import load_file, save_file
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
from tqdm import tqdm

from xlnel.dictionary.pairs import normalize_name, split_pairs, training_triples
from xlnel.errors import ArtifactError, ConfigError
from xlnel.io._atomic import atomic_dir, atomic_path, atomic_write
from xlnel.numbers import Float, Int
from xlnel.version import __version__

logger = logging.getLogger(__name__)

FORMAT_VERSION = 1
CONFIG_FILE, WEIGHTS_FILE, VOCAB_FILE = "config.json", "model.safetensors", "vocab.json"
SPECIALS = ("<pad>", "<s>", "</s>", "<unk>")
KIND_TOKEN = "<{}>"  # source symbol put before the characters to ask for a kind of rendering
PAD_ID, BOS_ID, EOS_ID, UNK_ID = range(4)

Example = tuple[list[int], list[int]]
PositiveInt = Annotated[Int, Field(ge=1)]
Fraction = Annotated[Float, Field(ge=0.0, lt=1.0)]


class TranslatorConfig(BaseModel):
    """Hyperparameters of the character translator (each field's description says what it sets).

    The defaults train on the MUSE en-he pairs on 2 CPU cores in about ten minutes; on a GPU set
    ``device="cuda"`` and raise ``hidden_size``, ``num_layers`` and ``epochs``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    embedding_dim: PositiveInt = Field(default=64, description="Character embedding size.")
    hidden_size: PositiveInt = Field(default=128, description="Decoder and per-direction "
                                     "encoder GRU size.")
    num_layers: PositiveInt = Field(default=1, description="GRU layers of encoder and decoder.")
    dropout: Fraction = Field(default=0.1, description="Dropout on embeddings, between layers "
                              "and before the output layer.")
    lr: Annotated[Float, Field(gt=0.0)] = Field(
        default=3e-3, description="Adam learning rate; halved when held-out loss stalls.")
    epochs: PositiveInt = Field(default=10, description="Most passes over the training pairs.")
    batch_size: PositiveInt = Field(default=64, description="Pairs per training step.")
    max_length: PositiveInt = Field(default=40, description="Pairs with a longer side are left "
                                    "out of training.")
    min_char_count: PositiveInt = Field(default=1, description="Rarer characters become <unk>.")
    dev_fraction: Fraction = Field(default=0.05, description="Share of source words held out "
                                   "for early stopping (0: none).")
    patience: Annotated[Int, Field(ge=0)] = Field(
        default=2, description="Epochs without held-out improvement before stopping.")
    grad_clip: Annotated[Float, Field(gt=0.0)] = Field(default=1.0, description="Gradient-norm "
                                                       "clipping threshold.")
    max_train_seconds: Annotated[Float | None, Field(gt=0.0)] = Field(
        default=None, description="Wall-clock training budget; None for no limit.")
    seed: Int = Field(default=13, description="Seed of initialisation, split and shuffling.")
    device: Literal["cpu", "cuda"] = Field(default="cpu", description="Torch device.")
    source_lang: str = Field(default="en", description="Language code of the inputs.")
    target_lang: str = Field(default="he", description="Language code of the outputs.")


class CharVocab:
    """Characters of one side, with ``<pad>``, ``<s>``, ``</s>``, ``<unk>`` as ids 0-3.

    Args:
        symbols: All symbols in id order; must start with the four special symbols.
    """

    def __init__(self, symbols: Sequence[str]) -> None:
        if tuple(symbols[:4]) != SPECIALS:
            raise ValueError(f"vocabulary must start with {SPECIALS}, got {tuple(symbols[:4])}")
        self.symbols = tuple(symbols)
        self._index = {s: i for i, s in enumerate(self.symbols)}
        if len(self._index) != len(self.symbols):
            raise ValueError("vocabulary symbols must be distinct")

    @classmethod
    def build(cls, texts: Iterable[str], min_count: int = 1,
              extra: Sequence[str] = ()) -> CharVocab:
        """Vocabulary of the characters seen at least ``min_count`` times, plus extra symbols."""
        counts = Counter(ch for text in texts for ch in text)
        chars = sorted(ch for ch, n in counts.items() if n >= min_count)
        return cls([*SPECIALS, *extra, *chars])

    def __len__(self) -> int:
        return len(self.symbols)

    def id_of(self, symbol: str) -> int:
        """Id of a character or symbol (``<unk>``'s id when unknown)."""
        return self._index.get(symbol, UNK_ID)

    def encode(self, text: str) -> list[int]:
        """Ids of the characters of ``text`` (no ``<s>`` / ``</s>``)."""
        return [self._index.get(ch, UNK_ID) for ch in text]

    def decode(self, ids: Iterable[int]) -> str:
        """Text of the ids up to the first ``</s>``, special symbols dropped."""
        ids = list(ids)
        end = ids.index(EOS_ID) if EOS_ID in ids else len(ids)
        return "".join(self.symbols[i] for i in ids[:end] if i >= len(SPECIALS))


class _Seq2Seq(nn.Module):
    """Bidirectional GRU encoder, GRU decoder with Luong general attention."""

    def __init__(self, n_src: int, n_tgt: int, cfg: TranslatorConfig) -> None:
        super().__init__()
        e, h, layers = cfg.embedding_dim, cfg.hidden_size, cfg.num_layers
        inner = cfg.dropout if layers > 1 else 0.0
        self.src_emb = nn.Embedding(n_src, e, padding_idx=PAD_ID)
        self.tgt_emb = nn.Embedding(n_tgt, e, padding_idx=PAD_ID)
        self.encoder = nn.GRU(e, h, layers, batch_first=True, bidirectional=True, dropout=inner)
        self.bridge = nn.Linear(2 * h, h)
        self.decoder = nn.GRU(e, h, layers, batch_first=True, dropout=inner)
        self.attn_key = nn.Linear(2 * h, h, bias=False)
        self.combine = nn.Linear(3 * h, h)
        self.out = nn.Linear(h, n_tgt)
        self.drop = nn.Dropout(cfg.dropout)
        self.layers, self.hidden = layers, h

    def encode(self, src: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """Encoder states, attention keys, padding mask and initial decoder state."""
        packed = pack_padded_sequence(self.drop(self.src_emb(src)), lengths.cpu(),
                                      batch_first=True, enforce_sorted=False)
        out, last = self.encoder(packed)
        memory, _ = pad_packed_sequence(out, batch_first=True, total_length=src.size(1))
        last = last.view(self.layers, 2, src.size(0), self.hidden)
        state = torch.tanh(self.bridge(torch.cat([last[:, 0], last[:, 1]], dim=-1)))
        return memory, self.attn_key(memory), src != PAD_ID, state.contiguous()

    def decode(self, tgt_in: torch.Tensor, state: torch.Tensor, memory: torch.Tensor,
               keys: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Logits for every target position (teacher-forced inputs) and the last state."""
        out, state = self.decoder(self.drop(self.tgt_emb(tgt_in)), state)
        scores = torch.bmm(out, keys.transpose(1, 2)).masked_fill(~mask[:, None, :], -1e9)
        context = torch.bmm(torch.softmax(scores, dim=-1), memory)
        combined = torch.tanh(self.combine(torch.cat([out, context], dim=-1)))
        return self.out(self.drop(combined)), state


def _pad(seqs: Sequence[list[int]], device: torch.device) -> torch.Tensor:
    width = max(len(s) for s in seqs)
    return torch.tensor([s + [PAD_ID] * (width - len(s)) for s in seqs], device=device)


@torch.no_grad()
def _beam_search(model: _Seq2Seq, src: torch.Tensor, lengths: torch.Tensor, beam: int,
                 max_steps: int) -> list[list[tuple[list[int], float]]]:
    """Batched beam search; per input, hypotheses with length-normalised log-probabilities.

    Finished hypotheses stay in the beam and may only be continued by ``<pad>`` at no cost, so
    every step is a single ``topk`` over ``beam * vocab`` candidates per input.
    """
    n = src.size(0)
    memory, keys, mask, state = model.encode(src, lengths)
    memory, keys, mask = (t.repeat_interleave(beam, dim=0) for t in (memory, keys, mask))
    state = state.repeat_interleave(beam, dim=1)
    scores = torch.full((n, beam), float("-inf"), device=src.device)
    scores[:, 0] = 0.0
    tokens = torch.full((n * beam, 1), BOS_ID, dtype=torch.long, device=src.device)
    done = torch.zeros(n * beam, dtype=torch.bool, device=src.device)
    steps = torch.zeros(n * beam, device=src.device)
    for _ in range(max_steps):
        logits, state = model.decode(tokens[:, -1:], state, memory, keys, mask)
        logp = torch.log_softmax(logits[:, -1].float(), dim=-1)
        logp[:, [PAD_ID, BOS_ID, UNK_ID]] = float("-inf")
        logp[done] = float("-inf")
        logp[done, PAD_ID] = 0.0
        vocab = logp.size(1)
        scores, flat = (scores.view(-1, 1) + logp).view(n, -1).topk(beam, dim=1)
        parent = (torch.arange(n, device=src.device)[:, None] * beam + flat // vocab).view(-1)
        token = (flat % vocab).view(-1, 1)
        tokens = torch.cat([tokens[parent], token], dim=1)
        state = state[:, parent]
        steps = steps[parent] + (~done[parent]).float()
        done = done[parent] | (token.view(-1) == EOS_ID)
        if bool(done.all()):
            break
    return _collect(tokens, scores.view(-1), steps, done, n, beam)


def _collect(tokens: torch.Tensor, scores: torch.Tensor, steps: torch.Tensor, done: torch.Tensor,
             n: int, beam: int) -> list[list[tuple[list[int], float]]]:
    """Group beams per input, drop dead ones, prefer finished ones, sort by normalised score."""
    results: list[list[tuple[list[int], float]]] = []
    for i in range(n):
        rows = range(i * beam, (i + 1) * beam)
        alive = [r for r in rows if torch.isfinite(scores[r])]
        finished = [r for r in alive if done[r]]
        hyps = [(tokens[r, 1:].tolist(), float(scores[r] / steps[r].clamp(min=1)))
                for r in (finished or alive)]
        results.append(sorted(hyps, key=lambda h: -h[1]))
    return results


class CharTranslator:
    """A character-level translator: batched beam search, training, save and load.

    Build one with :func:`train_translator` or :meth:`load`; the constructor makes a freshly
    initialised (untrained) model.

    Args:
        config: Hyperparameters.
        source_vocab: Source characters, plus one ``<kind>`` token per kind.
        target_vocab: Target characters.
        kinds: Kinds the model was trained with (``translation``, ``transliteration``); empty
            when the training pairs were untagged.
    """

    def __init__(self, config: TranslatorConfig, source_vocab: CharVocab, target_vocab: CharVocab,
                 kinds: Sequence[str] = ()) -> None:
        missing = [k for k in kinds if KIND_TOKEN.format(k) not in source_vocab.symbols]
        if missing:
            raise ValueError(f"source vocabulary lacks tokens for kinds {missing}")
        self.config, self.kinds = config, tuple(kinds)
        self.source_vocab, self.target_vocab = source_vocab, target_vocab
        if config.device == "cuda" and not torch.cuda.is_available():
            raise ConfigError("translator device 'cuda' asked for but CUDA is not available")
        self.device = torch.device(config.device)
        self.history: list[dict[str, float]] = []
        with torch.random.fork_rng(devices=[]):  # seeded initialisation, global RNG untouched
            torch.manual_seed(config.seed)
            self.model = _Seq2Seq(len(source_vocab), len(target_vocab), config).to(self.device)
        self.model.eval()

    @property
    def target_lang(self) -> str:
        """Language code of the outputs."""
        return self.config.target_lang

    def _encode_source(self, name: str, kind: str | None) -> list[int]:
        ids = self.source_vocab.encode(normalize_name(name)) + [EOS_ID]
        if not self.kinds:
            if kind is not None:
                raise ValueError(f"kind {kind!r} asked for, but this translator was trained "
                                 "without kinds; pass kind=None")
            return ids
        kind = self.kinds[0] if kind is None else kind
        if kind not in self.kinds:
            raise ValueError(f"unknown kind {kind!r}; this translator knows {list(self.kinds)}")
        return [self.source_vocab.id_of(KIND_TOKEN.format(kind)), *ids]

    def translate(self, names: Sequence[str], beam: int = 5, n_best: int = 5,
                  batch_size: int = 64, kind: str | None = None) -> list[list[tuple[str, float]]]:
        """Translate names with batched beam search.

        Args:
            names: Source names; normalised (NFKC, lower case) before encoding.
            beam: Beam width.
            n_best: Most hypotheses returned per name; at most ``beam``.
            batch_size: Names decoded together (names are grouped by length).
            kind: ``translation`` or ``transliteration`` for a model trained on tagged pairs
                (default: its first kind); must be ``None`` for an untagged model.

        Returns:
            For each name, up to ``n_best`` distinct ``(text, score)`` pairs, best first; the score
            is the log-probability per generated symbol (``</s>`` included). An empty name gives
            an empty list.

        Raises:
            ValueError: On ``beam``, ``n_best`` or ``batch_size`` below 1, ``n_best > beam`` or an
                unknown kind.
        """
        if min(beam, n_best, batch_size) < 1 or n_best > beam:
            raise ValueError(f"need 1 <= n_best <= beam and batch_size >= 1, got n_best={n_best}, "
                             f"beam={beam}, batch_size={batch_size}")
        encoded = [self._encode_source(name, kind) for name in names]
        results: list[list[tuple[str, float]]] = [[] for _ in names]
        order = sorted((i for i, name in enumerate(names) if normalize_name(name)),
                       key=lambda i: len(encoded[i]))
        self.model.eval()
        for start in range(0, len(order), batch_size):
            idx = order[start:start + batch_size]
            seqs = [encoded[i] for i in idx]
            lengths = torch.tensor([len(s) for s in seqs])
            max_steps = int(1.5 * int(lengths.max())) + 10
            hyps = _beam_search(self.model, _pad(seqs, self.device), lengths, beam, max_steps)
            for i, item in zip(idx, hyps, strict=True):
                results[i] = self._texts(item, n_best)
        return results

    def _texts(self, hyps: list[tuple[list[int], float]], n_best: int) -> list[tuple[str, float]]:
        texts: dict[str, float] = {}
        for ids, score in hyps:  # sorted best first, so the first score of a text is its best
            texts.setdefault(self.target_vocab.decode(ids), score)
        return [(text, score) for text, score in texts.items() if text][:n_best]

    def _examples(self, triples: Sequence[tuple[str, str, str]]) -> list[Example]:
        # pairs with rare target characters would teach the model to emit <unk>
        encoded = [(s, self.target_vocab.encode(t), k) for s, t, k in triples]
        return [(self._encode_source(s, k or None), t) for s, t, k in encoded if UNK_ID not in t]

    def _loss(self, batch: Sequence[Example]) -> tuple[torch.Tensor, int]:
        """Summed cross-entropy over the target symbols of a batch, and their number."""
        src = _pad([s for s, _ in batch], self.device)
        lengths = torch.tensor([len(s) for s, _ in batch])
        tgt_in = _pad([[BOS_ID, *t] for _, t in batch], self.device)
        tgt_out = _pad([[*t, EOS_ID] for _, t in batch], self.device)
        memory, keys, mask, state = self.model.encode(src, lengths)
        logits, _ = self.model.decode(tgt_in, state, memory, keys, mask)
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), tgt_out.reshape(-1),
                               ignore_index=PAD_ID, reduction="sum")
        return loss, int((tgt_out != PAD_ID).sum())

    @torch.no_grad()
    def _dev_loss(self, examples: Sequence[Example]) -> float:
        self.model.eval()
        losses = [self._loss(examples[i:i + 256]) for i in range(0, len(examples), 256)]
        return sum(float(loss) for loss, _ in losses) / max(sum(n for _, n in losses), 1)

    def _train_epoch(self, batches: list[list[Example]], opt: torch.optim.Optimizer,
                     deadline: float | None, desc: str, progress: bool) -> tuple[float, bool]:
        """One pass; returns the mean training loss and whether the time budget ran out."""
        self.model.train()
        total, count = 0.0, 0
        for batch in tqdm(batches, desc=desc, disable=not progress, leave=False):
            loss, n = self._loss(batch)
            opt.zero_grad()
            (loss / n).backward()
            nn.utils.clip_grad_norm_(self.model.parameters(), self.config.grad_clip)
            opt.step()
            total, count = total + float(loss.detach()), count + n
            if deadline is not None and time.monotonic() > deadline:
                return total / max(count, 1), True
        return total / max(count, 1), False

    def fit(self, train: Sequence[tuple[str, str, str]], dev: Sequence[tuple[str, str, str]],
            progress: bool = False) -> None:
        """Train on ``(source, target, kind)`` triples (kind ``""`` when untagged).

        Early-stops on the held-out loss of ``dev`` (when not empty) and restores the best
        weights; halves the learning rate when the held-out loss does not improve. Seeds torch's
        global RNG (dropout) with ``config.seed``.
        """
        cfg = self.config
        torch.manual_seed(cfg.seed)
        train_ex, dev_ex = self._examples(train), self._examples(dev)
        rng = random.Random(cfg.seed)
        opt = torch.optim.Adam(self.model.parameters(), lr=cfg.lr)
        sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=0)
        started = time.monotonic()
        deadline = None if cfg.max_train_seconds is None else started + cfg.max_train_seconds
        best, best_state, bad = float("inf"), None, 0
        for epoch in range(1, cfg.epochs + 1):
            batches = _batches(train_ex, cfg.batch_size, rng)
            train_loss, out_of_time = self._train_epoch(batches, opt, deadline, f"epoch {epoch}",
                                                        progress)
            dev_loss = self._dev_loss(dev_ex) if dev_ex else float("nan")
            self.history.append({"epoch": epoch, "train_loss": train_loss, "dev_loss": dev_loss,
                                 "seconds": time.monotonic() - started})
            logger.info("epoch %d: train loss %.4f, dev loss %.4f", epoch, train_loss, dev_loss)
            if dev_ex:
                sched.step(dev_loss)
                if dev_loss < best - 1e-4:
                    best, bad = dev_loss, 0
                    best_state = {k: v.detach().clone() for k, v in self.model.state_dict().items()}
                else:
                    bad += 1
            if out_of_time or bad > cfg.patience:
                logger.info("stopping after epoch %d (time out: %s)", epoch, out_of_time)
                break
        if best_state is not None:
            self.model.load_state_dict(best_state)
        self.model.eval()

    def save(self, directory: str | Path) -> None:
        """Write ``config.json`` (config, kinds, xlnel version), ``vocab.json`` and weights.

        The folder is written whole into a temporary folder beside it that replaces it once
        complete (:func:`~xlnel.io._atomic.atomic_dir`): an interrupted save leaves any earlier
        folder as it was, never a mix of old and new files.
        """
        with atomic_dir(directory) as tmp:
            self._write(tmp)

    def _write(self, path: Path) -> None:
        meta = {"format_version": FORMAT_VERSION, "xlnel_version": __version__,
                "config": self.config.model_dump(), "kinds": list(self.kinds),
                "history": self.history}
        vocab = {"source": self.source_vocab.symbols, "target": self.target_vocab.symbols}
        for name, data in ((CONFIG_FILE, meta), (VOCAB_FILE, vocab)):
            with atomic_write(path / name) as f:
                json.dump(data, f, ensure_ascii=False, indent=1)
        state = {k: v.detach().cpu().contiguous() for k, v in self.model.state_dict().items()}
        with atomic_path(path / WEIGHTS_FILE) as tmp:
            save_file(state, str(tmp), metadata={"xlnel_version": __version__})

    @classmethod
    def load(cls, directory: str | Path, device: str | None = None) -> CharTranslator:
        """Load a translator written by :meth:`save`.

        Args:
            directory: The saved folder.
            device: Overrides the saved device (``cpu`` / ``cuda``).

        Raises:
            ArtifactError: On a missing file, another format version or weights not fitting.
        """
        path = Path(directory)
        for name in (CONFIG_FILE, VOCAB_FILE, WEIGHTS_FILE):
            if not (path / name).is_file():
                raise ArtifactError(f"{path}: missing {name}; expected a folder written by "
                                    "CharTranslator.save")
        meta = json.loads((path / CONFIG_FILE).read_text(encoding="utf-8"))
        if (found := meta.get("format_version")) != FORMAT_VERSION:
            raise ArtifactError(f"{path / CONFIG_FILE}: format version {found!r}, expected "
                                f"{FORMAT_VERSION}")
        if meta.get("xlnel_version") != __version__:
            logger.warning("%s was saved by xlnel %s, loading with %s", path,
                           meta.get("xlnel_version"), __version__)
        config = dict(meta["config"], **({} if device is None else {"device": device}))
        vocab = json.loads((path / VOCAB_FILE).read_text(encoding="utf-8"))
        translator = cls(TranslatorConfig.model_validate(config), CharVocab(vocab["source"]),
                         CharVocab(vocab["target"]), meta.get("kinds", ()))
        try:
            translator.model.load_state_dict(load_file(str(path / WEIGHTS_FILE)))
        except RuntimeError as e:
            raise ArtifactError(f"{path / WEIGHTS_FILE}: weights do not fit the config: {e}") from e
        translator.history = list(meta.get("history", []))
        return translator


def _batches(examples: Sequence[Example], batch_size: int,
             rng: random.Random) -> list[list[Example]]:
    """Shuffled batches of similar source length (less padding), in shuffled order."""
    order = list(range(len(examples)))
    rng.shuffle(order)
    pool = batch_size * 32
    batches: list[list[Example]] = []
    for start in range(0, len(order), pool):
        chunk = sorted(order[start:start + pool], key=lambda i: len(examples[i][0]))
        batches += [[examples[i] for i in chunk[j:j + batch_size]]
                    for j in range(0, len(chunk), batch_size)]
    rng.shuffle(batches)
    return batches


def train_translator(pairs: Sequence[tuple[str, ...]], config: TranslatorConfig | None = None,
                     progress: bool = False) -> CharTranslator:
    """Train a character translator on ``(source, target)`` or ``(source, target, kind)`` pairs.

    A ``config.dev_fraction`` share of the source words is held out for early stopping.

    Args:
        pairs: Training pairs; with a third field (:class:`~xlnel.dictionary.pairs.WordPair`)
            the model learns a kind token and can be asked for either kind.
        config: Hyperparameters (defaults when ``None``).
        progress: Show a tqdm bar per epoch.

    Returns:
        The trained translator (best held-out weights), in evaluation mode.

    Raises:
        ValueError: If no pair is usable, or tagged and untagged pairs are mixed.
    """
    config = TranslatorConfig() if config is None else config
    triples = training_triples(pairs, config.max_length)
    if not triples:
        raise ValueError("no usable training pairs (all empty or longer than max_length)")
    kinds = sorted({k for _, _, k in triples})
    if len(kinds) > 1 and "" in kinds:
        raise ValueError("training pairs mix tagged (source, target, kind) and untagged pairs")
    kinds = [k for k in kinds if k]
    train, dev = split_pairs(triples, config.dev_fraction, config.seed)
    source_vocab = CharVocab.build((s for s, _, _ in train), config.min_char_count,
                                   extra=[KIND_TOKEN.format(k) for k in kinds])
    target_vocab = CharVocab.build((t for _, t, _ in train), config.min_char_count)
    logger.info("training on %d pairs (%d held out); vocabularies %d / %d", len(train), len(dev),
                len(source_vocab), len(target_vocab))
    translator = CharTranslator(config, source_vocab, target_vocab, kinds)
    translator.fit(train, dev, progress)
    return translator
