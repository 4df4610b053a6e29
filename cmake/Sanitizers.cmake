# SPDX-License-Identifier: BSD-3-Clause
# NVJ_SANITIZE=ON builds everything with ASan and UBSan. A plugin built this
# way is loaded into a stock nbdkit with the ASan runtime preloaded (see
# tests/integration/lib.sh).
if(NVJ_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
