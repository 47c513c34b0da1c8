#pragma once
// HTTP(S) resources read by Range requests (libcurl): redirects followed (http and https only), the
// Hub token sent as a bearer token to the Hub endpoint alone (FetchPolicy), each fetched range
// cached on disk (range_cache.h). A server that ignores Range is refused before it can send the
// whole file; a progress line goes to stderr when a read takes over a second.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/error.h"
#include "sources/io/byte_source.h"

struct sockaddr;

namespace vc {

std::unique_ptr<ByteSource> open_http_source(const std::string& url);

// The whole body of a small resource (the Hub's API listing) by one plain GET through the same
// client as range reads: the token and address rules of FetchPolicy, the deadline and the byte
// budget all hold. RemoteError when it is not 200 or exceeds `max_bytes`. A non-empty
// `immutable_tag` (a commit id) says the answer never changes: it is cached like a range.
std::string http_get_text(const std::string& url, uint64_t max_bytes, const std::string& immutable_tag = "");

// True when the URL answers a 1-byte Range request with 206 or 200 (a probe; never throws for
// 404, throws InputError for a server that cannot be reached).
bool http_exists(const std::string& url);

// A time budget for this thread's remote reads (the server bounds /api/inspect with it): each
// request is given the time left, and none starts once it is spent. A nested budget cannot
// extend an outer one. Reads past the budget throw RemoteTimeout.
class RemoteDeadline {
 public:
  explicit RemoteDeadline(std::chrono::milliseconds budget);
  ~RemoteDeadline();
  RemoteDeadline(const RemoteDeadline&) = delete;
  RemoteDeadline& operator=(const RemoteDeadline&) = delete;

 private:
  std::optional<std::chrono::steady_clock::time_point> previous_;
};

// A failure of the transfer itself (status, refusal, budget), in words of our own: unlike a
// reader's error it repeats nothing read from the file, so the server may pass it to a client.
class RemoteError : public InputError {
 public:
  using InputError::InputError;
};

// A remote read that ran out of its RemoteDeadline (the server answers 504, not 400).
class RemoteTimeout : public RemoteError {
 public:
  using RemoteError::RemoteError;
};

// What this thread's remote reads may do (the server sets one per request, the CLI one per run).
// Without a FetchScope: HF_TOKEN from the environment, any address, no byte budget.
struct FetchPolicy {
  // The Hub token: nullopt reads HF_TOKEN from the environment (the CLI); a value is this
  // request's own token ("" for none: the server never lends its HF_TOKEN unless told to). Either
  // way it goes only to the configured Hub endpoint's scheme, host and port (https unless the user
  // set an http endpoint), never to another host, nor across a redirect to one.
  std::optional<std::string> token;
  // Refuse connections to loopback, private, link-local, unique-local and other non-public
  // addresses, checked on the address each connection actually goes to (redirects and DNS
  // rebinding included). The server sets it unless the operator allows private sources.
  bool public_addresses_only = false;
  // Header bytes one request may read, summed over every file of a split set or index (cache
  // hits included: it bounds the memory held for parsing as much as the network use).
  uint64_t max_bytes = UINT64_MAX;
};

class FetchScope {
 public:
  explicit FetchScope(FetchPolicy policy);
  ~FetchScope();
  FetchScope(const FetchScope&) = delete;
  FetchScope& operator=(const FetchScope&) = delete;
  struct State;  // the policy and the bytes read under it (http_source.cpp)

 private:
  State* previous_;
  std::unique_ptr<State> state_;
};

// This thread's remote-read context (its FetchScope, byte budget included, and its RemoteDeadline),
// for a worker thread to read under: the set readers (sources/io/concurrent_reads.h) hand it on so
// that reads on several threads share one budget and one deadline.
class RemoteReadContext {
 public:
  static RemoteReadContext current();
  // Installs a context on this thread for its lifetime (and keeps the worker's progress lines quiet).
  class Adopt {
   public:
    explicit Adopt(const RemoteReadContext& context);
    ~Adopt();
    Adopt(const Adopt&) = delete;
    Adopt& operator=(const Adopt&) = delete;

   private:
    FetchScope::State* fetch_;
    std::optional<std::chrono::steady_clock::time_point> deadline_;
    bool quiet_;
  };

 private:
  RemoteReadContext(FetchScope::State* fetch, std::optional<std::chrono::steady_clock::time_point> deadline) : fetch_(fetch), deadline_(deadline) {}
  FetchScope::State* fetch_;
  std::optional<std::chrono::steady_clock::time_point> deadline_;
};

// Letters, digits and -._~+/= only, 1 to 512 of them: what a bearer token may hold (and nothing
// that could end a header line).
bool is_token_text(const std::string& token);

// The token a request to `url` carries under this thread's FetchPolicy ("" for none).
std::string token_for_url(const std::string& url);

// True for addresses a server must not be made to reach: loopback, RFC 1918 private, CGNAT,
// link-local, unique-local (fc00::/7), multicast, unspecified and reserved ranges, and IPv4-mapped
// IPv6 forms of those. `addr` is a sockaddr_in or sockaddr_in6.
bool is_non_public_address(const ::sockaddr* addr);

}  // namespace vc
