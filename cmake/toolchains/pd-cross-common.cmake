# Shared part of the powerdag cross toolchain files (included by <triplet>.cmake, which sets
# PD_CROSS_TRIPLET and CMAKE_SYSTEM_PROCESSOR first). Not a toolchain file on its own.
#
# Two ways to find the target libraries:
#   * Debian multiarch (default): scripts/install-cross-deps.sh installs libyaml-dev:arm64 etc. next
#     to the host packages, in /usr/lib/<triplet> with headers in /usr/include. No sysroot.
#   * A board sysroot: set PD_CROSS_SYSROOT (environment or -D) to a copy of the board's root file
#     system with its -dev packages (PetaLinux SDK sysroot, an L4T/Ubuntu rootfs). Needed when the
#     board's C library is older than Debian 12's glibc 2.36 (L4T on Ubuntu 20.04 has 2.31): a
#     binary only runs on a glibc at least as new as the one it was linked against.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_C_COMPILER ${PD_CROSS_TRIPLET}-gcc)
set(CMAKE_CXX_COMPILER ${PD_CROSS_TRIPLET}-g++)
set(CMAKE_AR ${PD_CROSS_TRIPLET}-ar CACHE FILEPATH "")
set(CMAKE_RANLIB ${PD_CROSS_TRIPLET}-ranlib CACHE FILEPATH "")
set(CMAKE_STRIP ${PD_CROSS_TRIPLET}-strip CACHE FILEPATH "")

# The toolchain file is re-read by every try_compile, which only sees the environment: keep the
# sysroot choice there too.
if(NOT DEFINED PD_CROSS_SYSROOT AND DEFINED ENV{PD_CROSS_SYSROOT})
  set(PD_CROSS_SYSROOT "$ENV{PD_CROSS_SYSROOT}")
endif()
if(PD_CROSS_SYSROOT)
  set(ENV{PD_CROSS_SYSROOT} "${PD_CROSS_SYSROOT}")
  set(CMAKE_SYSROOT "${PD_CROSS_SYSROOT}")
  set(CMAKE_FIND_ROOT_PATH "${PD_CROSS_SYSROOT}")
  set(_pd_pc_root "${PD_CROSS_SYSROOT}")
  set(ENV{PKG_CONFIG_SYSROOT_DIR} "${PD_CROSS_SYSROOT}")
else()
  # Debian multiarch: the target's files live in the host's /usr, under /usr/lib/<triplet>.
  set(CMAKE_FIND_ROOT_PATH /usr/${PD_CROSS_TRIPLET})
  set(CMAKE_LIBRARY_ARCHITECTURE ${PD_CROSS_TRIPLET})
  set(_pd_pc_root "")
  unset(ENV{PKG_CONFIG_SYSROOT_DIR})
endif()

# pkg-config must never answer with the host's x86-64 .pc files: LIBDIR replaces the default
# search path (PKG_CONFIG_PATH would only prepend to it).
set(ENV{PKG_CONFIG_LIBDIR}
    "${_pd_pc_root}/usr/lib/${PD_CROSS_TRIPLET}/pkgconfig:${_pd_pc_root}/usr/lib/pkgconfig:${_pd_pc_root}/usr/share/pkgconfig")
unset(ENV{PKG_CONFIG_PATH})

# Programs (pkg-config, the compilers) come from the host; libraries and headers from the target.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

# Cross-built agents are run by the tests under qemu-user; CMake uses this for try_run and
# add_test on cross builds.
if(NOT PD_CROSS_SYSROOT)
  # No -L: the multiarch loader (/lib/ld-linux-*.so.*) and libc6:<arch> are found at their host
  # paths. -L /usr/<triplet> would pair the libc6-<arch>-cross loader with the multiarch libc.so.6
  # (another Debian revision of glibc): pthread_create then spins forever (aarch64) or crashes (armhf).
  set(CMAKE_CROSSCOMPILING_EMULATOR ${PD_CROSS_QEMU})
endif()
