"""A reader that closes the pipe early (``bias-suite ... | head``) ends the
command quietly: no error line, no traceback."""
import os
import subprocess
import sys
from pathlib import Path

import pytest


def test_broken_pipe_inside_a_command_is_quiet(monkeypatch, capsys):
    from bias_suite import cli

    def closed_pipe(*a, **k):
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(cli, "_silence_stdout", lambda: None)   # keep pytest's own stdout
    monkeypatch.setattr(sys, "argv", ["bias-suite", "metrics"])
    monkeypatch.setattr(cli.console, "print", closed_pipe, raising=False)
    with pytest.raises(SystemExit) as info:
        cli.main()
    assert info.value.code == 141
    assert capsys.readouterr().err == ""


@pytest.mark.slow  # a command line in a subprocess
def test_closed_pipe_on_a_long_output_is_quiet():
    exe = Path(sys.executable).parent / "bias-suite"
    proc = subprocess.Popen([str(exe), "expand", "sentiment_generic", "--sample", "5000"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=dict(os.environ, COLUMNS="80"))
    proc.stdout.readline()
    proc.stdout.close()            # far more is still to come: the writer meets the closed pipe
    err = proc.stderr.read().decode()
    proc.wait(timeout=120)
    assert "error" not in err.lower() and "Traceback" not in err, err
