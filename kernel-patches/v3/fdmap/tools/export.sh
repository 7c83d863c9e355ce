#!/bin/sh
# Export the series with its cover letter into /work/main/kernel-patches/v3/fdmap/.
set -e
cd /work/k-fdmap/linux-source-7.3
out=/work/main/kernel-patches/v3/fdmap
rm -rf /tmp/fdmap-export && mkdir -p /tmp/fdmap-export
git format-patch -q --notes --cover-letter --subject-prefix="PATCH v3" -o /tmp/fdmap-export fdmap~2..fdmap
python3 - /tmp/fdmap-export/0000-cover-letter.patch /work/k-fdmap/msg/cover.txt /work/k-fdmap/msg/testing.txt <<'PY'
import sys
p, cov, tst = sys.argv[1:4]
s = open(p).read()
c = open(cov).read().split('\n', 1)
try:
    t = open(tst).read()
except FileNotFoundError:
    t = ''
body = c[1].lstrip('\n').replace('See the notes below each patch.\n', t or 'See the notes below each patch.\n')
s = s.replace('*** SUBJECT HERE ***', c[0]).replace('*** BLURB HERE ***', body.rstrip('\n'))
open(p, 'w').write(s)
PY
mkdir -p "$out"
rm -f "$out"/*.patch
cp /tmp/fdmap-export/*.patch "$out"/
