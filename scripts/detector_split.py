"""Which side of the detector's evaluation a document is on: the one rule every script shares.

A document (a corpus row's group, a file's path) goes to

  'heldout'  never trained on, never used to choose a threshold: the figures that count;
  'calib'    not trained on either: the benign tool outputs here choose the model's threshold;
  'train'    what scripts/detector-train.py fits the model to.

by a hash of its group key, so the split is fixed before any training and the same in every
script (bench/lib/detector-split.mjs computes the same function). Keys are chosen by the caller
so that a split is by source document and by attack template, never by row: every rendering of
one AgentDojo task, every translation of one bastioncorpus attack, every passage of one file
falls on one side.
"""

from __future__ import annotations

import hashlib

SALT = "openclaw-detector-split-v1"
HELDOUT_PERCENT = 30
CALIB_PERCENT = 20

# AgentDojo attack templates held out whole: their renderings are held out for every task.
HELDOUT_TEMPLATES = frozenset({"injecagent", "tool_knowledge", "offensive_email_dos", "swearwords_dos"})


def bucket(key: str) -> int:
    """0..99 from SHA-256 of the salted key (the first four bytes, big-endian, mod 100)."""
    digest = hashlib.sha256(f"{SALT}:{key}".encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "big") % 100


def side(key: str) -> str:
    b = bucket(key)
    if b < HELDOUT_PERCENT:
        return "heldout"
    if b < HELDOUT_PERCENT + CALIB_PERCENT:
        return "calib"
    return "train"
