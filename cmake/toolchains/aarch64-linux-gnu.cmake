# CMake toolchain file: powerdag-agent for 64-bit Arm Linux boards (ZCU102 / PetaLinux, Jetson
# AGX Xavier / L4T). Compiler: Debian's gcc-aarch64-linux-gnu. Use through scripts/cross-build.sh
# aarch64, or: cmake -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake ...
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(PD_CROSS_TRIPLET aarch64-linux-gnu)
set(PD_CROSS_QEMU qemu-aarch64)
include(${CMAKE_CURRENT_LIST_DIR}/pd-cross-common.cmake)
