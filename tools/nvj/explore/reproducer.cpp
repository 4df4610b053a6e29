// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/explore/reproducer.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <sstream>

#include "tools/nvj/vm/guest_init.h"
#include "tools/workloads/explore_steps.h"

namespace nvj::cli {

namespace {

using crashlab::explore::OpKind;
using crashlab::explore::Persist;
using crashlab::explore::Step;

// A Python string literal of printable ASCII (paths and labels are).
std::string py(const std::string& text) {
  std::string out = "'";
  for (const char c : text) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

// The Python of one operation, as tools/workloads/explore_steps.cpp's run_op does it.
std::string op_code(const crashlab::explore::Op& op) {
  const std::string p = py(op.path), q = py(op.second), what = py(std::string(to_string(op.kind)));
  switch (op.kind) {
    case OpKind::creat: return "os.close(os.open(" + p + ", os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))";
    case OpKind::mkdir: return "os.mkdir(" + p + ", 0o755)";
    case OpKind::fill: return "pwrite(" + p + ", os.O_WRONLY, pattern(" + what + ", " + p + ", 8192), 0)";
    case OpKind::write_append:
      return "fd = os.open(" + p + ", os.O_WRONLY | os.O_APPEND); os.write(fd, pattern(" + what + ", " + p +
             ", 4096)); os.close(fd)";
    case OpKind::write_overwrite: return "pwrite(" + p + ", os.O_WRONLY, pattern(" + what + ", " + p + ", 4096), 4096)";
    case OpKind::write_unaligned: return "pwrite(" + p + ", os.O_WRONLY, pattern(" + what + ", " + p + ", 5000), 3000)";
    case OpKind::write_direct:
      return "buf = mmap.mmap(-1, 4096); buf.write(pattern(" + what + ", " + p +
             ", 4096)); fd = os.open(" + p + ", os.O_WRONLY | os.O_DIRECT); os.pwrite(fd, buf, 0); os.close(fd)";
    case OpKind::mmap_write:
      return "fd = os.open(" + p + ", os.O_RDWR); m = mmap.mmap(fd, 8192); m[4000:4100] = pattern(" + what + ", " + p +
             ", 100); m.flush(); m.close(); os.close(fd)";
    case OpKind::falloc: return "falloc(" + p + ", 0, 8192, 8192)";
    case OpKind::falloc_keep_size: return "falloc(" + p + ", KEEP_SIZE, 8192, 8192)";
    case OpKind::falloc_punch: return "falloc(" + p + ", PUNCH_HOLE | KEEP_SIZE, 4096, 4096)";
    case OpKind::falloc_zero: return "falloc(" + p + ", ZERO_RANGE, 1000, 4000)";
    case OpKind::truncate_shrink: return "os.truncate(" + p + ", 3000)";
    case OpKind::truncate_grow: return "os.truncate(" + p + ", 20000)";
    case OpKind::link: return "os.link(" + p + ", " + q + ")";
    case OpKind::unlink: return "os.unlink(" + p + ")";
    case OpKind::rmdir: return "os.rmdir(" + p + ")";
    case OpKind::rename_new:
    case OpKind::rename_over:
    case OpKind::rename_dir: return "os.rename(" + p + ", " + q + ")";
    case OpKind::symlink: return "os.symlink(" + q + ", " + p + ")";
    case OpKind::setxattr: return "os.setxattr(" + p + ", 'user.nvj', pattern(" + what + ", " + p + ", 16))";
    case OpKind::removexattr: return "os.removexattr(" + p + ", 'user.nvj')";
    case OpKind::chmod: return "os.chmod(" + p + ", 0o" + op.second + ")";
    case OpKind::nothing: return "pass";
  }
  return "";
}

std::string persist_code(const Step& s) {
  switch (s.persist) {
    case Persist::none: return "";
    case Persist::sync: return "os.sync()";
    case Persist::fsync: return "fd = os.open(" + py(s.persist_path) + ", os.O_RDONLY); os.fsync(fd); os.close(fd)";
    case Persist::fdatasync:
      return "fd = os.open(" + py(s.persist_path) + ", os.O_RDONLY); os.fdatasync(fd); os.close(fd)";
  }
  return "";
}

constexpr const char* kPrelude = R"(import ctypes, mmap, os, socket, time, urllib.parse

KEEP_SIZE, PUNCH_HOLE, ZERO_RANGE = 1, 2, 16
libc = ctypes.CDLL(None, use_errno=True)
libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]

def pattern(op, path, n):
    # FNV-1a of "op:path", then xorshift32: the explorer's bytes.
    x = 2166136261
    for c in (op + ":" + path).encode():
        x = ((x ^ c) * 16777619) & 0xFFFFFFFF
    out = bytearray(n)
    for i in range(n):
        x ^= (x << 13) & 0xFFFFFFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFFFFFF
        out[i] = x & 0xFF
    return bytes(out)

def pwrite(path, flags, data, at):
    fd = os.open(path, flags)
    os.pwrite(fd, data, at)
    os.close(fd)

def falloc(path, mode, at, n):
    fd = os.open(path, os.O_WRONLY)
    if libc.fallocate(fd, mode, at, n) != 0:
        raise OSError(ctypes.get_errno(), "fallocate " + path)
    os.close(fd)

def periodic_commit(seconds):
    # Every file's dirty pages written back (sync_file_range WAIT_BEFORE |
    # WRITE | WAIT_AFTER: no flush, no commit asked for), then the wait for
    # the periodic commit of commit=1 (workloads::kPeriodicCommitWaitMs).
    libc.sync_file_range.argtypes = [ctypes.c_int, ctypes.c_longlong, ctypes.c_longlong, ctypes.c_uint]
    for top, dirs, files in os.walk("."):
        dirs[:] = [d for d in dirs if not (top == "." and d == "lost+found")]
        for f in files:
            path = os.path.join(top, f)
            if os.path.islink(path):
                continue
            fd = os.open(path, os.O_RDONLY)
            if libc.sync_file_range(fd, 0, 0, 7) != 0:
                raise OSError(ctypes.get_errno(), "sync_file_range " + path)
            os.close(fd)
    time.sleep(seconds)

def mark(label):
    # POST /mark on the server's control socket (nvj crash run sets NVJ_CONTROL).
    s = socket.socket(socket.AF_UNIX)
    s.connect(os.environ["NVJ_CONTROL"])
    target = "/mark?label=" + urllib.parse.quote(label, safe="")
    s.sendall(("POST " + target + " HTTP/1.1\r\nHost: nvjournal\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").encode())
    answer = b""
    while True:
        chunk = s.recv(4096)
        if not chunk:
            break
        answer += chunk
    s.close()
    if not answer.startswith(b"HTTP/1.1 200"):
        raise RuntimeError("POST /mark: " + answer.decode(errors="replace").splitlines()[0] if answer else "no answer")
)";

// What `nvj crash run` is given besides the command: the mount options
// and the plugin's parameters the exploration was given (fs-free=old-data,
// say), without which the workload may not fail.
std::string run_arguments(const std::string& mount_options, const std::vector<std::string>& parameters) {
  const auto word = [](const std::string& text) {  // quoted where the shell would split or expand it
    const bool plain = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("=,._/:+-@%", c) != nullptr;
    });
    return plain ? text : shell_quote(text);
  };
  std::string out = mount_options.empty() ? "" : " --mount-options " + word(mount_options);
  for (const std::string& p : parameters) out += " " + word(p);
  return out;
}

}  // namespace

std::string reproducer_script(const crashlab::explore::Workload& workload, const std::string& bound,
                              const std::string& mount_options, const std::vector<std::string>& parameters,
                              const std::vector<ReproducerStep>& steps, bool periodic_commit) {
  std::ostringstream s;
  s << "#!/bin/sh\n"
    << "# nvj crash explore, " << bound << " workload " << workload.ordinal << ": " << workload.name << "\n"
    << "# Its steps, in the filesystem's root, with the facts the explorer posted. Run it as\n"
    << "#   nvj crash run" << run_arguments(mount_options, parameters) << " -- sh reproduce.sh\n"
    << "set -e\n"
    << "exec python3 - <<'NVJ_EOF'\n"
    << kPrelude << "\n";
  for (const ReproducerStep& r : steps) {
    s << "# " << (r.step.setup ? "setup: " : "") << describe_step(r.step) << "\n";
    for (const std::string& label : r.before) s << "mark(" << py(label) << ")\n";
    s << op_code(r.step.op) << "\n";
    for (const std::string& label : r.written) s << "mark(" << py(label) << ")\n";
    if (periodic_commit && !r.step.setup)
      s << "periodic_commit(" << workloads::kPeriodicCommitWaitMs / 1000.0 << ")\n";
    if (r.step.persist != Persist::none) s << persist_code(r.step) << "\n";
    for (const std::string& label : r.after) s << "mark(" << py(label) << ")\n";
  }
  s << "NVJ_EOF\n";
  return s.str();
}

std::string guest_reproducer_script(const crashlab::explore::Workload& workload, const std::string& bound,
                                    const std::string& ops, const std::string& mount_options,
                                    const std::vector<std::string>& parameters,
                                    const crashlab::explore::OracleOptions& oracle,
                                    const workloads::StepOptions& step_options, const std::string& kernel,
                                    unsigned cpus) {
  std::ostringstream s;
  s << "#!/bin/sh\n"
    << "# nvj crash explore --vm, " << bound << (ops.empty() ? "" : " of " + ops) << " workload " << workload.ordinal
    << ": " << workload.name << "\n"
    << "# Its steps with the facts the explorer posted, by the guest's own nvj-workload (the same\n"
    << "# program the explorer's guest ran). Run it in a guest on the same kernel as\n"
    << "#   nvj crash run --vm --kernel " << kernel << (cpus > 1 ? " --cpus " + std::to_string(cpus) : "")
    << run_arguments(mount_options, parameters) << " -- sh -c \"$(cat reproduce-guest.sh)\"\n"
    << "exec nvj-workload explore-steps --bound " << bound << (ops.empty() ? "" : " --ops " + ops) << " --workload "
    << workload.ordinal << workloads::oracle_flags(oracle) << workloads::step_flags(step_options)
    << " --trace /tmp/nvj-explore-trace.json\n";
  return s.str();
}

}  // namespace nvj::cli
