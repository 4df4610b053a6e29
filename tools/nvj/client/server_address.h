// Where a running nvjournal server is: a Unix socket path or an NBD URI
// (nbd://HOST[:PORT]/EXPORT, nbd+unix:///EXPORT?socket=PATH).
#pragma once

#include <string>
#include <vector>

namespace nvj::cli {

struct ExportInfo {
  std::string name;
  std::string description;
};

class ServerAddress {
 public:
  // "PATH" (a socket) or "nbd...://..." (a URI). Throws std::invalid_argument
  // for anything else.
  static ServerAddress parse(const std::string& text);

  // The URI of one export of this server.
  std::string uri_for(const std::string& export_name) const;

  // The server's exports, asked over NBD (NBD_OPT_LIST). Throws
  // std::runtime_error if the server cannot be reached.
  std::vector<ExportInfo> list_exports() const;

  // The Unix socket, or "" for TCP.
  const std::string& socket() const { return socket_; }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
  std::string prefix_;  // up to and including the '/' before the export name
  std::string query_;   // "?..." or ""
  std::string socket_;
};

}  // namespace nvj::cli
