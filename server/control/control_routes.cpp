// SPDX-License-Identifier: BSD-3-Clause
#include "server/control/control_routes.h"

#include <charconv>
#include <stdexcept>

#include "common/json.h"
#include "common/query_escape.h"
#include "common/size.h"
#include "server/control/journal_report.h"
#include "server/control/stats_report.h"
#include "server/probe/journal_json.h"

namespace nvj {
namespace {

// Every JSON answer is one line.
ControlReply json(unsigned status, const Json& body) { return {status, "application/json", to_json_text(body) + "\n"}; }

ControlReply error(unsigned status, const std::string& message) { return json(status, {{"error", message}}); }

// The Prometheus text; the query (if any) is ignored.
ControlReply metrics(const Lab& lab) {
  return {200, "text/plain; version=0.0.4; charset=utf-8", stats_prometheus(lab) + journal_prometheus(lab)};
}

Json recording_json(const Recorder::Status& s) {
  return {{"recording", s.recording},
          {"file", s.path},
          {"frames", s.frames},
          {"changes", s.changes},
          {"marks", s.marks},
          {"base_bytes", s.base_bytes},
          {"bytes_written", s.bytes_written},
          {"bytes_buffered", s.bytes_buffered},
          {"error", s.error.empty() ? Json(nullptr) : Json(s.error)}};
}

}  // namespace

std::map<std::string, std::string, std::less<>> parse_query(std::string_view query) {
  std::map<std::string, std::string, std::less<>> out;
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view item = query.substr(0, amp);
    if (!item.empty()) {
      const std::size_t eq = item.find('=');
      std::string key = query_unescape(item.substr(0, eq));
      std::string value = eq == std::string_view::npos ? "" : query_unescape(item.substr(eq + 1));
      if (!out.emplace(std::move(key), std::move(value)).second)
        throw std::invalid_argument("a query parameter is given twice");
    }
    if (amp == std::string_view::npos) break;
    query = query.substr(amp + 1);
  }
  return out;
}

namespace {

using Query = std::map<std::string, std::string, std::less<>>;

// A query parameter, or null when the request has none.
const std::string* param(const Query& query, std::string_view key) {
  const auto it = query.find(key);
  return it == query.end() ? nullptr : &it->second;
}

// GET /stats and GET /journal: JSON, or with format=text a table; only the
// one asked for is made.
template <class AsJson, class AsText>
ControlReply json_or_text(const Query& query, AsJson as_json, AsText as_text) {
  const std::string* format = param(query, "format");
  if (format == nullptr || *format == "json") return json(200, as_json());
  if (*format == "text") return {200, "text/plain; charset=utf-8", as_text()};
  return error(400, "format=" + *format + ": expected json or text");
}

ControlReply get_stats(Lab& lab, const Query& query) {
  return json_or_text(query, [&] { return stats_json(lab); }, [&] { return stats_text(lab); });
}

ControlReply get_metrics(Lab& lab, const Query&) { return metrics(lab); }

ControlReply get_journal(Lab& lab, const Query& query) {
  return json_or_text(query, [&] { return journal_json(lab.journal_tracer()); }, [&] { return journal_text(lab); });
}

ControlReply get_record(Lab& lab, const Query&) {
  const auto status = lab.recording();
  if (!status) return error(404, "nothing has been recorded (record=PATH, or POST /record/start?file=PATH)");
  return json(200, recording_json(*status));
}

ControlReply post_reset_stats(Lab& lab, const Query&) {
  lab.reset_stats();
  return json(200, {{"reset", true}});
}

ControlReply post_mark(Lab& lab, const Query& query) {
  const std::string* label = param(query, "label");
  if (label == nullptr || label->empty()) return error(400, "POST /mark needs label=TEXT");
  if (label->size() > 1024) return error(400, "a label may be at most 1024 bytes");
  lab.mark(*label);
  return json(200, {{"marked", *label}});
}

ControlReply post_model(Lab& lab, const Query& query) {
  const std::string* exp = param(query, "export");
  const std::string* spec = param(query, "model");
  if (exp == nullptr || spec == nullptr) return error(400, "POST /model needs export=NAME and model=SPEC");
  try {
    lab.set_model(*exp, *spec);
  } catch (const std::invalid_argument& e) {
    return error(400, "model=" + *spec + ": " + e.what());
  }
  return json(200, {{"export", *exp}, {"model", lab.find(*exp)->model_description()}});
}

// POST /crash's policy=, seed= and torn=; throws std::invalid_argument
// naming what is wrong.
CrashPolicy crash_policy(const Query& query) {
  CrashPolicy policy;
  if (const std::string* kind = param(query, "policy")) policy.kind = CrashPolicy::parse_kind(*kind);
  if (const std::string* seed = param(query, "seed")) {
    // from_chars, not stoull: locale-free (strtoull under ASan leaves
    // glibc's locale lock taken and nbdkit hangs at exit).
    const auto [end, ec] = std::from_chars(seed->data(), seed->data() + seed->size(), policy.seed);
    if (ec != std::errc() || end != seed->data() + seed->size() || seed->empty())
      throw std::invalid_argument("seed=" + *seed + ": expected a whole number");
  }
  if (const std::string* torn = param(query, "torn")) policy.atomic_unit = parse_size(*torn);
  return policy;
}

ControlReply post_crash(Lab& lab, const Query& query) {
  CrashPolicy policy;
  std::vector<std::pair<std::string, CrashReport>> reports;
  try {
    policy = crash_policy(query);
    const std::string* exp = param(query, "export");
    reports = lab.cut_power(policy, exp == nullptr ? "" : *exp);
  } catch (const std::invalid_argument& e) {
    return error(400, e.what());
  }
  Json exports = Json::object();
  for (const auto& [name, r] : reports)
    exports[name] = {{"durable", r.durable},
                     {"volatile_kept", r.volatile_kept},
                     {"volatile_lost", r.volatile_lost},
                     {"in_flight", r.in_flight},
                     {"bytes_lost", r.bytes_lost},
                     {"torn", r.atomic_unit}};
  Json answer{{"policy", to_string(policy.kind)}, {"seed", policy.seed}, {"exports", std::move(exports)}};
  if (policy.atomic_unit) answer["torn"] = *policy.atomic_unit;  // given; each export says what it used
  return json(200, answer);
}

ControlReply post_power_on(Lab& lab, const Query& query) {
  const std::string* exp = param(query, "export");
  try {
    lab.power_on(exp == nullptr ? "" : *exp);
  } catch (const std::invalid_argument& e) {
    return error(400, e.what());
  }
  return json(200, {{"power", "on"}});
}

ControlReply post_record_start(Lab& lab, const Query& query) {
  const std::string* file = param(query, "file");
  if (file == nullptr || file->empty()) return error(400, "POST /record/start needs file=PATH");
  if ((*file)[0] != '/') return error(400, "file=" + *file + ": give an absolute path (the server runs in /)");
  try {
    return json(200, recording_json(lab.start_recording(*file)));
  } catch (const std::invalid_argument& e) {
    return error(409, "file=" + *file + ": " + e.what());
  }
}

ControlReply post_record_stop(Lab& lab, const Query&) {
  try {
    return json(200, recording_json(lab.stop_recording()));
  } catch (const std::invalid_argument& e) {
    return error(409, e.what());
  }
}

// POST /base/keep and /base/restore.
ControlReply base(Lab& lab, bool keep) {
  std::vector<std::pair<std::string, std::uint64_t>> pages;
  try {
    pages = keep ? lab.keep_base() : lab.restore_base();
  } catch (const std::invalid_argument& e) {
    return error(409, e.what());
  }
  Json exports = Json::object();
  for (const auto& [name, n] : pages) exports[name] = {{"pages_written", n}};
  return json(200, {{"base", keep ? "kept" : "restored"}, {"exports", std::move(exports)}});
}
ControlReply post_base_keep(Lab& lab, const Query&) { return base(lab, true); }
ControlReply post_base_restore(Lab& lab, const Query&) { return base(lab, false); }

struct Route {
  std::string_view method, path;
  ControlReply (*answer)(Lab&, const Query&);
};

// In the order a 404 lists them.
constexpr Route kRoutes[] = {
    {"GET", "/stats", get_stats},
    {"GET", "/metrics", get_metrics},
    {"GET", "/journal", get_journal},
    {"GET", "/record", get_record},
    {"POST", "/reset-stats", post_reset_stats},
    {"POST", "/mark", post_mark},
    {"POST", "/model", post_model},
    {"POST", "/crash", post_crash},
    {"POST", "/power-on", post_power_on},
    {"POST", "/record/start", post_record_start},
    {"POST", "/record/stop", post_record_stop},
    {"POST", "/base/keep", post_base_keep},
    {"POST", "/base/restore", post_base_restore},
};

std::string route_list() {
  std::string list;
  for (const Route& r : kRoutes) list += (list.empty() ? "" : ", ") + std::string(r.method) + " " + std::string(r.path);
  return list;
}

}  // namespace

ControlReply route_control(Lab& lab, std::string_view method, std::string_view target) {
  const std::size_t q = target.find('?');
  const std::string_view path = target.substr(0, q);
  Query query;
  try {
    query = parse_query(q == std::string_view::npos ? "" : target.substr(q + 1));
  } catch (const std::invalid_argument& e) {
    return error(400, e.what());
  }
  for (const Route& r : kRoutes) {
    if (r.path != path) continue;
    if (r.method != method)
      return error(405, std::string(path) + " takes " + std::string(r.method) + ", not " + std::string(method));
    return r.answer(lab, query);
  }
  return error(404, "no such path: " + std::string(path) + " (" + route_list() + ")");
}

ControlReply route_metrics(Lab& lab, std::string_view method, std::string_view target) {
  const std::string_view path = target.substr(0, target.find('?'));
  if (path != "/metrics")
    return error(404, "no such path: " + std::string(path) + " (this listener serves GET /metrics only)");
  if (method != "GET") return error(405, "/metrics takes GET, not " + std::string(method));
  return metrics(lab);
}

}  // namespace nvj
