// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/vm/guest_init.h"

#include <fstream>
#include <stdexcept>

namespace nvj::cli {

std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (const char c : text) {
    if (c == '\0') throw std::invalid_argument("a shell word cannot hold a NUL byte");
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

std::string shell_script(const std::vector<std::string>& argv) {
  std::string out = "exec";
  for (const auto& a : argv) out += ' ' + shell_quote(a);
  return out + "\n";
}

std::string guest_config(const GuestPlan& plan) {
  return "NVJ_TOKEN=" + shell_quote(plan.token) + "\n" +                      //
         "NVJ_DISKS=" + std::to_string(plan.disks) + "\n" +                   //
         "NVJ_JOURNAL=" + (plan.journal ? "yes" : "no") + "\n" +              //
         "NVJ_FS=" + shell_quote(plan.filesystem) + "\n" +                   //
         "NVJ_MOUNT_OPTIONS=" + shell_quote(plan.mount_options) + "\n" +      //
         "NVJ_CRASH=" + (plan.crash ? "yes" : "no") + "\n" +                  //
         "NVJ_CRASH_WAIT=" + std::to_string(plan.crash_wait_seconds) + "\n" +  //
         "NVJ_FACTS=" + (plan.facts ? "yes" : "no") + "\n" +                 //
         "NVJ_HOST_ROOT=" + (plan.host_root ? "yes" : "no") + "\n" +          //
         "NVJ_TRANSPORT=" + (plan.nbd_attach.empty() ? "scsi" : "nbd") + "\n" +  //
         "NVJ_GUEST_ADDRESS=" + shell_quote(plan.guest_address) + "\n";
}

std::string guest_nbd_attach_script(const GuestPlan& plan) {
  std::string out;
  for (std::size_t i = 0; i < plan.nbd_attach.size(); ++i) {
    const std::string device = "/dev/nbd" + std::to_string(i);
    out += "nbd_attach " + device;
    for (const auto& word : plan.nbd_attach[i]) out += ' ' + shell_quote(word);
    out += '\n';
    if (i < plan.nbd_queues.size()) {
      const GuestPlan::NbdQueue& q = plan.nbd_queues[i];
      out += "nbd_queue " + device + (q.rotational ? " 1" : " 0") +
             (q.write_back ? " 'write back'" : " 'write through'") + (q.discard ? " yes" : " no") + "\n";
    }
  }
  return out;
}

std::string new_token() {
  std::ifstream random("/dev/urandom", std::ios::binary);
  unsigned char bytes[8] = {};
  if (!random.read(reinterpret_cast<char*>(bytes), sizeof bytes)) throw std::runtime_error("cannot read /dev/urandom");
  static constexpr char hex[] = "0123456789abcdef";
  std::string token;
  for (const unsigned char b : bytes) {
    token += hex[b >> 4];
    token += hex[b & 15];
  }
  return token;
}

}  // namespace nvj::cli
