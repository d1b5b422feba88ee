#!/bin/sh
# tests/fresh-root.sh — the README's two commands on a fresh machine.
#
# Builds a new Debian bookworm root with debootstrap that holds make, gcc, git
# and python3 only (and what they depend on), clones this repository's HEAD
# into it, and runs `make demo` and then `make test` in it as root: they must
# install everything else themselves (scripts/deps.sh). Slow (debootstrap, the
# package downloads, the whole suite), so .ci/run runs it only with FRESH=1.
#
# Needs root (debootstrap, mount, chroot). The mirror is the Debian one this
# machine's apt uses (/etc/apt/sources.list*), or $MIRROR. The root is made
# under $FRESH_DIR (default /var/tmp) and removed at the end unless KEEP=1.
# Only committed work is tested: the clone is of HEAD.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
CHROOT=$(command -v chroot || echo /usr/sbin/chroot)
SUITE=bookworm
[ "$(id -u)" = 0 ] || { echo "fresh-root: needs root (debootstrap, mount, chroot)" >&2; exit 2; }
t_start=$(date +%s)
stamp() { echo "== fresh-root [$(( $(date +%s) - t_start )) s] $*"; }

# the Debian mirror this machine uses for $SUITE: one-line .list entries or deb822 .sources
if [ -z "${MIRROR:-}" ]; then
  MIRROR=$(
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
      [ -f "$f" ] && sed -n 's/^deb \(\[[^]]*\] \)\{0,1\}\([^ ]*\) '$SUITE' .*/\2/p' "$f"
    done
    for f in /etc/apt/sources.list.d/*.sources; do
      [ -f "$f" ] && awk -v suite=$SUITE '
        /^[ \t]*$/ { if (uri != "" && ok && deb) print uri; uri = ""; ok = 0; deb = 1; next }
        /^Types:/ { deb = ($0 ~ /[ \t]deb([ \t]|$)/) }
        /^URIs:/ { uri = $2 }
        /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == suite) ok = 1 }
        /^Enabled: *no/ { deb = 0 }
        END { if (uri != "" && ok && deb) print uri }' deb=1 "$f"
    done | head -1)
fi
[ -n "$MIRROR" ] || { echo "fresh-root: no Debian $SUITE mirror in /etc/apt/sources.list*; set MIRROR=" >&2; exit 2; }

HEADREV=$(git -C "$TOP" rev-parse HEAD)
BRANCH=$(git -C "$TOP" rev-parse --abbrev-ref HEAD)
git -C "$TOP" diff --quiet HEAD || echo "fresh-root: note: uncommitted changes in $TOP are not tested (the clone is of HEAD)"

if ! command -v debootstrap >/dev/null 2>&1; then
  stamp "installing debootstrap"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq --no-install-recommends debootstrap >/dev/null 2>&1 ||
    { apt-get update -qq && apt-get install -y -qq --no-install-recommends debootstrap >/dev/null; }
fi

mkdir -p "${FRESH_DIR:-/var/tmp}"
ROOT=$(mktemp -d "${FRESH_DIR:-/var/tmp}/fluxcc-fresh.XXXXXX")
chmod 755 "$ROOT"    # it is /: mktemp's 0700 would lock out every user but root (apt's _apt too)
LOG=$ROOT.debootstrap.log
mounted=
cleanup() {
  rc=$?
  # reverse order; lazily if something still holds one
  for m in $mounted; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
  if grep -q " $ROOT/" /proc/mounts; then
    echo "fresh-root: $ROOT still has mounts; not removing it" >&2
  elif [ "${KEEP:-}" = 1 ]; then
    echo "fresh-root: kept $ROOT (KEEP=1)"
  else
    rm -rf --one-file-system "$ROOT" "$LOG"
  fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

stamp "debootstrap $SUITE from $MIRROR into $ROOT (make, gcc, git, python3)"
if ! debootstrap --variant=minbase --include=make,gcc,git,python3 "$SUITE" "$ROOT" "$MIRROR" >"$LOG" 2>&1; then
  tail -30 "$LOG" >&2; echo "fresh-root: debootstrap failed ($LOG)" >&2; exit 1
fi
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
# the chroot has what was asked for and none of what the project needs
for c in make gcc git python3; do "$CHROOT" "$ROOT" sh -c "command -v $c" >/dev/null || { echo "fresh-root: no $c in the root" >&2; exit 1; }; done
for c in bison flex clang c++; do
  if "$CHROOT" "$ROOT" sh -c "command -v $c" >/dev/null; then echo "fresh-root: $c is already in the root" >&2; exit 1; fi
done

mnt() { mount "$@"; eval "mounted=\"\${$#} \$mounted\""; }
mnt -t proc proc "$ROOT/proc"
mnt -t sysfs sys "$ROOT/sys"
mnt --bind /dev "$ROOT/dev"
mnt --bind /dev/pts "$ROOT/dev/pts"
mnt -t tmpfs shm "$ROOT/dev/shm"

stamp "git clone $TOP ($BRANCH at $(git -C "$TOP" rev-parse --short=12 HEAD)) into /root/fluxcc"
git clone -q --no-hardlinks "$TOP" "$ROOT/root/fluxcc"
git -C "$ROOT/root/fluxcc" checkout -q "$HEADREV"

inroot() {
  env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 TERM=dumb \
    "$CHROOT" "$ROOT" sh -c "cd /root/fluxcc && $1"
}
# a user who is neither root nor a sudoer gets the one command to run, and nothing changes
stamp "make demo as an unprivileged user (no sudo): must stop with the command to run"
cp -a "$ROOT/root/fluxcc" "$ROOT/tmp/fluxcc-user" && chown -R 65534:65534 "$ROOT/tmp/fluxcc-user"
if env -i HOME=/tmp PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 "$CHROOT" --userspec=65534:65534 "$ROOT" \
     sh -c 'cd /tmp/fluxcc-user && make demo' >"$ROOT/tmp/user.log" 2>&1; then
  cat "$ROOT/tmp/user.log"; echo "fresh-root: make demo as a plain user succeeded without the packages" >&2; exit 1
fi
sed 's/^/  | /' "$ROOT/tmp/user.log"
grep -q '^  sudo apt-get .*install -y --no-install-recommends .*bison' "$ROOT/tmp/user.log" ||
  { echo "fresh-root: no command to run in its output" >&2; exit 1; }
rm -rf "$ROOT/tmp/fluxcc-user"

status=0
stamp "make demo"
t0=$(date +%s)
inroot "make demo" || status=1
t_demo=$(( $(date +%s) - t0 ))
stamp "make demo: exit $status after $t_demo s"
[ $status = 0 ] || exit 1

stamp "scripts/deps.sh demo with everything installed"
inroot 'start=$(date +%s%N); sh scripts/deps.sh demo && echo "silent, $(( ($(date +%s%N) - start) / 1000000 )) ms"'

stamp "make test"
t0=$(date +%s)
echo 0 > "$ROOT/tmp/test.rc"
{ inroot "make test" 2>&1 || echo $? > "$ROOT/tmp/test.rc"; } | tee "$ROOT/tmp/test.log"
status=$(cat "$ROOT/tmp/test.rc")
t_test=$(( $(date +%s) - t0 ))
stamp "make test: exit $status after $t_test s"
grep -E '^(FAIL|SKIP) ' "$ROOT/tmp/test.log" | sed 's/^/  /' || true
stamp "scripts/deps.sh demo and test with everything installed"
inroot 'start=$(date +%s%N); sh scripts/deps.sh demo && sh scripts/deps.sh test && echo "both silent, $(( ($(date +%s%N) - start) / 1000000 )) ms"'
stamp "done: make demo $t_demo s, make test $t_test s, total $(( $(date +%s) - t_start )) s; exit $status"
exit $status
