/* SPDX-License-Identifier: MIT */
/*
 * farm.json: the farm directory's record (docs/FARM.md "farm.json"), rewritten atomically (temp file
 * + rename relative to the directory's descriptor) after every change, so a `farm status` running
 * beside `farm collect` always reads a whole record.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

#include "farm/farm_impl.h"

static const char *const phase_names[] = {"submitted", "reserved", "running", "released", "collected", "missing"};

const char *farm_phase_name(enum farm_phase p) { return phase_names[p]; }

int farm_phase_parse(const char *s, enum farm_phase *p)
{
	for (int i = 0; i <= FARM_MISSING; i++)
		if (s && !strcmp(s, phase_names[i])) {
			*p = (enum farm_phase)i;
			return 0;
		}
	return -1;
}

double farm_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void farm_record_free(struct farm_record *r)
{
	free(r->lab_path);
	free(r->runs);
	memset(r, 0, sizeof(*r));
}

json_t *farm_record_json(const struct farm_record *r)
{
	json_t *j = json_object(), *a = json_array();
	json_object_set_new(j, "format", json_string("powerdag-farm 1"));
	json_object_set_new(j, "lab", json_string(r->lab_path));
	json_object_set_new(j, "created", json_string(r->created));
	json_object_set_new(j, "run_s", json_real((double)r->run_ns / 1e9));
	for (size_t i = 0; i < r->n; i++) {
		const struct farm_run *u = &r->runs[i];
		json_t *o = json_object();
		json_object_set_new(o, "id", json_string(u->id));
		json_object_set_new(o, "plan", json_string(u->plan));
		json_object_set_new(o, "device_type", json_string(u->type));
		json_object_set_new(o, "repetition", json_integer(u->rep));
		json_object_set_new(o, "token", json_string(u->token));
		json_object_set_new(o, "lava_job", u->job ? json_integer(u->job) : json_null());
		json_object_set_new(o, "phase", json_string(farm_phase_name(u->phase)));
		json_object_set_new(o, "device", u->device[0] ? json_string(u->device) : json_null());
		json_object_set_new(o, "lava_state", u->lava_state[0] ? json_string(u->lava_state) : json_null());
		json_object_set_new(o, "lava_health", u->lava_health[0] ? json_string(u->lava_health) : json_null());
		json_object_set_new(o, "deploy_exit", u->deploy_rc >= 0 ? json_integer(u->deploy_rc) : json_null());
		json_object_set_new(o, "reason", u->reason[0] ? json_string(u->reason) : json_null());
		json_object_set_new(o, "hold_wait_s", json_real(u->hold_wait_s));
		json_object_set_new(o, "deploy_s", json_real(u->deploy_s));
		char rd[200];
		snprintf(rd, sizeof(rd), "runs/%s", u->id);
		json_object_set_new(o, "run_dir", u->phase == FARM_COLLECTED ? json_string(rd) : json_null());
		json_array_append_new(a, o);
	}
	json_object_set_new(j, "runs", a);
	return j;
}

int farm_write_json_at(int dirfd, const char *name, const json_t *j, pd_err *e)
{
	char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	if (!s)
		return pd_err_set(e, PD_EXIT_ENV, "%s: out of memory", name);
	size_t n = strlen(s);
	char *t = realloc(s, n + 2); /* a text file ends with a newline */
	if (t) {
		s = t;
		s[n++] = '\n';
		s[n] = 0;
	}
	int rc = pd_write_file_at(dirfd, name, s, n, e);
	free(s);
	return rc;
}

int farm_record_save(int dirfd, const struct farm_record *r, pd_err *e)
{
	json_t *j = farm_record_json(r);
	int rc = farm_write_json_at(dirfd, "farm.json", j, e);
	json_decref(j);
	return rc;
}

static void sfield(json_t *o, const char *k, char *out, size_t n)
{
	const char *v = json_string_value(json_object_get(o, k));
	snprintf(out, n, "%s", v ? v : "");
}

int farm_record_load(int dirfd, const char *dir, struct farm_record *r, pd_err *e)
{
	memset(r, 0, sizeof(*r));
	json_error_t je;
	int fd = openat(dirfd, "farm.json", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	json_t *j = fd >= 0 ? json_loadfd(fd, 0, &je) : NULL;
	if (fd >= 0)
		close(fd);
	if (!j)
		return pd_err_set(e, PD_EXIT_USAGE, "%s/farm.json: %s", dir,
				  fd < 0 ? "missing (not a farm directory: `powerdag farm submit` makes one)" : je.text);
	const char *fmt = json_string_value(json_object_get(j, "format"));
	const char *lab = json_string_value(json_object_get(j, "lab"));
	json_t *runs = json_object_get(j, "runs");
	if (!fmt || strcmp(fmt, "powerdag-farm 1") || !lab || !json_is_array(runs)) {
		json_decref(j);
		return pd_err_set(e, PD_EXIT_USAGE, "%s/farm.json: not a powerdag farm record", dir);
	}
	r->lab_path = strdup(lab);
	r->run_ns = (int64_t)(json_number_value(json_object_get(j, "run_s")) * 1e9 + 0.5);
	sfield(j, "created", r->created, sizeof(r->created));
	r->n = json_array_size(runs);
	r->runs = calloc(r->n ? r->n : 1, sizeof(*r->runs));
	for (size_t i = 0; i < r->n; i++) {
		json_t *o = json_array_get(runs, i);
		struct farm_run *u = &r->runs[i];
		sfield(o, "id", u->id, sizeof(u->id));
		sfield(o, "plan", u->plan, sizeof(u->plan));
		sfield(o, "device_type", u->type, sizeof(u->type));
		sfield(o, "token", u->token, sizeof(u->token));
		sfield(o, "device", u->device, sizeof(u->device));
		sfield(o, "lava_state", u->lava_state, sizeof(u->lava_state));
		sfield(o, "lava_health", u->lava_health, sizeof(u->lava_health));
		sfield(o, "reason", u->reason, sizeof(u->reason));
		u->rep = (int)json_integer_value(json_object_get(o, "repetition"));
		u->job = (long)json_integer_value(json_object_get(o, "lava_job"));
		json_t *dr = json_object_get(o, "deploy_exit");
		u->deploy_rc = json_is_integer(dr) ? (int)json_integer_value(dr) : -1;
		u->hold_wait_s = json_number_value(json_object_get(o, "hold_wait_s"));
		u->deploy_s = json_number_value(json_object_get(o, "deploy_s"));
		if (farm_phase_parse(json_string_value(json_object_get(o, "phase")), &u->phase) ||
		    !farm_name_ok(u->plan) || !farm_name_ok(u->type)) {
			json_decref(j);
			farm_record_free(r);
			return pd_err_set(e, PD_EXIT_USAGE, "%s/farm.json: run %zu is malformed", dir, i + 1);
		}
	}
	json_decref(j);
	return 0;
}
