#!/bin/sh
# tests/check-layout.sh — the layout map (docs/layout.md, the first ``` block)
# names every file of compiler/, runtime/ and templates/, and only files that
# exist. Checked: the files at the top of each of the three folders, and the
# files at the top of each subfolder the map names (" cuda/", " cuda/emu/");
# a subfolder the map does not name is reported too.
#
# The map's form: a line that starts with a folder ("compiler/") opens it; a
# line that starts with one space and a subfolder (" cuda/emu/") opens that
# subfolder of the last folder; from the 13th column on, the names up to the
# first two spaces are files (one or more, separated by spaces or commas), the
# rest is description; a line with spaces up to the 13th column and beyond
# continues a description. Exit 0 when map and tree agree, else 1 with one
# line per difference.
cd "$(dirname "$0")/.." || exit 2
MAP=docs/layout.md
[ -f "$MAP" ] || { echo "check-layout: $MAP is missing"; exit 2; }
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

# what the map names: one path a line (folder/[subfolder/]file), and the subfolders
awk -v files="$tmp/named" -v dirs="$tmp/dirs" '
  /^```/ { if (inmap) exit; inmap = 1; next }
  !inmap { next }
  /^[^ ]/ {
    split($0, w, " ")
    top = (w[1] == "compiler/" || w[1] == "runtime/" || w[1] == "templates/") ? w[1] : ""
    sub_ = ""
  }
  /^ [^ ]/ && top != "" {
    split($0, w, " ")
    sub_ = w[1]
    if (sub_ !~ /\/$/) { print "check-layout: " FILENAME ": not a folder: " sub_ > "/dev/stderr"; bad = 1 }
    print top sub_ > dirs
  }
  top != "" && substr($0, 13, 1) != " " && length($0) >= 13 {
    field = substr($0, 13)
    i = index(field, "  ")
    if (i) field = substr(field, 1, i - 1)
    n = split(field, w, /[ ,]+/)
    for (k = 1; k <= n; k++) if (w[k] != "") print top sub_ w[k] > files
  }
  END { exit bad }
' "$MAP" || exit 2
touch "$tmp/named" "$tmp/dirs"
[ -s "$tmp/named" ] || { echo "check-layout: no map found in $MAP"; exit 2; }

# what the tree holds: tracked and untracked files git does not ignore (or,
# outside a git checkout, every file), at the top of each checked folder
list() {  # list DIR: the files directly in DIR
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files --cached --others --exclude-standard -- "$1" | while read -r f; do
      rest=${f#"$1"}
      case "$rest" in */*) continue ;; esac
      [ -f "$f" ] && printf '%s\n' "$f"
    done
  else
    find "$1" -maxdepth 1 -type f | sed 's|^\./||'
  fi
}
subdirs() {  # subdirs DIR: the folders directly in DIR that hold a file
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files --cached --others --exclude-standard -- "$1" | while read -r f; do
      [ -f "$f" ] || continue
      rest=${f#"$1"}
      case "$rest" in */*) printf '%s%s/\n' "$1" "${rest%%/*}" ;; esac
    done | sort -u
  else
    find "$1" -mindepth 1 -maxdepth 1 -type d | sed 's|^\./||; s|$|/|'
  fi
}
{
  for d in compiler/ runtime/ templates/; do list "$d"; done
  sort -u "$tmp/dirs" | while read -r d; do [ -d "$d" ] && list "$d"; done
} | sort -u > "$tmp/tree"
sort -u "$tmp/named" > "$tmp/named.sorted"

out=$(
  comm -23 "$tmp/tree" "$tmp/named.sorted" | sed "s|^|$MAP: the map does not name |"
  comm -13 "$tmp/tree" "$tmp/named.sorted" | sed "s|^|$MAP: the map names a file that does not exist: |"
  # a folder at any depth under the three that the map does not name
  for d in compiler/ runtime/ templates/; do
    { subdirs "$d"; sort -u "$tmp/dirs" | while read -r s; do [ -d "$s" ] && subdirs "$s"; done; } 
  done | sort -u | while read -r s; do
    grep -qxF "$s" "$tmp/dirs" || echo "$MAP: the map does not name the folder $s"
  done
  sort -u "$tmp/dirs" | while read -r s; do
    [ -d "$s" ] || echo "$MAP: the map names a folder that does not exist: $s"
  done
)
[ -z "$out" ] && exit 0
printf '%s\n' "$out"
exit 1
