"""Ctrl-C before a command runs: while the `tfrview` process still loads its modules and starts its
helpers, an interrupt says the one line an interrupted command says and exits 130, never a
traceback from inside some import. Imported first by `tfrview.cli`; armed only in the command's
own process (`own_process`), never in a program or test that imports the package."""

from __future__ import annotations

import os
import signal
import sys


def own_process() -> bool:
    """Is this process `python -m tfrview` or the `tfrview` script, whose main() is the last thing
    it runs? Not a program that calls main() and goes on (or runs this package with runpy)."""
    top = sys.modules.get("__main__")
    spec = getattr(top, "__spec__", None)
    if spec is not None and spec.name == "tfrview.__main__":
        return True
    script = getattr(top, "__file__", None)
    return (
        script is not None
        and os.path.basename(script) == "tfrview"
        and bool(sys.argv)
        and os.path.abspath(script) == os.path.abspath(sys.argv[0])
    )


def _early(signum, frame) -> None:
    # nothing of the command has run: no output to flush, no store open; parts started ahead end
    # when their token pipe closes with this process
    os.write(2, b"\rtfrview: interrupted\n")
    os._exit(130)


def disarm() -> None:
    """From here Ctrl-C is the command's own (KeyboardInterrupt, said and exit 130 by main)."""
    if signal.getsignal(signal.SIGINT) is _early:
        signal.signal(signal.SIGINT, signal.default_int_handler)


if own_process() and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
    signal.signal(signal.SIGINT, _early)
