"""Runs an mxp command with --json and checks what it printed: exit status
0, stdout one JSON object and nothing else (strict JSON: no NaN or
Infinity), its "command" member naming the command, and the keys given.

usage: python3 check_json.py COMMAND KEY,KEY,... MXP ARG..."""
import json
import subprocess
import sys


def strict(constant):
    raise ValueError(f"not JSON: {constant}")


def main():
    command, keys, argv = sys.argv[1], sys.argv[2].split(","), sys.argv[3:]
    r = subprocess.run(argv, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(argv)}: exit status {r.returncode}\n{r.stderr}")
    try:
        doc = json.loads(r.stdout, parse_constant=strict)
    except ValueError as e:
        sys.exit(f"{' '.join(argv)}: stdout is not one JSON object: {e}\n{r.stdout[:2000]}")
    if not isinstance(doc, dict) or doc.get("command") != command:
        sys.exit(f"expected an object with \"command\": \"{command}\", got {r.stdout[:200]}")
    missing = [k for k in keys if k and k not in doc]
    if missing:
        sys.exit(f"missing keys {missing} in {sorted(doc)}")
    print(f"{command}: one JSON object with {len(doc)} members")


if __name__ == "__main__":
    main()
