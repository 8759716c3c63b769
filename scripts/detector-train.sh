#!/usr/bin/env bash
# Rebuilds the enhanced detector's learned stage (src/security/model.bin and model.json) from
# the registries' data, or checks that rebuilding gives the committed bytes.
#
#   bash scripts/detector-train.sh            # writes src/security/model.bin, model.json
#   bash scripts/detector-train.sh --check    # rebuilds into a temporary directory, compares
#
# Uses the venv of scripts/detector-eval.sh (target/detector-venv: bastioncorpus 0.6.0, agentdojo
# 0.1.35) plus numpy 2.4.6, writes the corpus (scripts/detector-corpus.py), then trains
# (scripts/detector-train.py: about a minute on one core). Reads node_modules (npm install), the
# crates Cargo.lock names in cargo's registry (cargo fetch), target/detector-registry and
# /usr/share/doc; model.json records a checksum of every input list, so a machine whose inputs
# differ is told so by the diff of model.json rather than by a silent change.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=target/detector-venv
pip_opts=(--quiet --disable-pip-version-check)
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
have() { "$venv/bin/python" -m pip show --disable-pip-version-check "$1" 2>/dev/null | grep -qx "Version: $2"; }
have bastioncorpus 0.6.0 || "$venv/bin/python" -m pip install "${pip_opts[@]}" bastioncorpus==0.6.0
if ! have agentdojo 0.1.35; then
  "$venv/bin/python" -m pip install "${pip_opts[@]}" agentdojo==0.1.35 ||
    "$venv/bin/python" -m pip install "${pip_opts[@]}" --no-deps agentdojo==0.1.35
fi
"$venv/bin/python" -c 'import yaml' 2>/dev/null || "$venv/bin/python" -m pip install "${pip_opts[@]}" "pyyaml>=6,<7"
have numpy 2.4.6 || "$venv/bin/python" -m pip install "${pip_opts[@]}" numpy==2.4.6

# OpenClaw's documentation is one of the benign inputs (target/openclaw-host).
bash scripts/install-openclaw.sh
"$venv/bin/python" scripts/detector-corpus.py target/detector-corpus
"$venv/bin/python" scripts/detector-train.py "$@"
