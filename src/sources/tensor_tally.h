#pragma once
// What a checkpoint's tensors add up to: exact bytes, parameters by class (routed experts
// counted k of n for the active figure), bytes and tensor counts by storage type.
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "model/model.h"

namespace vc {

struct DtypeTally {
  uint64_t tensors = 0;
  uint64_t bytes = 0;
  uint64_t params = 0;
};

struct TensorTally {
  uint64_t tensors = 0;
  uint64_t bytes = 0;
  uint64_t params = 0;
  std::map<ParamClass, uint64_t> params_by_class;
  std::map<ParamClass, uint64_t> bytes_by_class;
  std::map<std::string, DtypeTally> by_dtype;
  // Non-parameter buffers a checkpoint saved beside the weights (causal masks, rotary inv_freq),
  // which engines skip on load: in no total above, counted here.
  uint64_t buffer_tensors = 0;
  uint64_t buffer_bytes = 0;

  void add(ParamClass c, const std::string& dtype, uint64_t params, uint64_t bytes);
  // Removes class `c` from the parameter and byte totals (by_dtype keeps describing the files) and
  // returns its {params, bytes}: a stored copy an engine does not load.
  std::pair<uint64_t, uint64_t> take(ParamClass c);
  // The storage type holding the most bytes ("Q4_K", "BF16").
  std::string dominant_dtype() const;
  // "Q4_K 61%, Q6_K 22%, F32 1%" by bytes.
  std::string dtype_summary() const;
  // Writes by_class, derived_total and derived_active (routed experts scaled by used / experts,
  // the input embedding 0) into `params`.
  void write_params(Params& params, uint64_t experts, uint64_t experts_used, const std::string& source) const;
};

}  // namespace vc
