// SPDX-License-Identifier: BSD-3-Clause
// Where a running nvjournal server is: a Unix socket path or an NBD URI
// (nbd://HOST[:PORT]/EXPORT, nbd+unix:///EXPORT?socket=PATH, and with TLS
// nbds://HOST[:PORT]/EXPORT, nbds+unix:///EXPORT?socket=PATH), and the
// TLS-PSK key a client presents to it (tls_psk.h).
#pragma once

#include <libnbd.h>

#include <memory>
#include <string>
#include <vector>

#include "tools/nvj/client/tls_psk.h"

namespace nvj::cli {

struct ExportInfo {
  std::string name;
  std::string description;
};

using NbdHandle = std::unique_ptr<nbd_handle, void (*)(nbd_handle*)>;

class ServerAddress {
 public:
  // "PATH" (a socket) or "nbd...://..." (a URI). The PSK file comes from
  // tls.psk_file or the URI's tls-psk-file=, the identity from
  // tls.username, the URI's user (nbds://NAME@HOST/) or tls-username=, else
  // the file's only one; the file is read here. Throws std::invalid_argument
  // for an address that is neither and for TLS settings that do not fit it
  // (a key for a plain address, an nbds URI without a key, two different
  // keys or identities), std::runtime_error for a PSK file that cannot be
  // used.
  static ServerAddress parse(const std::string& text, const TlsOptions& tls = {});

  // The URI of one export of this server, as libnbd and nbdfuse take it:
  // with TLS, the identity as the URI's user and the key as tls-psk-file=.
  std::string uri_for(const std::string& export_name) const;

  // The parameters of nbdkit's nbd plugin (`nbdkit -s nbd PARAMS...`) that
  // connect it to one export, TLS settings included: a plain NBD server in
  // front of this one, for clients that cannot be given a key file
  // (Debian 12's nbdfuse does not let a URI name one).
  std::vector<std::string> nbd_plugin_params(const std::string& export_name) const;

  // A handle connected to one export (in option mode: negotiating, for
  // NBD_OPT_LIST). Throws std::runtime_error with libnbd's reason.
  NbdHandle connect(const std::string& export_name, bool option_mode = false) const;

  // The server's exports, asked over NBD (NBD_OPT_LIST). Throws
  // std::runtime_error if the server cannot be reached.
  std::vector<ExportInfo> list_exports() const;

  // The Unix socket, or "" for TCP.
  const std::string& socket() const { return socket_; }
  // TCP: the host (an IPv6 address without its brackets) and the port
  // ("" = NBD's 10809).
  const std::string& host() const { return host_; }
  const std::string& port() const { return port_; }
  // The export the URI names ("" for a socket path or none).
  const std::string& export_name() const { return export_; }
  const std::string& text() const { return text_; }

  bool tls() const { return tls_; }
  // With TLS: the PSK file (absolute) and the identity used from it; both
  // empty when the URI gives certificates (tls-certificates=) instead.
  const std::string& psk_file() const { return psk_file_; }
  const PskIdentity& psk_identity() const { return identity_; }

 private:
  std::string text_;
  std::string scheme_;     // nbd, nbds, nbd+unix, nbds+unix
  std::string authority_;  // [USER@]HOST[:PORT] as written, the user taken out with TLS
  std::string host_, port_, export_;
  std::vector<std::string> query_;  // the URI's other query items, as written
  std::string certificates_;        // tls-certificates=, decoded
  std::string socket_;
  bool tls_ = false;
  std::string psk_file_;
  PskIdentity identity_;
};

}  // namespace nvj::cli
