# SPDX-License-Identifier: MIT
"""linescope-bpf --trace: load linescope_usdt in every Python process of the traced command.

`linescope-bpf --trace -- CMD` puts the directory holding this file first on PYTHONPATH, so each
Python process started under it (children too: they inherit PYTHONPATH) imports this module at
start-up, before the main script runs. It imports linescope_usdt, which picks the build for the
running interpreter by its file name suffix (linescope_usdt.cpython-311-x86_64-linux-gnu.so,
...), and then runs the sitecustomize that would have run without us, if any: the next one on
sys.path (Debian's /usr/lib/python3.X/sitecustomize.py, or the user's own).

An interpreter without a matching build starts normally and is simply not traced. Kept free of
syntax newer than Python 2.7 so that any Python that inherits PYTHONPATH can read it.
"""
import os
import sys


def _load():
    try:
        import linescope_usdt  # noqa: F401  (the import is the whole job)
    except ImportError:
        pass  # no build for this interpreter: it runs untraced, its samples still count


def _chain():
    try:
        import importlib.machinery
        import importlib.util
    except ImportError:
        return
    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


_load()
_chain()
