// catalog/price_rule.hpp (private to the catalog module)
//
// Provides the price-rule language of docs/catalog.md: CompilePriceRule checks one model's
// "price" object as it applies to one endpoint, against that endpoint's effective capabilities,
// and turns it into a PriceRule; Evaluate prices a validated request with it.
//
// Compile failures throw std::runtime_error naming the field; Evaluate never throws on a
// validated request (values the rule cannot read are billed at the most they could cost).
#pragma once

#include "genhost/catalog/catalog.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace genhost::catalog::detail {

// FieldPath is a request field as its chain of object keys ({"speech", "text"}).
using FieldPath = std::vector<std::string>;

// MediaInput is one media field a rule reads, with what the capabilities say about it.
struct MediaInput {
    FieldPath path;
    std::string pointer;     // JSON pointer of the field, the InputFacts key prefix
    double max_seconds = 0;  // billed when the input is present but not probed
};

enum class ValueKind {
    kField,          // a request field's value
    kDuration,       // output seconds from a duration field ("auto" → max, absent → default)
    kMediaSeconds,   // summed seconds of media inputs
    kFrames,         // seconds × frames per second of one video input
    kCharacters,     // UTF-16 code units of a text field
    kTextSeconds,    // UTF-16 code units / characters_per_second
    kCount,          // items of an array field
    kMediaLongSide,  // long side in pixels of a probed image × a scale field
};

// Value is a compiled value expression: where a number (or, for table keys, a key) comes from.
struct Value {
    ValueKind kind = ValueKind::kField;
    FieldPath field;
    std::optional<nlohmann::json> missing;                  // kField: assumed when absent
    std::optional<std::map<std::string, std::string>> via;  // kField: value → table key
    double duration_default = 0;                            // kDuration, from capabilities
    double duration_max = 0;                                // kDuration, from capabilities
    bool duration_auto = false;                             // kDuration: "auto" accepted
    std::vector<MediaInput> media;     // kMediaSeconds, kFrames, kMediaLongSide
    double default_fps = 0;            // kFrames
    std::string without_key;           // kCount
    double characters_per_second = 0;  // kTextSeconds
    FieldPath times_field;             // kMediaLongSide
    double times_missing = 1;          // kMediaLongSide
    std::optional<double> cap;
    double unit = 1;
    bool round_up = false;
};

// Condition holds when the field's value (or `missing` when absent) equals one of `any_of`.
struct Condition {
    FieldPath field;
    std::optional<nlohmann::json> missing;
    std::vector<nlohmann::json> any_of;
};

struct Step {
    std::optional<double> up_to;  // absent on the last step
    double rate = 0;
};

struct Rate {
    enum class Kind { kFixed, kTable, kSteps } kind = Kind::kFixed;
    double fixed = 0;
    Value by;
    std::map<std::string, double, std::less<>> table;
    std::vector<Step> steps;
    double highest = 0;  // billed when the key cannot be read
};

struct Multiplier {
    Condition when;
    double factor = 1;
};

struct Component {
    Rate rate;
    std::optional<Value> per;
    std::optional<Condition> when;
    std::vector<Multiplier> multipliers;
};

// PriceRule is one model's price on one endpoint.
struct PriceRule {
    std::vector<Component> components;
    double minimum = 0;
};

// PriceBook holds every compiled rule: model id → endpoint → rule.
struct PriceBook {
    std::map<std::string, std::map<std::string, PriceRule, std::less<>>, std::less<>> rules;
};

// CheckPriceShape validates the parts of a "price" object that do not depend on an endpoint
// (its keys and the "by_endpoint" names, which must be among `endpoints`).
void CheckPriceShape(const nlohmann::json& price, const std::vector<std::string>& endpoints,
                     const std::string& where);

// CompilePriceRule compiles `price` as it applies to `endpoint` (its "by_endpoint" entry laid
// over the base), reading `capabilities` (the endpoint's effective capabilities) for durations,
// media maxima and ratio classes.
PriceRule CompilePriceRule(const nlohmann::json& price, std::string_view endpoint,
                           const nlohmann::json& capabilities, const std::string& where);

// Evaluate returns the credits `rule` charges for the validated request `input`.
double Evaluate(const PriceRule& rule, const nlohmann::json& input, const InputFacts& facts);

// Utf16Length returns the length of UTF-8 `s` in UTF-16 code units (a code point above U+FFFF
// counts 2), the unit SPEC.md's text lengths are written in.
std::size_t Utf16Length(std::string_view s);

}  // namespace genhost::catalog::detail
