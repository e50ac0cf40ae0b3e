// genhost/core/version.hpp
//
// Provides Version: genhost's version (CMake's project version), as `genhost --version`, the
// metric genhost_build_info and the asset fetcher's User-Agent show it.
#pragma once

namespace genhost {

// Version is genhost's version ("0.1.0").
const char* Version();

}  // namespace genhost
