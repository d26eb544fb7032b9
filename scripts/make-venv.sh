#!/usr/bin/env bash
# Makes a virtual environment with the PyPI packages of a requirements file
# (pinned versions), for make check's Python runs beside Debian's NumPy.
#   scripts/make-venv.sh PYTHON DIR REQUIREMENTS
# Made anew when the requirements file changes; DIR/.installed records
# which file it was made from.
set -euo pipefail
py=$1 dir=$2 req=$3
if [ -f "$dir/.installed" ] && cmp -s "$req" "$dir/.installed"; then
  exit 0
fi
command -v "$py" >/dev/null || { echo "make-venv: no $py on PATH" >&2; exit 1; }
echo "make-venv: $dir from $req (PyPI)"
rm -rf "$dir"
"$py" -m venv "$dir"
"$dir/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req" > "$dir.log" 2>&1 ||
  { tail -20 "$dir.log" >&2; echo "make-venv: pip failed; the whole log is $dir.log" >&2; exit 1; }
cp "$req" "$dir/.installed"
