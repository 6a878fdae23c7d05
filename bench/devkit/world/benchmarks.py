"""Each benchmark's files of the generated world, written in that benchmark's own released format (see
``shared/BENCHMARKS.md``), with every subtest, plus a ``labels.csv`` naming each item's foil type.

One writer per benchmark, ``write_<name>(folder, size, seed=0)``: :data:`bench.devkit.world.suite.WRITERS` names it
and the place of its annotation files and videos inside ``folder``. ``size`` is "small" (a few items per
subtest, for fast tests) or "full" (about a hundred per subtest). Every item's story is drawn from its own generator
(:func:`bench.devkit.world.draw.rng_for`), so the same seed gives the same bytes.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Callable

import numpy as np

from bench.devkit.world import draw, stories
from bench.devkit.world.draw import pick, rng_for
from bench.devkit.world.files import Labels, count, placed, seconds, sentence, video, write_csv, write_json
from bench.devkit.world.scenes import SHAPES, SIZE
from bench.devkit.world.stories import Claim, Story, a, times
from bench.scoring.prompts import PROMPTS
from bench.videoio import write_video

# The mPLUG-Owl conversation VideoCon wraps every description in (src/prepare_data_for_inference.py, verbatim).
VIDEOCON_CONVERSATION = ("The following is a conversation between a curious human and AI assistant. The assistant "
                         "gives helpful, detailed, and polite answers to the user's questions.\nHuman: <|video|>\n"
                         "Human: " + PROMPTS["videocon-entail"] + "\nAI: ")
GAP_SECONDS = 2.0  # Vinoground's concatenated videos: the two clips separated by a 2-second black frame
QUVA_FPS = 30  # ViLMA's bin/normalize_fps re-encodes QUVA videos to 30 fps; pts windows index those frames
VELOCITI_EVENT_SECONDS = 2  # VELOCITI: each video is a run of 2-s events Ev1, Ev2, ...
FPS = 10  # every other video
FULL = 100  # items per subtest of the full world


# ViLMA ------------------------------------------------------------------------------------------------------------

HUMAN_YES = {"foil": 0, "caption": 1, "other": 0}
HUMAN_NO = {"foil": 1, "caption": 0, "other": 0}


def _votes(caption: int) -> dict[str, int]:
    """Three AMT votes, ``caption`` of them for the caption (the validity filter needs >= 2)."""
    return {"foil": 3 - caption, "caption": caption, "other": 0}


def _proficiency(claim: Claim, style: Callable[[str], str] = sentence, valid: bool = True, **fields) -> dict:
    return {"caption": style(claim.true), "foils": [style(f) for f in claim.false], **fields,
            "human": HUMAN_YES if valid else HUMAN_NO}


def _vilma_validity(rng: np.random.Generator, size: str, index: int, invalid_main: int | None = None,
                    invalid_proficiency: int | None = None) -> tuple[dict, bool]:
    """(mturk votes, proficiency valid): in the small world exactly the given indices fail, in the full world
    about one item in six fails either way."""
    if size == "small":
        return _votes(1 if index == invalid_main else 3 - index % 2), index != invalid_proficiency
    return _votes(int(rng.choice([1, 2, 3], p=[0.12, 0.3, 0.58]))), bool(rng.random() > 0.06)


def _vilma_label(labels: Labels, stem: str, key: str, main: Claim, proficiency: Claim) -> None:
    labels.add(f"{stem}/{key}", main.foil_type)
    labels.add(f"{stem}/{key}/proficiency", proficiency.foil_type)


VILMA_SMALL_COUNTS = (1, 2, 3)  # the easy subtest's captions, the difficult one's foils
VILMA_MAX_COUNT = 10  # T_c: ViLMA discards counts above it


def _vilma_counting(videos: Path, size: str, seed: int, level: str, labels: Labels) -> tuple[dict, dict]:
    """QUVA-style counting: 30-fps videos of a shape jumping once a second, several windows per video, each item
    counting the jumps inside its window (the same items in frame indices and in seconds, as released). As ViLMA
    made them (paper, section 3 and appendix C.2; so do the released files): the easy subtest's captions count 1 to 3
    and its foils a number above, up to the threshold T_c = 10; the difficult subtest's captions count more and its
    foils say 1 to 3."""
    pts, sec = {}, {}
    n_videos = count(size, 2 if level == "easy" else 1, FULL // 3)
    n_windows = count(size, 2, 3)
    base = 0 if level == "easy" else 500
    stems = (f"counting-{level}-spelled-pts", f"counting-{level}-spelled-sec")
    above_small = VILMA_SMALL_COUNTS[-1] + 1  # the difficult subtest's smallest count, the easy one's smallest foil
    item = 0
    for v in range(base, base + n_videos):
        rng = rng_for(seed, "vilma", f"counting-{level}", v)
        actor, = draw.actors(rng, 1)
        length = int(rng.integers(4, 7) if level == "easy" else rng.integers(6, 9))
        x = float(rng.uniform(40, 88))
        story = stories.jumps(actor, length, [], x, QUVA_FPS * length, QUVA_FPS)  # one jump a second
        name = f"{v:03d}_{actor[0]}_{actor[1]}_jumps.mp4"
        video(videos, f"quva/normalized_videos/{name}", story.scene)
        counts = VILMA_SMALL_COUNTS if level == "easy" else range(above_small, length)
        windows = set()
        while len(windows) < n_windows:  # every window leaves a jump outside it
            n = pick(rng, counts)
            first = int(rng.integers(0, length - n + 1))
            windows.add((first, first + n))
        for first, end in sorted(windows):
            n = end - first
            foil = pick(rng, range(above_small, VILMA_MAX_COUNT + 1) if level == "easy" else VILMA_SMALL_COUNTS)
            start_pts, end_pts = first * QUVA_FPS, end * QUVA_FPS
            key = f"counting-{level}-{v:03d}-{start_pts:04d}-{end_pts:04d}-{n}-{foil}-0-s"
            mturk, valid = _vilma_validity(rng, size, item, invalid_main=3 if level == "easy" else None)
            claim = Claim(f"{a(actor)} jumps exactly {times(n)}", [f"{a(actor)} jumps exactly {times(foil)}"],
                          "count")
            record = {
                "dataset": "QUVA", "original_split": "test", "dataset_idx": f"{v:03d}", "youtube_id": None,
                "video_file": name, "caption": claim.true + ".", "foils": [claim.false[0] + "."],
                "foiling_methods": ["sampling"], "template": f"{a(actor)} jumps exactly <number> times.",
                "template_id": 0, "class": n, "classes_foil": [foil],
                "proficiency": _proficiency(story.claims["type"], lambda text: text + ".", valid),
                "normalized": True, "digits_or_spelling": "spelling", "mturk": mturk,
            }
            pts[key] = {**record, "start_time": start_pts, "end_time": end_pts, "time_unit": "pts"}
            sec[key] = {**record, "start_time": round(start_pts / QUVA_FPS, 4),
                        "end_time": round(end_pts / QUVA_FPS, 4), "time_unit": "sec"}
            for stem in stems:
                _vilma_label(labels, stem, key, claim, story.claims["type"])
            item += 1
    return pts, sec


def _vilma_relations(videos: Path, size: str, seed: int, labels: Labels) -> dict:
    """Something-Something v2 spatial relations (WebM named by ``dataset_idx``)."""
    records = {}
    for i in range(count(size, 2, FULL)):
        rng = rng_for(seed, "vilma", "relations", i)
        story = draw.relation(rng, pick(rng, ("left", "right", "above", "below")) if size == "full"
                              else ("left", "above")[i])
        idx = str(9000 + i)
        video(videos, f"something-something-v2/{idx}.webm", story.scene, codec="libvpx")
        claim = story.claims["relation"]
        where = next(w for w, phrase in stories.RELATIONS.items() if f" is {phrase} " in claim.true)
        mturk, valid = _vilma_validity(rng, size, i, invalid_proficiency=1)
        records[str(i)] = {
            "dataset": "something-something-v2", "original_split": "val", "dataset_idx": idx,
            "linguistic_phenomena": "spatial-relations", "youtube_id": None, "video_file": idx, "start_time": None,
            "end_time": None, "time_unit": "sec", "caption": claim.true, "foils": claim.false,
            "class": where, "classes_foil": [stories.OPPOSITE_RELATION[where]], "foiling_methods": ["sample scene"],
            "proficiency": _proficiency(story.claims["presence"], str, valid, proficiency_test="noun"),
            "mturk": mturk,
        }
        _vilma_label(labels, "relations", str(i), claim, story.claims["presence"])
    return records


def _state_fields(story: Story, shape: str) -> tuple[dict, dict[str, tuple[str, str]]]:
    """ViLMA's ``change_of_state`` record and the (class, foil class) of each change-state subtest."""
    pre, post = (story.claims[k].true.rsplit(" is ", 1)[1] for k in ("prestate", "poststate"))
    verb = story.claims["action"].true.rsplit(f"{shape} ", 1)[1]
    inverse = story.claims["action"].false[0].rsplit(f"{shape} ", 1)[1]
    fields = {"verb": verb, "verb-hypernym": "change", "object": story.claims["action"].true.split(f" {verb}")[0],
              "pre-state": pre, "post-state": post, "state-inverse": inverse}
    classes = {"action": (verb, inverse), "prestate": (pre, post), "poststate": (post, pre), "inverse": (verb, inverse)}
    return fields, classes


def _vilma_change_state(videos: Path, size: str, seed: int, labels: Labels) -> dict[str, dict]:
    """Change of state (colour or size): the same videos (COIN-style YouTube ones, STAR ones) in the four subtest
    files."""
    files: dict[str, dict] = {f"change-state-{kind}": {} for kind in ("action", "prestate", "poststate", "inverse")}
    for i in range(count(size, 2, FULL)):
        rng = rng_for(seed, "vilma", "change-state", i)
        story = draw.change(rng) if i % 3 != 2 else draw.resize(rng)
        shape = story.scene.actors[0].shape
        if i % 2 == 0:
            ytid = f"smplcoin{i:03d}"
            video(videos, f"youtube/{ytid}.mp4", story.scene)
            where = {"dataset": "coin", "dataset_idx": ytid, "youtube_id": ytid, "video_file": None}
        else:
            charades = f"S{i:04d}"
            video(videos, f"star/{charades}.mp4", story.scene)
            where = {"dataset": "star", "dataset_idx": f"Sequence_T1_{i:04d}", "youtube_id": None,
                     "video_file": charades}
        change_fields, classes = _state_fields(story, shape)
        mturk, valid = _vilma_validity(rng, size, i)
        for kind, (cls, foil_cls) in classes.items():
            claim = story.claims[kind]
            stem, key = f"change-state-{kind}", f"change-state-{kind}-{i:04d}"
            files[stem][key] = {
                "dataset": where["dataset"], "original_split": "test", "dataset_idx": where["dataset_idx"],
                "dataset_subidx": i, "linguistic_phenomena": "change-of-state", "youtube_id": where["youtube_id"],
                "video_file": where["video_file"], "start_time": 0.0, "end_time": float(seconds(story.scene)),
                "time_unit": "sec", "original_sentence": story.claims["action"].true,
                "change_of_state": change_fields, "caption": sentence(claim.true),
                "foils": [sentence(f) for f in claim.false], "class": cls, "classes_foil": [foil_cls],
                "proficiency": _proficiency(story.claims["object"], valid=valid, proficiency_test="object",
                                            mask_target=shape, predicted_word=_shape(story.claims["object"].false[0])),
                "mturk": mturk,
            }
            _vilma_label(labels, stem, key, claim, story.claims["object"])
    return files


def _shape(text: str) -> str:
    """The shape a claim names (a foil's: the word it changed)."""
    return next(word for word in text.split() if word in SHAPES)


def _verb(text: str) -> str:
    """The verb of a sentence of the world's grammar (the class ViLMA names)."""
    return next(word for word in text.split() if word in VERBS)


VERBS = {"moves", "jumps", "grows", "shrinks", "turns", "chases", "appears"}


def _vilma_situations(videos: Path, size: str, seed: int, labels: Labels) -> dict[str, dict]:
    """VidSitu situation awareness: action replacement (two foils, or one) and actor swapping."""
    files: dict[str, dict] = {"SRL_Action_Replacement_Top_1000": {}, "SRL_Actor_Swapping": {}}
    n = count(size, 2, FULL)
    plans = [("SRL_Action_Replacement_Top_1000", "action_replacement", i) for i in range(n)]
    plans += [("SRL_Actor_Swapping", "actor_swapping", n + i) for i in range(n)]
    for stem, phenomenon, i in plans:
        rng = rng_for(seed, "vilma", stem, i)
        if phenomenon == "action_replacement":
            kind = ("move", "jumps", "change", "resize")[i % 4]
            story = draw.KINDS[kind](rng)
            claim = story.claims["action" if kind in ("move", "jumps") else "verb"]
        else:
            story = (draw.chase if i % 2 == 0 else draw.cross)(rng)
            claim = story.claims["swap" if i % 2 == 0 else "compositionality"]
        ytid = f"smplsitu{i:03d}{i % 10}"  # VidSitu ids: an 11-character YouTube id plus a digit
        video(videos, f"youtube/{ytid}.mp4", story.scene)
        end = seconds(story.scene)
        mturk, valid = _vilma_validity(rng, size, i)
        files[stem][str(i)] = {
            "dataset": "VidSitu", "original_split": "training", "dataset_idx": "-", "linguistic_phenomena": phenomenon,
            "youtube_id": ytid, "video_file": f"{ytid}_0_{end}", "start_time": 0, "end_time": end, "time_unit": "sec",
            "caption": sentence(claim.true), "foils": [sentence(f) for f in claim.false],
            "foiling_methods": ["sample scene"],
            "proficiency": _proficiency(story.claims["presence"], valid=valid, proficiency_test="noun"),
            "class": _verb(claim.true), "classes_foil": [_verb(f) for f in claim.false], "mturk": mturk,
        }
        _vilma_label(labels, stem, str(i), claim, story.claims["presence"])
    return files


def _vilma_rare_actions(videos: Path, size: str, seed: int, labels: Labels) -> dict[str, dict]:
    """RareAct: object replacement (noun foils) and action replacement (verb foils)."""
    files: dict[str, dict] = {"rare-actions-noun-foils": {}, "rare-actions-verb-foils": {}}
    for part, offset in (("noun", 0), ("verb", 500)):
        for i in range(count(size, 2, FULL)):
            rng = rng_for(seed, "vilma", f"rare-actions-{part}", i)
            story = (draw.jumps if i % 2 == 0 else draw.move)(rng)
            claim = story.claims["object" if part == "noun" else "verb"]
            actor = story.scene.actors[0]
            ytid = f"smplrare{offset + i:03d}"
            video(videos, f"youtube/{ytid}.mp4", story.scene)
            key = f"actions-{part}-active-{i:04d}"
            mturk, valid = _vilma_validity(rng, size, i)
            files[f"rare-actions-{part}-foils"][key] = {
                "dataset": "RareAct", "original_split": "test", "dataset_idx": offset + i,
                "linguistic_phenomena": "actions", "youtube_id": ytid, "video_file": None, "start_time": 0,
                "end_time": seconds(story.scene), "time_unit": "sec", "caption": claim.true, "foils": claim.false,
                "foil_masked_pos": [part], "foiling_method": ["sample scene"],
                "proficiency": _proficiency(story.claims["presence"], str, valid), "mturk": mturk,
                "class": actor.shape if part == "noun" else _verb(claim.true),
                "classes_foil": [_shape(claim.false[0]) if part == "noun" else _verb(claim.false[0])],
            }
            _vilma_label(labels, f"rare-actions-{part}-foils", key, claim, story.claims["presence"])
    return files


def write_vilma(root: Path, size: str = "small", seed: int = 0) -> None:
    """ViLMA: ``data/<subtest>.json`` (all thirteen subtest files) and videos under ``videos/{quva/normalized_videos,
    something-something-v2,star,youtube}``."""
    data, videos = root / "data", root / "videos"
    labels = Labels()
    files: dict[str, dict] = {}
    for level in ("easy", "hard"):
        pts, sec = _vilma_counting(videos, size, seed, level, labels)
        files[f"counting-{level}-spelled-pts"], files[f"counting-{level}-spelled-sec"] = pts, sec
    files["relations"] = _vilma_relations(videos, size, seed, labels)
    files.update(_vilma_change_state(videos, size, seed, labels))
    files.update(_vilma_situations(videos, size, seed, labels))
    files.update(_vilma_rare_actions(videos, size, seed, labels))
    for stem, records in files.items():
        write_json(data / f"{stem}.json", records)
    labels.write(root)


# VITATECS ---------------------------------------------------------------------------------------------------------

# aspect -> (story drawer, claim kind, items in the small world, in the full world)
VITATECS_ASPECTS: dict[str, tuple[Callable[[np.random.Generator], Story], str, int, int]] = {
    "Direction": (lambda rng: pick(rng, (draw.move, draw.cross))(rng), "direction", 1, 3 * FULL),
    "Intensity": (lambda rng: draw.move(rng, pace=pick(rng, ("quick", "slow"))), "intensity", 2, FULL),
    "Sequence": (draw.sequence, "sequence", 1, FULL),
    "Localization": (lambda rng: draw.jumps(rng, side=True), "localization", 1, FULL),
    "Compositionality": (draw.cross, "compositionality", 1, FULL),
    "Type": (lambda rng: pick(rng, (draw.move, draw.jumps))(rng), "type", 1, FULL),
}


def write_vitatecs(root: Path, size: str = "small", seed: int = 0) -> None:
    """VITATECS: ``data/<Aspect>.jsonl`` (MSR-VTT and VATEX names alternating), videos ``videos/<src>/<name>``."""
    labels = Labels()
    n = 0
    for aspect, (drawer, kind, small, full) in VITATECS_ASPECTS.items():
        lines = []
        for i in range(count(size, small, full)):
            story = drawer(rng_for(seed, "vitatecs", aspect, i))
            if n % 2 == 0:
                source, name = "MSRVTT", f"video{7010 + n}.mp4"
            else:
                source, name = "VATEX", f"smplvtx{n:04d}_{0:06d}_{seconds(story.scene):06d}.mp4"
            video(root / "videos", f"{source}/{name}", story.scene)
            claim = story.claims[kind]
            lines.append(json.dumps({"src_dataset": source, "video_name": name, "caption": claim.true,
                                     "counterfactual": claim.false[0], "aspect": aspect}))
            labels.add(f"{aspect}/{i + 1}", claim.foil_type)
            n += 1
        (root / "data").mkdir(parents=True, exist_ok=True)
        (root / "data" / f"{aspect}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    labels.write(root)


# VELOCITI ---------------------------------------------------------------------------------------------------------

VELOCITI_TESTS = ("agent_bind", "agent_random", "action_bind", "action_adv", "action_manner", "chrono", "coref",
                  "control")


def write_velociti(root: Path, size: str = "small", seed: int = 0) -> None:
    """VELOCITI's current release as CSV (``video_id,test_name,event,pos,neg,in_subset``), videos
    ``videos/<video_id>.mp4`` made of 2-s events. The small world asks each test once over two videos, the full one
    every test of every video; a ``control`` negative describes another video (one whose mover is not in this one)."""
    n = VELOCITI_EVENT_SECONDS * FPS
    episodes = []
    for v in range(count(size, 2, FULL)):
        story = draw.episode(rng_for(seed, "velociti", v), n)
        video_id = f"v_smplvel{v:04d}_seg_0_{seconds(story.scene)}"
        video(root / "videos", f"{video_id}.mp4", story.scene)
        episodes.append((video_id, story))
    if size == "small":
        plan = [(t % 2, test) for t, test in enumerate(VELOCITI_TESTS)]
    else:
        plan = [(v, test) for v in range(len(episodes)) for test in VELOCITI_TESTS]
    labels = Labels()
    rows = []
    for v, test in plan:
        video_id, story = episodes[v]
        claim = story.claims[test]
        neg = _control(story, [s for _, s in episodes[v + 1:] + episodes[:v]], seed, v) if test == "control" \
            else claim.false[0]
        rows.append([video_id, test, claim.when, sentence(claim.true), sentence(neg), len(rows) % 2 == 0])
        labels.add(f"{test}/{video_id}/{claim.when}/0", claim.foil_type)
    write_csv(root / "velociti.csv", ["video_id", "test_name", "event", "pos", "neg", "in_subset"], rows)
    labels.write(root)


def _control(story: Story, others: list[Story], seed: int, v: int) -> str:
    """The positive caption of another video (VELOCITI's control negative) whose mover is not in ``story`` (so it is
    false here): the next such video of the world, else a further episode drawn only for its caption. The same test's
    caption (not a longer one of another test), so that no wording tells the control's positive from its negative."""
    present = {(actor.colours[0], actor.shape) for actor in story.scene.actors}
    extra = (draw.episode(rng_for(seed, "velociti", "control", v, k)) for k in itertools.count())
    return next(other.true("control") for other in itertools.chain(others, extra)
                if (other.scene.actors[0].colours[0], other.scene.actors[0].shape) not in present)


# VideoCon ---------------------------------------------------------------------------------------------------------

# misalignment -> (story drawers, claim kind, items in the small world, in the full world); the full world has more
# of the foil types the other benchmarks have few of (attribute, relation, count, order)
VIDEOCON_MISALIGNMENTS: dict[str, tuple[tuple[Callable, ...], str, int, int]] = {
    "object": ((draw.move, draw.jumps), "object", 1, FULL),
    "action": ((draw.move, draw.jumps), "type", 1, FULL),
    "attribute": ((draw.jumps, draw.move, draw.resize, draw.sequence, draw.relation), "attribute", 1, 22 * FULL // 10),
    "relation": ((draw.relation,), "relation", 1, 22 * FULL // 10),
    "hallucination": ((draw.move,), "hallucination", 1, 6 * FULL // 10),
    "counting": ((draw.crowd,), "shapes", 1, 12 * FULL // 10),
    "flip": ((draw.sequence,), "before", 2, 16 * FULL // 10),
}


def _videocon_core(root: Path, size: str, seed: int, labels: Labels) -> None:
    rows = []
    for misalignment, (drawers, kind, small, full) in VIDEOCON_MISALIGNMENTS.items():
        for k in range(count(size, small, full)):
            i = len(rows)
            rng = rng_for(seed, "videocon", misalignment, k)
            story = drawers[k % len(drawers)](rng)
            source = "tempo" if misalignment == "flip" else ("msr-vtt", "vatex")[i % 2]
            ytid = f"smplvcon{i:03d}"
            path = {"msr-vtt": f"msr-vtt/TrainValVideo/video{3000 + i}.mp4",
                    "vatex": f"k600/val/{ytid}_{0:06d}_{seconds(story.scene):06d}.mp4",
                    "tempo": f"tempo/videos/{1500 + i}.mp4"}[source]
            video(root / "videos", path, story.scene)
            claim = story.claims[kind]
            rows.append([path, source, sentence(claim.true), sentence(claim.false[0]),
                         "" if source == "tempo" else ytid, "test", misalignment])
            labels.add(f"llm/{i}", claim.foil_type)
    write_csv(root / "data" / "videocon_llm_entailment.csv",
              ["videopath", "source", "caption", "neg_caption", "youtube_key", "split", "misalignment"], rows)
    human_rows = []
    for i in range(count(size, 2, FULL)):
        rng = rng_for(seed, "videocon", "human", i)
        story, kind = (draw.cross(rng), "compositionality") if i % 2 == 0 else (draw.chase(rng), "swap")
        name = f"v_smplanet{i:03d}.mp4"
        video(root / "videos", name, story.scene)
        claim = story.claims[kind]
        human_rows.append([f"https://example.com/videocon/activitynet/{name}", sentence(claim.true),
                           sentence(claim.false[0]),
                           sentence(f"in the video {claim.true}, whereas the description says {claim.false[0]}"),
                           i % 4 == 0])
        labels.add(f"human/{i}", claim.foil_type)
    write_csv(root / "data" / "videocon_human.csv", ["video_url", "caption", "neg_caption", "nle", "hard"],
              human_rows)


def _videocon_ssv2(root: Path, size: str, seed: int, labels: Labels) -> None:
    """SSv2-Temporal: every video against every template caption (``match`` = the video's own)."""
    n = count(size, 1, 8)
    plans = [draw.move(rng_for(seed, "videocon", "ssv2", d, k), direction=d)
             for k in range(n) for d in draw.DIRECTIONS]
    captions = [story.true("ssv2") for story in plans[:len(draw.DIRECTIONS)]]
    rows = []
    for v, story in enumerate(plans):
        name = f"videos/{104000 + v}.avi"
        video(root / "videos", name, story.scene, codec="mpeg4")
        rows += [[name, VIDEOCON_CONVERSATION.format(caption=sentence(c, stop="")), int(c == story.true("ssv2"))]
                 for c in captions]
    write_csv(root / "data" / "eval_ssv2_temporal.csv", ["videopath", "caption", "match"], rows)
    labels.add("ssv2_temporal", "direction")


def _videocon_atp_hard(root: Path, size: str, seed: int, labels: Labels) -> None:
    """ATP-Hard: the NExT-QA questions, their statements, and the per-option entailment file (5 rows a question).
    The videos' jump counts run through the count questions' answers (one to five) in turn."""
    n_videos = count(size, 2, FULL // 2)
    videos = {}
    for v in range(n_videos):
        vid = str(5000000001 + v)
        videos[vid] = draw.episode(rng_for(seed, "videocon", "atp_hard", v), 2 * FPS, count=1 + v % 5)
        video(root / "videos", f"0001/{vid}.mp4", videos[vid].scene)
    if size == "small":
        plans = [(list(videos)[0], "TN"), (list(videos)[0], "TP"), (list(videos)[1], "TC"), (list(videos)[1], "TP")]
    else:
        plans = [(vid, qtype) for vid in videos for qtype in ("TN", "TP", "TC")]
    questions, statements, evals = [], [], []
    for q, (vid, qtype) in enumerate(plans):
        claim = videos[vid].claims[qtype]
        answer = (q + 1) % 5  # where the true option goes; the foils keep their order around it
        order = list(range(1, 5))
        order.insert(answer, 0)
        options = [([claim.true] + claim.false)[k] for k in order]
        short = [claim.answers[k] for k in order]
        questions.append([vid, videos[vid].scene.frames, SIZE, SIZE, claim.question, answer, q, qtype, *short])
        statements.append([vid, claim.question, answer, *(sentence(s) for s in options)])
        evals += [[f"/data/nextqa/NExTVideo/0001/{vid}.mp4", claim.question, answer, k,
                   VIDEOCON_CONVERSATION.format(caption=sentence(s))] for k, s in enumerate(options)]
        labels.add(f"atp_hard/{q}", claim.foil_type)
    data = root / "data"
    write_csv(data / "nextqa-atphard.csv", ["video", "frame_count", "width", "height", "question", "answer", "qid",
                                            "type", "a0", "a1", "a2", "a3", "a4"], questions)
    write_csv(data / "nextqa-atphard-statements.csv", ["vid_id", "question", "answer", "s0", "s1", "s2", "s3", "s4"],
              statements)
    write_csv(data / "eval-nextqa-atphard.csv", ["videopath", "question", "answer", "option", "caption"], evals)


def write_videocon(root: Path, size: str = "small", seed: int = 0) -> None:
    """VideoCon: the core entailment CSV, the human set, SSv2-Temporal and the ATP-Hard trio under ``data/``,
    videos under ``videos/`` as each file resolves them."""
    labels = Labels()
    _videocon_core(root, size, seed, labels)
    _videocon_ssv2(root, size, seed, labels)
    _videocon_atp_hard(root, size, seed, labels)
    labels.write(root)


# Vinoground -------------------------------------------------------------------------------------------------------

# pair kind (draw.PAIRS) -> (major, minor)
VINOGROUND_KINDS: dict[str, tuple[str, str]] = {
    "order": ("action", ""),
    "relation": ("object", "spatial"),
    "state": ("action", "cyclical"),
    "direction": ("viewpoint", ""),
    "actor": ("action", "interaction"),
    "size": ("object", "contextual"),
}


def write_vinoground(root: Path, size: str = "small", seed: int = 0) -> None:
    """Vinoground: ``vinoground.csv``, the text- and video-score JSONs, ``vinoground_videos/<i>_{pos,neg}.mp4`` and
    ``vinoground_videos_concated/<i>.mp4`` (pos clip, 2 s of black, neg clip)."""
    kinds = list(VINOGROUND_KINDS)[:4] if size == "small" else list(VINOGROUND_KINDS)
    rows, text_q, video_q = [], [], []
    labels = Labels()
    for i in range(count(size, 4, 40 * len(kinds))):
        kind = kinds[i % len(kinds)]
        pos, neg, claim_kind = draw.pair(rng_for(seed, "vinoground", i), kind)
        major, minor = VINOGROUND_KINDS[kind]
        pos_cap, neg_cap = pos.true(claim_kind), neg.true(claim_kind)  # each the other's foil
        video(root, f"vinoground_videos/{i}_pos.mp4", pos.scene)
        video(root, f"vinoground_videos/{i}_neg.mp4", neg.scene)
        first, second = placed(pos.scene).render(), placed(neg.scene).render()
        gap = np.zeros((int(GAP_SECONDS * pos.scene.fps),) + first.shape[1:], np.uint8)
        write_video(root / f"vinoground_videos_concated/{i}.mp4", np.concatenate([first, gap, second]), pos.scene.fps)
        length = seconds(pos.scene)
        rows.append([i, major, minor, f"smplvino{i:03d}p", 0, length, pos_cap, f"smplvino{i:03d}n", 0, length,
                     neg_cap])
        for side, gt, caption in (("pos", "A", pos_cap), ("neg", "B", neg_cap)):
            text_q.append({"idx": f"{i}_{side}", "video_name": f"vinoground_videos/{i}_{side}.mp4",
                           "question": PROMPTS["vinoground-text"].format(option_a=pos_cap, option_b=neg_cap),
                           "GT": gt})
            video_q.append({"idx": f"{i}_{side}", "video_name": f"vinoground_videos_concated/{i}.mp4",
                            "question": PROMPTS["vinoground-video"].format(caption=caption), "GT": gt})
        labels.add(str(i), pos.claims[claim_kind].foil_type)
    write_csv(root / "vinoground.csv", ["index", "major", "minor", "pos_vid", "pos_start", "pos_end", "pos_cap",
                                        "neg_vid", "neg_start", "neg_end", "neg_cap"], rows)
    write_json(root / "vinoground_textscore.json", text_q)
    write_json(root / "vinoground_videoscore.json", video_q)
    labels.write(root)
