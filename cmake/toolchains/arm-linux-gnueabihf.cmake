# CMake toolchain file: powerdag-agent for 32-bit Arm hard-float Linux boards (ODROID-XU4,
# Exynos 5422, Cortex-A15/A7, ARMv7-A + VFPv4/NEON). Compiler: Debian's gcc-arm-linux-gnueabihf
# (defaults: -march=armv7-a+fp -mfpu=vfpv3-d16 -mthumb, the Debian armhf baseline, which runs on
# every ARMv7 board). Use through scripts/cross-build.sh armhf, or:
# cmake -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/arm-linux-gnueabihf.cmake ...
set(CMAKE_SYSTEM_PROCESSOR armv7l)
set(PD_CROSS_TRIPLET arm-linux-gnueabihf)
set(PD_CROSS_QEMU qemu-arm)
include(${CMAKE_CURRENT_LIST_DIR}/pd-cross-common.cmake)
