#!/usr/bin/env bash
# Host side of bench/exporter-guest.sh: builds pidmap-exporter static with
# the series' syscalls and park-threads static, gathers Debian's
# prometheus-process-exporter with the loader and libc it links (the guest
# has no shared libraries), the config of
# crates/pidmap-exporter/bench/vs-process-exporter.sh
# and the guest script into one directory, and boots the patched kernel on
# the instruction clock with it at /add/exbench.
#
# Usage (repository root): bash bench/exporter-guest-run.sh [ROUNDS]
# Needs: prometheus-process-exporter, gcc, cargo; the patched kernel is
# built by cargo xtask if it is not yet.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v prometheus-process-exporter >/dev/null ||
	{ echo "needs prometheus-process-exporter (apt-get install prometheus-process-exporter)" >&2; exit 1; }

dir=target/exbench
rm -rf "$dir"
mkdir -p "$dir"
RUSTFLAGS="-C target-feature=+crt-static" cargo build --release -q \
	-p pidmap-exporter --features series-syscalls \
	--target x86_64-unknown-linux-gnu
cp target/x86_64-unknown-linux-gnu/release/pidmap-exporter "$dir/"
gcc -O2 -static -pthread -o "$dir/park-threads" bench/park-threads.c
pe=$(command -v prometheus-process-exporter)
cp "$pe" "$dir/prometheus-process-exporter"
for lib in $(ldd "$pe" | awk '/=>/ { print $3 } /ld-linux/ { print $1 }'); do
	cp -L "$lib" "$dir/"
done
cat >"$dir/config.yml" <<'YAML'
process_names:
  - name: "{{.Comm}}"
    cmdline:
      - '.+'
YAML
cp bench/exporter-guest.sh "$dir/run.sh"
cargo xtask qemu-run --instructions --timeout 3600 --add "$dir" -- \
	env ROUNDS="${1:-3}" sh /add/exbench/run.sh
