#!/bin/sh
set -e
cd /work/v3/guest
rm -rf root && mkdir -p root/bin root/proc root/sys root/dev root/tmp root/etc
cp /bin/busybox root/bin/busybox
cp init root/init
cp bin/* root/bin/
echo 'root:x:0:0::/:/bin/sh' > root/etc/passwd
echo 'nobody:x:65534:65534::/:/bin/sh' >> root/etc/passwd
(cd root && find . | cpio -o -H newc --quiet) | gzip -1 > initramfs.gz
