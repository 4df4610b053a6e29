// SPDX-License-Identifier: BSD-3-Clause
// libnbd, loaded by the nvj program when it makes its first NBD handle
// rather than when it starts: libnbd brings GnuTLS and a dozen libraries
// with it, whose loading and initialisation were most of what `nvj
// --version` or `nvj stats` cost, though only attach, bench and vm speak
// NBD. The functions nvj calls are defined here, with the declarations of
// <libnbd.h>, and forward to the library's; the nvj program links this file
// instead of libnbd (tools/nvj/CMakeLists.txt). Every other program and
// test links libnbd as usual.
//
// If libnbd cannot be loaded, or lacks one of these functions, nbd_create
// returns NULL and nbd_get_error says why, as libnbd's own would: the
// caller's error names it ("libnbd: libnbd.so.0: cannot open shared object
// file ...; nvj needs the libnbd0 package").
#include <dlfcn.h>
#include <libnbd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

constexpr const char* kLibrary = "libnbd.so.0";

// The functions nvj calls, found when the library is loaded.
struct Libnbd {
  decltype(&::nbd_create) create = nullptr;
  decltype(&::nbd_close) close = nullptr;
  decltype(&::nbd_get_error) get_error = nullptr;
  decltype(&::nbd_set_uri_allow_local_file) set_uri_allow_local_file = nullptr;
  decltype(&::nbd_set_opt_mode) set_opt_mode = nullptr;
  decltype(&::nbd_connect_uri) connect_uri = nullptr;
  decltype(&::nbd_opt_list) opt_list = nullptr;
  decltype(&::nbd_opt_abort) opt_abort = nullptr;
  decltype(&::nbd_get_size) get_size = nullptr;
  decltype(&::nbd_aio_pread) aio_pread = nullptr;
  decltype(&::nbd_aio_pwrite) aio_pwrite = nullptr;
  decltype(&::nbd_aio_in_flight) aio_in_flight = nullptr;
  decltype(&::nbd_poll) poll = nullptr;
  decltype(&::nbd_shutdown) shutdown = nullptr;
  decltype(&::nbd_is_rotational) is_rotational = nullptr;
  decltype(&::nbd_can_flush) can_flush = nullptr;
  decltype(&::nbd_can_fua) can_fua = nullptr;
  decltype(&::nbd_can_trim) can_trim = nullptr;
  decltype(&::nbd_get_block_size) get_block_size = nullptr;
  std::string error;  // why it is not loaded; empty once it is
};

template <class F>
void find(void* library, const char* name, F& into, std::string& missing) {
  void* symbol = dlsym(library, name);
  if (symbol == nullptr && missing.empty()) missing = name;
  into = reinterpret_cast<F>(symbol);
}

Libnbd load() {
  Libnbd l;
  void* library = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    l.error = std::string(why != nullptr ? why : kLibrary) + "; nvj needs the libnbd0 package";
    return l;
  }
  std::string missing;
  find(library, "nbd_create", l.create, missing);
  find(library, "nbd_close", l.close, missing);
  find(library, "nbd_get_error", l.get_error, missing);
  find(library, "nbd_set_uri_allow_local_file", l.set_uri_allow_local_file, missing);
  find(library, "nbd_set_opt_mode", l.set_opt_mode, missing);
  find(library, "nbd_connect_uri", l.connect_uri, missing);
  find(library, "nbd_opt_list", l.opt_list, missing);
  find(library, "nbd_opt_abort", l.opt_abort, missing);
  find(library, "nbd_get_size", l.get_size, missing);
  find(library, "nbd_aio_pread", l.aio_pread, missing);
  find(library, "nbd_aio_pwrite", l.aio_pwrite, missing);
  find(library, "nbd_aio_in_flight", l.aio_in_flight, missing);
  find(library, "nbd_poll", l.poll, missing);
  find(library, "nbd_shutdown", l.shutdown, missing);
  find(library, "nbd_is_rotational", l.is_rotational, missing);
  find(library, "nbd_can_flush", l.can_flush, missing);
  find(library, "nbd_can_fua", l.can_fua, missing);
  find(library, "nbd_can_trim", l.can_trim, missing);
  find(library, "nbd_get_block_size", l.get_block_size, missing);
  if (!missing.empty()) {
    l.error = std::string(kLibrary) + " has no " + missing + ": nvj needs libnbd 1.14 or later";
    dlclose(library);
  }
  return l;
}

// Loaded once, by the first nbd_create (thread-safe: a function's static).
const Libnbd& libnbd() {
  static const Libnbd l = load();
  return l;
}

// The others are called only with a handle nbd_create made, so libnbd is
// loaded; anything else is a defect of nvj's.
const Libnbd& loaded() {
  const Libnbd& l = libnbd();
  if (!l.error.empty()) {
    std::fprintf(stderr, "nvj: a libnbd call without a handle: %s\n", l.error.c_str());
    std::abort();
  }
  return l;
}

}  // namespace

extern "C" {

struct nbd_handle* nbd_create(void) {
  const Libnbd& l = libnbd();
  return l.error.empty() ? l.create() : nullptr;
}

const char* nbd_get_error(void) {
  const Libnbd& l = libnbd();
  return l.error.empty() ? l.get_error() : l.error.c_str();
}

void nbd_close(struct nbd_handle* h) {
  if (h != nullptr) loaded().close(h);
}

int nbd_set_uri_allow_local_file(struct nbd_handle* h, bool allow) {
  return loaded().set_uri_allow_local_file(h, allow);
}

int nbd_set_opt_mode(struct nbd_handle* h, bool enable) { return loaded().set_opt_mode(h, enable); }

int nbd_connect_uri(struct nbd_handle* h, const char* uri) { return loaded().connect_uri(h, uri); }

int nbd_opt_list(struct nbd_handle* h, nbd_list_callback list_callback) {
  return loaded().opt_list(h, list_callback);
}

int nbd_opt_abort(struct nbd_handle* h) { return loaded().opt_abort(h); }

int64_t nbd_get_size(struct nbd_handle* h) { return loaded().get_size(h); }

int64_t nbd_aio_pread(struct nbd_handle* h, void* buf, size_t count, uint64_t offset,
                      nbd_completion_callback completion_callback, uint32_t flags) {
  return loaded().aio_pread(h, buf, count, offset, completion_callback, flags);
}

int64_t nbd_aio_pwrite(struct nbd_handle* h, const void* buf, size_t count, uint64_t offset,
                       nbd_completion_callback completion_callback, uint32_t flags) {
  return loaded().aio_pwrite(h, buf, count, offset, completion_callback, flags);
}

int nbd_aio_in_flight(struct nbd_handle* h) { return loaded().aio_in_flight(h); }

int nbd_poll(struct nbd_handle* h, int timeout) { return loaded().poll(h, timeout); }

int nbd_shutdown(struct nbd_handle* h, uint32_t flags) { return loaded().shutdown(h, flags); }

int nbd_is_rotational(struct nbd_handle* h) { return loaded().is_rotational(h); }

int nbd_can_flush(struct nbd_handle* h) { return loaded().can_flush(h); }

int nbd_can_fua(struct nbd_handle* h) { return loaded().can_fua(h); }

int nbd_can_trim(struct nbd_handle* h) { return loaded().can_trim(h); }

int64_t nbd_get_block_size(struct nbd_handle* h, int size_type) { return loaded().get_block_size(h, size_type); }

}  // extern "C"
