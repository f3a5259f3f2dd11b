#!/bin/sh
# new-app.sh NAME - start a new hetfarm app from the vscale template.
#
# Copies apps/vscale/ to apps/NAME/ (vscale.c -> NAME.c, vscale_cuda.cu ->
# NAME_cuda.cu, vscale_ref.c -> NAME_ref.c), configs/vscale.ini to
# configs/NAME.ini and tests/test_vscale.c to tests/test_NAME.c, renaming every
# "vscale" to NAME. The Makefile registers any apps/NAME/NAME.c, so the copy
# builds, runs (`build/hetfarm run configs/NAME.ini`) and passes its test as it
# is; then fill in the template functions. Nothing is written unless every file
# could be made: the copies are built in temporary names and moved into place.
set -eu

cd "$(dirname "$0")/.."
name=${1:-}
case "$name" in
    "" ) echo "usage: apps/new-app.sh NAME   (or: make new-app NAME=foo)" >&2; exit 2 ;;
esac
# NAME becomes C identifiers (hf_app_NAME) and file names: keep it simple.
if ! printf '%s\n' "$name" | grep -Eq '^[a-z][a-z0-9_]{0,30}$'; then
    echo "new-app: NAME = '$name': use a lower-case C identifier (a-z, 0-9, _), 1-31 chars" >&2
    exit 2
fi
for f in "apps/$name" "configs/$name.ini" "tests/test_$name.c"; do
    if [ -e "$f" ]; then
        echo "new-app: $f already exists; pick another NAME or remove it" >&2
        exit 1
    fi
done
upper=$(printf '%s' "$name" | tr 'a-z' 'A-Z')

tmp="apps/.new-app.$$"
trap 'rm -rf "$tmp" "configs/.$name.ini.$$" "tests/.test_$name.c.$$"' EXIT INT TERM
mkdir "$tmp"
# Renames contents and names: vscale -> NAME, VSCALE -> NAME in capitals.
copy_renamed() { sed -e "s/vscale/$name/g" -e "s/VSCALE/$upper/g" "$1" > "$2"; }
for src in apps/vscale/*; do
    base=$(basename "$src")
    copy_renamed "$src" "$tmp/$(printf '%s' "$base" | sed "s/vscale/$name/g")"
done
copy_renamed configs/vscale.ini "configs/.$name.ini.$$"
copy_renamed tests/test_vscale.c "tests/.test_$name.c.$$"

mv "$tmp" "apps/$name"
mv "configs/.$name.ini.$$" "configs/$name.ini"
mv "tests/.test_$name.c.$$" "tests/test_$name.c"
trap - EXIT INT TERM

echo "created apps/$name/ ($(ls "apps/$name" | tr '\n' ' '))"
echo "        configs/$name.ini, tests/test_$name.c"
echo "next:   make && build/hetfarm run configs/$name.ini"
echo "        make BUILD=build build/tests/test_$name && build/tests/test_$name"
echo "then fill in create, setup, next_load, run_cpu, verify in apps/$name/$name.c"
