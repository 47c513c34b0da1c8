#pragma once
// What the tests read: facts kept in tests/data/ (each file names its source; tests/data/README.md)
// and files a test writes itself into a folder of its own, removed when the test process ends.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>

namespace vc::testing {

// tests/data/<relative> in the source tree (VRAMCALC_TEST_DATA_DIR, set by CMakeLists.txt).
inline std::filesystem::path test_data_path(const std::string& relative) {
  return std::filesystem::path(VRAMCALC_TEST_DATA_DIR) / relative;
}

inline std::string read_test_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("test data missing: " + path.string());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// tests/data/<relative>, parsed.
inline nlohmann::json read_test_json(const std::string& relative) {
  return nlohmann::json::parse(read_test_text(test_data_path(relative)));
}

// The `config` object of tests/data/configs/<file> (a published config.json with its source).
inline std::string test_config_text(const std::string& file) { return read_test_json("configs/" + file).at("config").dump(); }

// A folder for files this test process writes; removed at exit.
inline const std::filesystem::path& scratch_dir() {
  struct Scratch {
    std::filesystem::path path = std::filesystem::temp_directory_path() / ("vramcalc-tests-" + std::to_string(::getpid()));
    Scratch() { std::filesystem::create_directories(path); }
    ~Scratch() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  };
  static const Scratch scratch;
  return scratch.path;
}

}  // namespace vc::testing
