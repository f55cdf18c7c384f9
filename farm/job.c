/* SPDX-License-Identifier: MIT */
/*
 * One run's LAVA job definition (docs/FARM.md "The job"), written with the YAML emitter (libyaml):
 * every value is a scalar the emitter quotes as needed, and the only shell text in it — the test
 * steps LAVA runs on the board — is constant apart from the token, 32 hex digits checked here. The
 * job holds the device: it logs in over SSH, marks the hold (TOKEN.held) and waits for powerdag to
 * write the verdict (TOKEN.done: "pass" or "fail"), which becomes the job's test result.
 */
#include <string.h>

#include "farm/farm_impl.h"

static bool hex32(const char *s)
{
	if (!s || strlen(s) != 32)
		return false;
	for (int i = 0; i < 32; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static void timeout_map(pd_yemit *y, const char *key, int64_t seconds)
{
	pd_yemit_key(y, key);
	pd_yemit_map_begin(y, true);
	pd_yemit_kv_int(y, "seconds", seconds);
	pd_yemit_map_end(y);
}

static void steps(pd_yemit *y, const char *tok)
{
	/* One command per step: LAVA runs the steps under `set -e`, which ignores a failure on the left
	 * of `&&`; a hold marker that cannot be written must end the job, not leave it waiting. */
	char s[5][256];
	snprintf(s[0], sizeof(s[0]), "mkdir -p %s", PD_FARM_HOLD_DIR);
	snprintf(s[1], sizeof(s[1]), "touch %s/%s.held", PD_FARM_HOLD_DIR, tok);
	snprintf(s[2], sizeof(s[2]), "while [ ! -s %s/%s.done ]; do sleep 1; done", PD_FARM_HOLD_DIR, tok);
	snprintf(s[3], sizeof(s[3]), "lava-test-case powerdag-run --shell grep -qx pass %s/%s.done", PD_FARM_HOLD_DIR, tok);
	snprintf(s[4], sizeof(s[4]), "rm -f %s/%s.held %s/%s.done", PD_FARM_HOLD_DIR, tok, PD_FARM_HOLD_DIR, tok);
	pd_yemit_key(y, "steps");
	pd_yemit_seq_begin(y, false);
	for (int i = 0; i < 5; i++)
		pd_yemit_str(y, s[i]);
	pd_yemit_seq_end(y);
}

static void test_action(pd_yemit *y, const struct pd_farm_jobspec *js, int64_t hold_s)
{
	pd_yemit_map_begin(y, false);
	pd_yemit_key(y, "test");
	pd_yemit_map_begin(y, false);
	timeout_map(y, "timeout", hold_s);
	pd_yemit_key(y, "definitions");
	pd_yemit_seq_begin(y, false);
	pd_yemit_map_begin(y, false);
	pd_yemit_kv_str(y, "from", "inline");
	pd_yemit_kv_str(y, "name", "powerdag-hold");
	pd_yemit_kv_str(y, "path", "inline/powerdag-hold.yaml");
	pd_yemit_key(y, "repository");
	pd_yemit_map_begin(y, false);
	pd_yemit_key(y, "metadata");
	pd_yemit_map_begin(y, false);
	pd_yemit_kv_str(y, "format", "Lava-Test Test Definition 1.0");
	pd_yemit_kv_str(y, "name", "powerdag-hold");
	pd_yemit_kv_str(y, "description", "hold the board while powerdag deploys the plan to it");
	pd_yemit_map_end(y);
	pd_yemit_key(y, "run");
	pd_yemit_map_begin(y, false);
	steps(y, js->token);
	pd_yemit_map_end(y);
	pd_yemit_map_end(y);
	pd_yemit_map_end(y);
	pd_yemit_seq_end(y);
	pd_yemit_map_end(y);
	pd_yemit_map_end(y);
}

static void ssh_actions(pd_yemit *y)
{
	pd_yemit_map_begin(y, false);
	pd_yemit_key(y, "deploy");
	pd_yemit_map_begin(y, false);
	pd_yemit_kv_str(y, "to", "ssh");
	pd_yemit_kv_str(y, "os", "debian");
	timeout_map(y, "timeout", 120);
	pd_yemit_map_end(y);
	pd_yemit_map_end(y);
	pd_yemit_map_begin(y, false);
	pd_yemit_key(y, "boot");
	pd_yemit_map_begin(y, false);
	pd_yemit_kv_str(y, "method", "ssh");
	pd_yemit_kv_str(y, "connection", "ssh");
	pd_yemit_key(y, "prompts");
	pd_yemit_seq_begin(y, true);
	pd_yemit_str(y, "root@");
	pd_yemit_seq_end(y);
	timeout_map(y, "timeout", 120);
	pd_yemit_map_end(y);
	pd_yemit_map_end(y);
}

int pd_farm_job_yaml(const struct pd_farm_jobspec *js, pd_buf *out, pd_err *e)
{
	if (!js->run_id || strlen(js->run_id) >= 2 * FARM_NAME_MAX || !farm_name_ok(js->device_type) ||
	    !js->plan_name || !farm_name_ok(js->plan_name))
		return pd_err_set(e, PD_EXIT_USAGE, "job: run id, device type and plan name must be A-Z a-z 0-9 . _ -");
	for (const char *p = js->run_id; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", *p))
			return pd_err_set(e, PD_EXIT_USAGE, "job: run id '%s' must be A-Z a-z 0-9 . _ -", js->run_id);
	if (!hex32(js->token))
		return pd_err_set(e, PD_EXIT_USAGE, "job: the token must be 32 lower-case hex digits");
	if (js->run_ns <= 0 || js->hold_timeout_s < 0 || js->hold_timeout_s > 7 * 24 * 3600)
		return pd_err_set(e, PD_EXIT_USAGE, "job: run duration must be > 0, hold timeout 0..7 days");
	int64_t hold_s = js->hold_timeout_s ? js->hold_timeout_s : 3600;
	char name[200];
	snprintf(name, sizeof(name), "powerdag %s", js->run_id);
	pd_yemit *y = pd_yemit_new(out);
	if (!y)
		return pd_err_set(e, PD_EXIT_ENV, "out of memory");
	pd_yemit_map_begin(y, false);
	pd_yemit_kv_str(y, "job_name", name);
	pd_yemit_kv_str(y, "device_type", js->device_type);
	pd_yemit_kv_str(y, "visibility", "public");
	pd_yemit_kv_str(y, "priority", "medium");
	pd_yemit_key(y, "metadata");
	pd_yemit_map_begin(y, false);
	pd_yemit_kv_str(y, "powerdag.run", js->run_id);
	pd_yemit_kv_str(y, "powerdag.plan", js->plan_name);
	pd_yemit_kv_duration(y, "powerdag.duration", js->run_ns);
	pd_yemit_map_end(y);
	pd_yemit_key(y, "timeouts");
	pd_yemit_map_begin(y, false);
	timeout_map(y, "job", hold_s + 300); /* hold + login, overlay and finalize */
	timeout_map(y, "action", hold_s);
	timeout_map(y, "connection", 120);
	pd_yemit_map_end(y);
	pd_yemit_key(y, "actions");
	pd_yemit_seq_begin(y, false);
	ssh_actions(y);
	test_action(y, js, hold_s);
	pd_yemit_seq_end(y);
	pd_yemit_map_end(y);
	return pd_yemit_finish(y, e);
}
