# Loaded through CMAKE_PROJECT_INCLUDE by scripts/cross-build.sh: runs right after project(), i.e.
# after CMake's platform files have set CMAKE_FIND_LIBRARY_SUFFIXES to ".so;.a" (a toolchain file
# runs before them and could not change it), and before the root CMakeLists.txt looks libraries up.
#
# Preferring the static archive links libyaml, jansson and libgpiod into the agent, so the board
# needs none of them. Debian ships no libiio.a (0.24), so libiio stays dynamic: the board needs its
# libiio0 package (docs/BOARDS.md lists the runtime libraries).
set(CMAKE_FIND_LIBRARY_SUFFIXES .a .so)
