"""Command-line entry point: ``voicestack-satellite``."""

import argparse

from . import __version__


def main(argv: list[str] | None = None) -> None:
    """Parse the command line and run the satellite."""
    parser = argparse.ArgumentParser(prog="voicestack-satellite")
    parser.add_argument("--version", action="version", version=__version__)
    parser.parse_args(argv)


if __name__ == "__main__":
    main()
