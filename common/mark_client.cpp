// SPDX-License-Identifier: BSD-3-Clause
#include "common/mark_client.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/errno_name.h"
#include "common/query_escape.h"
#include "common/unique_fd.h"

namespace nvj {

namespace {

[[noreturn]] void fail(const std::string& socket_path, const std::string& what, int error) {
  std::string text = "POST /mark to " + socket_path + ": " + what;
  if (error != 0) text += ": " + errno_message(error) + " (" + errno_name(error) + ")";
  throw MarkError(text, error);
}

// The mark as a line on a serial line (a tty) to the host's relay: raw,
// 115200 baud (an emulated UART sends at the speed it is set to), written
// whole, drained, and then the relay's answer read back (kSerialMarked once
// the server has the mark), so the caller goes on only after the mark is in
// the server's recording. The line is held with flock from the write to the
// answer: the processes of a workload take turns, each reading its own.
void write_serial_line(const std::string& device, const std::string& line, std::chrono::milliseconds timeout) {
  UniqueFd fd(::open(device.c_str(), O_RDWR | O_NOCTTY | O_CLOEXEC));
  if (!fd.valid()) fail(device, "cannot open the serial line", errno);
  while (::flock(fd.get(), LOCK_EX) != 0)
    if (errno != EINTR) fail(device, "locking the serial line", errno);
  termios tio{};
  if (::tcgetattr(fd.get(), &tio) == 0) {
    ::cfmakeraw(&tio);
    ::cfsetospeed(&tio, B115200);
    ::cfsetispeed(&tio, B115200);
    ::tcsetattr(fd.get(), TCSANOW, &tio);
  }
  ::tcflush(fd.get(), TCIFLUSH);  // an answer that came after its caller gave up
  for (std::size_t sent = 0; sent < line.size();) {
    const ssize_t n = ::write(fd.get(), line.data() + sent, line.size() - sent);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(device, "writing", errno);
    sent += static_cast<std::size_t>(n);
  }
  if (::tcdrain(fd.get()) != 0 && errno != ENOTTY) fail(device, "draining", errno);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string answer;
  for (;;) {
    for (std::size_t end; (end = answer.find('\n')) != std::string::npos; answer.erase(0, end + 1)) {
      std::string_view got(answer.data(), end);
      if (!got.empty() && got.back() == '\r') got.remove_suffix(1);
      if (got == kSerialMarked) return;
      if (got.substr(0, kSerialRefused.size()) == kSerialRefused)
        fail(device, "the host did not post it: " + std::string(got.substr(kSerialRefused.size())), 0);
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      fail(device, "no answer from the host in " + std::to_string(timeout.count()) + " ms (is nvj vm relaying marks?)",
           ETIMEDOUT);
    pollfd p{fd.get(), POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) fail(device, "waiting for the host's answer", errno);
    if (ready == 0) continue;
    char buffer[256];
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) fail(device, "reading the host's answer", n < 0 ? errno : EPIPE);
    answer.append(buffer, static_cast<std::size_t>(n));
  }
}

}  // namespace

void post_mark(const std::string& target, std::string_view label, std::chrono::milliseconds timeout) {
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0 && S_ISCHR(st.st_mode)) {
    write_serial_line(target, std::string(kSerialMarkPrefix) + query_escape(label) + "\n", timeout);
    return;
  }
  post_escaped_mark(target, query_escape(label), timeout);
}

void serial_lab_request(const std::string& device, std::string_view words, std::chrono::milliseconds timeout) {
  if (words.find('\n') != std::string_view::npos) fail(device, "a lab request is one line", EINVAL);
  try {
    write_serial_line(device, std::string(kSerialLabPrefix) + std::string(words) + "\n", timeout);
  } catch (const MarkError& e) {  // named as what it was, not as a mark
    std::string what = e.what();
    const std::string mark = "POST /mark to ";
    if (what.rfind(mark, 0) == 0) what = "the lab request '" + std::string(words.substr(0, words.find(' ', words.find(' ') + 1))) + "' on " + what.substr(mark.size());
    throw MarkError(what, e.error());
  }
}

void post_escaped_mark(const std::string& socket_path, std::string_view escaped_label,
                       std::chrono::milliseconds timeout) {
  const ControlResponse answer =
      control_request(socket_path, "POST", "/mark?label=" + std::string(escaped_label), timeout);
  if (answer.status == 200) return;
  std::string body = answer.body.substr(0, 300);
  while (!body.empty() && (body.back() == '\n' || body.back() == '\r')) body.pop_back();
  throw MarkError("control socket " + socket_path + ": POST /mark answered " + std::to_string(answer.status) +
                      (body.empty() ? "" : ": " + body),
                  0);
}

}  // namespace nvj
