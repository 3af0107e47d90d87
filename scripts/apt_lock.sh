# Waiting for the Debian package locks, sourced by scripts/setup.sh (and its test).
#
# apt and dpkg hold their locks as fcntl() record locks, not flock(), so the probe asks the kernel with F_GETLK
# (python3, which setup needs anyway): it sees the lock whoever holds it, needs only read access and never takes it.
# A lock file this user cannot read (setup without root, through sudo) counts as free: apt-get's own timeout waits.
# apt-get also gets -o DPkg::Lock::Timeout, so a lock taken between the probe and apt-get is waited for as well.

P2W_APT_LOCKS="${P2W_APT_LOCKS:-/var/lib/dpkg/lock-frontend /var/lib/dpkg/lock /var/lib/apt/lists/lock /var/cache/apt/archives/lock}"
P2W_APT_LOCK_TIMEOUT="${P2W_APT_LOCK_TIMEOUT:-600}"
P2W_APT_LOCK_REPORT_EVERY="${P2W_APT_LOCK_REPORT_EVERY:-15}"

# apt_lock_holder PATH: prints the pid holding a write-conflicting lock on PATH; nothing when it is free or absent.
apt_lock_holder() {
  [ -e "$1" ] || return 0
  python3 - "$1" <<'EOF'
import fcntl, struct, sys
try:
    with open(sys.argv[1], "rb") as f:
        probe = struct.pack("hhqqi4x", fcntl.F_WRLCK, 0, 0, 0, 0)
        kind, _, _, _, pid = struct.unpack("hhqqi4x", fcntl.fcntl(f, fcntl.F_GETLK, probe))
except OSError:
    sys.exit(0)
if kind != fcntl.F_UNLCK:
    print(pid)
EOF
}

# wait_for_apt_locks [PATH...]: returns once no lock is held (default: P2W_APT_LOCKS), saying on stderr every
# P2W_APT_LOCK_REPORT_EVERY seconds who holds which; fails after P2W_APT_LOCK_TIMEOUT seconds naming the lock.
wait_for_apt_locks() {
  local locks=("$@") start=$SECONDS reported=-1 waited path pid held
  [ ${#locks[@]} -gt 0 ] || read -r -a locks <<<"$P2W_APT_LOCKS"
  while :; do
    waited=$((SECONDS - start)) held=""
    for path in "${locks[@]}"; do
      pid="$(apt_lock_holder "$path")"
      if [ -n "$pid" ]; then held="$path (pid $pid: $(cat "/proc/$pid/comm" 2>/dev/null || echo '?'))"; break; fi
    done
    if [ -z "$held" ]; then
      [ "$reported" -lt 0 ] || echo "setup: the package lock is free after ${waited} s" >&2
      return 0
    fi
    if [ "$waited" -ge "$P2W_APT_LOCK_TIMEOUT" ]; then
      echo "setup: error: $held still holds the package lock after ${waited} s (P2W_APT_LOCK_TIMEOUT)" >&2
      return 1
    fi
    if [ "$reported" -lt 0 ] || [ $((waited - reported)) -ge "$P2W_APT_LOCK_REPORT_EVERY" ]; then
      echo "setup: waiting for the package lock: $held holds it (${waited} s of ${P2W_APT_LOCK_TIMEOUT} s)" >&2
      reported=$waited
    fi
    sleep 1
  done
}

# apt_get ARGS...: non-interactive apt-get (as root, or through $SUDO) once the locks are free, itself waiting for
# a lock taken meanwhile. Messages go to stderr, so they show when the caller silences apt-get's output.
apt_get() {
  wait_for_apt_locks
  ${SUDO:-} env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout="$P2W_APT_LOCK_TIMEOUT" "$@"
}
