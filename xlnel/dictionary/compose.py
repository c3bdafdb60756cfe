"""Compose target-language names from word renderings, in the target's word order.

An English name is split at connectors (*of*, *with*, *due to*...) into phrases; each phrase is a
modifier-head chain (*chronic kidney disease*) whose words are rendered one by one (every sense
the lexicon gives, beam-searched by summed log prior) and ordered as the language file says
(kept, reversed for head-first languages, or both). Phrases are then joined by the connector's
templates of the language file (``{left} de {right}``, ``{right}の{left}``), which may inflect a
side (``{right|definite}``). A rendering's score is the geometric mean of its word priors times
the template's prior, so long names are not punished for their length.
"""

from __future__ import annotations

import math
import os
import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass

from xlnel.dictionary.compounds import CompoundForms
from xlnel.dictionary.langdata import TEMPLATE_FIELD, LanguageProfile
from xlnel.dictionary.lexicon import RANK_DECAY, Sense

#: Kinds of word rendering, from the most to the least trusted; the worst names the source.
KIND_ORDER = ("translation", "copy", "transliteration")
#: Score factor of a rendering inflected by a variant form of the language file.
VARIANT_FACTOR = 0.9
_TOKEN = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
#: English adjective endings: a word ending so is not taken for a noun modifier.
ADJECTIVE_ENDINGS = ("al", "ic", "ous", "ive", "ary", "ar", "ed", "ing", "ful", "less", "able",
                     "ible", "oid", "ian", "ent", "ant", "ile", "like")
#: Most final letters in which the inflected forms of a word differ (*rénal*, *rénaux*).
MAX_INFLECTION = 3
#: Fewest letters the inflected forms of a word share.
MIN_INFLECTION_STEM = 3
#: Fewest names a word must end to count as a noun.
MIN_HEAD_NAMES = 2


@dataclass(frozen=True)
class Rendering:
    """One target-language rendering of an English name.

    Attributes:
        text: The rendering.
        score: Confidence in ``(0, 1]``.
        source: ``translated`` (one word from the lexicon), ``composed`` (several words from the
            lexicon), ``transliterated`` (a word came from a fallback) or ``corpus``.
    """

    text: str
    score: float
    source: str


@dataclass(frozen=True)
class _Part:
    words: tuple[str, ...]
    logp: float
    n: int
    kind: int  # index into KIND_ORDER of the worst word


def tokenize(name: str) -> list[str]:
    """Lower-cased word tokens of an English name (punctuation dropped, hyphens split)."""
    return _TOKEN.findall(name.casefold())


def head_nouns(names: Iterable[str], min_names: int = MIN_HEAD_NAMES) -> frozenset[str]:
    """English words taken for nouns: the last word of at least ``min_names`` names (the head of
    an English noun phrase), without an adjective ending (*kidney* from *Horseshoe kidney*)."""
    heads = Counter(tokens[-1] for tokens in map(tokenize, names) if tokens)
    return frozenset(w for w, n in heads.items() if n >= min_names and len(w) > 2
                     and not w.isdigit() and not w.endswith(ADJECTIVE_ENDINGS))


class NameComposer:
    """Renders English names into a target language from per-word senses.

    Args:
        profile: The target language's grammar.
        senses: Word -> senses, best first (lexicon, then fallbacks); must not be empty for a
            word that should appear.
        beam: Partial renderings kept per phrase.
        senses_per_word: Most senses of one word tried.
        nouns: English words that are nouns (:func:`head_nouns`); with the profile's
            ``noun_modifier`` connector, a noun modifying a head is also rendered joined after it
            by that connector's templates.
        compounds: For a ``compound`` profile, how target words begin a compound: the head and
            the nouns right before it are also rendered as one word (*muscle atrophy* ->
            *Muskelatrophie*, *kidney cysts* -> *Nierenzysten*); without it, every word of a
            chain is glued as it is.
    """

    def __init__(self, profile: LanguageProfile, senses: Callable[[str], Sequence[Sense]],
                 beam: int = 8, senses_per_word: int = 3,
                 nouns: Collection[str] = frozenset(),
                 compounds: CompoundForms | None = None) -> None:
        self.profile = profile
        self.nouns = nouns
        self.compounds = compounds
        self.senses = senses
        self.beam = beam
        self.senses_per_word = senses_per_word
        self._connectors = [tuple(c.split()) for c in profile.connector_words()]

    def render(self, name: str, n_best: int = 3) -> list[Rendering]:
        """The ``n_best`` best renderings of an English name (fewer when it has no word), then
        the best one with a noun modifier after its head (see ``nouns``), when there is one."""
        tokens = [t for t in tokenize(name) if t not in self.profile.drop]
        main = self._texts(self._variants(self._clause(tokens)[: self.beam]))[:n_best]
        extra = [r for r in self._texts(self._noun_modified(tokens)) if r not in main][:1]
        return main + extra

    def _texts(self, parts: list[_Part]) -> list[Rendering]:
        best: dict[str, Rendering] = {}
        for part in parts:
            text = " ".join(self.profile.joiner.join(part.words).split())
            if not text:
                continue
            score = math.exp(part.logp / max(part.n, 1))
            kind = KIND_ORDER[part.kind]
            source = ("transliterated" if kind != "translation"
                      else "composed" if part.n > 1 else "translated")
            if text not in best or best[text].score < score:
                best[text] = Rendering(text, score, source)
        return sorted(best.values(), key=lambda r: -r.score)

    def _variants(self, parts: list[_Part]) -> list[_Part]:
        """The parts, then each inflected by the profile's variant forms (a little less likely)."""
        out = list(parts)
        for form in self.profile.variants:
            for p in parts:
                words = tuple(self.profile.forms[form].apply(list(p.words)))
                if words != p.words:
                    out.append(_Part(words, p.logp + p.n * math.log(VARIANT_FACTOR), p.n,
                                     p.kind))
        return out

    # ------------------------------------------------------------------------------- clauses
    def _clause(self, tokens: list[str]) -> list[_Part]:
        split = self._find_connector(tokens)
        if split is None:
            return self._phrase(tokens)
        start, connector = split
        left, right = tokens[:start], tokens[start + len(connector):]
        if not left or not right:
            return self._clause(left or right)
        return self._joined(self._clause(left), self._clause(right), " ".join(connector))

    def _joined(self, lefts: list[_Part], rights: list[_Part], connector: str) -> list[_Part]:
        """The best parts of ``left CONNECTOR right`` by the connector's templates."""
        out: list[_Part] = []
        for template, prior in self._templates(connector):
            for lp in lefts[:3]:
                for rp in rights[:3]:
                    out.append(self._fill(template, prior, lp, rp))
        out.sort(key=lambda p: -p.logp / max(p.n, 1))
        return out[: self.beam]

    def _find_connector(self, tokens: list[str]) -> tuple[int, tuple[str, ...]] | None:
        for i in range(len(tokens)):
            for connector in self._connectors:
                if tuple(tokens[i:i + len(connector)]) == connector:
                    return i, connector
        return None

    def _templates(self, connector: str) -> list[tuple[str, float]]:
        templates = self.profile.connectors.get(connector)
        if templates is None:
            senses = list(self.senses(connector))[:2]
            templates = tuple(f"{{left}} {s.text} {{right}}" for s in senses) or (
                "{left} {right}",)
        return [(t, 1.0 / (1.0 + RANK_DECAY * i)) for i, t in enumerate(templates)]

    def _fill(self, template: str, prior: float, left: _Part, right: _Part) -> _Part:
        joiner = self.profile.joiner

        def field(match: re.Match[str]) -> str:
            part = left if match.group(1) == "left" else right
            words = list(part.words)
            if match.group(2) == "compound":
                if words and self.compounds is not None:
                    words[-1] = self.compounds.form(words[-1])
            elif match.group(2):
                words = self.profile.forms[match.group(2)].apply(words)
            return joiner.join(words)

        text = TEMPLATE_FIELD.sub(field, template)
        words = tuple(text.split(" ")) if joiner == " " else (text,)
        n = left.n + right.n
        # the template's prior counts as one more word
        return _Part(words, left.logp + right.logp + math.log(prior), n + 1,
                     max(left.kind, right.kind))

    # ------------------------------------------------------------------------------- phrases
    def _phrase(self, tokens: list[str]) -> list[_Part]:
        beam: list[_Part] = [_Part((), 0.0, 0, 0)]
        forms: list[list[str]] = []  # every sense of each rendered word: its inflected forms
        nouns: list[bool] = []
        for token in tokens:
            senses = list(self.senses(token))
            options = senses[: self.senses_per_word]
            if not options:
                continue
            forms.append([s.text for s in senses])
            nouns.append(token in self.nouns)
            beam = sorted((_Part(p.words + (s.text,), p.logp + math.log(max(s.prior, 1e-6)),
                                 p.n + 1, max(p.kind, _kind(s.kind)))
                           for p in beam for s in options), key=lambda p: -p.logp)[: self.beam]
        if not beam[0].n:
            return []
        if self.profile.agreement and len(forms) > 1:
            beam = [_agreeing(p, forms) or p for p in beam]
        return self._ordered(beam, nouns)

    def _noun_modified(self, tokens: list[str]) -> list[_Part]:
        """``head CONNECTOR noun`` for a name whose last modifier is a noun (*kidney cyst* ->
        *kyste du rein*), when the profile names a ``noun_modifier`` connector."""
        connector = self.profile.noun_modifier
        if (connector is None or len(tokens) < 2 or tokens[-2] not in self.nouns
                or self._find_connector(tokens) is not None):
            return []
        head = self._phrase(tokens[:-2] + tokens[-1:])
        noun = self._phrase(tokens[-2:-1])
        return self._joined(head, noun, connector) if head and noun else []

    def _ordered(self, beam: list[_Part], nouns: Sequence[bool] = ()) -> list[_Part]:
        order = self.profile.segment_order
        out: list[_Part] = []
        for part in beam:
            variants = []
            if order in ("keep", "both"):
                variants.append(part.words)
            if order in ("reverse", "both"):
                variants.append(part.words[::-1])
            for words in variants:
                out.append(_Part(words, part.logp, part.n, part.kind))
                glued = self._compound(words, nouns) if words == part.words else None
                if glued is not None:
                    out.append(_Part(glued, part.logp - 0.1, part.n, part.kind))
        return out

    def _compound(self, words: tuple[str, ...], nouns: Sequence[bool]) -> tuple[str, ...] | None:
        """Words in English order with the head and the nouns right before it glued into one
        compound (every word without learned compound forms); ``None`` when nothing is glued."""
        if not self.profile.compound or len(words) < 2:
            return None
        if self.compounds is None:
            return ("".join(words),)
        start = len(words) - 1
        while start > 0 and start - 1 < len(nouns) and nouns[start - 1]:
            start -= 1
        if start == len(words) - 1 or any(" " in w for w in words[start:]):
            return None
        return (*words[:start], self.compounds.join(words[start:]))


def _agreeing(part: _Part, forms: list[list[str]]) -> _Part | None:
    """The part with each modifier in the form of its word that ends most like the head (the
    last word in English order), among the forms the pairs list for that English word and that
    share its stem (:func:`inflections`); ``None`` when no modifier changes."""
    head = part.words[-1]
    words = list(part.words)
    for i, word in enumerate(words[:-1]):
        words[i] = max(inflections(word, forms[i]), key=lambda w: _echo(w, head))
    return None if tuple(words) == part.words else _Part(tuple(words), part.logp, part.n,
                                                         part.kind)


def inflections(word: str, senses: Sequence[str], max_ending: int = MAX_INFLECTION) -> list[str]:
    """``word`` and the senses that differ from it only in their last ``max_ending`` letters
    (its inflected forms: *petit*, *petite*, *petits*), ``word`` first, then in sense order.

    >>> inflections("petit", ["petit", "petite", "menu", "petits"])
    ['petit', 'petite', 'petits']
    """
    out = [word]
    for sense in senses:
        stem = len(os.path.commonprefix([word, sense]))
        if (sense not in out and " " not in sense and stem >= MIN_INFLECTION_STEM
                and max(len(word), len(sense)) - stem <= max_ending):
            out.append(sense)
    return out


def _echo(word: str, head: str) -> int:
    """How many final letters (at most 3) ``word`` shares with ``head``."""
    n = 0
    while n < min(3, len(word), len(head)) and word[-1 - n] == head[-1 - n]:
        n += 1
    return n


def _kind(kind: str) -> int:
    return KIND_ORDER.index(kind) if kind in KIND_ORDER else len(KIND_ORDER) - 1
