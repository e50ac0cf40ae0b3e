#include "field_place.hpp"

#include <algorithm>

namespace genhost::validate::detail {
namespace {

// The largest array index a path may name: nine digits keep it far from any overflow.
constexpr std::size_t kMaxIndexDigits = 9;

std::string Dotted(const std::vector<std::string>& segments, std::size_t count) {
    std::string out;
    for (std::size_t i = 0; i < count && i < segments.size(); ++i) {
        out += (out.empty() ? "" : ".") + segments[i];
    }
    return out.empty() ? "the input" : out;
}

// ArrayIndex reads a JSON pointer's array index (RFC 6901: digits, no leading zero).
std::optional<std::size_t> ArrayIndex(const std::string& segment) {
    if (segment.empty() || segment.size() > kMaxIndexDigits) return std::nullopt;
    if (segment.size() > 1 && segment[0] == '0') return std::nullopt;
    if (!std::all_of(segment.begin(), segment.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        return std::nullopt;
    }
    return std::stoul(segment);
}

const Json* Member(const Json* value, const std::string& name) {
    if (value == nullptr || !value->is_object()) return nullptr;
    const auto it = value->find(name);
    return it == value->end() ? nullptr : &*it;
}

const Json* Item(const Json* value, std::size_t index) {
    if (value == nullptr || !value->is_array() || index >= value->size()) return nullptr;
    return &(*value)[index];
}

std::size_t Held(const Json* value) {
    return value != nullptr && value->is_array() ? value->size() : 0;
}

// FreeFormProblem checks the rest of a path where the schema says nothing (a free-form object):
// arrays there may only grow by one item.
std::optional<std::string> FreeFormProblem(const Json* value,
                                           const std::vector<std::string>& segments,
                                           std::size_t at) {
    for (std::size_t i = at; i < segments.size(); ++i) {
        const bool array = value != nullptr && value->is_array();
        const auto index = ArrayIndex(segments[i]);
        if (array || ((value == nullptr || value->is_null()) && index)) {
            if (!index || *index > Held(value)) {
                return Dotted(segments, i) + " has no item " + segments[i];
            }
            value = Item(value, *index);
            continue;
        }
        if (value != nullptr && !value->is_null() && !value->is_object()) {
            return Dotted(segments, i) + " is not an object or an array";
        }
        value = Member(value, segments[i]);
    }
    return std::nullopt;
}

}  // namespace

std::optional<std::string> FieldPlaceProblem(const Node& start, const Json* value,
                                             const std::vector<std::string>& segments,
                                             std::size_t at) {
    if (at >= segments.size()) return std::nullopt;
    const Node& node = Target(start);
    if (node.discriminator || !node.branches.empty()) {
        std::vector<const Node*> branches;
        if (node.discriminator) {
            const Json* tag = Member(value, node.discriminator->property);
            for (const auto& [name, branch] : node.discriminator->branches) {
                if (tag != nullptr && tag->is_string() && *tag == name) {
                    return FieldPlaceProblem(*branch, value, segments, at);
                }
                branches.push_back(branch);
            }
        } else {
            branches = node.branches;
        }
        // No branch chosen yet: a place any branch has will do.
        std::optional<std::string> first;
        for (const Node* branch : branches) {
            auto problem = FieldPlaceProblem(*branch, value, segments, at);
            if (!problem) return std::nullopt;
            if (!first) first = std::move(problem);
        }
        return first;
    }
    const std::string& segment = segments[at];
    if (node.items != nullptr) {
        const auto index = ArrayIndex(segment);
        if (!index) return Dotted(segments, at) + " is an array: '" + segment + "' is no index";
        if (node.max_items && *index >= *node.max_items) {
            return Dotted(segments, at) + " holds at most " + std::to_string(*node.max_items) +
                   " item(s)";
        }
        if (!node.max_items && *index > Held(value)) {
            return Dotted(segments, at) + " has no item " + segment;
        }
        return FieldPlaceProblem(*node.items, Item(value, *index), segments, at + 1);
    }
    const bool object = (node.types & kTypeObject) != 0 || !node.properties.empty() ||
                        node.additional != Additional::kAllow;
    if (object) {
        for (const Property& p : node.properties) {
            if (p.name == segment) {
                return FieldPlaceProblem(*p.schema, Member(value, segment), segments, at + 1);
            }
        }
        if (node.additional == Additional::kSchema && node.additional_schema != nullptr) {
            return FieldPlaceProblem(*node.additional_schema, Member(value, segment), segments,
                                     at + 1);
        }
        if (node.additional == Additional::kForbid) {
            return Dotted(segments, at) + " has no field " + segment;
        }
        return FreeFormProblem(Member(value, segment), segments, at + 1);
    }
    if (node.types == 0) return FreeFormProblem(value, segments, at);
    return Dotted(segments, at) + " takes a value, not fields";
}

}  // namespace genhost::validate::detail
