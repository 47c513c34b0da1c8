#pragma once
// Errors the user can act on. Every one names what was wrong (a flag, file, field) and what is
// accepted; the CLI turns them into exit code 2, the server into a 4xx JSON answer.
#include <stdexcept>
#include <string>

namespace vc {

class InputError : public std::runtime_error {
 public:
  // `subject` names the flag, file or field ("--context", "config.json: num_hidden_layers").
  InputError(std::string subject, const std::string& message)
      : std::runtime_error(subject + ": " + message), subject_(std::move(subject)) {}
  const std::string& subject() const { return subject_; }

 private:
  std::string subject_;
};

// Raised when exact integer arithmetic would overflow 64 bits: never a silent wrap.
class OverflowError : public std::runtime_error {
 public:
  explicit OverflowError(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace vc
