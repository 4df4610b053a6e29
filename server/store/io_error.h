// SPDX-License-Identifier: BSD-3-Clause
// IoError: a failed system call while serving, carrying the errno the NBD
// client gets. Its text comes from errno_text(), never strerror(): strerror
// takes glibc's locale lock, which deadlocks a sanitized plugin when nbdkit
// exits, and translated text would vary between machines' logs.
#pragma once

#include <stdexcept>
#include <string>

namespace nvj {

// "No such file or directory": glibc's untranslated description.
std::string errno_text(int err);

class IoError : public std::runtime_error {
 public:
  IoError(int err, const std::string& what) : std::runtime_error(what + ": " + errno_text(err)), err_(err) {}
  int error() const { return err_; }

 private:
  int err_;
};

}  // namespace nvj
