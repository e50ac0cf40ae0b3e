// src/validate/schema_node.hpp (private to genhost_validate)
//
// Provides the compiled form of a schema: Node (one JSON Schema object of the dialect in
// docs/schemas.md, with its $ref already resolved to another Node), Cond and Rule (the x-rules
// condition language) and ConditionalDefault (x-defaults). The compiler (compiler.hpp) builds
// them once; the walker (walker.hpp) reads them. Nodes are owned by the SchemaSet's arena and
// never change after Compile, so raw pointers between them are safe to share across threads.
#pragma once

#include "pattern.hpp"

#include "genhost/core/media_kind.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace genhost::validate::detail {

using Json = nlohmann::json;

// TypeMask bits: the JSON types a schema's "type" keyword allows. 0 means any type.
enum TypeBit : std::uint8_t {
    kTypeString = 1 << 0,
    kTypeInteger = 1 << 1,
    kTypeNumber = 1 << 2,
    kTypeBoolean = 1 << 3,
    kTypeObject = 1 << 4,
    kTypeArray = 1 << 5,
    kTypeNull = 1 << 6,
};
using TypeMask = std::uint8_t;

enum class Format : std::uint8_t { kNone, kUuid, kDateTime, kDate, kUri, kHttpsUrl, kMedia };

// RulePath is a path relative to the object a rule sits on (or to the item an any/all/where
// condition is looking at); the segment "*" stands for every item of an array.
using RulePath = std::vector<std::string>;
inline constexpr const char* kWildcard = "*";

// Cond is one condition of the x-rules language (docs/schemas.md, "Cross-field rules").
struct Cond {
    enum class Kind : std::uint8_t {
        kPresent,  // path present (and not null) == `present`
        kEquals,   // value at path == `value`
        kIn,       // value at path is one of `value` (an array)
        kCompare,  // number at path <op> operand (a number or another path's number)
        kCount,    // number of present slots of path (matching children[0] if any) in [min, max]
        kAny,      // children[0] holds for at least one slot of path
        kAll,      // children[0] holds for every slot of path
        kAllOf,    // every child holds
        kAnyOf,    // some child holds
        kNot,      // children[0] does not hold
    };
    enum class Op : std::uint8_t { kGt, kGte, kLt, kLte };

    Kind kind = Kind::kPresent;
    RulePath path;
    bool present = true;
    Json value;
    Op op = Op::kGt;
    std::optional<double> operand;
    RulePath operand_path;
    std::optional<std::size_t> min;
    std::optional<std::size_t> max;
    std::vector<Cond> children;
};

// RuleRead is a path a rule reads. A shallow read only asks whether something exists there
// (present, count without where), so an issue *inside* the value does not invalidate it; a deep
// read looks at the value itself.
struct RuleRead {
    RulePath path;
    bool deep = true;
};

// Rule is one x-rules entry: when `when` holds (or is absent), `require` must hold; otherwise a
// `custom` issue with `message` is reported at the object's path + `path`.
struct Rule {
    std::optional<Cond> when;
    Cond require;
    std::vector<std::string> path;
    std::string message;
    std::vector<RuleRead> reads;
};

// ConditionalDefault is one x-defaults entry: ApplyDefaults sets `property` to `value` when it is
// absent and `when` holds (evaluated after the plain defaults of the object are filled).
struct ConditionalDefault {
    std::optional<Cond> when;
    std::string property;
    Json value;
};

struct Node;

struct Property {
    std::string name;
    const Node* schema = nullptr;
    bool required = false;
};

struct NumberBound {
    double value = 0;
    std::string text;  // as JavaScript would print it, for messages
};

// Discriminator is a oneOf with OpenAPI's "discriminator": the branch is chosen by the string
// value of `property`.
struct Discriminator {
    std::string property;
    std::vector<std::pair<std::string, const Node*>> branches;  // oneOf order
    std::vector<std::pair<std::string, std::string>> retired;   // value, hint
};

enum class Additional : std::uint8_t { kAllow, kForbid, kSchema };

struct Node {
    std::string location;  // "schemas/x.json#/$defs/y", for compile errors

    // A "$ref" node validates as its target; it may only add annotations and a default.
    const Node* ref = nullptr;

    std::optional<Json> default_value;
    std::vector<Json> examples;

    TypeMask types = 0;
    std::optional<Json> const_value;
    std::vector<Json> enum_values;
    bool string_enum = false;  // every enum value is a string (zod's z.enum)

    std::optional<std::size_t> min_length;
    std::optional<std::size_t> max_length;
    std::shared_ptr<const Pattern> pattern;
    std::string pattern_source;
    std::string pattern_message;  // x-pattern-message: what the pattern asks for, in words
    Format format = Format::kNone;
    MediaKind media_kind = MediaKind::kImage;

    std::optional<NumberBound> minimum;
    std::optional<NumberBound> maximum;
    std::optional<NumberBound> exclusive_minimum;
    std::optional<NumberBound> exclusive_maximum;

    std::vector<Property> properties;  // declaration order
    Additional additional = Additional::kAllow;
    const Node* additional_schema = nullptr;
    std::vector<Rule> rules;
    std::vector<ConditionalDefault> conditional_defaults;

    const Node* items = nullptr;
    std::optional<std::size_t> min_items;
    std::optional<std::size_t> max_items;

    // oneOf / anyOf without discriminator: a plain union.
    std::vector<const Node*> branches;
    std::optional<Discriminator> discriminator;

    // accepts: the JSON types some branch (or this schema) can accept; 0 means any. Used to pick
    // a plain-union branch and to word "Expected string | array" messages.
    TypeMask accepts = 0;
};

// JsonTypeBits is the TypeMask bit of a value's JSON type; a number has both number bits (whether
// it is integral is a separate check).
inline TypeMask JsonTypeBits(const Json& v) {
    switch (v.type()) {
        case Json::value_t::string:
            return kTypeString;
        case Json::value_t::boolean:
            return kTypeBoolean;
        case Json::value_t::object:
            return kTypeObject;
        case Json::value_t::array:
            return kTypeArray;
        case Json::value_t::null:
            return kTypeNull;
        case Json::value_t::number_integer:
        case Json::value_t::number_unsigned:
        case Json::value_t::number_float:
            return kTypeInteger | kTypeNumber;
        default:
            return 0;
    }
}

// Target follows "$ref" links to the node that carries the constraints.
inline const Node& Target(const Node& node) {
    const Node* n = &node;
    while (n->ref != nullptr) n = n->ref;
    return *n;
}

// EffectiveDefault is the default of `node`: its own, else its $ref target's.
inline const Json* EffectiveDefault(const Node& node) {
    for (const Node* n = &node; n != nullptr; n = n->ref) {
        if (n->default_value) return &*n->default_value;
    }
    return nullptr;
}

}  // namespace genhost::validate::detail
