#!/bin/sh
# mkinitrd.sh INIT OUT: pack busybox, INIT as /init and $BIN/* (default
# /work/v3/fuzz/bin: the static v3fuzz) into the gzipped cpio OUT; ENVFILE,
# if given, as /etc/v3fuzz.env (V3FUZZ_CALLS=... lines for init-fuzz).
set -e
root=$(mktemp -d)
chmod 755 "$root"
mkdir -p "$root/bin" "$root/proc" "$root/sys" "$root/dev" "$root/tmp" "$root/etc"
cp /bin/busybox "${BIN:-/work/v3/fuzz/bin}"/* "$root/bin/"
cp "$1" "$root/init"
[ -n "$3" ] && cp "$3" "$root/etc/v3fuzz.env"
chmod +x "$root/init"
printf 'root:x:0:0::/:/bin/sh\nnobody:x:65534:65534::/:/bin/sh\n' > "$root/etc/passwd"
(cd "$root" && find . | cpio -o -H newc --quiet) | gzip -1 > "$2"
rm -rf "$root"
