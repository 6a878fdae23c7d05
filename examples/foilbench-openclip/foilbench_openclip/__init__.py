"""An example of a Foilbench back-end in a package of its own: OpenCLIP checkpoints (``open_clip``'s
``local-dir:`` folders or ``hf-hub:`` names), a model family transformers does not ship.

Installing the package registers the family through its ``foilbench.backends`` entry point (pyproject.toml); then
``foilbench score ... --model FOLDER --family openclip`` and ``foilbench probe --family openclip`` use it, and
``foilbench models`` lists it.
"""

from bench.scoring.families import Family

FAMILY = Family("openclip", "foilbench_openclip.backend:OpenClipBackend", ("similarity",),
                "OpenCLIP checkpoints: frame embeddings, normalised, averaged per clip; cosine with each text")
