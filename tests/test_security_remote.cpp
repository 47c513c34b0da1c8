// Remote reads against hostile upstreams on loopback: where the Hub token goes (its endpoint
// only, never across a redirect to another host), the CLI's whole-run deadline, the byte budget,
// the address check, and the cache's integrity check, cap and permissions.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "cli_runner.h"
#include "core/error.h"
#include "remote_fixtures.h"
#include "http_test_server.h"
#include "sources/checkpoint.h"
#include "sources/remote/http_source.h"
#include "sources/remote/location.h"
#include "sources/remote/range_cache.h"

namespace vc {
namespace {

namespace fs = std::filesystem;
using testing::TestHttpServer;

class SecurityRemote : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("vc-sec-remote-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    ::setenv("VRAMCALC_CACHE_DIR", (dir_ / "cache").c_str(), 1);
    gguf_ = vc::testing::write_small_llama_gguf(dir_);
  }
  void TearDown() override {
    ::unsetenv("VRAMCALC_CACHE_DIR");
    ::unsetenv("VRAMCALC_CACHE_MAX");
    ::unsetenv("HF_TOKEN");
    set_hf_endpoint("");
    fs::remove_all(dir_);
  }
  fs::path dir_, gguf_;
};

// HF_TOKEN goes to the configured endpoint only: a plain URL on another host gets none.
TEST_F(SecurityRemote, TokenGoesOnlyToTheHubEndpoint) {
  TestHttpServer other;
  other.add("/small.gguf", gguf_);
  other.add("/org/repo/resolve/main/small.gguf", gguf_);
  ::setenv("HF_TOKEN", "hf_secret", 1);
  (void)inspect_checkpoint(other.url("/small.gguf"));  // the endpoint is the default https://huggingface.co
  EXPECT_GT(other.requests(), 0u);
  EXPECT_EQ(other.last_authorization(), "");
  set_hf_endpoint(other.root());  // an http endpoint the user set explicitly does get it
  (void)inspect_checkpoint("hf:org/repo/small.gguf");
  EXPECT_EQ(other.last_authorization(), "Bearer hf_secret");
}

// The Hub redirects file reads to a CDN; the token must not follow to another host (here the
// same machine under another name and port, which is another origin to curl).
TEST_F(SecurityRemote, TokenDoesNotCrossARedirectToAnotherHost) {
  TestHttpServer hub, cdn;
  cdn.add("/cdn/small.gguf", gguf_);
  const std::string cdn_port = cdn.root().substr(cdn.root().rfind(':') + 1);
  hub.add_redirect("/org/repo/resolve/main/small.gguf", "http://localhost:" + cdn_port + "/cdn/small.gguf");
  set_hf_endpoint(hub.root());
  ::setenv("HF_TOKEN", "hf_secret", 1);
  (void)inspect_checkpoint("hf:org/repo/small.gguf");
  EXPECT_EQ(hub.last_authorization(), "Bearer hf_secret");
  EXPECT_GT(cdn.requests(), 0u);
  EXPECT_EQ(cdn.last_authorization(), "");
}

// A token holding a line break is never sent (it could add headers of its own).
TEST_F(SecurityRemote, MalformedTokenIsNotSent) {
  TestHttpServer hub;
  hub.add("/org/repo/resolve/main/small.gguf", gguf_);
  set_hf_endpoint(hub.root());
  ::setenv("HF_TOKEN", "hf_x\r\nX-Injected: 1", 1);
  (void)inspect_checkpoint("hf:org/repo/small.gguf");
  EXPECT_EQ(hub.last_authorization(), "");
}

// Under a policy of public addresses only, loopback is refused on the address connected to.
TEST_F(SecurityRemote, PublicOnlyPolicyRefusesLoopback) {
  TestHttpServer target;
  target.add("/small.gguf", gguf_);
  FetchScope scope(FetchPolicy{std::string(), true, UINT64_MAX});
  EXPECT_THROW((void)inspect_checkpoint(target.url("/small.gguf")), RemoteError);
  EXPECT_EQ(target.requests(), 0u);
}

// Which addresses count as non-public (RFC 1918, 6598, 3927, 4193, loopback, mapped forms).
TEST(SecurityAddresses, NonPublicRanges) {
  auto v4 = [](const char* text) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    inet_pton(AF_INET, text, &a.sin_addr);
    return is_non_public_address(reinterpret_cast<sockaddr*>(&a));
  };
  auto v6 = [](const char* text) {
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    inet_pton(AF_INET6, text, &a.sin6_addr);
    return is_non_public_address(reinterpret_cast<sockaddr*>(&a));
  };
  for (const char* blocked : {"127.0.0.1", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "224.0.0.1"}) {
    EXPECT_TRUE(v4(blocked)) << blocked;
  }
  for (const char* open : {"8.8.8.8", "172.32.0.1", "1.1.1.1", "100.128.0.1"}) EXPECT_FALSE(v4(open)) << open;
  for (const char* blocked : {"::1", "::", "fd00::1", "fe80::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "64:ff9b::a00:1", "ff02::1"}) {
    EXPECT_TRUE(v6(blocked)) << blocked;
  }
  EXPECT_FALSE(v6("2606:4700::1111"));
  EXPECT_FALSE(v6("::ffff:8.8.8.8"));
}

// The CLI's whole-run deadline: a server that answers after 3 s is given up at --timeout 1.
TEST_F(SecurityRemote, CliTimeoutEndsASlowRead) {
  TestHttpServer slow;
  slow.add("/small.gguf", gguf_);
  slow.delay(std::chrono::milliseconds(3000));
  const auto start = std::chrono::steady_clock::now();
  CliResult r = run_cli("inspect " + slow.url("/small.gguf") + " --timeout 1");
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("time"), std::string::npos) << r.output;
  EXPECT_LT(took, std::chrono::milliseconds(2900)) << "the deadline did not cut the read";  // generous: 1 s asked
}

// A cached range edited in place (same length) is detected and fetched again; entries are the
// owner's alone.
TEST_F(SecurityRemote, CacheChecksEveryReadAndIsPrivate) {
  TestHttpServer server;
  server.add("/small.gguf", gguf_);
  const auto first = inspect_checkpoint(server.url("/small.gguf"));
  const fs::path cache = dir_ / "cache";
  ASSERT_TRUE(fs::exists(cache));
  EXPECT_EQ(fs::status(cache).permissions() & fs::perms::all, fs::perms::owner_all);
  std::size_t entries = 0;
  for (const auto& e : fs::directory_iterator(cache)) {
    ++entries;
    EXPECT_EQ(fs::status(e.path()).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
    vc::testing::flip_last_byte(e.path());
  }
  ASSERT_GT(entries, 0u);
  const uint64_t before = server.bytes_served();
  const auto second = inspect_checkpoint(server.url("/small.gguf"));
  EXPECT_GT(server.bytes_served() - before, 1u) << "an edited cache entry was trusted";
  EXPECT_EQ(second.tally.bytes, first.tally.bytes);
}

// VRAMCALC_CACHE_MAX caps the folder: entries past it are evicted.
TEST_F(SecurityRemote, CacheIsCapped) {
  ::setenv("VRAMCALC_CACHE_MAX", "1KiB", 1);
  for (int i = 0; i < 8; ++i) range_cache_put("http://x/" + std::to_string(i), "\"e\"", 0, std::string(300, 'a'));
  uint64_t total = 0;
  for (const auto& e : fs::directory_iterator(dir_ / "cache")) total += fs::file_size(e.path());
  EXPECT_LE(total, 1024u);
  EXPECT_TRUE(range_cache_get("http://x/7", "\"e\"", 0, 300).has_value());  // the newest stays
  ::setenv("VRAMCALC_CACHE_MAX", "lots", 1);
  EXPECT_THROW((void)range_cache_max(), InputError);
}

}  // namespace
}  // namespace vc
