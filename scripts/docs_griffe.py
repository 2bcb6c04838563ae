"""A Griffe extension for the documentation site: doctest lines in docstrings become Python code blocks.

Our docstrings show short sessions (``>>> env = jericho_env.make("grid")``) in their text, as the
standard library's do; Markdown would read ``>>>`` as three nested quotes. ``mkdocs.yml`` loads this
file in mkdocstrings' ``extensions``; the sources are left as they are.
"""

from __future__ import annotations

from typing import Any

from griffe import Extension

PROMPTS = (">>>", "...")


def fence_doctests(text: str) -> str:
    """``text`` with every run of lines starting with a doctest prompt wrapped in a ```` ```pycon ```` fence."""
    out: list[str] = []
    block: list[str] = []
    for line in [*text.split("\n"), ""]:
        stripped = line.lstrip()
        if stripped.startswith(PROMPTS):
            block.append(stripped)
            continue
        if block:
            out += ["", "```pycon", *block, "```", ""]
            block = []
        out.append(line)
    return "\n".join(out[:-1])


class DoctestFences(Extension):
    """Fence the doctest sessions of every docstring Griffe loads."""

    def on_instance(self, *, obj: Any, **kwargs: Any) -> None:
        """Rewrite ``obj``'s docstring text as it is created, if it has one with a prompt."""
        doc = getattr(obj, "docstring", None)
        if doc is not None and ">>>" in doc.value:
            doc.value = fence_doctests(doc.value)
