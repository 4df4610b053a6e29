# Warnings are errors in the project's own code (not in system headers).
add_library(nvj_warnings INTERFACE)
target_compile_options(nvj_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion
  -Wnon-virtual-dtor -Wold-style-cast -Wcast-align -Woverloaded-virtual
  -Wnull-dereference -Wformat=2 -Werror)
