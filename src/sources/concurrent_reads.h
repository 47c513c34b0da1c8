#pragma once
// The files of a set (GGUF split parts, safetensors shards) read on up to `width` threads at once:
// over HTTP a set then costs about the round trips of its slowest files, not their sum. Each worker
// reads under the caller's remote-read context (one byte budget, one deadline, the same token and
// address rules); results keep the set's order, and the error raised is that of the first file in
// set order that failed, as a one-at-a-time read would raise it.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "core/error.h"
#include "sources/io/opener.h"
#include "sources/remote/http_source.h"

namespace vc {

// Remote sets: at most this many files in flight (the Hub's CDN serves each range on its own
// connection; more would only queue behind the deadline).
inline constexpr std::size_t kConcurrentRemoteReads = 8;

template <class Result, class ReadOne>
std::vector<Result> read_concurrently(std::size_t n, std::size_t width, ReadOne read_one) {
  std::vector<std::optional<Result>> results(n);
  std::vector<std::exception_ptr> errors(n);
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  // Indices are taken in order, so when file j fails every file before it was already taken and
  // finishes: stopping there still reports the first failure in set order.
  auto drain = [&] {
    for (std::size_t i; !failed && (i = next++) < n;) {
      try {
        results[i].emplace(read_one(i));
      } catch (...) {
        errors[i] = std::current_exception();
        failed = true;
      }
    }
  };
  const RemoteReadContext context = RemoteReadContext::current();
  std::vector<std::thread> workers;
  for (std::size_t t = 1; t < std::min(n, width); ++t) {
    try {
      workers.emplace_back([&] {
        RemoteReadContext::Adopt adopt(context);
        drain();
      });
    } catch (const std::system_error&) {
      break;  // no more threads to be had: the ones running (and this one) read the rest
    }
  }
  drain();
  for (auto& w : workers) w.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  std::vector<Result> out;
  out.reserve(n);
  for (auto& r : results) out.push_back(std::move(*r));
  return out;
}

// The members of a set (GGUF split parts, safetensors shards) opened and read concurrently, in set
// order, with the header bytes fetched across them. A member that cannot be opened is named with its
// place in the set: `member` is what one is called ("split part"), `needed` says why all are needed.
template <class File, class ReadFile>
std::vector<File> read_set_members(const std::vector<std::string>& locations, const Opener& open, std::size_t concurrency,
                                   ReadFile read_file, const std::string& member, const std::string& needed, uint64_t& bytes_fetched) {
  struct Member {
    File file;
    uint64_t fetched = 0;
  };
  auto members = read_concurrently<Member>(locations.size(), concurrency, [&](std::size_t i) {
    std::unique_ptr<ByteSource> src;
    try {
      src = open(locations[i]);
    } catch (const InputError& e) {
      if (locations.size() == 1) throw;
      throw InputError(locations[i], member + " " + std::to_string(i + 1) + " of " + std::to_string(locations.size()) + " cannot be read (" +
                                         e.what() + "); " + needed);
    }
    Member m{read_file(*src), 0};
    m.fetched = src->bytes_fetched();
    return m;
  });
  std::vector<File> files;
  files.reserve(members.size());
  for (auto& m : members) {
    files.push_back(std::move(m.file));
    bytes_fetched += m.fetched;
  }
  return files;
}

}  // namespace vc
