#!/usr/bin/env bash
# ctests readme_commands and docs_commands: the examples of markdown files run as written. Every line of their sh
# blocks that starts with build/ runs from the source root, each build/ in it read as this build's folder (outputs
# land there too), and must exit 0; each python block runs whole with the binding of python/ over this build's
# library and must exit 0. Lines of other tools (scripts/, a GPU's) and comments are the reader's.
#   tests/check_doc_examples.sh SOURCE_DIR BUILD_DIR PYTHON LABEL MIN_COMMANDS FILE.md...
# Prints "LABEL: N commands and M python blocks ran" when every one passed.
set -euo pipefail
src=$1 bin=$2 py=$3 label=$4 min=$5
shift 5
cd "$src"
ran=0 blocks=0
for doc in "$@"; do
  inside=0
  while IFS= read -r line; do
    case "$line" in
      '```sh') inside=1; continue ;;
      '```'*) inside=0; continue ;;
    esac
    [ "$inside" = 1 ] || continue
    case "$line" in build/*) ;; *) continue ;; esac
    cmd="${line%%  #*}" # the comment after the command, two spaces or more before its #
    echo "== $doc: $cmd"
    if ! eval "${cmd//build\//$bin/}" >"$bin/doc_example.log" 2>&1; then
      tail -20 "$bin/doc_example.log"
      echo "FAIL: $doc: $line"
      exit 1
    fi
    ran=$((ran + 1))
  done <"$doc"
  name=$(basename "$doc" .md)
  rm -f "$bin/doc_example_${name}"_*.py
  awk '/^```python$/ { inside = 1; n++; next } /^```/ { inside = 0 } inside { print > (out "_" n ".py") }' \
    out="$bin/doc_example_$name" "$doc"
  for f in "$bin/doc_example_${name}"_*.py; do
    [ -f "$f" ] || continue
    echo "== $doc: python block $(basename "$f")"
    if ! IFA_LIBRARY="$bin/libifa.so" PYTHONPATH="$src/python" "$py" "$f" >"$bin/doc_example.log" 2>&1; then
      tail -20 "$bin/doc_example.log"
      echo "FAIL: $doc: its python block"
      exit 1
    fi
    blocks=$((blocks + 1))
  done
done
[ "$ran" -ge "$min" ] || { echo "FAIL: only $ran build/ commands found in $*"; exit 1; }
echo "$label: $ran commands and $blocks python blocks ran"
