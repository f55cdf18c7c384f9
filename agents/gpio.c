/* SPDX-License-Identifier: MIT */
/*
 * GPIO markers: a line goes high at a DAG instance's release and low at its completion, so that an
 * oscilloscope or logic analyser lines up with the power trace. libgpiod 1.6 when built with it
 * (the chip and line stay open for the whole run: one ioctl per edge); a recording double otherwise.
 */
#include "agents/pd_agent.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef PD_HAVE_GPIOD
#include <gpiod.h>

struct gpiod_marker {
	struct gpiod_chip *chip;
	struct gpiod_line *line;
};

static int gpiod_set(void *ctx, int v)
{
	struct gpiod_marker *m = ctx;
	return gpiod_line_set_value(m->line, v) == 0 ? 0 : -errno;
}

static void gpiod_close_m(void *ctx)
{
	struct gpiod_marker *m = ctx;
	gpiod_line_release(m->line);
	gpiod_chip_close(m->chip);
	free(m);
}
#endif

int pd_agent_gpio_open_gpiod(const char *spec, struct pd_agent_gpio_ops *out, pd_err *e)
{
	char chip[128];
	unsigned line;
	const char *colon = strrchr(spec, ':');
	if (!colon || colon == spec || (size_t)(colon - spec) >= sizeof(chip) || sscanf(colon + 1, "%u", &line) != 1)
		return pd_err_set(e, PD_EXIT_USAGE, "--gpio '%s': expected CHIP:LINE, e.g. gpiochip0:12", spec);
	memcpy(chip, spec, (size_t)(colon - spec));
	chip[colon - spec] = '\0';
#ifdef PD_HAVE_GPIOD
	struct gpiod_marker *m = calloc(1, sizeof(*m));
	if (!m)
		return pd_err_set(e, PD_EXIT_ENV, "out of memory");
	m->chip = gpiod_chip_open_lookup(chip);
	if (!m->chip) {
		int err = errno;
		free(m);
		return pd_err_set(e, PD_EXIT_ENV, "--gpio %s: cannot open %s: %s (is there a GPIO driver on this kernel?)",
				  spec, chip, strerror(err));
	}
	m->line = gpiod_chip_get_line(m->chip, line);
	if (!m->line || gpiod_line_request_output(m->line, "powerdag-agent", 0) < 0) {
		int err = errno;
		gpiod_chip_close(m->chip);
		free(m);
		return pd_err_set(e, PD_EXIT_ENV, "--gpio %s: cannot drive line %u: %s", spec, line, strerror(err));
	}
	*out = (struct pd_agent_gpio_ops){"gpiod", gpiod_set, gpiod_close_m, m};
	return 0;
#else
	(void)out;
	return pd_err_set(e, PD_EXIT_ENV, "--gpio %s: this agent was built without libgpiod", spec);
#endif
}

static int rec_set(void *ctx, int v)
{
	struct pd_agent_gpio_rec *r = ctx;
	size_t i = atomic_fetch_add(&r->n, 1);
	if (i >= r->cap)
		return -ENOSPC;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	r->ev[i].t_mono_ns = (int64_t)ts.tv_sec * PD_NS_PER_S + ts.tv_nsec;
	r->ev[i].value = v;
	return 0;
}

static void rec_close(void *ctx) { (void)ctx; }

struct pd_agent_gpio_ops pd_agent_gpio_recording(struct pd_agent_gpio_rec *rec)
{
	return (struct pd_agent_gpio_ops){"recording", rec_set, rec_close, rec};
}
