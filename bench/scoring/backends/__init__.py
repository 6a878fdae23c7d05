"""Model backends, one per family (see :mod:`bench.scoring.families`): each loads a model by hub id or local folder
and answers batches of one kind of request (:mod:`bench.scoring.requests`)."""
