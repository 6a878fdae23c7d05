"""Study files for the tests: the ``[[benchmarks]]`` tables of the generated world's sets."""

from __future__ import annotations

from typing import Iterable


def world_benchmarks(sample, names: Iterable[str]) -> list[str]:
    """A ``[[benchmarks]]`` table per benchmark of ``names``, read from the world's ``sample`` sets with their
    labels."""
    tables = []
    for name in names:
        s = sample[name]
        tables.append(f'[[benchmarks]]\nname = "{name}"\ndata = "{s.data_path}"\nvideos = "{s.video_root}"\n'
                      f'options = {{ labels = "{s.loader_options["labels"]}" }}\n')
    return tables
