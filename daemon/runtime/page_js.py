"""The JavaScript programs the daemon runs in pages, read from the `.js` files shipped beside their modules.

A program that runs in a page lives in `<package>/js/<name>.js` of the package whose module runs it, as one
parenthesised function expression (`(el) => { ... }`) that eslint can lint (docs/architecture.md). Values
travel through `evaluate`'s argument, never spliced into the source. A prelude (shared declarations, such as
the fingerprint's `describe`) is a file of plain `const` declarations that `with_prelude` puts in scope.
"""

from __future__ import annotations

from functools import cache
from importlib import resources


@cache
def load_js(package: str, name: str) -> str:
    """The source of `<package>/js/<name>`, read once per process (a program ends without a semicolon, so it
    stays one expression that can be called or wrapped).

    The file's leading comment lines are for its reader, not the page: left out, so every evaluate sends
    only the program.
    """
    text = resources.files(package).joinpath("js", name).read_text(encoding="utf-8")
    lines = text.strip().splitlines()
    while lines and lines[0].startswith("//"):
        del lines[0]
    return "\n".join(lines).strip()


def with_prelude(program: str, *preludes: str) -> str:
    """`program` (a function expression) called inside a function that first declares the preludes.

    The program is a closure over the preludes' declarations, so it reads them as if they were its own;
    Playwright calls the outer function with evaluate's arguments (an element handle's evaluate passes the
    element first), which are passed on unchanged.
    """
    declarations = "\n".join(preludes)
    return f"(...args) => {{\n{declarations}\nreturn ({program})(...args);\n}}"


def called(program: str, *arguments: str) -> str:
    """The source of `program` called with `arguments`, each the source of a function or a JSON literal.

    For what evaluate's argument cannot carry: another program (a function), or the options of an init
    script, which takes no argument.
    """
    return f"({program})({', '.join(arguments)})"
