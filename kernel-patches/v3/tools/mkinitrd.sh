#!/bin/sh
# mkinitrd.sh INIT OUT: pack busybox, INIT as /init and /work/v3/guest/bin/*
# (the static tests, runas and bench) into the gzipped cpio OUT.
set -e
root=$(mktemp -d)
chmod 755 "$root"
mkdir -p "$root/bin" "$root/proc" "$root/sys" "$root/dev" "$root/tmp" "$root/etc"
cp /bin/busybox /work/v3/guest/bin/* "$root/bin/"
cp "$1" "$root/init"
chmod +x "$root/init"
printf 'root:x:0:0::/:/bin/sh\nnobody:x:65534:65534::/:/bin/sh\n' > "$root/etc/passwd"
(cd "$root" && find . | cpio -o -H newc --quiet) | gzip -1 > "$2"
rm -rf "$root"
