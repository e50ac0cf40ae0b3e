// Shared by the providers_*_test.cpp programs: the repository's files and the model catalog
// they are tested against (GENHOST_SOURCE_DIR is the source tree).
#pragma once

#include "genhost/catalog/catalog.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace genhost::providers::test {

// ReadSource returns a file of the source tree, e.g. "schemas/models.json".
inline std::string ReadSource(const std::string& relative) {
    std::ifstream in(std::string(GENHOST_SOURCE_DIR) + "/" + relative, std::ios::binary);
    EXPECT_TRUE(in) << relative;
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// TheCatalog is schemas/models.json with schemas/tiers.json, loaded once.
inline const catalog::Catalog& TheCatalog() {
    static const auto catalog =
        catalog::Catalog::Load(ReadSource("schemas/models.json"), ReadSource("schemas/tiers.json"));
    return *catalog;
}

}  // namespace genhost::providers::test
