#!/bin/sh
# Export the v3 pidmap and fdmap series, with their cover letters, into
# /work/main/kernel-patches/{pidmap,fdmap}/.
set -e
cd /work/v3/linux-source-7.3
# series A's last patch, found by its subject (hashes change with a rebase)
base=$(git log --format=%h --grep='^proc: only visit thread-group leaders in /proc readdir$' -1)
[ -n "$base" ] || { echo "export.sh: series A's last patch not found" >&2; exit 1; }
for s in pidmap fdmap; do
	if [ $s = pidmap ]; then range=$base..HEAD~2; else range=HEAD~2..HEAD; fi
	rm -rf /tmp/v3exp-$s && mkdir -p /tmp/v3exp-$s
	git format-patch -q --notes --cover-letter --subject-prefix="PATCH v3" -o /tmp/v3exp-$s $range
	python3 - /tmp/v3exp-$s/0000-cover-letter.patch /work/v3/msg/$s-cover.txt <<'PY'
import sys
p, cov = sys.argv[1:3]
s = open(p).read()
subj, body = open(cov).read().split('\n', 1)
s = s.replace('*** SUBJECT HERE ***', subj).replace('*** BLURB HERE ***', body.rstrip('\n'))
open(p, 'w').write(s)
PY
	out=/work/main/kernel-patches/$s
	rm -f "$out"/*.patch
	cp /tmp/v3exp-$s/*.patch "$out"/
done
ls /work/main/kernel-patches/pidmap /work/main/kernel-patches/fdmap
