/* SPDX-License-Identifier: MIT */
/*
 * `--board twin` for deploy and profile: the board twin that is up (twin/pd_twin.h), reached with
 * its identity and known_hosts unless the user gave them. Only the twin's connection facts are read
 * (uri, identity, known_hosts): never the platform it emulates, which a deployer or a profile must
 * learn from the board itself like on real hardware.
 */
#include <jansson.h>
#include <stdlib.h>

#include "cli/cli_impl.h"
#include "twin/pd_twin.h"

int pd_cli_twin_board(const char *cmd, struct pd_cli_twin *tb, const char **uri, const char **identity,
		      const char **known_hosts, const char **cgroup)
{
	char *js = NULL;
	bool running = false;
	pd_err e = {0};
	int rc = pd_twin_status_json(NULL, &js, &running, &e);
	if (rc || !running) {
		free(js);
		return pd_cli_fail(cmd, PD_EXIT_ENV, "--board twin: no twin is up (start one with `powerdag twin up`)%s%s",
				   rc ? ": " : "", rc ? e.msg : "");
	}
	json_t *j = json_loads(js, 0, NULL);
	free(js);
	const char *u = json_string_value(json_object_get(j, "uri"));
	const char *id = json_string_value(json_object_get(j, "identity"));
	const char *kh = json_string_value(json_object_get(j, "known_hosts"));
	if (!u || !id || !kh) {
		json_decref(j);
		return pd_cli_fail(cmd, PD_EXIT_ENV, "--board twin: the twin's status lacks uri/identity/known_hosts");
	}
	snprintf(tb->uri, sizeof(tb->uri), "%s", u);
	snprintf(tb->identity, sizeof(tb->identity), "%s", id);
	snprintf(tb->known_hosts, sizeof(tb->known_hosts), "%s", kh);
	const char *cg = json_string_value(json_object_get(j, "cgroup")); /* absent before 2026-12-04 */
	snprintf(tb->cgroup, sizeof(tb->cgroup), "%s", cg ? cg : "");
	json_decref(j);
	if (cgroup && !*cgroup && tb->cgroup[0])
		*cgroup = tb->cgroup;
	*uri = tb->uri;
	if (!*identity)
		*identity = tb->identity;
	if (!*known_hosts)
		*known_hosts = tb->known_hosts;
	return 0;
}
