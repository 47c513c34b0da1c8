#pragma once
// The JSON API: one route per CLI verb at /api/VERB, taking the CLI's flags as parameters and
// answering the JSON the CLI prints with --json. Kept free of HTTP so it is tested directly; the
// server (server.h) only moves bytes. Adding a verb is one line in api.cpp's route table.
#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/request_params.h"

namespace vc::server {

struct ApiRoute {
  std::string verb;                  // "estimate" -> /api/estimate
  std::vector<std::string> params;   // accepted parameter names
  std::function<nlohmann::json(const RequestParams&)> run;
};

const std::vector<ApiRoute>& api_routes();

struct ApiAnswer {
  int status = 200;
  std::string body;  // JSON text
};

// Runs a verb; bad input becomes {"error": {"field", "message"}} with a 4xx status, never a throw.
ApiAnswer call_api(std::string_view verb, const RequestParams& params);

// The error document the server answers with.
std::string error_body(const std::string& field, const std::string& message);

}  // namespace vc::server
