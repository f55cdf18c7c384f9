/* SPDX-License-Identifier: MIT */
/*
 * powerdag farm status: every run of a farm directory, its LAVA job, device and outcome, and which
 * runs are missing and why. Reads farm.json (never writes it); runs not yet finished get their LAVA
 * job's current state when the lab file recorded there is readable.
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "farm/farm_impl.h"

static void refresh(struct farm_record *r)
{
	pd_farm_lab *l = NULL;
	pd_err e = {0};
	if (pd_farm_lab_load(r->lab_path, &l, &e))
		return;
	for (size_t i = 0; i < r->n; i++) {
		struct farm_run *u = &r->runs[i];
		struct farm_job_state js;
		if (u->phase == FARM_COLLECTED || u->phase == FARM_MISSING || !u->job ||
		    farm_job_state(l, u->job, &js, &e))
			continue;
		snprintf(u->lava_state, sizeof(u->lava_state), "%s", js.state);
		snprintf(u->lava_health, sizeof(u->lava_health), "%s", js.health);
		if (!u->device[0] && js.device[0])
			snprintf(u->device, sizeof(u->device), "%s", js.device);
	}
	pd_farm_lab_free(l);
}

int pd_farm_status(const char *dir, bool json, FILE *out, int *missing, int *pending, pd_err *e)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return pd_err_set(e, PD_EXIT_USAGE, "%s: not a directory", dir);
	struct farm_record r;
	int rc = farm_record_load(dfd, dir, &r, e);
	close(dfd);
	if (rc)
		return rc;
	refresh(&r);
	*missing = *pending = 0;
	int collected = 0;
	for (size_t i = 0; i < r.n; i++) {
		*missing += r.runs[i].phase == FARM_MISSING;
		collected += r.runs[i].phase == FARM_COLLECTED;
	}
	*pending = (int)r.n - *missing - collected;
	if (json) {
		json_t *j = farm_record_json(&r), *m = json_array();
		for (size_t i = 0; i < r.n; i++)
			if (r.runs[i].phase == FARM_MISSING)
				json_array_append_new(m, json_string(r.runs[i].id));
		json_object_set_new(j, "collected", json_integer(collected));
		json_object_set_new(j, "missing", json_integer(*missing));
		json_object_set_new(j, "pending", json_integer(*pending));
		json_object_set_new(j, "missing_runs", m);
		json_dumpf(j, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', out);
		json_decref(j);
	} else {
		fprintf(out, "%-28s %-9s %6s %-12s %-20s %s\n", "run", "phase", "job", "device", "LAVA", "run directory / reason");
		for (size_t i = 0; i < r.n; i++) {
			const struct farm_run *u = &r.runs[i];
			char lava[80], job[24];
			snprintf(lava, sizeof(lava), "%s%s%s", u->lava_state[0] ? u->lava_state : "-",
				 u->lava_health[0] ? "," : "", u->lava_health);
			snprintf(job, sizeof(job), "%ld", u->job);
			pd_buf line;
			pd_buf_init(&line);
			pd_buf_printf(&line, "%-28s %-9s %6s %-12s %-20s ", u->id, farm_phase_name(u->phase), u->job ? job : "-",
				      u->device[0] ? u->device : "-", lava);
			if (u->phase == FARM_COLLECTED)
				pd_buf_printf(&line, "runs/%s%s%s", u->id, u->reason[0] ? "  note: " : "", u->reason);
			else
				pd_buf_printf(&line, "%s", u->reason);
			pd_esc_fputs(line.data, out);
			fputc('\n', out);
			pd_buf_free(&line);
		}
		fprintf(out, "%zu runs: %d collected, %d missing, %d pending\n", r.n, collected, *missing, *pending);
		if (*missing) {
			fprintf(out, "missing:");
			for (size_t i = 0; i < r.n; i++)
				if (r.runs[i].phase == FARM_MISSING)
					fprintf(out, " %s", r.runs[i].id);
			fputc('\n', out);
		}
	}
	farm_record_free(&r);
	return 0;
}
