# SPDX-License-Identifier: BSD-3-Clause
# The Debian package: `cpack -G DEB` in a build folder (or the `package`
# target) writes nvjournal_VERSION_ARCH.deb from this build's install rules:
# the plugin in nbdkit's plugin folder (so `nbdkit nvjournal` finds it by
# name), nvj and nvj-workload in /usr/bin, the manual pages, the JSON Schemas
# and the user's documents in /usr/share/doc/nvjournal, and nvj's bash
# completion. cpack packages what is built; it does
# not build (the `package` target does, first).
#
# Included by the top CMakeLists.txt after the product's folders, so the
# targets it looks for exist.

set(NVJ_PACKAGE_MAINTAINER "nvjournal maintainers <nvjournal@example.org>" CACHE STRING
  "The Debian package's Maintainer field: NAME <EMAIL>")

# The user's documents beside the schemas (docs/CMakeLists.txt): the README,
# and the experiments with the tables and plots they show.
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/docs/experiments.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/experiments/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/experiments
        FILES_MATCHING PATTERN "*.png" PATTERN "table.md")

# Debian wants a copyright file in every package, in its machine-readable
# format: the notice and the licence's full text, from LICENSE (BSD-3-Clause),
# each line of the text indented as the format requires ("." for a blank).
set(NVJ_COPYRIGHT ${CMAKE_BINARY_DIR}/package/copyright)
file(READ ${PROJECT_SOURCE_DIR}/LICENSE NVJ_LICENSE_TEXT)
# The text after the title and the notice: from its first condition on.
string(REGEX REPLACE "^.*All rights reserved\\.\n\n" "" NVJ_LICENSE_TEXT "${NVJ_LICENSE_TEXT}")
string(REGEX REPLACE "\n$" "" NVJ_LICENSE_TEXT "${NVJ_LICENSE_TEXT}")
string(REPLACE "\n\n" "\n.\n" NVJ_LICENSE_TEXT "${NVJ_LICENSE_TEXT}")
string(REPLACE "\n" "\n " NVJ_LICENSE_TEXT " ${NVJ_LICENSE_TEXT}")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/LICENSE)
file(WRITE ${NVJ_COPYRIGHT}
  "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"
  "Upstream-Name: nvjournal\n"
  "Upstream-Contact: ${NVJ_PACKAGE_MAINTAINER}\n\n"
  "Files: *\n"
  "Copyright: 2026 the nvjournal authors\n"
  "License: BSD-3-Clause\n\n"
  "License: BSD-3-Clause\n"
  "${NVJ_LICENSE_TEXT}\n")
install(FILES ${NVJ_COPYRIGHT} DESTINATION ${CMAKE_INSTALL_DOCDIR})

# And a changelog: one entry for this version, dated now or at
# SOURCE_DATE_EPOCH when set; compressed as Debian keeps it (gzip -9n).
find_program(GZIP gzip REQUIRED)
string(TIMESTAMP NVJ_PACKAGE_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)
file(CONFIGURE OUTPUT ${CMAKE_BINARY_DIR}/package/changelog CONTENT
"nvjournal (${PROJECT_VERSION}) unstable; urgency=medium

  * nvjournal ${PROJECT_VERSION}, packaged with CPack from its sources.

 -- ${NVJ_PACKAGE_MAINTAINER}  ${NVJ_PACKAGE_DATE}
")
execute_process(COMMAND ${GZIP} -9nkf ${CMAKE_BINARY_DIR}/package/changelog COMMAND_ERROR_IS_FATAL ANY)
install(FILES ${CMAKE_BINARY_DIR}/package/changelog.gz DESTINATION ${CMAKE_INSTALL_DOCDIR})

# nvj-workload is static on purpose: `nvj vm` puts it into a guest's
# initramfs, which has no C++ library. Said to lintian where it looks.
install(FILES ${PROJECT_SOURCE_DIR}/cmake/nvjournal.lintian-overrides
        DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides RENAME nvjournal)

# nvj's bash completion, written into the build tree by the target
# nvj_bash_completion (tools/nvj: nvj prints its own completion).
install(FILES ${CMAKE_BINARY_DIR}/completion/nvj DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME nvjournal)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${NVJ_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "lab for filesystem journals, served over NBD")
set(CPACK_PACKAGE_DESCRIPTION [=[nvjournal is an nbdkit plugin that serves a data disk and a journal
device with the timing and the durability of real hardware (an NVRAM
journal, an SSD, a spinning disk with a volatile write cache), builds ext4
on them, decodes the jbd2 journal live from the writes it serves, and can
cut the power.

The nvj command attaches the exports to this host's block layer or to a VM
under QEMU, runs the classic journal workloads and experiments, and turns
what the server saw into tables and plots.]=])

# Debian's paths whatever prefix the build was configured with. The plugin's
# folder is an absolute path (nbdkit's plugindir), so cpack installs through
# DESTDIR with the prefix /usr, which keeps it inside the package.
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# The build keeps its debugging information; the package's copies are stripped.
set(CPACK_STRIP_FILES ON)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# The libraries from dpkg-shlibdeps, and libnbd0, which nvj loads when it
# first speaks NBD (tools/nvj/client/libnbd_on_demand.cpp), so that
# dpkg-shlibdeps does not see it; the programs nvj runs by hand:
#   nbdkit (>= the version built against)  the server, which loads the plugin
#   libnbd-bin, fuse3   nbdfuse and its FUSE mount, for attach without the nbd module
#   e2fsprogs           e2fsck after demo and experiment runs
# Recommended: fs_mark (demo, wheeler2007) and gnuplot (the experiments'
# plots). Suggested: what `nvj vm` boots (it installs them itself as root)
# and nbd-client (attach through the kernel's NBD client when the nbd module
# is loaded).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS
  "nbdkit (>= ${NBDKIT_VERSION}), libnbd0 (>= ${LIBNBD_VERSION}), libnbd-bin, fuse3, e2fsprogs")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "fsmark, gnuplot-nox | gnuplot")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "qemu-system-x86, busybox-static, linux-image-amd64, nbd-client, xfsprogs, btrfs-progs")

include(CPack)
