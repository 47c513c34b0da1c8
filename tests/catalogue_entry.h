#pragma once
// A catalogue entry by id for tests: the entry, or an empty model and a test failure when the
// catalogue lacks it (so a renamed entry fails the test instead of crashing the suite).
#include <gtest/gtest.h>

#include "catalogue/catalogue.h"
#include "model/model.h"

namespace vc::test {

inline const Model& entry(const char* id) {
  static const Model none;
  const Model* m = Catalogue::builtin().find(id);
  EXPECT_NE(m, nullptr) << id << " is not in the catalogue";
  return m ? *m : none;
}

}  // namespace vc::test
