"""Writing outputs safely: never over an input, never two outputs on one path, never half-done.

Every command that writes files checks its paths with :func:`check_outputs` before it opens
anything, and files that are rewritten whole go through :func:`atomic_write_text` (a
temporary file in the same folder, then `os.replace`), so an interrupted or failed write
leaves the previous file as it was.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

from mads_bench.errors import UsageError

__all__ = ["atomic_write_text", "check_outputs"]


def _same(a: Path, b: Path) -> bool:
    if a.exists() and b.exists():
        return os.path.samefile(a, b)
    return a.resolve() == b.resolve()


def _inside(child: Path, folder: Path) -> bool:
    return child.resolve().is_relative_to(folder.resolve())


def check_outputs(
    inputs: Mapping[str, Path | Iterable[Path] | None],
    outputs: Mapping[str, Path | None],
    *,
    folders: Iterable[str] = (),
    globbed: Iterable[str] = (),
) -> None:
    """Refuse outputs that would overwrite an input or each other.

    Args:
        inputs (`Mapping[str, Path | Iterable[Path] | None]`): flag -> input path(s).
        outputs (`Mapping[str, Path | None]`): flag -> output path (`None` = not given).
        folders (`Iterable[str]`): the output flags that name a folder the command fills or
            replaces: an input anywhere inside it is refused too.
        globbed (`Iterable[str]`): the input flags whose folders are read as their ``*.jsonl``
            files: a ``.jsonl`` output directly inside such a folder is refused (the next run
            would read it as input).

    Raises:
        `UsageError`: naming both flags and the path.

    Example:
        >>> check_outputs({"--in": Path("a.jsonl")}, {"--out": Path("a.jsonl")})
        Traceback (most recent call last):
        ...
        mads_bench.errors.UsageError: --out a.jsonl is also the input --in; choose another path
    """
    folders, globbed = set(folders), set(globbed)
    named_inputs: list[tuple[str, Path]] = []
    for flag, value in inputs.items():
        if value is None:
            continue
        paths = [value] if isinstance(value, (str, Path)) else list(value)
        named_inputs += [(flag, Path(p)) for p in paths]
    seen: list[tuple[str, Path]] = []
    for flag, out in outputs.items():
        if out is None:
            continue
        out = Path(out)
        for in_flag, source in named_inputs:
            read_as_input = out.suffix == ".jsonl" and out.parent.resolve() == source.resolve()
            if in_flag in globbed and source.is_dir() and read_as_input:
                raise UsageError(
                    f"{flag} {out} is in the input folder {in_flag} {source}, whose *.jsonl files "
                    "are all read as input; choose another path"
                )
            if _same(out, source) or (flag in folders and _inside(source, out)):
                relation = "is also" if _same(out, source) else "holds"
                raise UsageError(
                    f"{flag} {out} {relation} the input {in_flag}"
                    + ("" if relation == "is also" else f" {source}")
                    + "; choose another path"
                )
        for other_flag, other in seen:
            if _same(out, other):
                raise UsageError(f"{flag} and {other_flag} are the same path {out}")
        seen.append((flag, out))


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_text(path: Path | str, text: str) -> None:
    """Replace ``path`` with ``text`` all at once (parents are created).

    Readers see the old file or the new one, never a partial write; on failure the old file
    is kept and the temporary one removed.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.chmod(temporary, 0o666 & ~_umask())  # mkstemp makes it private; match open()'s mode
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
