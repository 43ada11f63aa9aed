#!/usr/bin/env bash
# ctest docs_commands: the examples of docs/*.md run as written. Every line of their sh blocks that starts with
# build/ runs from the source root, each build/ in it read as this build's folder (outputs land there too), and
# must exit 0; each python block runs whole with the binding of python/ over this build's library. Lines of other
# tools (scripts/, a GPU's) and comments are the reader's.
#   tests/check_docs_commands.sh SOURCE_DIR BUILD_DIR PYTHON
set -euo pipefail
src=$1 bin=$2 py=$3
cd "$src"
ran=0
for doc in docs/*.md; do
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
    if ! eval "${cmd//build\//$bin/}" >"$bin/docs_command.log" 2>&1; then
      tail -20 "$bin/docs_command.log"
      echo "FAIL: $doc: $line"
      exit 1
    fi
    ran=$((ran + 1))
  done <"$doc"
done
[ "$ran" -ge 10 ] || { echo "FAIL: only $ran build/ commands found in docs/"; exit 1; }
blocks=0
for doc in docs/*.md; do
  awk '/^```python$/ { inside = 1; n++; next } /^```/ { inside = 0 } inside { print > (out "_" n ".py") }' \
    out="$bin/docs_example_$(basename "$doc" .md)" "$doc"
  for f in "$bin/docs_example_$(basename "$doc" .md)"_*.py; do
    [ -f "$f" ] || continue
    echo "== $doc: python block $(basename "$f")"
    if ! IFA_LIBRARY="$bin/libifa.so" PYTHONPATH="$src/python" "$py" "$f" >"$bin/docs_command.log" 2>&1; then
      tail -20 "$bin/docs_command.log"
      echo "FAIL: $doc: its python block"
      exit 1
    fi
    rm -f "$f"
    blocks=$((blocks + 1))
  done
done
echo "docs examples: $ran commands and $blocks python blocks ran"
