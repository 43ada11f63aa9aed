#!/usr/bin/env bash
# ctest readme_commands: README.md's examples run as written. Every line of its sh blocks that starts with build/
# runs from the source root (build/ read as this build's folder) and must exit 0; its python block runs with the
# binding of python/ and must return an output of the query's shape.
#   tests/check_readme.sh SOURCE_DIR BUILD_DIR PYTHON
set -euo pipefail
src=$1 bin=$2 py=$3
cd "$src"
inside=0 ran=0
while IFS= read -r line; do
  case "$line" in
    '```sh') inside=1; continue ;;
    '```'*) inside=0; continue ;;
  esac
  [ "$inside" = 1 ] || continue
  case "$line" in build/*) ;; *) continue ;; esac
  cmd="$bin/${line#build/}"
  cmd="${cmd%%  #*}" # the comment after the command, two spaces or more before its #
  echo "== ${line%%  #*}"
  if ! eval "$cmd" >"$bin/readme_command.log" 2>&1; then
    tail -20 "$bin/readme_command.log"
    echo "FAIL: $line"
    exit 1
  fi
  ran=$((ran + 1))
done <README.md
[ "$ran" -ge 5 ] || { echo "FAIL: only $ran build/ commands found in README.md"; exit 1; }
awk '/^```python$/ { inside = 1; next } /^```/ { inside = 0 } inside' README.md >"$bin/readme_example.py"
echo 'assert out.shape == q.shape, out.shape; print("== python example: attention_out", out.shape)' \
  >>"$bin/readme_example.py"
IFA_LIBRARY="$bin/libifa.so" PYTHONPATH="$src/python" "$py" "$bin/readme_example.py"
echo "README examples: $ran commands and the python example ran"
