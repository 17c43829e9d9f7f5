"""Build hook: ship the top-level ``templates/`` and ``identity_terms/`` folders
inside the package (``bias_suite/data/...``) so that a plain ``pip install``
finds them through ``importlib.resources``."""
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).parent


class BuildWithData(build_py):
    def run(self):
        super().run()
        for folder in ("templates", "identity_terms"):
            src = ROOT / folder
            dst = Path(self.build_lib) / "bias_suite" / "data" / folder
            if dst.exists():
                shutil.rmtree(dst)
            dst.mkdir(parents=True)
            for f in sorted(src.glob("*.yaml")):
                shutil.copy2(f, dst / f.name)


setup(cmdclass={"build_py": BuildWithData})
