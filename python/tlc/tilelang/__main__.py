"""python -m tlc.tilelang SCRIPT.py [ARGS...]: runs a TileLang script as __main__, its kernels compiled
by tlc (the package's docstring says what of TileLang's API it takes)."""
import os
import runpy
import sys

from . import install


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    script = argv[0]
    if not os.path.isfile(script):
        print(f"tlc.tilelang: {script}: no such file", file=sys.stderr)
        return 2
    install()
    sys.argv = list(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
