"""The generated world's TempCompass and TVBench: every statement and true candidate read back from the decoded videos,
conflicting videos that are their originals played backwards, and the suite writing them beside the demo's world
(which they leave byte for byte as it is)."""

from __future__ import annotations

import collections
import re
from functools import lru_cache

import decord
import numpy as np
import pytest

from bench.devkit.world import ensure_sample, generate_sample
from bench.devkit.world.stories import TOWARDS, times
from bench.devkit.world.suite import STAMP, WRITERS, chosen
from bench.loaders import load
from world_reader import Reader

NEW = ["tempcompass", "tvbench"]  # written only when asked for (not the demo's world)


@lru_cache(maxsize=None)
def _decoded(path: str) -> tuple[np.ndarray, float]:
    reader = decord.VideoReader(path)
    return reader.get_batch(list(range(len(reader)))).asnumpy(), reader.get_avg_fps()


def _reader(path: str) -> Reader:
    frames, fps = _decoded(path)
    return Reader.of(frames, fps)


def _items(sample, name):
    s = sample[name]
    return load(name, s.data_path, video_root=s.video_root, **s.loader_options)


def test_every_tempcompass_statement_is_true_of_its_video_exactly_when_the_answer_says(sample):
    checked = collections.Counter()
    for item in _items(sample, "tempcompass"):
        if item.labels["format"] == "captioning":
            continue
        reader = _reader(item.clips[0].path)
        for t, text in enumerate(item.texts):
            said = text.removeprefix("Is it true that ").removesuffix("?")
            assert reader.holds(said) == (t in item.truth[0]), (item.item_id, text)
            checked[item.labels["format"]] += 1
    assert set(checked) == {"multi-choice", "yes_no", "caption_matching"}


def test_conflicting_videos_are_their_originals_played_backwards(sample):
    videos = sample["tempcompass"].video_root
    twins = sorted(videos.glob("*_reverse.mp4"))
    assert twins
    for twin in twins:
        original = videos / twin.name.replace("_reverse", "")
        assert np.abs(_decoded(str(twin))[0][::-1].astype(int) - _decoded(str(original))[0]).mean() < 2


NUMBERS = ("one", "two", "three", "four")
# what a TVBench candidate says about its video, as a sentence of the world's grammar (``subject``: the question's
# "the <colour> <shape>", or the shape of Scene Transition's question; ``others``: the other candidates)
SENTENCES = {
    "Action Count": lambda subject, answer, others: f"{subject} jumps exactly {times(int(answer))}",
    "Object Count": lambda subject, answer, others: "there is exactly one shape" if answer == "1" else
    f"there are exactly {NUMBERS[int(answer) - 1]} shapes",
    "Action Sequence": lambda subject, answer, others: f"{answer} jumps before {others[0]} jumps",
    "Action Antonym": lambda subject, answer, others: f"{subject} {answer}",
    "Moving Direction": lambda subject, answer, others: f"{subject} moves {TOWARDS[answer]}",
    "Scene Transition": lambda subject, answer, others: f"the {subject} turns {answer}",
}


def test_every_tvbench_candidate_is_true_of_its_video_exactly_when_it_is_the_answer(sample):
    seen = set()
    for item in _items(sample, "tvbench"):
        reader = _reader(item.clips[0].path)
        found = re.search(r"(the \w+ \w+) (?:jump|do|move)\?|the (\w+) change colour", item.labels["question"])
        subject = found and (found[1] or found[2])
        for t, candidate in enumerate(item.texts):
            others = [c for c in item.texts if c != candidate]
            sentence = SENTENCES[item.subset](subject, candidate, others)
            assert reader.holds(sentence) == (t in item.truth[0]), (item.item_id, sentence)
        seen.add(item.subset)
    assert seen == set(SENTENCES)


def test_the_suite_writes_them_beside_the_demos_world_and_keeps_them(tmp_path):
    assert not any(WRITERS[name].default for name in NEW)
    out = tmp_path / "sample"
    demo = ensure_sample(out)
    assert list(demo) == chosen() and (out / STAMP).read_text().split()[3:] == []
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file() and p.name != STAMP}
    assert list(ensure_sample(out, benchmarks=NEW)) == NEW
    assert (out / STAMP).read_text().split()[3] == ",".join(chosen() + NEW)  # the suite kept what it held
    after = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file() and p.name != STAMP}
    assert {k: v for k, v in after.items() if k in before} == before  # the demo's world, byte for byte
    mtime = (out / STAMP).stat().st_mtime_ns
    assert list(ensure_sample(out)) == list(demo) and (out / STAMP).stat().st_mtime_ns == mtime  # a superset serves
    ensure_sample(out, benchmarks=["tvbench"])
    assert (out / STAMP).stat().st_mtime_ns == mtime
    with pytest.raises(ValueError, match="the generated world writes no 'mvbench'"):
        ensure_sample(out, benchmarks=["mvbench"])


def test_the_full_world_has_ten_times_the_small_ones_questions(sample, tmp_path):
    from test_world import _dry_run

    full, _ = _dry_run(lambda: generate_sample(tmp_path / "full", "full", workers=1, benchmarks=NEW))
    for name in NEW:
        small = load(name, sample[name].data_path, **sample[name].loader_options).counts()
        grown = load(name, full[name].data_path, **full[name].loader_options).counts()
        assert set(grown) == set(small) and all(grown[s] >= 10 * n for s, n in small.items()), (name, grown, small)
