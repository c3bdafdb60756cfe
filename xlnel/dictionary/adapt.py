"""Adapt xlnel to a new language: what ``xlnel adapt`` runs.

:func:`adapt` renders knowledge bases into a new language from word pairs used as a lexicon, the
language's grammar file and fallbacks for missing words (see :mod:`xlnel.dictionary.render`),
writing ``dictionary.tsv``, ``stopwords.txt``, ``pipeline.yaml`` (a pipeline config that links
with them before any annotation) and ``report.json`` (and ``translator/`` when a transliteration
model is trained).

The other route, a character translator trained on the pairs that translates whole names
(``xlnel dictionary train-translator`` and ``build``), is :mod:`xlnel.dictionary.translate_kb`.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import resource
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from xlnel.config import check_lang
from xlnel.dictionary.adapt_files import ZERO_SHOT_THRESHOLD as ZERO_SHOT_THRESHOLD
from xlnel.dictionary.adapt_files import (
    staged_output,
    write_json,
    write_pipeline_config,
    write_stopwords,
)
from xlnel.dictionary.cognates import CognateRules
from xlnel.dictionary.compounds import CompoundForms
from xlnel.dictionary.corpus_evidence import (
    CorpusEvidence,
    attached_letters,
    corpus_texts,
    lemma_rules,
)
from xlnel.dictionary.dictionary import GENERATED_SOURCES, Dictionary, Entry
from xlnel.dictionary.encoder_senses import (
    Embed,
    native_characters,
    native_targets,
    nearest_targets,
)
from xlnel.dictionary.induction import (
    InductionSettings,
    common_words,
    drop_common,
    induce_entries,
)
from xlnel.dictionary.kb_input import load_concepts
from xlnel.dictionary.langdata import SEGMENT_ORDERS, LanguageProfile, load_profile
from xlnel.dictionary.lexicon import Lexicon
from xlnel.dictionary.morphemes import MorphemeTable
from xlnel.dictionary.morphology import AffixModel
from xlnel.dictionary.render import BuildSettings, WordSenses, kb_words, render_kb
from xlnel.dictionary.stopwords import kb_stopwords
from xlnel.dictionary.transliterate import (
    is_latin_script,
    is_unspaced_script,
    train_transliterator,
    transliterate,
    transliteration_pairs,
)
from xlnel.errors import ConfigError
from xlnel.normalization import normalize_string
from xlnel.types import Concept
from xlnel.version import __version__

logger = logging.getLogger(__name__)

#: Names inside an :func:`adapt` output folder.
TRANSLATOR_DIR, DICTIONARY_FILE, REPORT_FILE = "translator", "dictionary.tsv", "report.json"
#: Letters of highest share that ``report.json`` lists under ``letter_shares`` (a language
#: without a file, with a corpus: see
#: :meth:`~xlnel.dictionary.corpus_evidence.CorpusEvidence.letter_shares`).
LETTER_SHARES = 12
#: Ending alternations of highest share that ``report.json`` lists under ``ending_shares``.
ENDING_SHARES = 30
#: The entries of ``dictionary.tsv`` that a given corpus attests (source ``corpus``).
ATTESTED_FILE = "attested.tsv"
#: The target's stop words that the pairs give (:mod:`xlnel.dictionary.stopwords`).
STOPWORDS_FILE = "stopwords.txt"
#: A pipeline config linking with the built dictionary and stop words, no annotations needed.
PIPELINE_FILE = "pipeline.yaml"
#: The dictionary that pipeline links with: ``dictionary.tsv`` without the generated one-word
#: names that read as everyday words (:func:`linking_entries`).
LINKING_FILE = "linking.tsv"
#: How many of the pairs' English words, most frequent first, make the target words they render
#: everyday words for :data:`LINKING_FILE` (0: leave nothing out). Chosen by cross-validation
#: on the Camoni posts among 1,000 / 2,000 / 3,000 / 5,000
#: (``benchmarks/zero_annotation_everyday.py``: 3,000 in every fold).
EVERYDAY_TOP = 3000
#: Everything :func:`adapt` writes into its output folder, the report (which marks a finished
#: run) last.
OUTPUT_NAMES = (TRANSLATOR_DIR, DICTIONARY_FILE, ATTESTED_FILE, STOPWORDS_FILE, LINKING_FILE,
                PIPELINE_FILE, REPORT_FILE)


def _learn_from_corpus(profile: LanguageProfile, evidence: CorpusEvidence, lexicon: Lexicon,
                       details: dict[str, Any]) -> LanguageProfile:
    """The profile of a language without a file with the prefixes and lemma rules its corpus
    shows (:func:`~xlnel.dictionary.corpus_evidence.attached_letters`,
    :func:`~xlnel.dictionary.corpus_evidence.lemma_rules`); the shares go to ``details``."""
    targets = [sense.text for _, word_senses in lexicon.items() for sense in word_senses]
    shares = evidence.letter_shares(targets)
    details["letter_shares"] = {c: [round(v, 4), n]
                                for c, (v, n) in list(shares.items())[:LETTER_SHARES]}
    attached = attached_letters(shares)
    details["attached_letters"] = {c: round(v, 4) for c, v in attached.items()}
    if attached:
        logger.info("letters written glued to the next word, from the corpus: %s",
                    " ".join(attached))
        profile = dataclasses.replace(profile, prefixes=frozenset(attached))
    endings = evidence.ending_shares(targets, lambda w: normalize_string(w, profile.lang))
    details["ending_shares"] = {f"{w}>{t}": [round(v, 4), n]
                                for (w, t), (v, n) in list(endings.items())[:ENDING_SHARES]}
    rules = lemma_rules(endings)
    details["lemma_rules"] = {f"{w}>{t}": round(v, 4) for (w, t), v in rules.items()}
    if rules:
        logger.info("lemma rules from the corpus (written>listed): %s",
                    " ".join(f"-{w}>-{t}" for w, t in rules))
        profile = dataclasses.replace(profile, lemma_rules=tuple(
            (re.compile(re.escape(w) + "$"), t) for w, t in rules))
    return profile


def adapt(lang: str, pairs_path: str | Path, kb_specs: Sequence[str], out_dir: str | Path, *,
          corpus: Sequence[str | Path] = (), language_file: str | Path | None = None,
          settings: BuildSettings | None = None, transliteration_seconds: float = 180.0,
          limit: int | None = None, progress: bool = False,
          induction: InductionSettings | None = None, induce: bool = True,
          embed: Embed | None = None, generic_grammar: bool = False,
          segment_order: str | None = None,
          everyday_top: int = EVERYDAY_TOP) -> dict[str, Any]:
    """Render English knowledge bases into ``lang`` from word pairs; write the dictionary.

    The pairs become a lexicon (every sense); names are composed in the target's word order
    from the language file ``dictionary/languages/<lang>.yaml`` (generic defaults without one);
    words the lexicon lacks go through cognate ending rules learned from the pairs, for a
    language written without spaces (``joiner: ''``) morphemes aligned in the pairs
    (:mod:`xlnel.dictionary.morphemes`), with ``settings.encoder`` the nearest pair word by
    that encoder (:mod:`xlnel.dictionary.encoder_senses`) and, for scripts with enough
    transliteration pairs, a character model trained within ``transliteration_seconds``
    (saved under ``out_dir/translator``). Writes
    ``out_dir/dictionary.tsv`` (with a ``score`` column), ``out_dir/stopwords.txt`` (the
    target's stop words the pairs give, for ``candidates.stopwords``), ``out_dir/pipeline.yaml``
    (:func:`write_pipeline_config`: a config that ``xlnel train`` turns into a linker without
    annotated documents, with the names of ``out_dir/linking.tsv``, :func:`linking_entries`)
    and ``out_dir/report.json``; with a corpus, also
    ``out_dir/attested.tsv``: the entries it attests (a small dictionary of the forms people
    write). The files are written into a staging folder beside ``out_dir`` and moved into
    place once all are complete (:func:`~xlnel.dictionary.adapt_files.staged_output`): an
    interrupted run leaves ``out_dir`` as it was.

    Args:
        lang: Language code of the pair targets and of the dictionary.
        pairs_path: ``english<TAB>target`` word pairs (MUSE format; several lines per word).
        kb_specs: English knowledge bases (see :func:`load_concepts`).
        out_dir: Output folder.
        corpus: Optional target-language texts (plain text, JSONL, PubTator, BioC files or BRAT
            folders, read before any training) to re-rank senses,
            mark attested renderings and induce entries from (:mod:`xlnel.dictionary.induction`);
            a language without a file, written with spaces, also takes from it the one-letter
            words it writes glued to the next
            (:func:`~xlnel.dictionary.corpus_evidence.attached_letters`) as its ``prefixes``
            and the word endings its words swap for listed forms
            (:func:`~xlnel.dictionary.corpus_evidence.lemma_rules`) as its ``lemma_rules``.
        language_file: A language file to use instead of the shipped one.
        settings: Builder settings (defaults when ``None``).
        transliteration_seconds: Training budget of the character model; 0 trains none.
        limit: Most concepts taken from each knowledge base.
        progress: Show progress bars.
        induction: Settings of the corpus induction (defaults when ``None``).
        induce: Add the entries induced from the corpus (when one is given).
        embed: Text embedder of the encoder named by ``settings.encoder`` (required with it).
        generic_grammar: Use the generic defaults of a language without a file even where
            one is shipped (to see how a language without a file fares).
        segment_order: ``keep``, ``reverse`` or ``both``: the order of a modifier-head chain,
            instead of the one the language file or the word-order table gives.
        everyday_top: How many of the pairs' most frequent English words make their target
            words everyday words, left out of ``linking.tsv`` as one-word generated names;
            0 leaves nothing out (``pipeline.yaml`` then links with ``dictionary.tsv``).

    Returns:
        The report written to ``report.json``: inputs, counts by source, timings, peak memory.

    Raises:
        FileNotFoundError: If the pair file, a knowledge-base or corpus file does not exist.
        FormatError: On a malformed pair, knowledge-base, corpus or language file, naming the
            file and line.
        ValueError: On an empty pair file or no knowledge base.
        ConfigError: When ``lang`` is not a language code (letters, parts joined by ``-``;
            :func:`xlnel.config.check_lang`), ``settings.encoder`` is set without ``embed``, both
            ``language_file`` and ``generic_grammar`` are given, ``segment_order`` is not
            one of the orders, or ``everyday_top`` is negative.
        OutputError: When ``out_dir`` is a file, an input, holds one, or holds files of
            something else (checked before any work).
    """
    started = time.monotonic()
    lang = check_lang(lang)  # as a pipeline config checks it: pipeline.yaml must load
    out = _check_adapt_inputs(pairs_path, kb_specs, out_dir, corpus, language_file,
                              generic_grammar, segment_order, everyday_top)
    settings = settings if settings is not None else BuildSettings()
    if settings.encoder is not None and embed is None:
        raise ConfigError(f"settings.encoder is {settings.encoder!r} but no embedder was given "
                          "(embed=, a text embedder of that encoder)")
    profile = load_profile(lang, language_file, generic=generic_grammar)
    if segment_order is not None:
        profile = dataclasses.replace(profile, segment_order=segment_order)
    concepts, sources = load_concepts(kb_specs, limit)
    lexicon = Lexicon.from_file(pairs_path)
    if profile.source == "default" and profile.joiner and is_unspaced_script(lexicon):
        # a language without a file, in a script written without spaces: words are glued
        logger.info("no language file and the pairs' script is written without spaces: "
                    "joining words without them")
        profile = dataclasses.replace(profile, joiner="")
    # the corpus is read (and any error in it found) before the transliterator trains
    texts = _read_corpus(corpus)  # read once: for the evidence and for induction
    times = {"read": time.monotonic() - started}
    words = kb_words(concepts)  # the KB's English words: fallbacks and stop-word vetoes
    with staged_output(out, OUTPUT_NAMES) as stage:
        senses, details = _word_senses(lexicon, profile, words, stage, settings,
                                       transliteration_seconds, progress, embed)
        if details["transliterator"] is not None:
            details["transliterator"] = str(out / TRANSLATOR_DIR)
        times["fallbacks"] = time.monotonic() - started - times["read"]
        evidence = CorpusEvidence(texts) if corpus else None
        if evidence is not None:
            senses.corpus_counts = evidence.counts
            # a file lists its language's prefixes and lemma rules (or none); a script without
            # spaces has no words to glue letters to or to take endings from
            if profile.source == "default" and profile.joiner:
                profile = _learn_from_corpus(profile, evidence, lexicon, details)
        mark = time.monotonic()
        dictionary = render_kb(concepts, senses, settings, evidence, progress)
        times["render"] = time.monotonic() - mark
        if corpus and induce:
            mark = time.monotonic()
            induced = induce_entries(texts, lexicon, profile, concepts, induction)
            details["induced_entries"] = len(induced)
            details["induced_new"] = dictionary.extend(induced)
            times["induce"] = time.monotonic() - mark
        stopwords = kb_stopwords(lexicon, profile, concepts, words)
        linking, left_out = _write_outputs(stage, out, lang, pairs_path, dictionary, lexicon,
                                           profile, stopwords, bool(corpus), everyday_top)
        times["total"] = time.monotonic() - started
        report = {
            "lang": lang, "xlnel_version": __version__, "pairs": str(pairs_path),
            "kb": sources, "corpus": [str(c) for c in corpus], "language_file": profile.source,
            "segment_order": profile.segment_order, "joiner": profile.joiner,
            "settings": dataclasses.asdict(settings), "lexicon_words": len(lexicon), **details,
            "kb_words_missing_from_lexicon": len(senses.missing),
            "stopwords": {"out": str(out / STOPWORDS_FILE), "words": len(stopwords)},
            "pipeline": str(out / PIPELINE_FILE),
            "linking": {"out": str(linking), "everyday_top": everyday_top,
                        "entries_left_out": left_out},
            "dictionary": _dictionary_report(out / DICTIONARY_FILE, dictionary, concepts,
                                             times["total"]),
            "seconds": {k: round(v, 1) for k, v in times.items()},
            "peak_memory_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        }
        write_json(stage / REPORT_FILE, report)
    logger.info("adapted to %s in %.0f s: %s", lang, times["total"], report["dictionary"])
    return report


def _read_corpus(corpus: Sequence[str | Path]) -> list[str]:
    """The texts of the corpus files; a file without any text is named in a warning (it
    gives no evidence: an empty file or a wrong path pattern, most likely)."""
    texts: list[str] = []
    for path in corpus:
        found = list(corpus_texts([path]))
        if not any(text.strip() for text in found):
            logger.warning("corpus %s holds no text: it adds no evidence", path)
        texts += found
    return texts


def _dictionary_report(path: Path, dictionary: Dictionary, concepts: Sequence[Concept],
                       seconds: float) -> dict[str, Any]:
    """The ``dictionary`` part of :func:`adapt`'s report."""
    return {"out": str(path), "concepts": len(concepts),
            "english_names": sum(len(c.names) for c in concepts),
            "entries": len(dictionary), "seconds": round(seconds, 1),
            "distinct_names": len(dictionary.names),
            "concepts_covered": len(dictionary.concept_ids()),
            "by_source": dictionary.count_by_source()}


def _check_adapt_inputs(pairs_path: str | Path, kb_specs: Sequence[str], out_dir: str | Path,
                        corpus: Sequence[str | Path], language_file: str | Path | None,
                        generic_grammar: bool, segment_order: str | None,
                        everyday_top: int) -> Path:
    """:func:`adapt`'s checks before any work; returns the output folder.

    Raises:
        FileNotFoundError, ConfigError, OutputError: As :func:`adapt` documents.
    """
    from xlnel.outputs import check_output_folder

    pairs = Path(pairs_path)
    if pairs.is_dir():
        raise IsADirectoryError(f"pair file {pairs} is a folder; give the word-pair file")
    if not pairs.is_file():
        raise FileNotFoundError(f"pair file not found: {pairs}")
    for path in map(Path, corpus):
        if not path.exists():
            raise FileNotFoundError(f"corpus file or BRAT folder not found: {path}")
    kb_paths = [p for spec in kb_specs for p in (spec, spec.partition(":")[2]) if p]
    inputs = [pairs, *(Path(p) for p in kb_paths if Path(p).exists()), *map(Path, corpus)]
    if language_file is not None:
        inputs.append(Path(language_file))
    out = check_output_folder(out_dir, inputs, OUTPUT_NAMES, marker=REPORT_FILE)
    if everyday_top < 0:
        raise ConfigError(f"everyday_top must be at least 0, got {everyday_top}")
    if generic_grammar and language_file is not None:
        raise ConfigError(f"give a language file ({language_file}) or the generic grammar, "
                          "not both")
    if segment_order is not None and segment_order not in SEGMENT_ORDERS:
        raise ConfigError(f"segment_order {segment_order!r} is not one of "
                          f"{', '.join(SEGMENT_ORDERS)}")
    return out


def _write_outputs(stage: Path, out: Path, lang: str, pairs_path: str | Path,
                   dictionary: Dictionary, lexicon: Lexicon, profile: LanguageProfile,
                   stopwords: Sequence[str], attested: bool,
                   everyday_top: int) -> tuple[Path, int]:
    """Write :func:`adapt`'s files but the report into ``stage``, naming their paths in
    ``out`` (where they are moved); returns the dictionary ``pipeline.yaml`` links with and
    how many entries it leaves out."""
    dictionary.save(stage / DICTIONARY_FILE)
    if attested:
        Dictionary(e for e in dictionary if e.source == "corpus").save(stage / ATTESTED_FILE)
    write_stopwords(stage / STOPWORDS_FILE, stopwords, lang, pairs_path)
    linking = DICTIONARY_FILE
    left_out = 0
    if everyday_top:
        kept = linking_entries(dictionary, lexicon_pairs(lexicon), lang, profile.prefixes,
                               everyday_top)
        left_out = len(dictionary) - len(kept)
        linking = LINKING_FILE
        Dictionary(kept).save(stage / linking)
    write_pipeline_config(stage / PIPELINE_FILE, lang, out / linking, out / STOPWORDS_FILE,
                          named=out / PIPELINE_FILE)
    return out / linking, left_out


def lexicon_pairs(lexicon: Lexicon) -> list[tuple[str, str]]:
    """The lexicon's (English, target) pairs, English words in the pair file's order."""
    return [(word, sense.text) for word, senses in lexicon.items() for sense in senses]


def linking_entries(dictionary: Iterable[Entry], pairs: Sequence[tuple[str, str]], lang: str,
                    prefixes: Iterable[str], top: int) -> list[Entry]:
    """The entries the zero-shot pipeline links with: all but the generated one-word names that
    read as everyday words.

    Without annotated documents nothing tells an everyday word from a term, and a rendering
    that is also one of the target's everyday words (*book* and *barber* share a word in
    Hebrew; *time*, *hope*, *attack* are knowledge-base words too) matches running text
    everywhere. A one-word name from a generated source (:data:`GENERATED_SOURCES`) is left out
    when it, or it without up to two leading ``prefixes`` letters, is a target word of one of
    the ``top`` most frequent English words of the pairs
    (:func:`~xlnel.dictionary.induction.common_words`, MUSE lists being ordered by frequency).
    Names taken as given (knowledge base) and longer names are kept; ``dictionary.tsv`` keeps
    everything, for pipelines whose filter learns from annotated documents.
    """
    entries = list(dictionary)
    if top <= 0:
        return entries
    letters = [normalize_string(p, lang) for p in prefixes]
    generated = [e for e in entries if e.source in GENERATED_SOURCES]
    kept = set(drop_common(generated, common_words(pairs, top, lang), letters, lang=lang))
    return [e for e in entries if e.source not in GENERATED_SOURCES or e in kept]


def _word_senses(lexicon: Lexicon, profile: LanguageProfile, words: set[str],
                 out: Path, settings: BuildSettings, seconds: float,
                 progress: bool, embed: Embed | None = None
                 ) -> tuple[WordSenses, dict[str, Any]]:
    """Word senses with the fallbacks the pairs support: cognate rules, a transliterator."""
    latin = is_latin_script(lexicon)
    # in another script, the few Latin-script pairs are English noise (copies, names): their
    # cognate and spelling rules (-s dropped) would only garble the English words they rewrite
    cognates = CognateRules()
    if latin:
        cognates.fit((w, s.text) for w, ss in lexicon.items() for s in ss)
    affixes = AffixModel().fit((w, s.text) for w, ss in lexicon.items() for s in ss)
    details: dict[str, Any] = {"cognate_rules": len(cognates), "affix_alignments": len(affixes),
                               "transliteration_pairs": 0, "transliterator": None}
    senses = WordSenses(lexicon, profile, cognates, fallback_prior=settings.fallback_prior,
                        cognate_bonus=settings.cognate_bonus, affixes=affixes,
                        keep_copies=latin,
                        transliteration_factor=settings.transliteration_factor,
                        number_factor=settings.number_factor)
    if profile.compound:
        senses.compounds = CompoundForms().fit(s.text for _, ss in lexicon.items() for s in ss)
        details["compound_forms"] = len(senses.compounds)
    missing = [w for w in words if w.isalpha() and len(w) > 2
               and not senses.lexicon_senses(w) and w not in profile.words]
    if not profile.joiner:  # a script without spaces composes words from morphemes
        senses.morphemes = MorphemeTable().fit(
            ((w, s.text) for w, ss in lexicon.items() for s in ss), missing,
            profile.transliteration_pattern)
        details["morphemes"] = len(senses.morphemes)
    if settings.encoder is not None and embed is not None:
        details["encoder"] = {"model": settings.encoder}
        if not latin:  # a Latin-script copy is not told from a native word by its script
            targets = native_targets(lexicon, profile.transliteration_pattern)
            if not profile.joiner:  # words are compounds: their characters are words too
                chars = native_characters(targets, profile.transliteration_pattern)
                targets = sorted(set(targets) | set(chars))
            senses.nearest = nearest_targets(missing, targets, embed,
                                             settings.nearest_min_cosine)
            senses.nearest_prior = settings.nearest_prior
            details["encoder"].update(target_words=len(targets),
                                      words_rendered=len(senses.nearest))
    if seconds > 0 and not latin:
        pairs = transliteration_pairs(lexicon, profile)
        details["transliteration_pairs"] = len(pairs)
        model = train_transliterator(pairs, profile.lang, out / TRANSLATOR_DIR, seconds, progress)
        if model is not None:
            senses.transliterations = transliterate(model, missing)
            details["transliterator"] = str(out / TRANSLATOR_DIR)
            details["transliterated_words"] = len(missing)
    return senses, details
