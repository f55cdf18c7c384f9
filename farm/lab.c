/* SPDX-License-Identifier: MIT */
/*
 * The lab file (docs/FARM.md "Lab file"): which LAVA server, and which boards powerdag may deploy to
 * once LAVA hands it one. Every error names file:line:col and is exit 2; the token file must be
 * private (not readable by group or others), as ssh insists for a key.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "deployer/pd_deployer.h"
#include "farm/farm_impl.h"

bool farm_name_ok(const char *s)
{
	return pd_name_chars_ok(s, false) && strlen(s) < FARM_NAME_MAX && s[0] != '.' && s[0] != '-';
}

const struct farm_device *farm_lab_device(const pd_farm_lab *l, const char *name)
{
	for (size_t i = 0; i < l->n_dev; i++)
		if (!strcmp(l->dev[i].name, name))
			return &l->dev[i];
	return NULL;
}

size_t pd_farm_lab_device_count(const pd_farm_lab *l) { return l->n_dev; }

size_t pd_farm_lab_type_count(const pd_farm_lab *l, const char *t)
{
	size_t n = 0;
	for (size_t i = 0; i < l->n_dev; i++)
		n += !strcmp(l->dev[i].type, t);
	return n;
}

void pd_farm_lab_free(pd_farm_lab *l)
{
	if (!l)
		return;
	if (l->cfgdir[0]) {
		char p[128];
		snprintf(p, sizeof(p), "%s/lavacli.yaml", l->cfgdir);
		unlink(p);
		rmdir(l->cfgdir);
	}
	for (size_t i = 0; i < l->n_dev; i++) {
		free(l->dev[i].board);
		free(l->dev[i].identity);
		free(l->dev[i].known_hosts);
	}
	free(l->dev);
	free(l->path);
	free(l->url);
	free(l->user);
	if (l->token)
		memset(l->token, 0, strlen(l->token));
	free(l->token);
	free(l);
}

static int name_field(const pd_ynode *m, const char *key, bool req, char *out, pd_diags *d)
{
	const char *s = NULL;
	int rc = pd_yget_str(m, key, req, &s, d);
	if (rc <= 0)
		return rc;
	if (!farm_name_ok(s)) {
		pd_diags_add(d, pd_ymap_get(m, key)->loc, "'%s': %s must be 1-63 characters of A-Z a-z 0-9 . _ -", s, key);
		return -1;
	}
	snprintf(out, FARM_NAME_MAX, "%s", s);
	return 1;
}

static int read_token(pd_farm_lab *l, const pd_ynode *lava, pd_diags *d)
{
	const char *tf = NULL;
	if (pd_yget_str(lava, "token_file", true, &tf, d) <= 0)
		return -1;
	struct pd_loc loc = pd_ymap_get(lava, "token_file")->loc;
	struct stat st;
	if (stat(tf, &st) < 0) {
		pd_diags_add(d, loc, "token_file %s: %s", tf, strerror(errno));
		return -1;
	}
	if (st.st_mode & 077) {
		pd_diags_add(d, loc, "token_file %s is readable by group or others (chmod 600 it)", tf);
		return -1;
	}
	char *t = NULL;
	size_t n = 0;
	pd_err e = {0};
	if (pd_read_file(tf, &t, &n, 4096, &e)) {
		pd_diags_add(d, loc, "token_file: %s", e.msg);
		return -1;
	}
	while (n && (t[n - 1] == '\n' || t[n - 1] == '\r' || t[n - 1] == ' '))
		t[--n] = 0;
	for (size_t i = 0; i < n; i++)
		if (!((t[i] >= '0' && t[i] <= '9') || (t[i] >= 'a' && t[i] <= 'z') || (t[i] >= 'A' && t[i] <= 'Z') ||
		      t[i] == '_' || t[i] == '-')) {
			free(t);
			pd_diags_add(d, loc, "token_file %s: a LAVA token is letters, digits, '_' and '-'", tf);
			return -1;
		}
	if (n == 0) {
		free(t);
		pd_diags_add(d, loc, "token_file %s is empty", tf);
		return -1;
	}
	l->token = t;
	return 0;
}

/* cgroup and cpu_map: checked by deploy's own rules now, so that a lab file that would make every
 * deploy of a device fail is refused before a job is submitted. */
static int deploy_fields(struct farm_device *dv, const pd_ynode *m, pd_diags *d)
{
	const char *cg = NULL, *map = NULL;
	int bad = 0;
	if (pd_yget_str(m, "cgroup", false, &cg, d) < 0)
		bad = 1;
	else if (cg) {
		pd_err ce = {0};
		if (pd_deploy_cgroup_name_check(cg, &ce) || strlen(cg) >= sizeof(dv->cgroup)) {
			pd_diags_add(d, pd_ymap_get(m, "cgroup")->loc, "cgroup '%s': %s", cg,
				     ce.msg[0] ? ce.msg : "too long");
			bad = 1;
		} else
			snprintf(dv->cgroup, sizeof(dv->cgroup), "%s", cg);
	}
	if (pd_yget_str(m, "cpu_map", false, &map, d) < 0)
		return 1;
	if (map) {
		int ids[PD_PLATFORM_MAX_CPU + 1];
		const char *why = "too long";
		if (strlen(map) >= sizeof(dv->cpu_map) ||
		    pd_parse_cpuseq(map, ids, sizeof(ids) / sizeof(ids[0]), &dv->n_cpu_map, &why)) {
			pd_diags_add(d, pd_ymap_get(m, "cpu_map")->loc, "cpu_map '%s': %s", map, why);
			return 1;
		}
		snprintf(dv->cpu_map, sizeof(dv->cpu_map), "%s", map);
	}
	return bad;
}

static int parse_device(struct farm_device *dv, const pd_ynode *m, pd_diags *d)
{
	static const char *const keys[] = {"name",	"device_type", "board",	  "identity",
					   "known_hosts", "cpu_group",	 "cgroup", "cpu_map", NULL};
	if (!pd_ynode_expect(m, PD_Y_MAP, "devices[]", d))
		return -1;
	int bad = pd_ymap_check_keys(m, keys, "a device", d) ? 1 : 0;
	bad |= name_field(m, "name", true, dv->name, d) <= 0;
	bad |= name_field(m, "device_type", true, dv->type, d) <= 0;
	bad |= name_field(m, "cpu_group", false, dv->group, d) < 0;
	bad |= deploy_fields(dv, m, d);
	const char *b = NULL, *id = NULL, *kh = NULL;
	if (pd_yget_str(m, "board", true, &b, d) > 0) {
		pd_err ue = {0};
		if (pd_deploy_transport_check_uri(b, &ue)) {
			pd_diags_add(d, pd_ymap_get(m, "board")->loc, "board: %s", ue.msg);
			bad = 1;
		}
	} else
		bad = 1;
	bad |= pd_yget_str(m, "identity", true, &id, d) <= 0;
	bad |= pd_yget_str(m, "known_hosts", true, &kh, d) <= 0;
	if (bad)
		return -1;
	dv->board = strdup(b);
	dv->identity = strdup(id);
	dv->known_hosts = strdup(kh);
	return dv->board && dv->identity && dv->known_hosts ? 0 : -1;
}

static int parse_lab(pd_farm_lab *l, const pd_ynode *root, pd_diags *d)
{
	static const char *const top[] = {"lava", "devices", NULL};
	static const char *const lk[] = {"url", "user", "token_file", NULL};
	if (!root || !pd_ynode_expect(root, PD_Y_MAP, "the lab file", d))
		return -1;
	if (pd_ymap_check_keys(root, top, "the lab file", d))
		return -1;
	const pd_ynode *lava = pd_ymap_get(root, "lava"), *devs = pd_ymap_get(root, "devices");
	if (!lava || !devs) {
		pd_diags_add(d, root->loc, "the lab file needs 'lava' and 'devices'");
		return -1;
	}
	if (!pd_ynode_expect(lava, PD_Y_MAP, "lava", d) || pd_ymap_check_keys(lava, lk, "lava", d))
		return -1;
	const char *url = NULL, *user = NULL;
	if (pd_yget_str(lava, "url", true, &url, d) <= 0 || pd_yget_str(lava, "user", true, &user, d) <= 0)
		return -1;
	if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8)) {
		pd_diags_add(d, pd_ymap_get(lava, "url")->loc, "url '%s': http:// or https:// expected", url);
		return -1;
	}
	if (strchr(url, '@') || strchr(url, ' ') || strlen(url) > 400) {
		pd_diags_add(d, pd_ymap_get(lava, "url")->loc, "url: no credentials in it (token_file holds the token)");
		return -1;
	}
	if (!farm_name_ok(user)) {
		pd_diags_add(d, pd_ymap_get(lava, "user")->loc, "user '%s': letters, digits, . _ -", user);
		return -1;
	}
	l->url = strdup(url);
	l->user = strdup(user);
	if (read_token(l, lava, d))
		return -1;
	if (!pd_ynode_expect(devs, PD_Y_SEQ, "devices", d))
		return -1;
	if (devs->n == 0 || devs->n > 4096) {
		pd_diags_add(d, devs->loc, "devices: 1 to 4096 boards");
		return -1;
	}
	l->dev = calloc(devs->n, sizeof(*l->dev));
	if (!l->dev)
		return -1;
	for (size_t i = 0; i < devs->n; i++) {
		if (parse_device(&l->dev[l->n_dev], devs->items[i], d))
			return -1;
		l->n_dev++;
		for (size_t j = 0; j + 1 < l->n_dev; j++)
			if (!strcmp(l->dev[j].name, l->dev[l->n_dev - 1].name)) {
				pd_diags_add(d, devs->items[i]->loc, "device '%s' listed twice", l->dev[j].name);
				return -1;
			}
	}
	return 0;
}

int pd_farm_lab_load(const char *path, pd_farm_lab **out, pd_err *e)
{
	*out = NULL;
	pd_farm_lab *l = calloc(1, sizeof(*l));
	char abs[PATH_MAX];
	if (!l)
		return pd_err_set(e, PD_EXIT_ENV, "out of memory");
	if (!realpath(path, abs)) {
		free(l);
		return pd_err_set(e, PD_EXIT_USAGE, "lab file %s: %s", path, strerror(errno));
	}
	l->path = strdup(abs);
	pd_ydoc doc = {0};
	pd_diags d;
	pd_diags_init(&d);
	int rc = pd_yaml_load_file(&doc, path, &d);
	if (rc == 0)
		rc = parse_lab(l, doc.root, &d);
	if (rc || d.n) {
		if (!d.n)
			pd_diags_add(&d, (struct pd_loc){path, 0, 0}, "bad lab file");
		pd_diags_to_err(&d, e);
		e->code = PD_EXIT_USAGE;
		pd_diags_free(&d);
		pd_yaml_free(&doc);
		pd_farm_lab_free(l);
		return PD_EXIT_USAGE;
	}
	pd_diags_free(&d);
	pd_yaml_free(&doc);
	*out = l;
	return 0;
}
