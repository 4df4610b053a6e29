// SPDX-License-Identifier: BSD-3-Clause
// A block device's queue settings in sysfs (/sys/block/NAME/queue): what the
// kernel believes about the device under it, and the I/O scheduler it uses.
// nvj attach writes them so that a loop device over an export looks to the
// kernel like the device the export models.
#pragma once

#include <string>

namespace nvj::cli {

struct QueueSettings {
  bool rotational = false;   // queue/rotational
  bool write_back = true;    // queue/write_cache: "write back" or "write through"
  bool discard = true;       // false: queue/discard_max_bytes 0 (the kernel sends no discards)
  std::string scheduler;     // queue/scheduler: none, mq-deadline, bfq, kyber
};

// The scheduler a distribution gives a device: mq-deadline to a rotating
// disk, none to a non-rotating one (flash and NVRAM need no sorting).
std::string default_scheduler(bool rotational);

// Writes each setting of `device` (/dev/NAME), then reads them back: throws
// std::runtime_error naming the file, the value and the kernel's answer
// where the kernel would not take one (a scheduler it does not have, a file
// it does not let be written), or where it reads back otherwise.
void apply_queue_settings(const std::string& device, const QueueSettings& settings);

// Only the scheduler (putting back the one a device had: a loop or nbd
// device keeps its scheduler after it is released, unlike its other
// settings). Throws like apply_queue_settings.
void set_scheduler(const std::string& device, const std::string& scheduler);

// What the kernel holds now; `scheduler` is the one in use (the bracketed one).
QueueSettings read_queue_settings(const std::string& device);

// Whether the device takes discards (queue/discard_max_hw_bytes) while its
// limit (queue/discard_max_bytes) is 0: a limit written by an earlier user
// of a loop device that was held open at its detach, which the kernel keeps
// across bindings and will not let be raised again.
bool discard_limit_stuck(const std::string& device);

// queue/logical_block_size.
unsigned logical_block_size(const std::string& device);

}  // namespace nvj::cli
