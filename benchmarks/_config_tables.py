"""The configuration reference tables of ``docs/configuration.md``, read from the pydantic
models of the config and of each stage's options (rendered by ``benchmarks/tables.py``)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel

Row = Sequence[str]


def _table(header: Row, rows: Iterable[Row], source: str | None) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + ("\n" if source is None else f"\n\nSource: {source}.\n")


_GBDT_OPTIONS = {
    "folds": "Document folds for the out-of-fold scores that choose the threshold.",
    "max_iter": "Boosting iterations.",
    "learning_rate": "Shrinkage of each tree.",
    "max_leaf_nodes": "Leaves per tree.",
    "l2_regularization": "L2 penalty on leaf values.",
    "seed": "Seed of the model.",
    "unit": "``span``: one row per span (its best name); ``pair``: one per candidate; "
            "``auto``: by ``filter.select_level``.",
    "window": "Words each side (Ws) whose gold-span rates become two features; 0 adds none.",
    "extended": "Add six span features (next-word prior, whole-word prior of a prefix-stripped "
                "span, recurrence in the document, margin between the two best names, an "
                "overlapping span matching better).",
    "encoder": "Registered name, Hugging Face id or local folder of a frozen sentence encoder "
               "whose cosines (sentence piece-name, span-name, sentence piece-span) become "
               "three features; none adds none.",
    "encoder_pca": "Principal components of the encoder's span embedding added as features.",
    "encoder_context_words": "Most words of the sentence piece embedded as a span's context.",
}


def _attributes(cls: type) -> dict[str, str]:
    """The ``Attributes:`` section of a Google docstring, as name -> one-line text."""
    doc = (cls.__doc__ or "").expandtabs()
    out: dict[str, str] = {}
    lines = doc.split("Attributes:", 1)[1].splitlines() if "Attributes:" in doc else []
    current = None
    for line in lines:
        m = re.match(r"^ {8}(\w+)(?: / (\w+))?: (.*)$", line)
        if m:
            current = m.group(1)
            out[current] = m.group(3).strip()
            if m.group(2):
                out[m.group(2)] = out[current]
        elif line.startswith(" " * 12) and current is not None:
            out[current] += " " + line.strip()
        elif line.strip():
            break
    # Short entries may share a line: "nlist: IVF cells. nprobe: IVF cells searched."
    for key, text in list(out.items()):
        parts = re.split(r"\. (\w+(?: / \w+)?): ", text)
        out[key] = parts[0] + ("." if len(parts) > 1 else "")
        for names, rest in zip(parts[1::2], parts[2::2], strict=True):
            for name in names.split(" / "):
                out[name] = rest
    return {k: _markdown(v) for k, v in out.items()}


def _markdown(text: str) -> str:
    """reStructuredText literals and roles of a docstring as Markdown code."""
    return re.sub(r"(?::\w+:)?``?([^`]+)``?", r"`\1`", text)


def _type(annotation: Any) -> str:
    text = str(annotation).replace("typing.", "")
    text = re.sub(r"<class '(\w+)'>", r"\1", text)
    return text.replace("|", "\\|")


def _default(value: Any) -> str:
    return "`" + json.dumps(value, ensure_ascii=False) + "`"


_TOP_LEVEL = {
    "lang": "Language of the documents: `he`, `en`, or any code (generic normalisation, "
            "no stop words).",
    "seed": "Seed of the run; `xlnel experiment --seeds` sets it together with `dft.seed` "
            "and `filter.options.seed`.",
}


def _model_rows(model: Any, prefix: str) -> list[Row]:
    doc = {**_TOP_LEVEL, **_attributes(model)} if not prefix else _attributes(model)
    rows = []
    for name, field in model.model_fields.items():
        value = field.get_default(call_default_factory=True)
        if isinstance(value, BaseModel):
            continue
        rows.append([f"`{prefix}{name}`", _type(field.annotation), _default(value),
                     doc.get(name, "")])
    return rows


def config_reference() -> str:
    """Every key of a pipeline config with its type, default and meaning."""
    from xlnel.config import PipelineConfig

    rows = _model_rows(PipelineConfig, "")
    for name, field in PipelineConfig.model_fields.items():
        default = field.get_default(call_default_factory=True)
        if isinstance(default, BaseModel):
            rows += _model_rows(type(default), f"{name}.")
    return _table(["key", "type", "default", "meaning"], rows, "`xlnel/config.py`")


def options_reference() -> str:
    """The ``options`` of each registered stage that takes some."""
    from xlnel.filtering import gbdt
    from xlnel.filtering.cross_encoder import CrossEncoderOptions
    from xlnel.linkers.dense import DenseOptions
    from xlnel.ner.crf import CrfTaggerOptions

    defaults: dict[str, Any] = dict(gbdt._DEFAULTS)
    if set(defaults) != set(_GBDT_OPTIONS):
        raise KeyError(f"GBDT options {sorted(defaults)} differ from the documented ones "
                       f"{sorted(_GBDT_OPTIONS)}; update _GBDT_OPTIONS")
    parts = [("`xlnel.gbdt.v1` (`filter.options`)",
              [[f"`{k}`", "str" if v is None else type(v).__name__, _default(v),
                _markdown(_GBDT_OPTIONS[k])]
               for k, v in defaults.items()])]
    for title, model in [("`xlnel.cross_encoder.v1` (`filter.options`)", CrossEncoderOptions),
                         ("`xlnel.dense.v1` (`candidates.options`)", DenseOptions),
                         ("`xlnel.crf_tagger.v1` (`ner.options`)", CrfTaggerOptions)]:
        parts.append((title, _model_rows(model, "")))
    out = []
    for title, rows in parts:
        out.append(f"#### {title}\n\n" + _table(["option", "type", "default", "meaning"],
                                                  rows, None))
    return "\n".join(out) + "\nSource: the options models in `xlnel/filtering/`, " \
        "`xlnel/linkers/dense.py` and `xlnel/ner/crf.py`.\n"

