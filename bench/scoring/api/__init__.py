"""Remote models behind an OpenAI-compatible chat-completions endpoint (GPT, Gemini, Claude, vLLM, SGLang): how a
request is written (:mod:`~bench.scoring.api.messages`), sent with retries and caps (:mod:`~bench.scoring.api.client`),
read as answer-token probabilities or as text through the paper's parser (:mod:`~bench.scoring.api.answers`), and
what a run would cost before anything is sent (:mod:`~bench.scoring.api.estimate`). The backend that ties them to a
run is :mod:`bench.scoring.backends.api`."""
