// The control API's decisions, without sockets: a real Lab (memory stores,
// no timing) and route_control().
#include <catch2/catch.hpp>

#include <string>

#include "server/control/control_routes.h"
#include "server/control/stats_report.h"
#include "server/lab/lab.h"

using namespace nvj;

namespace {

std::unique_ptr<Lab> small_lab() {
  ConfigParser parser;
  parser.set("data", "16M");
  parser.set("journal", "4M");
  parser.set("data-model", "hdd:cache=on");
  parser.set("journal-model", "nvram");
  return Lab::open(parser.finish());
}

}  // namespace

TEST_CASE("queries decode and bad ones are refused", "[control]") {
  const auto q = parse_query("export=data&model=hdd%3Arpm%3D5400%2Ccache%3Doff&label=a+b&flag");
  CHECK(q.at("export") == "data");
  CHECK(q.at("model") == "hdd:rpm=5400,cache=off");
  CHECK(q.at("label") == "a b");
  CHECK(q.at("flag").empty());
  CHECK_THROWS_WITH(parse_query("a=%4"), "bad %-escape in the query");
  CHECK_THROWS_WITH(parse_query("a=%zz"), "bad %-escape in the query");
  CHECK_THROWS_WITH(parse_query("a=1&a=2"), "a query parameter is given twice");
  CHECK(json_quote("a\"b\\c\n\x01") == R"("a\"b\\c\n\u0001")");
}

TEST_CASE("stats, metrics, marks and resets", "[control]") {
  auto lab = small_lab();
  std::vector<char> block(4096, 'x');
  lab->find("data")->write(block.data(), 4096, 0, false);
  lab->find("journal")->write(block.data(), 4096, 0, false);

  auto r = route_control(*lab, "GET", "/stats");
  CHECK(r.status == 200);
  CHECK(r.content_type == "application/json");
  CHECK_THAT(r.body, Catch::Contains(R"("data":{"description":)"));
  CHECK_THAT(r.body, Catch::Contains(R"("write":{"count":1,"bytes":4096,"errors":0)"));
  CHECK_THAT(r.body, Catch::Contains(R"("durability":"durable on acknowledgement")"));

  r = route_control(*lab, "GET", "/stats?format=text");
  CHECK(r.status == 200);
  CHECK_THAT(r.body, Catch::Contains("data         write"));
  CHECK(route_control(*lab, "GET", "/stats?format=xml").status == 400);

  r = route_control(*lab, "GET", "/metrics");
  CHECK(r.status == 200);
  CHECK_THAT(r.body, Catch::Contains("# TYPE nvjournal_requests_total counter"));
  CHECK_THAT(r.body, Catch::Contains("nvjournal_requests_total{export=\"journal\",op=\"write\"} 1\n"));
  CHECK_THAT(r.body, Catch::Contains("nvjournal_latency_seconds_count{export=\"data\",op=\"write\"} 1\n"));

  CHECK(route_control(*lab, "POST", "/mark?label=phase%201").status == 200);
  CHECK(route_control(*lab, "POST", "/mark").status == 400);
  CHECK(route_control(*lab, "POST", "/mark?label=" + std::string(2000, 'x')).status == 400);
  CHECK_THAT(route_control(*lab, "GET", "/stats").body, Catch::Contains(R"("label":"phase 1")"));

  CHECK(route_control(*lab, "POST", "/reset-stats").status == 200);
  CHECK_THAT(route_control(*lab, "GET", "/stats").body, Catch::Contains(R"("write":{"count":0,)"));
  CHECK_THAT(route_control(*lab, "GET", "/stats").body, Catch::Contains(R"("marks":[])"));
}

TEST_CASE("model changes: good ones apply, bad ones change nothing", "[control]") {
  auto lab = small_lab();
  auto r = route_control(*lab, "POST", "/model?export=data&model=hdd:rpm=5400");
  CHECK(r.status == 200);
  CHECK(lab->find("data")->model_description().rfind("hdd: 5400 rpm", 0) == 0);
  const std::string before = lab->find("data")->model_description();
  for (const char* bad : {"/model?export=data&model=tape", "/model?export=data&model=hdd:rpmx=1",
                          "/model?export=data&model=hdd:cache=off", "/model?export=nosuch&model=hdd",
                          "/model?export=data", "/model?model=hdd", "/model?export=&model=hdd"}) {
    INFO(bad);
    r = route_control(*lab, "POST", bad);
    CHECK(r.status == 400);
    CHECK_THAT(r.body, Catch::StartsWith("{\"error\":"));
    CHECK(lab->find("data")->model_description() == before);
  }
  CHECK(route_control(*lab, "POST", "/model?export=journal&model=nvram:latency=10us").status == 200);
  CHECK(route_control(*lab, "POST", "/model?export=journal&model=none").status == 200);
  CHECK(lab->find("journal")->model_description() == "none");
}

TEST_CASE("unknown paths and wrong methods", "[control]") {
  auto lab = small_lab();
  CHECK(route_control(*lab, "GET", "/nothing").status == 404);
  CHECK(route_control(*lab, "POST", "/stats").status == 405);
  CHECK(route_control(*lab, "GET", "/reset-stats").status == 405);
  CHECK(route_control(*lab, "DELETE", "/model").status == 405);
  CHECK(route_control(*lab, "GET", "/stats?%").status == 400);
}
