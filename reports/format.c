/* SPDX-License-Identifier: MIT */
/* Number formatting shared by the human-readable writers (text, HTML): one look everywhere. */
#include "reports/run_model_impl.h"

#include <math.h>
#include <stdio.h>

const char *rpt_fmt_ms(int64_t ns, char *buf, size_t n)
{
	if (ns < 0)
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%.3f", (double)ns / 1e6);
	return buf;
}

const char *rpt_fmt_w(double w, char *buf, size_t n)
{
	if (isnan(w))
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%.3f", w);
	return buf;
}

const char *rpt_fmt_pct(double p, char *buf, size_t n)
{
	if (isnan(p))
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%+.1f%%", p);
	return buf;
}
