/* SPDX-License-Identifier: MIT */
/* sim_params.c - simulation parameters: defaults and the textual forms of the CLI. */
#include "simulator/pd_simulator.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void pd_sim_defaults(struct pd_sim_params *p)
{
	memset(p, 0, sizeof(*p));
	p->duration_ns = 10 * PD_NS_PER_S;
	p->seed = 1;
	p->exec = PD_SIM_EXEC_WCET;
	p->overrun_factor = 1.0;
	p->background_period_ns = 10 * PD_NS_PER_MS;
	p->fair = PD_SIM_FAIR_AUTO;
	p->trace_max_events = 2000000;
}

static int parse_num(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end != '\0' || v != v)
		return -1;
	*out = v;
	return 0;
}

int pd_sim_parse_exec(const char *s, struct pd_sim_params *p, pd_err *e)
{
	if (strcmp(s, "wcet") == 0) {
		p->exec = PD_SIM_EXEC_WCET;
		return 0;
	}
	if (strncmp(s, "replay:", 7) == 0 && s[7]) {
		p->exec = PD_SIM_EXEC_REPLAY;
		p->replay_path = s + 7;
		return 0;
	}
	if (strcmp(s, "uniform") == 0) {
		p->exec = PD_SIM_EXEC_UNIFORM;
		return 0;
	}
	if (strncmp(s, "overrun:", 8) == 0) {
		char buf[64];
		snprintf(buf, sizeof(buf), "%s", s + 8);
		char *colon = strchr(buf, ':');
		double prob, factor;
		if (colon) {
			*colon = '\0';
			if (parse_num(buf, &prob) == 0 && parse_num(colon + 1, &factor) == 0 && prob >= 0 && prob <= 1 &&
			    factor >= 1 && factor <= 1000) {
				p->exec = PD_SIM_EXEC_OVERRUN;
				p->overrun_prob = prob;
				p->overrun_factor = factor;
				return 0;
			}
		}
	}
	return pd_err_set(e, PD_EXIT_USAGE,
			  "bad execution model '%s': expected wcet, uniform, overrun:P:F (0 <= P <= 1, 1 <= F <= 1000) or replay:RUN", s);
}

int pd_sim_parse_inject(const char *s, struct pd_sim_params *p, pd_err *e)
{
	const char *why = NULL;
	if (pd_dags_inject_parse(s, &p->inject, &why))
		return pd_err_set(e, PD_EXIT_USAGE, "bad overrun injection '%.80s': %s", s, why);
	p->has_inject = true;
	return 0;
}

static const char *const fair_names[] = {"auto", "off", "immediate", "deferred"};

const char *pd_sim_fair_name(enum pd_sim_fair f)
{
	return (unsigned)f < 4 ? fair_names[f] : "?";
}

int pd_sim_parse_fair(const char *s, enum pd_sim_fair *f, pd_err *e)
{
	for (unsigned i = 0; i < 4; i++)
		if (strcmp(s, fair_names[i]) == 0) {
			*f = (enum pd_sim_fair)i;
			return 0;
		}
	return pd_err_set(e, PD_EXIT_USAGE, "bad fair-server mode '%s': expected immediate, deferred or off", s);
}
