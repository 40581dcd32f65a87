"""Fresh virtual environments with frameaudit installed from this checkout, as a new user's."""

from __future__ import annotations

import os
import subprocess
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def fresh(folder: Path, extra: str = "") -> Path:
    """A new venv in ``folder``, with ``pip install -e .[extra]`` of this checkout: its bin.

    ``--no-compile``: pip would write the bytecode of every module it installs (all of numpy,
    pandas, scipy, ...), half of an install's CPU; the venv's commands write that of the
    modules they import, when they first import them (:func:`environment`). The docs extra's
    install and site build took 82.5 core-seconds with pip's compiling and 58.6 without.
    """
    venv.create(folder / "venv", with_pip=True)
    bin_dir = folder / "venv" / ("Scripts" if os.name == "nt" else "bin")
    target = f"{ROOT}[{extra}]" if extra else str(ROOT)
    subprocess.run(
        [str(bin_dir / "python"), "-m", "pip", "install", "--quiet", "--no-compile", "-e", target],
        check=True,
        capture_output=True,
        text=True,
    )
    return bin_dir


def environment(bin_dir: Path) -> dict[str, str]:
    """This process's environment with the venv's commands first on the PATH, none of this
    one's imports, and bytecode written on import (the install wrote none: :func:`fresh`)."""
    variables = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    variables.pop("PYTHONPATH", None)
    variables.pop("PYTHONDONTWRITEBYTECODE", None)
    return variables


def run(bin_dir: Path, *argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``argv`` run with the venv's commands (:func:`environment`)."""
    return subprocess.run(
        [str(bin_dir / argv[0]), *argv[1:]],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=environment(bin_dir),
        check=False,
    )
