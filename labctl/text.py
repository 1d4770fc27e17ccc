"""How labctl writes values for people, on a terminal and in a report. Text that came from
outside (an experiment file, a peer's output, a stored failure) goes through `printable` first,
so no control character (an escape sequence, a bidirectional override, a newline in a name)
reaches a terminal or a report raw."""

from __future__ import annotations


def printable(text: object) -> str:
    """`text` with every character that is not printable (C0 and C1 controls, DEL, Unicode
    format characters such as U+202E) written as its escape (\\x1b, \\u202e): one visible line."""
    text = str(text)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)
