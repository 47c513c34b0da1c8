// The HTTP server in-process on a free loopback port: every route over the wire, the page and its
// assets, model pages, and the bad requests only HTTP can make (oversized body, wrong method,
// wrong content type, unknown path).
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "server/server.h"

using nlohmann::json;

namespace {

class ServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    vc::server::ServerOptions o;
    o.port = 0;
    o.threads = 4;
    o.log = false;
    server_ = new vc::server::Server(o);
    port_ = server_->bind();
    thread_ = new std::thread([] { server_->listen(); });
    // Ready once it answers.
    httplib::Client c("127.0.0.1", port_);
    for (int i = 0; i < 200 && !c.Get("/api/models"); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  static void TearDownTestSuite() {
    server_->stop();
    thread_->join();
    delete thread_;
    delete server_;
  }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(10, 0);
    return c;
  }
  static json error_of(const httplib::Result& r) { return json::parse(r->body)["error"]; }

  static vc::server::Server* server_;
  static std::thread* thread_;
  static int port_;
};
vc::server::Server* ServerTest::server_ = nullptr;
std::thread* ServerTest::thread_ = nullptr;
int ServerTest::port_ = 0;

}  // namespace

TEST_F(ServerTest, EveryApiRouteAnswersOverHttp) {
  auto c = client();
  const std::vector<std::string> gets = {"/api/estimate?model=kimi-k3", "/api/sweep?model=kimi-k3&contexts=8K,1M", "/api/compare?a=kimi-k3&b=kimi-k3.1-pro",
                                         "/api/models", "/api/builds?model=kimi-k3", "/api/stream?model=kimi-k3&bpw=1.7",
                                         "/api/plan?model=kimi-k3&gpu=H200x13", "/api/check?gpu=H200x8&units=gb", "/api/devices"};
  for (const auto& path : gets) {
    auto r = c.Get(path.c_str());
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 200) << path << " " << r->body;
    EXPECT_EQ(r->get_header_value("Content-Type"), "application/json; charset=utf-8");
    EXPECT_FALSE(json::parse(r->body).contains("error")) << path;
  }
  // Kimi K3 at 8K, hand-worked in test_server_api.cpp: 1,795,871,300,378 B.
  auto r = c.Post("/api/estimate", R"({"model": "kimi-k3", "context": "8K"})", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(json::parse(r->body)["totals"]["total_bytes"], 1795871300378ull);
}

TEST_F(ServerTest, ServesThePageAndModelPages) {
  auto c = client();
  auto index = c.Get("/");
  ASSERT_TRUE(index);
  EXPECT_EQ(index->status, 200);
  EXPECT_NE(index->body.find("id=\"gpu-check\""), std::string::npos);  // the reserved checker panel
  EXPECT_EQ(c.Get("/app.js")->get_header_value("Content-Type"), "text/javascript; charset=utf-8");
  EXPECT_EQ(c.Get("/style.css")->status, 200);
  auto page = c.Get("/models/kimi-k3");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_NE(page->body.find("<h1>How much memory does Kimi K3 need?</h1>"), std::string::npos);
  auto md = c.Get("/models/kimi-k3.md");
  EXPECT_EQ(md->get_header_value("Content-Type"), "text/markdown; charset=utf-8");
  EXPECT_EQ(md->body.rfind("# How much memory does Kimi K3 need?", 0), 0u);
  // The model page links the calculator set to this model (not "/", which opens another model).
  EXPECT_NE(page->body.find("href=\"/?model=kimi-k3\""), std::string::npos);
  // An unknown model page is a page a visitor can read: HTML, 404, linking the catalogue.
  auto missing = c.Get("/models/no-such-model");
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(missing->get_header_value("Content-Type"), "text/html; charset=utf-8");
  EXPECT_NE(missing->body.find("No model called \u201cno-such-model\u201d"), std::string::npos);
  EXPECT_NE(missing->body.find("href=\"/models/kimi-k3\""), std::string::npos);
  auto missing_md = c.Get("/models/no-such-model.md");
  EXPECT_EQ(missing_md->status, 404);
  EXPECT_EQ(error_of(missing_md)["field"], "model");
}

TEST_F(ServerTest, BadRequestsGetJsonErrors) {
  auto c = client();
  auto r = c.Get("/api/estimate?model=kimi-k3&context=lots");
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(error_of(r)["field"], "context");
  r = c.Post("/api/estimate", "{\"model\": ", "application/json");  // malformed JSON
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(error_of(r)["field"], "body");
  r = c.Post("/api/estimate", "model=kimi-k3", "application/x-www-form-urlencoded");
  EXPECT_EQ(r->status, 415);
  EXPECT_EQ(error_of(r)["field"], "Content-Type");
  r = c.Post("/api/estimate?model=kimi-k3", "{}", "application/json");  // both query and body
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(error_of(r)["field"], "query");
  r = c.Post("/api/estimate", std::string(100 * 1024, ' '), "application/json");  // over 64 KiB
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413);
  EXPECT_EQ(error_of(r)["field"], "body");
  r = c.Get("/api/nosuchverb");
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(error_of(r)["field"], "verb");
  r = c.Get("/no/such/path");
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(error_of(r)["field"], "request");
  r = c.Delete("/api/estimate");
  ASSERT_TRUE(r);
  EXPECT_GE(r->status, 400);
  EXPECT_LT(r->status, 500);
  // Still serving after all of that.
  EXPECT_EQ(c.Get("/api/models")->status, 200);
}

// A client that opens a connection and sends half a request line is cut off by the read timeout
// (5 s by default; here the point is only that the server keeps answering others meanwhile).
TEST_F(ServerTest, SlowClientDoesNotBlockOthers) {
  const int s = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(s, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port_));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  const char partial[] = "GET /api/mod";
  ASSERT_GT(send(s, partial, sizeof partial - 1, 0), 0);
  auto r = client().Get("/api/models");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  close(s);
}
