// The feature list (feature_list.inc), read twice: once to declare each feature's wiring
// function (WireNAME, in src/features/<name>.cpp), once to list them.
#include "genhost/features/node.hpp"

namespace genhost::features {

#define GENHOST_FEATURE(NAME) void Wire##NAME(Node& node);
#include "feature_list.inc"
#undef GENHOST_FEATURE

const std::vector<Feature>& Features() {
#define GENHOST_FEATURE(NAME) {#NAME, Wire##NAME},
    static const std::vector<Feature> features{
#include "feature_list.inc"
    };
#undef GENHOST_FEATURE
    return features;
}

}  // namespace genhost::features
