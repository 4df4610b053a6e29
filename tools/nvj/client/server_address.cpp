// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/client/server_address.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <stdexcept>

#include "common/query_escape.h"

namespace nvj::cli {
namespace {

// %XX decoded; a '%' not followed by two hex digits stays as it is.
std::string percent_decode(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && hex_digit(text[i + 1]) >= 0 && hex_digit(text[i + 2]) >= 0) {
      out += static_cast<char>(hex_digit(text[i + 1]) * 16 + hex_digit(text[i + 2]));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

// Everything but RFC 3986's unreserved characters (and `keep`) as %XX.
std::string percent_encode(const std::string& text, const std::string& keep = "") {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if ((u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') || c == '-' || c == '.' ||
        c == '_' || c == '~' || keep.find(c) != std::string::npos) {
      out += c;
    } else {
      out += '%';
      out += kHex[u >> 4];
      out += kHex[u & 15];
    }
  }
  return out;
}

// One way of giving a TLS setting, and where it came from, so that two
// that disagree are named.
struct Given {
  std::string value;
  std::string where;
};

void agree(std::optional<Given>& have, const std::string& value, const std::string& where) {
  if (value.empty()) return;
  if (have && have->value != value)
    throw std::invalid_argument(have->where + " and " + where + " disagree: give it once");
  if (!have) have = Given{value, where};
}

}  // namespace

ServerAddress ServerAddress::parse(const std::string& text, const TlsOptions& tls) {
  ServerAddress a;
  a.text_ = text;
  if (text.empty()) throw std::invalid_argument("the server address is empty");
  std::optional<Given> psk, username;
  agree(psk, tls.psk_file, "--tls-psk " + tls.psk_file);
  agree(username, tls.username, "--tls-username " + tls.username);

  if (text.rfind("nbd", 0) != 0 || text.find("://") == std::string::npos) {
    // A socket path.
    a.scheme_ = "nbd+unix";
    a.socket_ = std::filesystem::absolute(text).string();
  } else {
    const std::size_t scheme_end = text.find("://");
    a.scheme_ = text.substr(0, scheme_end);
    if (a.scheme_ != "nbd" && a.scheme_ != "nbds" && a.scheme_ != "nbd+unix" && a.scheme_ != "nbds+unix")
      throw std::invalid_argument("'" + text +
                                  "' is not an NBD URI (nbd[s]://HOST[:PORT]/EXPORT or "
                                  "nbd[s]+unix:///EXPORT?socket=PATH)");
    a.tls_ = a.scheme_.rfind("nbds", 0) == 0;
    const std::size_t authority_start = scheme_end + 3;
    const std::size_t path_start = text.find('/', authority_start);
    const std::size_t query_start = text.find('?', authority_start);
    const std::size_t authority_end = std::min({path_start, query_start, text.size()});
    a.authority_ = text.substr(authority_start, authority_end - authority_start);
    // With TLS the URI's user is the identity; without, it stays as written.
    std::string host_port = a.authority_;
    if (const std::size_t at = host_port.rfind('@'); at != std::string::npos) {
      if (a.tls_) {
        agree(username, percent_decode(host_port.substr(0, at)), "the URI's user");
        a.authority_.erase(0, at + 1);
      }
      host_port.erase(0, at + 1);
    }
    // HOST, HOST:PORT, [IPV6] or [IPV6]:PORT.
    std::size_t port_colon = host_port.rfind(':');
    if (!host_port.empty() && host_port.front() == '[') {
      const std::size_t close = host_port.find(']');
      if (close == std::string::npos) throw std::invalid_argument("'" + text + "': an IPv6 address without its ']'");
      a.host_ = host_port.substr(1, close - 1);
      port_colon = host_port.find(':', close) == close + 1 ? close + 1 : std::string::npos;
    } else {
      a.host_ = host_port.substr(0, port_colon);
    }
    if (port_colon != std::string::npos) a.port_ = host_port.substr(port_colon + 1);
    if (path_start != std::string::npos && path_start < std::min(query_start, text.size()))
      a.export_ = text.substr(path_start + 1, std::min(query_start, text.size()) - path_start - 1);

    std::string query = query_start == std::string::npos ? "" : text.substr(query_start + 1);
    while (!query.empty()) {
      const std::size_t amp = query.find('&');
      const std::string item = query.substr(0, amp);
      query = amp == std::string::npos ? "" : query.substr(amp + 1);
      const std::size_t eq = item.find('=');
      const std::string key = item.substr(0, eq);
      const std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
      if (key == "socket") {
        a.socket_ = value;
      } else if (key == "tls-psk-file") {
        agree(psk, percent_decode(value), "tls-psk-file=" + percent_decode(value) + " in the URI");
      } else if (key == "tls-username") {
        agree(username, percent_decode(value), "tls-username=" + percent_decode(value) + " in the URI");
      } else if (!item.empty()) {
        if (key == "tls-certificates") a.certificates_ = percent_decode(value);
        a.query_.push_back(item);
      }
    }
  }

  if (!a.tls_ && (psk || username))
    throw std::invalid_argument((psk ? psk->where : username->where) +
                                ": TLS options go with a TLS address (nbds://HOST[:PORT]/ or "
                                "nbds+unix:///?socket=PATH), and '" + text + "' is not one");
  if (a.tls_ && !psk && a.certificates_.empty())
    throw std::invalid_argument("'" + text +
                                "' asks for TLS but names no key: give the PSK file with --tls-psk FILE "
                                "(USERNAME:HEXKEY lines, the file nbdkit --tls-psk reads)");
  if (psk) {
    a.psk_file_ = std::filesystem::absolute(psk->value).string();
    a.identity_ = pick_psk_identity(read_psk_file(a.psk_file_), username ? username->value : "", a.psk_file_);
  } else if (username) {
    a.identity_.username = username->value;  // with certificates: libnbd's own use of it
  }
  return a;
}

std::string ServerAddress::uri_for(const std::string& export_name) const {
  std::string uri = scheme_ + "://";
  if (tls_ && !identity_.username.empty()) uri += percent_encode(identity_.username) + "@";
  uri += authority_ + "/" + export_name;
  std::vector<std::string> query;
  if (!socket_.empty()) query.push_back("socket=" + socket_);
  query.insert(query.end(), query_.begin(), query_.end());
  if (!psk_file_.empty()) query.push_back("tls-psk-file=" + percent_encode(psk_file_, "/"));
  for (std::size_t i = 0; i < query.size(); ++i) uri += (i == 0 ? "?" : "&") + query[i];
  return uri;
}

std::vector<std::string> ServerAddress::nbd_plugin_params(const std::string& export_name) const {
  std::vector<std::string> params;
  if (!socket_.empty()) {
    params.push_back("socket=" + socket_);
  } else {
    params.push_back("hostname=" + (host_.empty() ? std::string("localhost") : host_));
    if (!port_.empty()) params.push_back("port=" + port_);
  }
  params.push_back("export=" + export_name);
  if (tls_) {
    params.push_back("tls=require");
    if (!psk_file_.empty()) params.push_back("tls-psk=" + psk_file_);
    if (!certificates_.empty()) params.push_back("tls-certificates=" + certificates_);
    if (!identity_.username.empty()) params.push_back("tls-username=" + identity_.username);
  }
  return params;
}

NbdHandle ServerAddress::connect(const std::string& export_name, bool option_mode) const {
  NbdHandle h(nbd_create(), &nbd_close);
  if (!h) throw std::runtime_error(std::string("libnbd: ") + nbd_get_error());
  auto fail = [&]() -> std::runtime_error {
    std::string how;
    if (!psk_file_.empty()) how = " (TLS as '" + identity_.username + "' with the key in " + psk_file_ + ")";
    return std::runtime_error("cannot connect to " + text_ + how + ": " + nbd_get_error());
  };
  // The key comes as tls-psk-file=, a local file, which libnbd only reads when allowed.
  if (nbd_set_uri_allow_local_file(h.get(), true) == -1) throw fail();
  if (option_mode && nbd_set_opt_mode(h.get(), true) == -1) throw fail();
  if (nbd_connect_uri(h.get(), uri_for(export_name).c_str()) == -1) throw fail();
  return h;
}

std::vector<ExportInfo> ServerAddress::list_exports() const {
  NbdHandle h = connect("", true);
  std::vector<ExportInfo> exports;
  nbd_list_callback cb{};
  cb.callback = [](void* user, const char* name, const char* description) {
    static_cast<std::vector<ExportInfo>*>(user)->push_back({name, description == nullptr ? "" : description});
    return 0;
  };
  cb.user_data = &exports;
  if (nbd_opt_list(h.get(), cb) == -1)
    throw std::runtime_error("cannot list the exports of " + text_ + ": " + nbd_get_error());
  nbd_opt_abort(h.get());
  return exports;
}

}  // namespace nvj::cli
