# Shared helpers of scripts/*: package installation and timed stages.

# Debian packages the tests need. Keep in sync with README.md.
HWSURVEY_PACKAGES=(
  rustc-web cargo-web rust-web-src
  gcc-aarch64-linux-gnu libc6-dev-arm64-cross binutils-aarch64-linux-gnu
  gcc-sparc64-linux-gnu libc6-dev-sparc64-cross binutils-sparc64-linux-gnu
  qemu-user
  # peer tools of crates/bench/benches/peers.rs (likwid-bench, sysbench) and of storage.iops (fio)
  likwid sysbench fio
  # the HTML report printed to PDF and one PNG per page (crates/cli/tests/compare.rs, scripts/examples)
  chromium poppler-utils
)

ensure_packages() {
  local missing=()
  for p in "${HWSURVEY_PACKAGES[@]}" "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    echo "== installing Debian packages: ${missing[*]}"
    local sudo=""
    [[ $(id -u) -ne 0 ]] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
}

STAGES=()
stage() {
  local name=$1
  shift
  echo "== stage: $name"
  local start=$SECONDS
  "$@"
  local took=$((SECONDS - start))
  STAGES+=("$(printf '%-60s %5d s' "$name" "$took")")
  echo "== stage done: $name (${took} s)"
}

summary() {
  echo "== stage times"
  printf '%s\n' "${STAGES[@]}"
}
