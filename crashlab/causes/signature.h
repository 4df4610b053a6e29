// SPDX-License-Identifier: BSD-3-Clause
// A failing state's signature: what its verdict says, in words that group
// the states failing the same way, whichever files or numbers are
// involved. "fail: file missing, prefix short" (each kind of fact broken
// and how, as FactViolation says, sorted, once each), "unreadable: journal:
// journal recovery failed (error #)" (the error with its numbers made #,
// a checker's findings cut to the first, its quoted names made '#' and a
// list it gives dropped: "unreadable: e2fsck -fn exits #: Inode # ref count
// is #, should be #.  Fix? no").
// A check details, minimizes and confirms with the kernel only the first
// few states of each signature, and can stop once one signature has been
// seen often enough (nvj crash check --per-signature, --max-findings). Pure.
#pragma once

#include <string>

#include "crashlab/judge/fast_path.h"

namespace crashlab {

// Empty for a verdict that passes.
std::string signature_of(const StateVerdict& verdict);

}  // namespace crashlab
