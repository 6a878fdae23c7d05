"""A whole study in one command: a study file (:mod:`bench.study.plan`) scored run by run into one runs folder,
resumable as a whole, then reported (:mod:`bench.study.execute`)."""
