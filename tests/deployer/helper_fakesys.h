/* SPDX-License-Identifier: MIT */
/* A fake board tree (plain files standing in for sysfs/procfs) and a plan for it. */
#ifndef PD_TEST_HELPER_FAKESYS_H
#define PD_TEST_HELPER_FAKESYS_H

#include "deployer/pd_deployer.h"

/* Builds ROOT with 4 CPUs: policy0 (cpus 0-1, userspace governor available), policy2 (cpus 2-3,
 * performance only), devfreq gpu0, fair server, cgroup v1 cpuset, fpga0, /lib/firmware, an IIO
 * device "ina226". Returns the root (a fresh temp dir). */
const char *fakesys_make(void);
/* Writes bitstream img.bin and a platform + DAG set beside it; builds the plan: task a on CPU 1 at
 * 800 MHz (little), task b on CPU 2 at 200 MHz (big), task c on gpu0 at its low OPP, task d on the
 * FPGA slot 0. dir receives the plan's directory. */
pd_plan *fakesys_plan(char *dir, size_t n);
/* Sets the fake's cpuinfo_cur_freq as a kernel would after the deploy sets f. */
void fakesys_set_cur(const char *root, const char *policy, const char *khz);

#endif
