"""Builds the compiled search core (engine/solver/core/, docs/solver.md) when a C compiler is
there; the metadata is in pyproject.toml. The core is optional: where it cannot be built the
install still succeeds and the pure-Python solver is used (``patience-race solve``, ``/healthz``
and the server's start-up log say which core is in use)."""

from __future__ import annotations

import sys
from glob import glob

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class OptionalBuildExt(build_ext):
    """``build_ext`` that warns and goes on where the core cannot be compiled."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as error:  # no compiler at all: setuptools raises several kinds
            _skip(error)

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as error:
            _skip(error)


def _skip(error: Exception) -> None:
    print(
        f"patience-race: the compiled search core was not built ({error}); the pure-Python "
        f"solver will be used",
        file=sys.stderr,
    )


setup(
    ext_modules=[
        Extension(
            "engine.solver._core",
            sources=sorted(glob("engine/solver/core/*.c")),
            depends=glob("engine/solver/core/*.h"),
            extra_compile_args=["-O2", "-std=gnu11", "-Wall", "-Wextra", "-Wno-unused-parameter"],
        )
    ],
    cmdclass={"build_ext": OptionalBuildExt},
)
