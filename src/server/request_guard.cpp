#include "server/request_guard.h"

#include <arpa/inet.h>

#include <fmt/format.h>

#include "core/error.h"
#include "core/text.h"
#include "sources/remote/http_source.h"

namespace vc::server {
namespace {

// The Host values a loopback server answers to: its own loopback names with its port (a browser
// that reached it through another name, e.g. a rebound DNS name, is refused).
bool host_accepted(const std::string& host_header, const HostPolicy& p) {
  const std::string host = lower(host_header);
  const std::string port = ":" + std::to_string(p.port);
  for (const std::string& name : {std::string("127.0.0.1"), std::string("localhost"), std::string("[::1]"), lower(p.bound_host)}) {
    if (host == name + port) return true;
    if (p.port == 80 && host == name) return true;
  }
  return false;
}

}  // namespace

bool is_loopback_host(const std::string& host) {
  if (host == "localhost" || host == "::1" || host == "[::1]") return true;
  in_addr v4{};
  return inet_pton(AF_INET, host.c_str(), &v4) == 1 && (ntohl(v4.s_addr) >> 24) == 127;
}

std::string bearer_token(const std::string& authorization) {
  if (authorization.empty()) return "";
  if (authorization.rfind("Bearer ", 0) != 0) throw InputError("Authorization", "only \"Bearer TOKEN\" (a Hugging Face token for this request) is accepted");
  std::string token = authorization.substr(7);
  if (!is_token_text(token)) throw InputError("Authorization", "the bearer token holds characters a Hugging Face token does not (letters, digits and -._~+/= only, at most 512)");
  return token;
}

std::optional<Refusal> check_request_head(const RequestHead& h, const HostPolicy& hosts, std::size_t max_body_bytes) {
  if (h.method != "GET" && h.method != "HEAD" && h.method != "POST") {
    return Refusal{405, "request", "method not allowed; use GET (POST for /api/VERB). No cross-origin (CORS) requests are served"};
  }
  if (h.transfer_encoding_count > 0 && h.content_length_count > 0) {
    return Refusal{400, "request", "Content-Length and Transfer-Encoding together make the body's length ambiguous; send Content-Length alone"};
  }
  if (h.transfer_encoding_count > 0) return Refusal{411, "request", "chunked request bodies are not accepted; send Content-Length"};
  if (h.content_length_count > 1) return Refusal{400, "request", "Content-Length is given more than once"};
  if (h.content_length_count == 1) {
    if (h.content_length.empty() || h.content_length.size() > 12 || h.content_length.find_first_not_of("0123456789") != std::string::npos) {
      return Refusal{400, "request", "Content-Length is not a whole number of bytes"};
    }
    if (std::stoull(h.content_length) > max_body_bytes) {
      return Refusal{413, "body", fmt::format("the request body is too large (at most {} KiB)", max_body_bytes / 1024)};
    }
  }
  if (h.host_count > 1) return Refusal{400, "Host", "Host is given more than once"};
  if (hosts.loopback && !h.host.empty() && !host_accepted(h.host, hosts)) {
    return Refusal{403, "Host", fmt::format("this server is bound to loopback and answers only to 127.0.0.1:{0}, localhost:{0} or [::1]:{0} "
                                            "(another name here is how DNS rebinding reaches it)", hosts.port)};
  }
  if (!h.origin.empty() && (h.host.empty() || lower(h.origin) != "http://" + lower(h.host))) {
    return Refusal{403, "Origin", "cross-origin requests are not served: the page must come from this server"};
  }
  // Browsers mark requests a page on another site makes (including ones without an Origin, such
  // as <img src>): the API answers only its own page and direct use.
  if (h.path.rfind("/api/", 0) == 0 && (h.fetch_site == "cross-site" || h.fetch_site == "same-site")) {
    return Refusal{403, "Sec-Fetch-Site", "requests made by pages on other sites are not served"};
  }
  return std::nullopt;
}

}  // namespace vc::server
