#!/bin/sh
# embed.sh ARRAY ROOT FILE...: writes a C table {path below ROOT, text} of the
# files to stdout. fluxcc is built with the runtime and templates/ embedded
# this way, so an emitted project gets them without fluxcc's source tree.
arr=$1 root=$2
shift 2
echo "static const struct { const char *name, *text; } $arr[] = {"
for f; do
  printf '  {"%s",\n' "${f#"$root"/}"
  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/?/\\?/g' -e 's/^/   "/' -e 's/$/\\n"/' "$f"
  echo '  },'
done
echo '};'
