#pragma once
// The JSON of `check` and `devices` (plan's is plan_json in plan/plan_report.h), shared by the
// CLI's --json and the HTTP API so both print the same document; and the display strings the API
// adds on request (units=gb|gib) so the page shows the library's formatting, not its own.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/units.h"
#include "plan/check.h"
#include "plan/hardware.h"
#include "plan/plan_report.h"

namespace vc {

// `engine`: whose per-device figures decided the rows (named in the document).
nlohmann::json check_json(const Box& box, const std::vector<std::string>& found, const std::vector<CheckRow>& rows, EngineKind engine);
nlohmann::json devices_json(const std::vector<Device>& devices);

// One check row as the CLI's text table prints it: weights, total, max context, tok/s ("-" where
// none), and the quant parameter that asks /api/plan for the same tier.
nlohmann::json check_row_display_json(const CheckRow& row, ByteUnits units);
// A plan's per-device figures, totals and speeds as text.
nlohmann::json plan_display_json(const Plan& plan, const PlanSolved& solved, ByteUnits units);

}  // namespace vc
