"""Does a preference value (``$70``, ``Women's M``, ``visible ratings 4.2+ stars with 50+ reviews``) appear in a text?

Token-level fuzzy matching, deterministic and explainable (docs/design/judges.md):
numbers are anchors, words are terms, both compared after ``tokenize``; a value matches
when enough of its anchors and terms occur close together in the text:

- a value with numbers needs all of them (at most 3) or 75% (more), and half of its words;
- a value without numbers needs all of its words (at most 3) or 75% (more);
- an anchor with a unit (``$70``, ``80%``, ``50 reviews``) matches the same number with the same
  unit or with none (a typed ``70``), never with another unit (``70 reviews``);
- counts are multisets (``32x32`` needs two ``32``), order is free, and all matched tokens
  must lie in one window of ``2 * len(value tokens) + 6`` tokens, so a long rationale does not
  match by scattering.
A simple disjunction (``Intermediate or Advanced``, no comma or semicolon) matches when any
alternative does; an alternative made only of qualifiers or stop words (``Good+ or better``,
``4.5 stars or higher``) stays with the one before it: it states that one's bound. Limits
(``under $60``) are compared as numbers in applied texts (``_bounds.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from p2w_rt.replay.matching._bounds import as_number
from p2w_rt.replay.matching._patterns import Alternative, Anchor, ValuePattern, compiled, unit_of
from p2w_rt.replay.matching._tokens import Tokens, normalize, normalize_uncached, tokenize_normalized


@dataclass(frozen=True, slots=True)
class ValueMatch:
    """Where a value was found: the text that matched it, and its coverage."""

    snippet: str
    score: float


def _take_anchor(left: dict[Anchor, int], number: str, unit: str | None) -> Anchor | None:
    """Consume a wanted anchor this number satisfies: same unit first, then a unit-less one, or any if none given.

    An implied unit (``~``) is met by the same unit; otherwise it stands as none."""
    implied = unit is not None and unit[0] == "~"
    if implied:
        assert unit is not None
        same: Anchor = (number, unit[1:])
        if left.get(same, 0) > 0:
            left[same] -= 1
            return same
        unit = None
    for key in ((number, unit), (number, None)):
        if left.get(key, 0) > 0:
            left[key] -= 1
            return key
    if unit is None:
        for key, count in left.items():
            if key[0] == number and count > 0:
                left[key] -= 1
                return key
    return None


def _take_bound(alt: Alternative, left: dict[Anchor, int], tokens: Tokens, pos: int) -> list[Anchor]:
    """The wanted anchors whose limit this number of an applied text meets (a range's two ends at once)."""
    unit = unit_of(tokens.units[pos])
    if unit is None:
        return []
    x = as_number(tokens.words[pos])
    before = tokens.words[max(0, pos - 3) : pos]
    for key, bound in alt.bounds.items():
        if left.get(key, 0) > 0 and bound.unit == unit and bound.holds(x) and not bound.opposed_by(before):
            taken = [k for k, b in alt.bounds.items() if b is bound and left.get(k, 0) > 0]
            for k in taken:
                left[k] -= 1
            return taken
    return []


def _best_window(alt: Alternative, tokens: Tokens, bounded: bool = False) -> tuple[int, int, int] | None:
    """(matched count, first index, last index) of the best window that satisfies ``alt``, if any.

    ``bounded``: a number within a limit the value states counts for it (applied texts only)."""
    words, units = tokens.words, tokens.units
    limits = {b.unit for b in alt.bounds.values()} if bounded else set()
    positions = [
        i for i, w in enumerate(words) if w in alt.tokens or (limits and w[0].isdigit() and unit_of(units[i]) in limits)
    ]
    best: tuple[int, int, int] | None = None
    for j, start in enumerate(positions):
        left_anchors = dict(alt.anchors)
        left_words = dict(alt.words)
        got_anchors = got_words = 0
        last = start
        for pos in positions[j:]:
            if pos >= start + alt.width:
                break
            token = words[pos]
            if token[0].isdigit():
                key = _take_anchor(left_anchors, token, units[pos])
                taken = [key] if key is not None else _take_bound(alt, left_anchors, tokens, pos) if limits else []
                for key in taken:
                    got_anchors += 1
                    last = pos
                    unit_word = alt.unit_words.get(key)
                    # an implied unit (``for 4``) or another word for it (``2 people`` for ``2 guests``)
                    spelled = pos + 1 < len(words) and words[pos + 1] == unit_word and units[pos] == key[1]
                    same = key[1] is not None and key[1] == unit_of(units[pos]) and not spelled
                    if same and unit_word is not None and left_words.get(unit_word, 0) > 0:
                        left_words[unit_word] -= 1
                        got_words += 1
            elif left_words.get(token, 0) > 0:
                left_words[token] -= 1
                got_words += 1
                last = pos
        if got_anchors >= alt.need_anchors and got_words >= alt.need_words:
            total = got_anchors + got_words
            if best is None or total > best[0]:
                best = (total, start, last)
    return best


def _could_match(alt: Alternative, norm: str, bounded: bool = False) -> bool:
    """A necessary condition, checked with substring searches before any tokenizing (most texts fail it)."""
    if alt.need_anchors:
        found = 0
        limited = {w for w, _ in alt.bounds} if bounded else set()
        for p, n in alt.anchor_probes:
            if p is None or p in norm or p in limited:
                found += n
        if found < alt.need_anchors:
            return False
    found = 0
    for p, n in alt.word_probes:
        if p is None or p in norm:
            found += n
    return found >= alt.need_words


def _enough(alt: Alternative, vocab: frozenset[str], bounded: bool) -> bool:
    anchors = sum(n for key, n in alt.anchors.items() if key[0] in vocab or (bounded and key in alt.bounds))
    words = sum(n for t, n in alt.words.items() if t in vocab or t in alt.unit_words.values())
    return anchors >= alt.need_anchors and words >= alt.need_words


def find_value(value: str | ValuePattern, text: str | None, *, bounded: bool = False) -> ValueMatch | None:
    """The best place ``value`` appears in ``text``, or None.

    ``bounded``: ``text`` is something the agent applied, where a number within a limit the value states meets
    it (``$54`` applies ``under $60``); elsewhere (what the history returned) the limit itself must be stated."""
    pattern = compiled(value)
    if not text or not pattern.alternatives:
        return None
    return _match(pattern, text, normalize(text), bounded)


def _match(pattern: ValuePattern, text: str, norm: str, bounded: bool = False) -> ValueMatch | None:
    best: tuple[float, int, int] | None = None
    tokens: Tokens | None = None
    for alt in pattern.alternatives:
        if not _could_match(alt, norm, bounded):
            continue
        tokens = tokens or tokenize_normalized(norm)
        if not _enough(alt, tokens.vocab, bounded):
            continue
        window = _best_window(alt, tokens, bounded)
        if window is None:
            continue
        score = window[0] / alt.size
        if best is None or score > best[0]:
            best = (score, window[1], window[2])
    if best is None:
        return None
    score, first, last = best
    assert tokens is not None
    return ValueMatch(tokens.snippet(first, last, text), round(score, 3))


class TextSet:
    """Texts searched for many values: normalized together in one pass, then filtered by substring probes.

    A value absent from all texts is ruled out by one check on their concatenation; otherwise
    only the texts holding its required probe (or passing all probe counts) are tokenized.
    """

    _SEP = "\x00"

    def __init__(self, texts: Sequence[str]) -> None:
        self.texts = list(texts)
        joined = self._SEP.join(self.texts)
        if joined.count(self._SEP) != max(0, len(self.texts) - 1):  # a text holding the separator itself
            self.texts = [t.replace(self._SEP, " ") for t in self.texts]
            joined = self._SEP.join(self.texts)
        self.joined = normalize_uncached(joined)
        self.norms = self.joined.split(self._SEP) if self.texts else []  # "".split(sep) is [""]: no texts, no norms

    def __len__(self) -> int:
        return len(self.texts)

    def first(self, value: str | ValuePattern, *, bounded: bool = False) -> tuple[int, ValueMatch] | None:
        """The first text (by index) where ``value`` appears, and the match (``bounded``: as ``find_value``)."""
        pattern = compiled(value)
        alternatives = [a for a in pattern.alternatives if _could_match(a, self.joined, bounded)]
        if not alternatives:
            return None
        required = {a.required_bounded if bounded else a.required_probe for a in alternatives}
        indices: Sequence[int] = range(len(self.norms))
        if None not in required:
            if len(required) == 1:
                (only,) = required
                indices = [i for i, norm in enumerate(self.norms) if only in norm]  # type: ignore[operator]  # None excluded above
            else:
                indices = [i for i, norm in enumerate(self.norms) if any(p in norm for p in required)]  # type: ignore[operator]  # no None
        for index in indices:
            norm = self.norms[index]
            if any(_could_match(a, norm, bounded) for a in alternatives):
                match = _match(pattern, self.texts[index], norm, bounded)
                if match is not None:
                    return index, match
        return None
