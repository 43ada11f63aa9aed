"""Prints every registered op's definition as the Markdown docs/registry.md ends with (one JSON entry per
line). With --check FILE: exits 1 unless FILE contains exactly that text (keeps the docs in step)."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ifa  # noqa: E402


def markdown():
    lines = []
    for op in ifa.ops():
        d = ifa.definition(op)
        lines += ["### " + op, "", "```json",
                  '{"name": %s, "doc": %s,' % (json.dumps(d["name"]), json.dumps(d["doc"], ensure_ascii=False))]
        for key in ("inputs", "outputs", "attrs", "dtype_combinations"):
            items = d[key]
            lines.append(' "%s": [' % key + ("" if items else "],"))
            for i, it in enumerate(items):
                lines.append("   " + json.dumps(it, ensure_ascii=False) + ("," if i < len(items) - 1 else ""))
            if items:
                lines.append(" ]" + ("," if key != "dtype_combinations" else ""))
        lines += ["}", "```", ""]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    text = markdown()
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        with open(sys.argv[2], encoding="utf-8") as f:
            if text not in f.read():
                sys.exit("%s: its definitions differ from the registry's; regenerate with python/dump_registry.py"
                         % sys.argv[2])
    else:
        sys.stdout.write(text)
