# The project's warnings, for its own code (not for system headers). They are
# always on; NVJ_WERROR=ON makes them errors. The project's own builds (./run,
# CI) turn it on; it is off by default so a newer compiler's new warning does
# not stop someone else's build of a release.
option(NVJ_WERROR "Treat the project's compiler warnings as errors" OFF)

add_library(nvj_warnings INTERFACE)
target_compile_options(nvj_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion
  -Wnon-virtual-dtor -Wold-style-cast -Wcast-align -Woverloaded-virtual
  -Wnull-dereference -Wformat=2)
if(NVJ_WERROR)
  target_compile_options(nvj_warnings INTERFACE -Werror)
endif()

# GCC 12 at -O3 (Release) reports -Wrestrict inside libstdc++
# (bits/char_traits.h, by way of basic_string::insert) for a string literal
# before a temporary string, `"d" + std::to_string(n)`, a false positive
# that comes and goes with inlining. The code avoids the pattern: append
# (s += ','; s += f();) or start with a character ('d' + std::to_string(n)).
# The build tests (tests/build) build at -O3 and catch it.
