"""``python -m bias_suite.cli``: the ``bias-suite`` command."""
from bias_suite.cli import main

main()
