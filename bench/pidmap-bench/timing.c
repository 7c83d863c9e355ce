// SPDX-License-Identifier: MIT OR Apache-2.0
/* pidmap-bench: timing: sides sampled in interleaved rounds, medians. */
#include "common.h"

static double sample(struct side *s)
{
	uint64_t t0, t1;
	long i, n = 0;

	t0 = now_ns();
	for (i = 0; i < s->iters; i++)
		n = s->fn(s->arg);
	t1 = now_ns();
	s->entries = n;
	return (double)(t1 - t0) / (double)s->iters;
}

static void calibrate(struct side *s)
{
	uint64_t t0, t1, dt;

	s->fn(s->arg);		/* warm up caches and dentries */
	t0 = now_ns();
	s->entries = s->fn(s->arg);
	t1 = now_ns();
	dt = t1 - t0 ? t1 - t0 : 1;
	s->iters = (long)((uint64_t)opt.min_sample_ns / dt) + 1;
	if (s->iters > (1L << 22))
		s->iters = 1L << 22;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double median(const double *v, int n)
{
	double tmp[64];

	memcpy(tmp, v, n * sizeof(*v));
	qsort(tmp, n, sizeof(*tmp), cmp_double);
	return n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
}

/*
 * Time the @n sides of @v (NULL entries: not available), interleaved: each
 * round samples every side, rotating which goes first.
 */
void run_sides(struct side **v, int n)
{
	int r, i;

	for (i = 0; i < n; i++)
		if (v[i])
			calibrate(v[i]);
	for (r = 0; r < opt.rounds; r++)
		for (i = 0; i < n; i++) {
			struct side *s = v[(r + i) % n];

			if (s)
				s->samples[r] = sample(s);
		}
}

/* Time @a against @b (NULL: not available); medians in *ma and *mb. */
void run_pair(struct side *a, struct side *b, double *ma, double *mb)
{
	struct side *v[2] = { a, b };

	run_sides(v, 2);
	*ma = a ? median(a->samples, opt.rounds) : -1;
	*mb = b ? median(b->samples, opt.rounds) : -1;
}
