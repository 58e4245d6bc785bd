"""Execute a walkthrough notebook from scratch with the current interpreter's kernel.

A ``python3`` kernel spec pointing at ``sys.executable`` is written into a private folder that
is put first on ``JUPYTER_PATH`` while the notebook runs, so the notebook runs in exactly the
environment the tests run in (the project's venv), whatever kernel specs the user or the
system has installed (a user-level ``python3`` spec would otherwise win over the venv's).
The kernel's working directory is ``workdir``; the notebooks write nothing outside their own
temporary folder.

Example:
    >>> nb = execute_notebook(Path("notebooks/01_simulate.ipynb"), Path("/tmp/x"))  # doctest: +SKIP
    >>> key_figures(nb)["conversations"]  # doctest: +SKIP
    9
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import nbformat
from ipykernel.kernelspec import write_kernel_spec
from nbclient import NotebookClient

KEY_FIGURES_MARKER = "KEY FIGURES"
KERNEL_ENV = {
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "WANDB_MODE": "disabled",
}


@contextmanager
def current_interpreter_kernel(workdir: Path) -> Iterator[str]:
    """Make the ``python3`` kernel spec run ``sys.executable`` while the context is open.

    Args:
        workdir (`Path`): folder that receives the private ``kernels/python3`` spec.

    Yields:
        `str`: the kernel name to pass to nbclient (``python3``).
    """
    data_dir = workdir / ".jupyter-data"
    write_kernel_spec(data_dir / "kernels" / "python3")  # argv: [sys.executable, -m, ...]
    previous = os.environ.get("JUPYTER_PATH")
    os.environ["JUPYTER_PATH"] = os.pathsep.join(filter(None, [str(data_dir), previous]))
    try:
        yield "python3"
    finally:
        if previous is None:
            os.environ.pop("JUPYTER_PATH", None)
        else:
            os.environ["JUPYTER_PATH"] = previous


def execute_notebook(
    path: Path, workdir: Path, *, timeout: int = 600, record_timing: bool = False
) -> nbformat.NotebookNode:
    """Run every cell of ``path`` in a fresh kernel whose cwd is ``workdir``.

    Args:
        path (`Path`): the ``.ipynb`` file (its stored outputs are ignored and replaced).
        workdir (`Path`): kernel working directory and ``TMPDIR`` (created if missing).
        timeout (`int`): seconds allowed per cell.
        record_timing (`bool`): keep nbclient's per-cell timestamps in the metadata.

    Returns:
        `NotebookNode`: the executed notebook.

    Raises:
        `nbclient.exceptions.CellExecutionError`: a cell raised (the message names it).
    """
    workdir.mkdir(parents=True, exist_ok=True)
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    env = {**os.environ, **KERNEL_ENV, "TMPDIR": str(workdir)}  # mkdtemp() lands in workdir
    env.pop("MPLBACKEND", None)  # a non-inline backend would drop the PNG outputs
    with current_interpreter_kernel(workdir) as kernel_name:
        client = NotebookClient(
            nb,
            kernel_name=kernel_name,
            timeout=timeout,
            record_timing=record_timing,
            resources={"metadata": {"path": str(workdir)}},
        )
        client.execute(env=env)
    return nb


def output_text(nb: nbformat.NotebookNode) -> str:
    """All stream text and ``text/plain`` results of the notebook, in order."""
    parts: list[str] = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.output_type == "stream":
                parts.append(out.text)
            elif "data" in out and "text/plain" in out.data:
                parts.append(out.data["text/plain"])
    return "\n".join(parts)


def png_count(nb: nbformat.NotebookNode) -> int:
    """Number of inline PNG images among the outputs."""
    return sum(
        "image/png" in out.get("data", {}) for cell in nb.cells for out in cell.get("outputs", [])
    )


def error_outputs(nb: nbformat.NotebookNode) -> list[str]:
    """``ename: evalue`` of every error output (empty for a clean run)."""
    return [
        f"{out.ename}: {out.evalue}"
        for cell in nb.cells
        for out in cell.get("outputs", [])
        if out.output_type == "error"
    ]


def key_figures(nb: nbformat.NotebookNode) -> dict[str, Any]:
    """The JSON object a notebook prints after the ``KEY FIGURES`` line of its last cells.

    Raises:
        `ValueError`: no such output.
    """
    for cell in reversed(nb.cells):
        for out in cell.get("outputs", []):
            if out.output_type == "stream" and KEY_FIGURES_MARKER in out.text:
                return json.loads(out.text.split(KEY_FIGURES_MARKER, 1)[1])
    raise ValueError(f"no '{KEY_FIGURES_MARKER}' output in the notebook")
