#!/bin/sh
# Pack the guest initramfs: busybox-static, /init, runas (built from
# guest-tests/helpers/runas.c) and the tests.
set -e
cd /work/k-fdmap/guest
rm -rf root && mkdir -p root/bin root/proc root/sys root/dev root/tmp root/etc
cp /bin/busybox root/bin/busybox
cp init root/init
cp runas root/bin/runas
cp "$1" root/bin/fdmap_test
[ -n "$2" ] && cp "$2" root/bin/fdmap_test32
cp bench root/bin/bench
echo 'root:x:0:0::/:/bin/sh' > root/etc/passwd
echo 'nobody:x:65534:65534::/:/bin/sh' >> root/etc/passwd
(cd root && find . | cpio -o -H newc --quiet) | gzip -1 > initramfs.gz
