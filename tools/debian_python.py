"""For the tools that need packages beyond Python's standard library: rerun_if_missing runs the calling script again
under Debian's /usr/bin/python3, where scripts/deps installs NumPy, Matplotlib and PyOpenCL, when the python3 first
on PATH lacks one of them (a pyenv or venv interpreter, say)."""
import importlib.util
import os
import sys


def rerun_if_missing(*modules):
    """Returns when every module can be imported here; else replaces this process by the same command under
    /usr/bin/python3 (unless this is that interpreter already, where the import then fails as usual)."""
    if all(importlib.util.find_spec(m) for m in modules) or sys.executable == "/usr/bin/python3":
        return
    if os.path.exists("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
