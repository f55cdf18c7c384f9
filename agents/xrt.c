/* SPDX-License-Identifier: MIT */
/*
 * XRT backend for FPGA tasks (embedded zocl, docs/BOARDS.md), compiled only when
 * CMake finds XRT (PD_HAVE_XRT; XRT is not packaged for Debian, so the CI never builds this file's
 * body - it is kept to the small, stable XRT C API behind the pd_agent_accel_ops interface).
 *
 * load: xrtDeviceOpen(0) + xrtDeviceLoadXclbinFile(bitstream) (a PR platform programs the slot with
 *       isolation; a flat platform expects the PL already programmed and registers the CUs);
 * run:  the kernel named like the bitstream's base name is started with no arguments and waited for
 *       (xrtKernelRun / xrtRunWait): the task's work is the accelerator's own.
 */
#include "agents/pd_agent.h"

#ifdef PD_HAVE_XRT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xrt/xrt_device.h>
#include <xrt/xrt_kernel.h>

struct xrt_ctx {
	xrtDeviceHandle dev;
	xuid_t uuid;
};

static int xrt_load(void *ctx, const struct pd_agent_accel *a, int slot, const char *bitstream)
{
	struct xrt_ctx *c = ctx;
	(void)a, (void)slot;
	if (!c->dev && !(c->dev = xrtDeviceOpen(0)))
		return -ENODEV;
	/* a bitstream is a plain file name (docs/FORMATS.md) in the firmware directory, as for the FPGA
	 * manager: never a path relative to wherever the agent was started */
	char path[600];
	if (strchr(bitstream, '/') || (size_t)snprintf(path, sizeof(path), "/lib/firmware/%s", bitstream) >= sizeof(path))
		return -EINVAL;
	if (xrtDeviceLoadXclbinFile(c->dev, path))
		return -EIO;
	return xrtDeviceGetXclbinUUID(c->dev, c->uuid) ? -EIO : 0;
}

static int xrt_run(void *ctx, const struct pd_agent_accel *a, const struct pd_agent_task *t, uint64_t seq,
		   int64_t latency_ns)
{
	struct xrt_ctx *c = ctx;
	(void)a, (void)seq, (void)latency_ns;
	if (!c->dev || !t->bitstream)
		return -ENODEV;
	char name[128]; /* the kernel is named like the file: no directory, no extension */
	const char *base = strrchr(t->bitstream, '/');
	snprintf(name, sizeof(name), "%s", base ? base + 1 : t->bitstream);
	char *dot = strchr(name, '.');
	if (dot)
		*dot = '\0';
	xrtKernelHandle k = xrtPLKernelOpen(c->dev, c->uuid, name);
	if (!k)
		return -ENOENT;
	xrtRunHandle r = xrtKernelRun(k);
	int rc = r && xrtRunWait(r) == ERT_CMD_STATE_COMPLETED ? 0 : -EIO;
	if (r)
		xrtRunClose(r);
	xrtKernelClose(k);
	return rc;
}

struct pd_agent_accel_ops pd_agent_accel_xrt(void)
{
	/* one device handle per agent run, released with the process (zocl closes it) */
	struct xrt_ctx *ctx = calloc(1, sizeof(*ctx));
	return (struct pd_agent_accel_ops){"xrt", xrt_load, xrt_run, ctx};
}
#endif
