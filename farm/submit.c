/* SPDX-License-Identifier: MIT */
/*
 * powerdag farm submit: a matrix (plans x device types x repetitions) -> a farm directory and one
 * LAVA job per run. Everything is checked before DIR is created (exit 2, nothing written): every
 * plan loads and validates, every device type has a board in the lab file, names are safe for paths
 * and job definitions.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "farm/farm_impl.h"
#include "plan/pd_plan.h"

/* "dir/my plan.yaml" -> "my_plan": the run's name part, A-Z a-z 0-9 . _ - */
static void plan_stem(const char *path, char *out, size_t n)
{
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof(tmp), "%s", path);
	const char *b = basename(tmp);
	size_t k = 0;
	for (; b[k] && k + 1 < n && k < 40; k++) {
		char c = b[k];
		out[k] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.' ? c : '_';
	}
	out[k] = 0;
	char *dot = strrchr(out, '.');
	if (dot && (!strcmp(dot, ".yaml") || !strcmp(dot, ".yml")))
		*dot = 0;
	if (!out[0] || out[0] == '.' || out[0] == '-')
		snprintf(out, n, "plan");
}

static int random_token(char out[33], pd_err *e)
{
	unsigned char r[16];
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || read(fd, r, sizeof(r)) != (ssize_t)sizeof(r)) {
		if (fd >= 0)
			close(fd);
		return pd_err_set(e, PD_EXIT_ENV, "/dev/urandom: %s", strerror(errno));
	}
	close(fd);
	for (int i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", r[i]);
	return 0;
}

/* Every board of the matrix's types that renumbers CPUs (cpu_map) must name as many as the plan's
 * platform has cores: its deploys would all fail otherwise. */
static int maps_fit(const pd_farm_lab *l, const struct pd_farm_matrix *m, const pd_plan *p, const char *path, pd_err *e)
{
	size_t cores = pd_platform_core_count(pd_plan_platform(p));
	for (size_t t = 0; t < m->n_types; t++)
		for (size_t i = 0; i < l->n_dev; i++) {
			const struct farm_device *dv = &l->dev[i];
			if (strcmp(dv->type, m->device_types[t]) || !dv->cpu_map[0] || dv->n_cpu_map == cores)
				continue;
			return pd_err_set(e, PD_EXIT_USAGE, "%s has %zu cores; board %s's cpu_map '%s' names %zu CPUs",
					  path, cores, dv->name, dv->cpu_map, dv->n_cpu_map);
		}
	return 0;
}

static int check_matrix(const pd_farm_lab *l, const struct pd_farm_matrix *m, char (*stems)[FARM_NAME_MAX], pd_err *e)
{
	if (m->n_plans == 0 || m->n_plans > 1000)
		return pd_err_set(e, PD_EXIT_USAGE, "give 1 to 1000 plans");
	if (m->n_types == 0 || m->n_types > 64)
		return pd_err_set(e, PD_EXIT_USAGE, "give 1 to 64 device types");
	if (m->repetitions < 1 || m->repetitions > 1000)
		return pd_err_set(e, PD_EXIT_USAGE, "--repeat: 1 to 1000");
	if (m->run_ns <= 0 || m->run_ns > 24LL * 3600 * PD_NS_PER_S)
		return pd_err_set(e, PD_EXIT_USAGE, "--duration: more than 0, at most 24 h");
	if ((uint64_t)m->n_plans * m->n_types * (uint64_t)m->repetitions > 10000)
		return pd_err_set(e, PD_EXIT_USAGE, "the matrix has more than 10000 runs");
	for (size_t t = 0; t < m->n_types; t++) {
		if (!farm_name_ok(m->device_types[t]))
			return pd_err_set(e, PD_EXIT_USAGE, "device type '%s': A-Z a-z 0-9 . _ -", m->device_types[t]);
		if (!pd_farm_lab_type_count(l, m->device_types[t]))
			return pd_err_set(e, PD_EXIT_USAGE, "device type '%s': no board of that type in the lab file %s",
					  m->device_types[t], l->path);
	}
	for (size_t i = 0; i < m->n_plans; i++) {
		pd_diags d;
		pd_diags_init(&d);
		pd_plan *p = pd_plan_load_file(m->plans[i], &d);
		if (!p || d.n) {
			pd_diags_to_err(&d, e);
			e->code = PD_EXIT_USAGE;
			pd_diags_free(&d);
			pd_plan_free(p);
			return PD_EXIT_USAGE;
		}
		pd_diags_free(&d);
		int rc = maps_fit(l, m, p, m->plans[i], e);
		pd_plan_free(p);
		if (rc)
			return rc;
		plan_stem(m->plans[i], stems[i], FARM_NAME_MAX);
		for (size_t j = 0; j < i; j++)
			if (!strcmp(stems[i], stems[j]))
				return pd_err_set(e, PD_EXIT_USAGE, "plans %s and %s have the same name: rename one",
						  m->plans[j], m->plans[i]);
	}
	return 0;
}

static int copy_plan(int dfd, const char *src, const char *stem, pd_err *e)
{
	char *data = NULL;
	size_t n = 0;
	if (pd_read_file(src, &data, &n, 0, e))
		return PD_EXIT_USAGE;
	char name[FARM_NAME_MAX + 8];
	snprintf(name, sizeof(name), "%s.yaml", stem);
	int rc = pd_write_file_at(dfd, name, data, n, e);
	free(data);
	return rc;
}

static int subdir(int dirfd, const char *name, int *fd, pd_err *e)
{
	if (mkdirat(dirfd, name, 0755) < 0 && errno != EEXIST)
		return pd_err_set(e, PD_EXIT_ENV, "%s: %s", name, strerror(errno));
	*fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return *fd < 0 ? pd_err_set(e, PD_EXIT_ENV, "%s: %s", name, strerror(errno)) : 0;
}

static int write_jobs(struct farm_record *r, const struct pd_farm_matrix *m, char (*stems)[FARM_NAME_MAX], int jobs_fd,
		      pd_err *e)
{
	size_t n = m->n_plans * m->n_types * (size_t)m->repetitions, k = 0;
	r->runs = calloc(n, sizeof(*r->runs));
	if (!r->runs)
		return pd_err_set(e, PD_EXIT_ENV, "out of memory");
	/* the hold may last until every other run of the matrix went before it on a shared CPU group */
	int64_t hold_s = (int64_t)n * (m->run_ns / PD_NS_PER_S + 90) + 600;
	if (hold_s > 7 * 24 * 3600)
		hold_s = 7 * 24 * 3600;
	for (int rep = 1; rep <= m->repetitions; rep++)
		for (size_t p = 0; p < m->n_plans; p++)
			for (size_t t = 0; t < m->n_types; t++) {
				struct farm_run *u = &r->runs[k++];
				snprintf(u->id, sizeof(u->id), "%s-%s-r%d", stems[p], m->device_types[t], rep);
				snprintf(u->plan, sizeof(u->plan), "%.50s.yaml", stems[p]);
				snprintf(u->type, sizeof(u->type), "%s", m->device_types[t]);
				u->rep = rep;
				u->deploy_rc = -1;
				u->phase = FARM_SUBMITTED;
				if (random_token(u->token, e))
					return PD_EXIT_ENV;
				struct pd_farm_jobspec js = {u->id, u->type, u->plan, u->token, m->run_ns, hold_s};
				pd_buf b;
				pd_buf_init(&b);
				int rc = pd_farm_job_yaml(&js, &b, e);
				char name[200];
				snprintf(name, sizeof(name), "%s.yaml", u->id);
				if (rc == 0)
					rc = pd_write_file_at(jobs_fd, name, b.data, b.len, e);
				pd_buf_free(&b);
				if (rc)
					return rc;
				r->n = k;
			}
	return 0;
}

int pd_farm_submit(const struct pd_farm_opts *o, const struct pd_farm_matrix *m, const char *dir, pd_err *e)
{
	pd_farm_lab *l = NULL;
	int rc = pd_farm_lab_load(o->lab_path, &l, e);
	if (rc)
		return rc;
	char(*stems)[FARM_NAME_MAX] = calloc(m->n_plans ? m->n_plans : 1, sizeof(*stems));
	struct farm_record r = {0};
	int dfd = -1, pfd = -1, jfd = -1, sfd = -1;
	bool created = false;
	char absdir[PATH_MAX];
	if (!stems) {
		rc = pd_err_set(e, PD_EXIT_ENV, "out of memory");
		goto out;
	}
	if ((rc = check_matrix(l, m, stems, e)))
		goto out;
	if ((rc = pd_dir_open_private(dir, false, &dfd, &created, e)))
		goto out;
	if (!realpath(dir, absdir)) {
		rc = pd_err_set(e, PD_EXIT_ENV, "%s: %s", dir, strerror(errno));
		goto out;
	}
	if ((rc = subdir(dfd, "plans", &pfd, e)) || (rc = subdir(dfd, "jobs", &jfd, e)) ||
	    (rc = subdir(dfd, "runs", &sfd, e)))
		goto out;
	if (mkdirat(dfd, "logs", 0755) < 0) {
		rc = pd_err_set(e, PD_EXIT_ENV, "logs: %s", strerror(errno));
		goto out;
	}
	for (size_t i = 0; i < m->n_plans; i++)
		if ((rc = copy_plan(pfd, m->plans[i], stems[i], e)))
			goto out;
	r.lab_path = strdup(l->path);
	r.run_ns = m->run_ns;
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(r.created, sizeof(r.created), "%Y-%m-%dT%H:%M:%SZ", &tm);
	if ((rc = write_jobs(&r, m, stems, jfd, e)) || (rc = farm_record_save(dfd, &r, e)))
		goto out;
	for (size_t i = 0; i < r.n; i++) {
		char path[PATH_MAX];
		if (snprintf(path, sizeof(path), "%s/jobs/%s.yaml", absdir, r.runs[i].id) >= (int)sizeof(path)) {
			rc = pd_err_set(e, PD_EXIT_USAGE, "%s: path too long", dir);
			goto out;
		}
		if ((rc = farm_lava_submit(l, path, &r.runs[i].job, e))) {
			farm_record_save(dfd, &r, &(pd_err){0});
			goto out;
		}
		if (o->log)
			fprintf(o->log, "submitted %s: LAVA job %ld (%s)\n", r.runs[i].id, r.runs[i].job, r.runs[i].type);
		if ((rc = farm_record_save(dfd, &r, e)))
			goto out;
	}
out:
	if (rc == PD_EXIT_USAGE && created && dfd >= 0) {
		/* bad input found after DIR was made (a plan unreadable at copy time): nothing stays */
		unlinkat(dfd, "farm.json", 0);
	}
	if (pfd >= 0)
		close(pfd);
	if (jfd >= 0)
		close(jfd);
	if (sfd >= 0)
		close(sfd);
	if (dfd >= 0)
		close(dfd);
	farm_record_free(&r);
	free(stems);
	pd_farm_lab_free(l);
	return rc;
}
