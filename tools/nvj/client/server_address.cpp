#include "tools/nvj/client/server_address.h"

#include <libnbd.h>

#include <filesystem>
#include <memory>
#include <stdexcept>

namespace nvj::cli {

ServerAddress ServerAddress::parse(const std::string& text) {
  ServerAddress a;
  a.text_ = text;
  if (text.empty()) throw std::invalid_argument("the server address is empty");
  if (text.rfind("nbd", 0) != 0 || text.find("://") == std::string::npos) {
    // A socket path.
    a.socket_ = std::filesystem::absolute(text).string();
    a.prefix_ = "nbd+unix:///";
    a.query_ = "?socket=" + a.socket_;
    return a;
  }
  const std::size_t scheme_end = text.find("://");
  const std::string scheme = text.substr(0, scheme_end);
  if (scheme != "nbd" && scheme != "nbds" && scheme != "nbd+unix" && scheme != "nbds+unix")
    throw std::invalid_argument("'" + text + "' is not an NBD URI (nbd://HOST/EXPORT or nbd+unix:///EXPORT?socket=PATH)");
  const std::size_t path_start = text.find('/', scheme_end + 3);
  const std::size_t query_start = text.find('?', scheme_end + 3);
  const std::size_t authority_end = std::min(path_start, query_start);
  a.prefix_ = text.substr(0, std::min(authority_end, text.size())) + "/";
  a.query_ = query_start == std::string::npos ? "" : text.substr(query_start);
  const std::size_t socket_at = a.query_.find("socket=");
  if (socket_at != std::string::npos) {
    const std::size_t end = a.query_.find('&', socket_at);
    a.socket_ = a.query_.substr(socket_at + 7, end == std::string::npos ? std::string::npos : end - socket_at - 7);
  }
  return a;
}

std::string ServerAddress::uri_for(const std::string& export_name) const { return prefix_ + export_name + query_; }

std::vector<ExportInfo> ServerAddress::list_exports() const {
  std::unique_ptr<nbd_handle, decltype(&nbd_close)> h(nbd_create(), &nbd_close);
  if (!h) throw std::runtime_error(std::string("libnbd: ") + nbd_get_error());
  std::vector<ExportInfo> exports;
  auto fail = [&]() -> std::runtime_error {
    return std::runtime_error("cannot list the exports of " + text_ + ": " + nbd_get_error());
  };
  if (nbd_set_opt_mode(h.get(), true) == -1) throw fail();
  if (nbd_connect_uri(h.get(), uri_for("").c_str()) == -1) throw fail();
  nbd_list_callback cb{};
  cb.callback = [](void* user, const char* name, const char* description) {
    static_cast<std::vector<ExportInfo>*>(user)->push_back({name, description == nullptr ? "" : description});
    return 0;
  };
  cb.user_data = &exports;
  if (nbd_opt_list(h.get(), cb) == -1) throw fail();
  nbd_opt_abort(h.get());
  return exports;
}

}  // namespace nvj::cli
