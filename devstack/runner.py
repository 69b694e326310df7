"""Running a stack program: the engines' logs in a file, a failed step as one line."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
import os
from pathlib import Path
import shutil
import sys
import tempfile
from typing import Any

from devstack.errors import StackError


@contextmanager
def child_stderr_to(path: Path) -> Iterator[None]:
    """Subprocesses' stderr goes to ``path``; this process's still reaches the terminal.

    The speech servers log to an inherited stderr (``devstack.servers`` keeps it), and
    their logs would interleave with the timeline. File descriptor 2, which children
    inherit, is pointed at ``path``, while ``sys.stderr`` keeps writing to a copy of
    the original.
    """
    sys.stderr.flush()
    original_stderr = sys.stderr
    terminal = os.dup(2)
    with path.open("ab") as log:
        os.dup2(log.fileno(), 2)
    sys.stderr = os.fdopen(os.dup(terminal), "w", buffering=1)
    try:
        yield
    finally:
        sys.stderr.flush()
        sys.stderr.close()
        os.dup2(terminal, 2)
        os.close(terminal)
        sys.stderr = original_stderr


def run_bench(
    name: str, keep: bool, bench: Callable[[Path], Coroutine[Any, Any, int]]
) -> int:
    """Run ``bench(workdir)`` with the engines' output in ``workdir/engines.log``.

    The directory is removed after a clean run unless ``keep``; a failing stack is
    reported on stderr and its directory kept for a look.
    """
    workdir = Path(tempfile.mkdtemp(prefix=f"voicestack-{name}-"))
    code = 1
    try:
        with child_stderr_to(workdir / "engines.log"):
            code = asyncio.run(bench(workdir))
    except (StackError, TimeoutError) as err:
        print(f"bench.{name}: FAILED: {err}", file=sys.stderr)
    if code == 0 and not keep:
        shutil.rmtree(workdir, ignore_errors=True)
    else:
        print(f"kept {workdir}", file=sys.stderr)
    return code
