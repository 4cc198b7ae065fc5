"""A griffe extension: render the reStructuredText roles our docstrings use as Markdown.

Docstrings are written for readers of the source (``:class:`Toolset```, ``Example::``); the
docs site renders Markdown, where those would show up as literal colons. Rewriting them here
keeps one docstring for both readers.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:class|func|meth|data|attr|mod|exc|obj|py:\w+):`~?([^`]+)`")
LITERAL_BLOCK = re.compile(r"::$", flags=re.M)


class RestRoles(griffe.Extension):
    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            text = ROLE.sub(lambda match: f"`{match[1]}`", obj.docstring.value)
            obj.docstring.value = LITERAL_BLOCK.sub(":", text)
