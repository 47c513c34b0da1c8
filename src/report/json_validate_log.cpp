#include "report/json_validate_log.h"

namespace vc {

nlohmann::json validate_log_json(const EngineLog& log, const Model& model, const std::vector<ValidationRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : rows)
    out.push_back({{"figure", r.figure}, {"printed", r.printed}, {"ours", r.ours}, {"error_percent", r.error_percent}, {"computed", r.computed}, {"note", r.note}});
  return {{"schema", "vramcalc.validate-log/1"}, {"engine", log.engine}, {"model", model.id.empty() ? model.name : model.id}, {"rows", out}, {"notes", log.notes}};
}

}  // namespace vc
