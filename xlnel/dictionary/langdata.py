"""Per-language grammar of names, read from small YAML data files.

What the builder needs to know about a target language lives in ``dictionary/languages/<lang>.yaml``
(shipped in wheels as ``xlnel/resources/languages/<lang>.yaml``), not in code. A language without a
file gets generic defaults: the word order that ``dictionary/languages/word_order.tsv`` lists for
it (from typology, see that file; both orders where it lists none), words joined by spaces (the
builder drops them for a script written without spaces, see
:func:`xlnel.dictionary.adapt.adapt`), English connectors translated through the lexicon. Keys
(all optional)::

    segment_order: reverse        # keep | reverse | both: order of a modifier-head word chain
    joiner: ' '                   # between words ('' for Japanese, Chinese)
    compound: false               # also emit a chain's words glued together (German)
    noun_modifier: of             # connector whose templates also join a noun modifier after its
                                  # head (kidney cyst -> kyste du rein); none when absent
    agreement: false              # modifiers take the inflected form the pairs list for them
                                  # that ends most like the head (petit/petite: côte petite)
    drop: [the, a, an]            # English words left out
    transliteration_pattern: '^[\\u30a0-\\u30ff]+$'  # target words that are transliterations
    variants: [definite]          # forms whose result is added as a variant of every rendering
    prefixes: [ו, ה, ב]            # one-letter words written glued to the next (stripped when
                                  # reading corpus words back, see xlnel.dictionary.induction)
    lemma_rules: [['ים$', '']]    # regex rewrites from a written form to a listed one
    connectors:                   # English connector -> templates, preferred first
      of: ['{left} de {right}', '{left|construct} {right}']
    words:                        # English words -> renderings, looked up before the lexicon
      and: [et]
    forms:                        # named inflections for templates ({right|definite})
      definite:
        words: all                # all | first | last: which words of the phrase change
        rules: [['^', 'ה']]       # regex substitutions; the first that matches applies

``{left}`` is the rendered phrase before the connector, ``{right}`` the one after it. One form is
built in and may not be defined in a file: ``compound`` puts the phrase's last word in the form
that begins a compound, as learned from the pairs when ``compound`` is true
(``{right|compound}{left}``: *Blase* + *Hypoplasie* -> *Blasenhypoplasie*; see
:mod:`xlnel.dictionary.compounds`); without learned forms it leaves the word as it is.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from xlnel.errors import FormatError

logger = logging.getLogger(__name__)

__all__ = ["DEFAULT_CONNECTORS", "SEGMENT_ORDERS", "TEMPLATE_FIELD", "WORD_ORDER_FILE", "Form",
           "LanguageProfile", "default_profile", "language_dirs", "load_profile",
           "read_word_orders"]

#: English words and phrases that join two parts of a name, longest first when matching.
DEFAULT_CONNECTORS = ("due to", "secondary to", "associated with", "caused by", "of", "with",
                      "without", "in", "on", "at", "to", "from", "by", "for", "and", "or",
                      "involving", "affecting", "after", "during", "like")
#: Values of ``segment_order``: modifiers before the head, after it, or both renderings.
SEGMENT_ORDERS = ("keep", "reverse", "both")
_SCOPES = ("all", "first", "last")
#: A ``{left}`` / ``{right|form}`` field of a connector template.
TEMPLATE_FIELD = re.compile(r"\{(left|right)(?:\|([^}]+))?\}")
#: Template forms every language has (see the module's docstring); files may not redefine them.
BUILTIN_FORMS = ("compound",)
#: The table of word orders for languages without a file, in the folders of language files.
WORD_ORDER_FILE = "word_order.tsv"


@dataclass(frozen=True)
class Form:
    """An inflection applied to some words of a phrase by regex substitutions."""

    words: str = "all"
    rules: tuple[tuple[re.Pattern[str], str], ...] = ()

    def apply(self, words: list[str]) -> list[str]:
        """The words with the inflection applied to the chosen ones."""
        picked = {"all": range(len(words)), "first": range(min(1, len(words))),
                  "last": range(max(0, len(words) - 1), len(words))}[self.words]
        out = list(words)
        for i in picked:
            for pattern, repl in self.rules:
                if pattern.search(out[i]):
                    out[i] = pattern.sub(repl, out[i], count=1)
                    break
        return out


@dataclass(frozen=True)
class LanguageProfile:
    """How names are put together in one target language."""

    lang: str
    segment_order: str = "both"
    joiner: str = " "
    compound: bool = False
    drop: frozenset[str] = frozenset({"the", "a", "an"})
    transliteration_pattern: re.Pattern[str] | None = None
    connectors: dict[str, tuple[str, ...]] = field(default_factory=dict)
    words: dict[str, tuple[str, ...]] = field(default_factory=dict)
    forms: dict[str, Form] = field(default_factory=dict)
    variants: tuple[str, ...] = ()
    source: str = "default"
    prefixes: frozenset[str] = frozenset()
    lemma_rules: tuple[tuple[re.Pattern[str], str], ...] = ()
    noun_modifier: str | None = None
    agreement: bool = False

    def connector_words(self) -> tuple[str, ...]:
        """Connectors to split names at: the profile's and the English defaults, longest first."""
        return tuple(sorted(set(DEFAULT_CONNECTORS) | set(self.connectors),
                            key=lambda c: (-len(c.split()), c)))


def language_dirs() -> list[Path]:
    """Folders searched for ``<lang>.yaml``: the wheel's resources, then the source checkout."""
    package_root = Path(__file__).resolve().parents[1]
    return [package_root / "resources" / "languages",
            Path(__file__).resolve().parents[2] / "dictionary" / "languages"]


def load_profile(lang: str, path: str | Path | None = None,
                 generic: bool = False) -> LanguageProfile:
    """The profile of a language: from ``path``, the shipped file, or the generic defaults
    (always with ``generic``: what a language without a file gets).

    Raises:
        FileNotFoundError: If an explicit ``path`` does not exist.
        FormatError: On invalid YAML or an invalid key or value, naming the file.
        ValueError: If both ``path`` and ``generic`` are given.
    """
    if generic:
        if path is not None:
            raise ValueError(f"a language file ({path}) and the generic defaults exclude "
                             "each other")
        return default_profile(lang)
    if path is not None:
        if not Path(path).is_file():
            raise FileNotFoundError(f"language file not found: {path}")
        return read_profile(path, lang)
    return _packaged(lang.lower())


@lru_cache(maxsize=32)
def _packaged(lang: str) -> LanguageProfile:
    for folder in language_dirs():
        candidate = folder / f"{lang}.yaml"
        if candidate.is_file():
            return read_profile(candidate, lang)
    profile = default_profile(lang)
    logger.info("no language file for %r; using generic defaults (word order: %s)", lang,
                profile.segment_order)
    return profile


def default_profile(lang: str) -> LanguageProfile:
    """What a language without a file gets: the generic defaults, with the word order that the
    shipped :data:`WORD_ORDER_FILE` lists for ``lang`` (or for its primary subtag: ``pt`` for
    ``pt-BR``), both orders when it lists none."""
    orders = _shipped_word_orders()
    code = lang.casefold().replace("_", "-")
    order = orders.get(code, orders.get(code.split("-")[0], "both"))
    return LanguageProfile(lang, segment_order=order)


@lru_cache(maxsize=1)
def _shipped_word_orders() -> dict[str, str]:
    for folder in language_dirs():
        if (folder / WORD_ORDER_FILE).is_file():
            return read_word_orders(folder / WORD_ORDER_FILE)
    logger.warning("no %s in %s; languages without a file render both word orders",
                   WORD_ORDER_FILE, ", ".join(str(d) for d in language_dirs()))
    return {}


def read_word_orders(path: str | Path) -> dict[str, str]:
    """Read a word-order table: ``#`` comments, a ``lang<TAB>segment_order`` header, then one
    language a line with ``keep`` or ``reverse``.

    Raises:
        FormatError: On a missing header, a line without two fields, an unknown order or a
            language listed twice, naming the file and line.
    """
    orders: dict[str, str] = {}
    header = False
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, 1):
            line = raw.rstrip("\n").rstrip("\r")
            if not line.strip() or line.startswith("#"):
                continue
            fields = [x.strip() for x in line.split("\t")]
            if not header:
                if fields != ["lang", "segment_order"]:
                    raise FormatError(f"expected the header 'lang<TAB>segment_order', got "
                                      f"{line!r}", path, number)
                header = True
                continue
            if len(fields) != 2 or not fields[0]:
                raise FormatError(f"expected 'lang<TAB>segment_order', got {line!r}", path,
                                  number)
            lang, order = fields[0].casefold(), fields[1]
            if order not in ("keep", "reverse"):
                raise FormatError(f"segment_order {order!r} is not keep or reverse (leave a "
                                  "language out for both)", path, number)
            if lang in orders:
                raise FormatError(f"language {lang!r} is listed twice", path, number)
            orders[lang] = order
    if not header:
        raise FormatError("no 'lang<TAB>segment_order' header", path)
    return orders


def read_profile(path: str | Path, lang: str) -> LanguageProfile:
    """Read one language file (format in the module docstring).

    Raises:
        FormatError: On invalid YAML, an unknown key or a bad value.
    """
    try:
        with open(path, encoding="utf-8") as f:
            data = yaml.safe_load(f) or {}
    except yaml.YAMLError as e:
        line = getattr(getattr(e, "problem_mark", None), "line", None)
        raise FormatError(f"invalid YAML: {e}", path, None if line is None else line + 1) from e
    if not isinstance(data, dict) or not all(isinstance(k, str) for k in _keys(data)):
        raise FormatError("expected a mapping with string keys (quote keys such as 'on', "
                          "'no', 'yes')", path)
    known = {"segment_order", "joiner", "compound", "drop", "transliteration_pattern",
             "connectors", "words", "forms", "variants", "prefixes", "lemma_rules",
             "noun_modifier", "agreement"}
    for section in ("connectors", "words", "forms"):
        if not isinstance(data.get(section, {}), dict):
            raise FormatError(f"{section} must be a mapping, got {data[section]!r}", path)
    if unknown := set(data) - known:
        raise FormatError(f"unknown keys {sorted(unknown)}; allowed: {sorted(known)}", path)
    order = data.get("segment_order", "both")
    if order not in SEGMENT_ORDERS:
        raise FormatError(f"segment_order {order!r} is not one of {SEGMENT_ORDERS}", path)
    if builtin := sorted(set(data.get("forms", {})) & set(BUILTIN_FORMS)):
        raise FormatError(f"forms {builtin} are built in and may not be defined", path)
    forms = {name: _form(spec, path, name) for name, spec in data.get("forms", {}).items()}
    connectors = {_key(k): _strings(v, path, f"connectors.{k}")
                  for k, v in data.get("connectors", {}).items()}
    for key, templates in connectors.items():
        for template in templates:
            _check_template(template, forms, path, key)
    pattern = data.get("transliteration_pattern")
    noun_modifier = data.get("noun_modifier")
    if noun_modifier is not None and _key(str(noun_modifier)) not in connectors:
        raise FormatError(f"noun_modifier {noun_modifier!r} is not one of the connectors "
                          f"{sorted(connectors)}", path)
    return LanguageProfile(
        lang, order, str(data.get("joiner", " ")), bool(data.get("compound", False)),
        frozenset(_key(w) for w in _strings(data.get("drop", ["the", "a", "an"]), path, "drop")),
        _regex(pattern, path) if pattern else None, connectors,
        {_key(k): _strings(v, path, f"words.{k}") for k, v in data.get("words", {}).items()},
        forms, _variants(data.get("variants", []), forms, path), str(path),
        _prefixes(data.get("prefixes", []), path),
        _form({"rules": data.get("lemma_rules", [])}, path, "lemma_rules").rules,
        None if noun_modifier is None else _key(str(noun_modifier)),
        bool(data.get("agreement", False)))


def _prefixes(value: Any, path: str | Path) -> frozenset[str]:
    letters = _strings(value, path, "prefixes")
    if bad := [p for p in letters if len(p) != 1]:
        raise FormatError(f"prefixes must be single letters, got {bad}", path)
    return frozenset(letters)


def _keys(data: dict[Any, Any]) -> list[Any]:
    keys = list(data)
    for section in ("connectors", "words", "forms"):
        if isinstance(data.get(section), dict):
            keys += list(data[section])
    return keys


def _variants(value: Any, forms: dict[str, Form], path: str | Path) -> tuple[str, ...]:
    names = _strings(value, path, "variants")
    if unknown := [n for n in names if n not in forms]:
        raise FormatError(f"variants {unknown} are not defined under forms", path)
    return names


def _key(text: str) -> str:
    return " ".join(text.casefold().split())


def _strings(value: Any, path: str | Path, key: str) -> tuple[str, ...]:
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise FormatError(f"{key} must be a string or a list of strings, got {value!r}", path)
    return tuple(values)


def _regex(pattern: str, path: str | Path) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as e:
        raise FormatError(f"bad regular expression {pattern!r}: {e}", path) from e


def _form(spec: Any, path: str | Path, name: str) -> Form:
    if not isinstance(spec, dict) or spec.get("words", "all") not in _SCOPES:
        raise FormatError(f"forms.{name} needs words = one of {_SCOPES} and rules", path)
    rules = []
    for rule in spec.get("rules", []):
        if not (isinstance(rule, list) and len(rule) == 2 and all(isinstance(r, str)
                                                                  for r in rule)):
            raise FormatError(f"forms.{name}: a rule is [pattern, replacement], got {rule!r}",
                              path)
        rules.append((_regex(rule[0], path), rule[1]))
    return Form(spec.get("words", "all"), tuple(rules))


def _check_template(template: str, forms: dict[str, Form], path: str | Path, key: str) -> None:
    for match in TEMPLATE_FIELD.finditer(template):
        if match.group(2) and match.group(2) not in forms and match.group(2) not in BUILTIN_FORMS:
            raise FormatError(f"connectors.{key}: template {template!r} uses form "
                              f"{match.group(2)!r}, not defined under [forms] nor built in "
                              f"{list(BUILTIN_FORMS)}", path)
    if re.sub(TEMPLATE_FIELD, "", template).count("{"):
        raise FormatError(f"connectors.{key}: template {template!r} may only hold {{left}}, "
                          f"{{right}} and {{left|form}} / {{right|form}}", path)
