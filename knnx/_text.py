"""Text that knnx writes: control characters (below), values cut short for a message
(:func:`shorten`) and the canonical JSON of a value (:func:`canonical_json`).

Control characters in text that becomes a CSV field, a path or a terminal line.

A control character is any of Unicode category Cc (``\\x00``-``\\x1f``, ``\\x7f``-``\\x9f``:
tab, line feed and carriage return among them), a line or paragraph separator
(U+2028, U+2029) or a bidirectional embedding, override or isolate (U+202A-U+202E,
U+2066-U+2069). Python's ``str.splitlines`` breaks lines at several of them, a CSV
reader at a bare ``\\r``, a terminal obeys escape sequences, and a bidirectional
control shows the text after it in another order than it is read: knnx refuses them in
names and paths (spec values, dataset ids, CSV file names, ``--out``) and escapes them
in free text it writes (error messages).

The names of results (:func:`name_problem`): dataset ids, algorithm ids, metric names
and the names a comparison prints (``--names``) follow one rule, checked where a name
enters (the spec, a dataset entry, a file read back) and nowhere else.
"""

import json
import numbers
import re
import unicodedata

_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def find_control(text):
    """Index of the first control character of ``text``, or None."""
    match = _CONTROL.search(text)
    return None if match is None else match.start()


def describe_control(text):
    """``"control character U+000D at position 4"`` for the first one of ``text`` (which
    has one); ``"bidirectional control U+202E ..."`` for one of those."""
    i = find_control(text)
    kind = "bidirectional control" if 0x202A <= ord(text[i]) <= 0x2069 else "control character"
    return f"{kind} U+{ord(text[i]):04X} at position {i + 1}"


def find_surrogate(text):
    """Index of the first lone surrogate of ``text`` (U+D800-U+DFFF: no character; a
    YAML escape ``"\\ud800"`` or an undecodable file name makes one), or None."""
    match = _SURROGATE.search(text)
    return None if match is None else match.start()


_SURROGATE = re.compile("[\ud800-\udfff]")

# The longest name: a dataset id heads a row of every table; a longer one is a pasted text.
MAX_NAME = 1000

# Invisible characters: blanks and format characters (zero-width spaces and joiners,
# the byte order mark, the soft hyphen), Unicode's default-ignorable code points (the
# Hangul fillers, variation selectors, the combining grapheme joiner) and the blank
# braille pattern U+2800, which print as nothing or as a blank.
_UNSEEN = frozenset(("Zs", "Zl", "Zp", "Cf", "Cc", "Cs"))
_IGNORABLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u2800\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)


def _visible(ch):
    return not ch.isspace() and unicodedata.category(ch) not in _UNSEEN and not _IGNORABLE.match(ch)


def name_problem(text):
    """None if ``text`` is a name, else why not, as the end of a sentence about it.

    The one rule for the names of results, whatever names (a dataset, an algorithm, a
    metric, a printed contestant): a text of at most :data:`MAX_NAME` characters,
    without a control character (:func:`find_control`) or a lone surrogate, that
    starts and ends with a visible character (not a blank, a zero-width space or
    another format character): two names that print alike are one name. Unicode,
    inner blanks and the specials of LaTeX, HTML, Markdown and CSV are names; every
    writer escapes them for its format. Algorithm ids and experiment names (folders)
    are further held to letters, digits and ``_.-``, metric names to knnx's own."""
    if not isinstance(text, str):
        return f"is not a text ({type(text).__name__})"
    if not text:
        return "is empty"
    if find_control(text) is not None:
        return f"holds a {describe_control(text)}"
    i = find_surrogate(text)
    if i is not None:
        return f"holds a lone surrogate U+{ord(text[i]):04X} at position {i + 1} (no character)"
    if len(text) > MAX_NAME:
        return f"has {len(text):,} characters; at most {MAX_NAME:,}"
    if not any(_visible(ch) for ch in text):
        return "is blank (it has no visible character)"
    if unicodedata.category(text[0]) in ("Mn", "Mc", "Me"):  # a mark on nothing: U+0301 first
        return (
            f"starts with a combining mark (U+{ord(text[0]):04X}); a name starts with a character of its own"
        )
    for end, ch in (("starts", text[0]), ("ends", text[-1])):
        if not _visible(ch):
            kind = "a blank" if ch.isspace() or unicodedata.category(ch) == "Zs" else "an invisible character"
            return f"{end} with {kind} (U+{ord(ch):04X}); a name starts and ends with a visible character"
    return None


def escape_control(text):
    """``text`` with every control character written as a Python escape (``\\r``, ``\\x1b``)."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


def find_leaf(value, test, depth=0):
    """The first value in ``value``, its lists and its mappings' values (8 levels at most)
    for which ``test`` is true, or None."""
    if not isinstance(value, list | dict):
        return value if test(value) else None
    if depth < 8:
        for v in value.values() if isinstance(value, dict) else value:
            found = find_leaf(v, test, depth + 1)
            if found is not None:
                return found
    return None


def shorten(text, limit, mark="..."):
    """``text`` if it has at most ``limit`` characters, else its start and ``mark``,
    ``limit`` characters in all: how a message, a tick label or a title shows a value."""
    return text if len(text) <= limit else text[: limit - len(mark)] + mark


def shown(text, limit=40):
    """``text`` for a one-line message: at most ``limit`` characters (then ``...``),
    control characters escaped."""
    return escape_control(shorten(text, limit + 3))


def quoted(text, limit=40):
    """``text`` as Python writes it in quotes, for a message about a name: what does
    not print (a zero-width space, a bidirectional or other control, a lone
    surrogate) is escaped, so that two names that print alike read apart; at most
    ``limit`` characters."""
    return shown(repr(text), limit)


def canonical_json(value, allow_nan=False):
    """JSON with sorted keys and no spaces: the one text of a value that knnx compares,
    hashes and writes (``params`` in results). numpy scalars are written as Python's;
    NaN and infinities raise ValueError unless ``allow_nan`` (values read back from a
    file, which its checks judge)."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), default=_plain_number, allow_nan=allow_nan
    )


def _plain_number(value):
    if isinstance(value, numbers.Integral):  # numpy's integers register as Integral
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    raise TypeError(f"not JSON serialisable: {value!r}")


# Markdown: the characters that would start markup in a GitHub table cell (not '>': a
# quote starts a line, never a cell). '_' is marked
# only where it could open or close emphasis (not between two letters or digits: knn_b
# stays as written); '(' and '[' only after ']', where they would make a link.
_MARKDOWN = re.compile(r"[\\|`*&<~$]|(?<=\])[(\[]|(?<![^\W_])_|_(?![^\W_])")


def markdown_text(text):
    """``text`` as a cell of a Markdown (GitHub) table that shows it as written: the
    characters of markup and the cell's ``|`` escaped with a backslash, so that
    ``<b>``, ``*x*``, ``$x$``, ``a|b`` or a final ``\\`` are names, not markup."""
    return _MARKDOWN.sub(lambda m: "\\" + m.group(), text)
