#include "genhost/core/version.hpp"

namespace genhost {

const char* Version() { return GENHOST_VERSION; }

}  // namespace genhost
