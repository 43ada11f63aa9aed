#!/usr/bin/env bash
# ctest include_layers: the library's includes point down docs/architecture.md's layers only, and no op includes
# another op's files: core (with op_kernel/*.h, the kernels' argument tables) < tiling < op_host/runtime <
# templates < op_host/common < the ops (op_host/ifa, append, merge) < the registry (op_host/registry*.c);
# include/ifa/ is the public API every layer may include.
#   tests/check_layers.sh SOURCE_DIR
set -euo pipefail
cd "$1"
layer() {
  case "$1" in
    include/ifa/*) echo 0 ;;
    core/* | op_kernel/*.h) echo 1 ;;
    tiling/*) echo 2 ;;
    op_host/runtime/*) echo 3 ;;
    templates/*) echo 4 ;;
    op_host/common/*) echo 5 ;;
    op_host/ifa/* | op_host/append/* | op_host/merge/*) echo 6 ;;
    op_host/registry*) echo 7 ;;
    *) echo 99 ;;
  esac
}
op_of() { case "$1" in op_host/ifa/* | op_host/append/* | op_host/merge/*) echo "${1%/*}" ;; *) echo "" ;; esac; }
bad=0 files=0
for f in include/ifa/*.h op_kernel/*.h core/*.[ch] tiling/*.[ch] op_host/*.c op_host/*/*.[ch] templates/*.[ch]; do
  [ -f "$f" ] || continue
  files=$((files + 1))
  own=$(layer "$f")
  [ "$own" = 99 ] && { echo "FAIL: $f is in no layer"; bad=1; continue; }
  while IFS= read -r inc; do
    to=$(layer "$inc")
    if [ "$to" = 99 ]; then
      echo "FAIL: $f includes \"$inc\", in no layer of the library"
      bad=1
    elif [ "$to" -gt "$own" ]; then
      echo "FAIL: $f (layer $own) includes \"$inc\" (layer $to): an include up a layer"
      bad=1
    elif [ -n "$(op_of "$inc")" ] && [ "$(op_of "$inc")" != "$(op_of "$f")" ]; then
      echo "FAIL: $f includes \"$inc\", another op's file"
      bad=1
    fi
  done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f" | sed 's|^ifa/|include/ifa/|')
done
[ "$bad" = 0 ] && echo "include layers: $files files, every include down a layer or within one"
exit "$bad"
