"""Running the command line in-process in tests, with the error contract checked."""

from __future__ import annotations

from mads_bench.cli import main


def run(argv: list, capsys) -> tuple[int, str, str]:
    """Exit status, stdout and stderr of `mads-bench ARGV`; no run may show a traceback."""
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    if status == 2:  # an expected failure gives its reason on a line of its own
        assert any("error:" in line for line in err.splitlines()), err  # ours or argparse
    return status, out, err


def error_line(err: str) -> str:
    """The one line a failure prints, nothing else."""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]
