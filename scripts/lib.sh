# Shared helpers of scripts/*: the one list of external commands with their Debian packages,
# package installation, the checks of that list, and timed stages.

# Every external command that a test, script or benchmark of hwsurvey calls, with the Debian 12
# package that provides it. One line per command:
#     COMMAND   PACKAGE   # who calls it
# COMMAND is a name looked up on PATH, or an absolute path: a file the package installs (for
# packages that provide no command of their own: C libraries, sources, or a command that must
# be the one at that path). A package providing several commands has one line per command.
# ensure_packages installs every PACKAGE; check_tools then stops, naming each missing COMMAND
# and its PACKAGE; check_tool_list stops when the sources call a command missing here. Tests
# ask crates/testkit's `tool("COMMAND")`, which reads this list. Add your line when you call a
# new command; keep README.md's set-up text in step.
HWSURVEY_TOOLS='
# the shells, the basics, the clone
bash                        bash                        # scripts/*, crates/testkit/tests/tool_list.rs, crates/cli/tests/completions.rs
sh                          dash                        # crates/cli/tests/run/signals.rs, crates/workloads/benches/peers.rs
mkfifo                      coreutils                   # model/probe/cli/elf tests: a FIFO where a file is expected
groff                       groff-base                  # crates/cli/tests/completions.rs: a manual page as man shows it
kill                        procps                      # crates/cli/tests/run/signals.rs: SIGINT/SIGTERM to a run
chattr                      e2fsprogs                   # crates/cli/tests/run/main.rs: an immutable storage directory
dmesg                       util-linux                  # crates/workloads/src/raid6/kmsg.rs: the kernel raid6 line
taskset                     util-linux                  # crates/workloads/benches/peers.rs: pins the peers
lscpu                       util-linux                  # crates/probe/benches/probe_time.rs: timed beside the probe; crates/cli/tests/snapshot_peers.rs: lscpu --sysroot on snapshots
lstopo-no-graphics          hwloc-nox                   # crates/cli/tests/snapshot_peers.rs: lstopo --input on snapshots
/usr/share/misc/pci.ids     pci.ids                     # crates/probe/src/pci_ids.rs: PCI names at run time (as lspci); crates/probe/tests/pci_names.rs
awk                         mawk                        # scripts/cross-test: test counts
git                         git                         # crates/workloads/build.rs (revision), scripts/fresh-check (clone)
# scripts/fresh-check: a fresh Debian 12 root, bound host directories
debootstrap                 debootstrap                 # scripts/fresh-check: the base root
chroot                      coreutils                   # scripts/fresh-check: the README commands in the root
df                          coreutils                   # scripts/fresh-check: free space before the root is built
mount                       mount                       # scripts/fresh-check: /proc, /sys, /dev, toolchain, ../shared
umount                      mount                       # scripts/fresh-check: on every exit path
findmnt                     util-linux                  # scripts/fresh-check: what is still mounted
# Debian Rust for the cross builds with -Zbuild-std (scripts/cross-test, cargo xtask dist)
/usr/bin/rustc              rustc-web                   # scripts/cross-test, xtask, crates/elf/tests/target_spec_json.rs
/usr/bin/cargo              cargo-web                   # scripts/cross-test, xtask dist
/usr/lib/rustlib/src/rust/library/Cargo.lock rust-web-src # -Zbuild-std: the standard library sources
# aarch64 and sparc64: cross gcc (linker), libc, binutils, qemu-user (runner; .cargo/config.toml)
aarch64-linux-gnu-gcc       gcc-aarch64-linux-gnu       # .cargo/config.toml linker, targets/aarch64.toml
/usr/aarch64-linux-gnu/lib/libc.a libc6-dev-arm64-cross # static aarch64 dist binary
aarch64-linux-gnu-ld        binutils-aarch64-linux-gnu  # the cross linker gcc calls
sparc64-linux-gnu-gcc       gcc-sparc64-linux-gnu       # .cargo/config.toml linker, targets/sparc64.toml
/usr/sparc64-linux-gnu/lib/libc.a libc6-dev-sparc64-cross # static sparc64 dist binary
sparc64-linux-gnu-ld        binutils-sparc64-linux-gnu  # the cross linker gcc calls
qemu-aarch64                qemu-user                   # scripts/cross-test, xtask dist, scripts/examples
qemu-sparc64                qemu-user                   # scripts/cross-test, xtask dist, scripts/examples
# peers of the benchmarks (crates/*/benches, scripts/bench-smoke)
cc                          gcc                         # crates/workloads/benches/peers.rs: the C pointer chase
likwid-bench                likwid                      # crates/workloads/benches/peers.rs: Triad peer
sysbench                    sysbench                    # crates/workloads/benches/peers.rs: block read/write peer
fio                         fio                         # crates/workloads/benches/storage_peers.rs: 4 KiB random read peer
/usr/include/isa-l/raid.h   libisal-dev                 # crates/workloads/benches/raid_peers.rs: ISA-L pq_gen peer (header + libisal.so)
# the HTML report printed to PDF and one PNG per page (scripts/html-to-pdf-png, crates/cli/tests/compare/printed_reports.rs)
chromium                    chromium                    # scripts/html-to-pdf-png: print to PDF
pdftoppm                    poppler-utils               # scripts/html-to-pdf-png: a PNG per page
pdfinfo                     poppler-utils               # scripts/html-to-pdf-png, crates/cli/tests/compare/printed_reports.rs: page count
pdftotext                   poppler-utils               # scripts/html-to-pdf-png, crates/cli/tests/compare/printed_reports.rs: the text
convert-im6.q16             imagemagick                 # scripts/html-to-pdf-png: blank-page check, 256-colour PNG
# guest machines under qemu-system (scripts/guest, tests/guests): the kernels and busybox-static
# of each architecture are fetched with apt-get download and unpacked, never installed (the arm64 ones
# need the dpkg architecture: ensure_arm64_arch)
qemu-system-x86_64          qemu-system-x86             # tests/guests: the x86 guests
qemu-system-aarch64         qemu-system-arm             # tests/guests: the arm64 guest
cpio                        cpio                        # tests/guests/src/initramfs.rs: the initramfs (newc)
apt-get                     apt                         # tests/guests/src/packages.rs: apt-get download
apt-cache                   apt                         # tests/guests/src/packages.rs: the kernel package of linux-image-<arch>
dpkg-deb                    dpkg                        # tests/guests/src/packages.rs: unpacks the downloads
# raw-device refusal (crates/workloads/build.rs links libblkid.a; crates/testkit/src/blockdev.rs
# makes each file system on image files and loop devices; crates/workloads/src/storage/blkid.rs
# falls back to wipefs / blkid -p where libblkid is not linked)
/usr/lib/x86_64-linux-gnu/libblkid.a libblkid-dev       # crates/workloads/build.rs: static libblkid, x86_64
/usr/lib/aarch64-linux-gnu/libblkid.a libblkid-dev:arm64 # crates/workloads/build.rs: static libblkid, aarch64
wipefs                      util-linux                  # crates/workloads/src/storage/blkid.rs: fallback signature check
blkid                       util-linux                  # crates/workloads/src/storage/blkid.rs: fallback signature check
losetup                     util-linux                  # crates/testkit/src/blockdev.rs: loop devices
mkfs.minix                  util-linux                  # crates/testkit/src/blockdev.rs
mkswap                      util-linux                  # crates/testkit/src/blockdev.rs
mkfs.ext4                   e2fsprogs                   # crates/testkit/src/blockdev.rs
partx                       util-linux                  # crates/cli/tests/storage_devices.rs: a partition of a loop device over the device
e2fsck                      e2fsprogs                   # crates/cli/tests/storage_devices.rs: the file system over a refused device is intact
unshare                     util-linux                  # crates/workloads/tests/storage_in_use.rs: a file system mounted only in another mount namespace
mkfs.xfs                    xfsprogs                    # crates/testkit/src/blockdev.rs
mkfs.btrfs                  btrfs-progs                 # crates/testkit/src/blockdev.rs
mkfs.vfat                   dosfstools                  # crates/testkit/src/blockdev.rs
mksquashfs                  squashfs-tools              # crates/testkit/src/blockdev.rs
mkfs.erofs                  erofs-utils                 # crates/testkit/src/blockdev.rs
pvcreate                    lvm2                        # crates/testkit/src/blockdev.rs: an LVM PV
mdadm                       mdadm                       # crates/testkit/src/blockdev.rs: an MD member (--create with the md driver; --examine checks the hand-built superblock)
# the fleet playbook (fleet/site.yml): scripts/fleet-setup installs ansible-core from PyPI into
# target/fleet-venv; crates/cli/tests/fleet_ansible.rs runs the playbook on this machine
/usr/bin/python3            python3                     # scripts/fleet-setup: the interpreter of the virtual environment
/usr/lib/python3.11/ensurepip/__init__.py python3-venv  # scripts/fleet-setup: python3 -m venv with pip (python3-venv pulls python3.11-venv)
python3                     python3                     # tests/guests/src/serve.rs: byte-compiles the Python standard library of the serving guests (compileall)
mkdir                       coreutils                   # fleet/roles/hwsurvey: the chassis lock on the controller
# the fleet playbook over SSH on guests (tests/guests/tests/fleet.rs): a key pair per run, the ssh
# connection of Ansible to dropbear in the guests (loopback ports forwarded by qemu)
ssh-keygen                  openssh-client              # tests/guests/src/serve.rs: a key pair per test run
ssh                         openssh-client              # tests/guests/tests/fleet.rs: the ssh connection of ansible-playbook to the guests
'

# Prints the list's rows as "COMMAND PACKAGE", one a line (comments and blank lines dropped).
tool_rows() {
  local line cmd pkg
  while IFS= read -r line; do
    line=${line%%#*}
    read -r cmd pkg _ <<<"$line" || true
    if [[ -n "$cmd" ]]; then echo "$cmd $pkg"; fi
  done <<<"$HWSURVEY_TOOLS"
  return 0 # (a blank last line must not make the list's reader fail under set -e)
}

# The Debian packages of the list, each once, plus "$@".
tool_packages() {
  { tool_rows | awk '{print $2}'; printf '%s\n' "$@"; } | awk 'NF && !seen[$0]++'
}

# dpkg's arm64 architecture, so that apt-get download of linux-image-<abi>-arm64:arm64 and
# busybox-static:arm64 resolves (scripts/guest). Idempotent; installs nothing.
ensure_arm64_arch() {
  dpkg --print-foreign-architectures | grep -qx arm64 && return 0
  echo "== adding dpkg architecture arm64 (for the arm64 guest's kernel and busybox)"
  local sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  $sudo dpkg --add-architecture arm64
  $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq
}

# Installs the list's packages (and "$@") that are not installed yet. Idempotent; needs root or
# sudo the first time; waits for another apt/dpkg to finish instead of failing on its lock.
ensure_packages() {
  ensure_arm64_arch
  local missing=() p
  while IFS= read -r p; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
  done < <(tool_packages "$@")
  if ((${#missing[@]})); then
    echo "== installing Debian packages: ${missing[*]}"
    local sudo=""
    [[ $(id -u) -ne 0 ]] && sudo="sudo"
    $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
      --no-install-recommends "${missing[@]}"
  fi
}

# Whether COMMAND of the list is there: an executable file on PATH (a shell builtin of the same
# name does not count: tests run the program), or the file when it is an absolute path.
tool_present() {
  if [[ $1 == /* ]]; then [[ -e $1 ]]; else [[ -n $(type -P "$1") ]]; fi
}

# Checks that every command of the list is there; prints one line per missing command, naming
# its Debian package, and fails when any is missing.
check_tools() {
  local cmd pkg n=0 missing=0
  while read -r cmd pkg; do
    n=$((n + 1))
    if ! tool_present "$cmd"; then
      echo "missing command: $cmd (Debian package $pkg: apt-get install $pkg; listed in scripts/lib.sh)" >&2
      missing=$((missing + 1))
    fi
  done < <(tool_rows)
  if ((missing)); then
    echo "== $missing of the $n commands of scripts/lib.sh are missing" >&2
    return 1
  fi
  echo "== all $n commands of scripts/lib.sh are there"
}

# The external commands the sources call by name: Command::new("X"), have("X"), tool("X"),
# which("X") in crates/ and xtask/; `require_tools X Y` in scripts/; linkers and runners of
# .cargo/config.toml. Prints "COMMAND FILE", one a line.
called_commands() {
  local root=${1:-.}
  (
    cd "$root" || exit 1
    grep -rHoE --include='*.rs' '(Command::new|\bhave|\btool|\bwhich)\("[^"]+"\)' crates xtask tests 2>/dev/null |
      sed -E 's/^([^:]+):.*\("([^"]+)"\)$/\2 \1/'
    grep -rHoE --include='*.rs' 'const RUSTC: &str = "[^"]+"' crates xtask tests 2>/dev/null |
      sed -E 's/^([^:]+):.*"([^"]+)"$/\2 \1/'
    grep -HE '^(linker|runner) = ' .cargo/config.toml 2>/dev/null |
      sed -E 's/^([^:]+):[a-z]+ = "([^" ]+).*$/\2 \1/'
    grep -rHE '^\s*require_tools ' scripts 2>/dev/null |
      while IFS=: read -r file line; do
        for c in ${line#*require_tools}; do echo "$c $file"; done
      done
  ) | grep -vE '^(hwsurvey|cargo) ' | sort -u
}

# Fails, naming each, when the sources call a command that the list does not have (a line
# removed from the list, or a new command nobody added); names the package that provides it
# on this machine when dpkg knows.
check_tool_list() {
  local root=${1:-.} cmd file listed bad=0 path pkg
  listed=" $(tool_rows | awk '{printf "%s ", $1}')"
  while read -r cmd file; do
    [[ $listed == *" $cmd "* ]] && continue
    pkg=""
    path=$cmd
    [[ $cmd == /* ]] || path=$(command -v "$cmd" 2>/dev/null || true)
    [[ -n $path ]] && pkg=$(dpkg -S "$(realpath "$path")" 2>/dev/null | head -1 | cut -d: -f1 || true)
    echo "unlisted command: $cmd (called in $file; Debian package ${pkg:-unknown here}): add a line '$cmd ${pkg:-PACKAGE} # who calls it' to scripts/lib.sh" >&2
    bad=$((bad + 1))
  done < <(called_commands "$root")
  if ((bad)); then
    echo "== $bad commands called by the sources are not in scripts/lib.sh's list" >&2
    return 1
  fi
}

# For scripts: stops with the package to install when one of the commands is missing, and
# declares them to check_tool_list (which fails when one is not in the list).
require_tools() {
  local c pkg row_cmd row_pkg
  for c in "$@"; do
    tool_present "$c" && continue
    pkg=""
    while read -r row_cmd row_pkg; do
      if [[ $row_cmd == "$c" ]]; then pkg=$row_pkg; fi
    done < <(tool_rows)
    echo "missing command: $c (Debian package ${pkg:-not in scripts/lib.sh}: ./scripts/test installs the list)" >&2
    return 1
  done
}

STAGES=()
OVER_BUDGET=()
RUN_START=${RUN_START:-$SECONDS}

# Each stage's budget in seconds on an idle 2-core machine (about twice what it took on an idle
# fresh machine; docs/testing.md, "Stage budgets"). A stage over its budget fails the run when
# the host was idle during it (other processes used under 10 % of its CPUs); on a busy host it
# is named with the share the others took, and the run goes on. A stage without a budget here
# is only timed.
declare -A STAGE_BUDGET_S=(
  ["native: fmt"]=120
  ["native: clippy"]=900
  ["fleet: ansible-core in target/fleet-venv (scripts/fleet-setup)"]=600
  ["native: tests"]=900
  ["native: every benchmark's short form (scripts/bench-smoke)"]=900
  ["e2k fallback: check without default features"]=600
  ["cross: aarch64 test suites under qemu-aarch64"]=1300
  ["cross: sparc64 test suites under qemu-sparc64"]=1300
  ["dist: static x86_64/aarch64/sparc64 binaries + ELF checks"]=500
  ["e2k: descriptor, target JSON schema, ELF header checks"]=300
  ["guests: x86_64 and arm64 kernels under qemu-system (tests/guests)"]=1200
)

# CPU seconds spent by every process of the host so far (user, nice, system, irq, softirq of
# /proc/stat's `cpu` line), and by this shell's waited-for children (bash's `times`).
host_cpu_s() {
  awk -v hz="$(getconf CLK_TCK)" '/^cpu / { printf "%.1f\n", ($2 + $3 + $4 + $7 + $8) / hz }' /proc/stat
}
children_cpu_s() {
  # fields 16 and 17 of /proc/PID/stat: cutime, cstime (after the command name, which may hold
  # spaces: counted from its closing parenthesis)
  awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.1f\n", ($14 + $15) / hz }' "/proc/$$/stat"
}

stage() {
  local name=$1
  shift
  echo "== stage: $name"
  local start=$SECONDS host0 own0
  host0=$(host_cpu_s)
  own0=$(children_cpu_s)
  "$@"
  local took=$((SECONDS - start)) host1 own1 others_pct budget=${STAGE_BUDGET_S[$name]:-}
  host1=$(host_cpu_s)
  own1=$(children_cpu_s)
  # the others' share of the host's CPU time while the stage ran, in percent
  others_pct=$(awk -v h="$host1" -v h0="$host0" -v o="$own1" -v o0="$own0" -v t="$took" \
    -v n="$(nproc)" 'BEGIN { x = (h - h0) - (o - o0); if (x < 0) x = 0
      printf "%d\n", (t > 0 ? 100 * x / (t * n) : 0) }')
  local line
  line=$(printf '%-66s %5d s' "$name" "$took")
  [[ -n $budget ]] && line+=$(printf '  (budget %d s)' "$budget")
  if [[ -n $budget ]] && ((took > budget)); then
    if ((others_pct < 10)); then
      line+="  OVER BUDGET on an idle host"
      OVER_BUDGET+=("$name: $took s, budget $budget s (other processes took ${others_pct} % of the CPUs)")
    else
      line+="  over budget; host busy elsewhere ${others_pct} %"
    fi
  fi
  STAGES+=("$line")
  echo "== stage done: $name (${took} s; host busy elsewhere ${others_pct} %)"
}

# Prints every stage's time and the total; fails when a stage went over its budget on an idle
# host (the stage's own result stands: it ran to its end).
summary() {
  echo "== stage times"
  printf '%s\n' "${STAGES[@]}"
  printf '%-66s %5d s\n' "total" $((SECONDS - RUN_START))
  if ((${#OVER_BUDGET[@]})); then
    printf '== over budget on an idle host: %s\n' "${OVER_BUDGET[@]}" >&2
    return 1
  fi
}
