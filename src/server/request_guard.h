#pragma once
// Checks on a request's head made before any route runs, kept free of the HTTP library so they are
// tested directly: methods, message framing (Content-Length / Transfer-Encoding), and the Host,
// Origin and Sec-Fetch-Site checks that stop a web page in the user's browser from driving a
// server bound to loopback (DNS rebinding, blind cross-site requests). No CORS is ever granted.
#include <cstddef>
#include <optional>
#include <string>

namespace vc::server {

struct RequestHead {
  std::string method;
  std::string path;
  std::string host;              // the Host header ("" when absent)
  std::string origin;            // the Origin header ("" when absent)
  std::string fetch_site;        // Sec-Fetch-Site ("" when absent)
  std::string content_length;    // the Content-Length header ("" when absent)
  std::size_t host_count = 0;
  std::size_t content_length_count = 0;
  std::size_t transfer_encoding_count = 0;
};

struct HostPolicy {
  bool loopback = true;   // bound to a loopback address: only loopback names are accepted as Host
  int port = 0;
  std::string bound_host; // as given to --host
};

struct Refusal {
  int status;
  std::string field;
  std::string message;
};

std::optional<Refusal> check_request_head(const RequestHead& head, const HostPolicy& hosts, std::size_t max_body_bytes);

// 127.0.0.0/8, ::1 and "localhost".
bool is_loopback_host(const std::string& host);

// "Bearer TOKEN" -> TOKEN; "" when the header is absent. InputError("Authorization") when the
// header is present but not a bearer token of token characters.
std::string bearer_token(const std::string& authorization);

}  // namespace vc::server
