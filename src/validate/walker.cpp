#include "walker.hpp"

#include "formats.hpp"
#include "genhost/validate/schema_set.hpp"
#include "messages.hpp"
#include "rules.hpp"

#include <algorithm>
#include <cmath>
#include <span>

namespace genhost::validate::detail {
namespace {

// IsIntegral follows JavaScript's Number.isInteger: 5.0 is an integer, Infinity is not.
bool IsIntegral(const Json& v) {
    if (!v.is_number_float()) return true;
    const double d = v.get<double>();
    return std::isfinite(d) && d == std::floor(d);
}

// Overlaps says whether an issue at `issue` (relative to the object) touches `read`. A deep read
// is touched by issues above, at or below it; a shallow read only by issues above or at it.
bool Overlaps(std::span<const std::string> issue, const RuleRead& read) {
    if (!read.deep && issue.size() > read.path.size()) return false;
    const std::size_t n = std::min(issue.size(), read.path.size());
    for (std::size_t i = 0; i < n; ++i) {
        if (read.path[i] != kWildcard && read.path[i] != issue[i]) return false;
    }
    return true;
}

class Walker {
  public:
    Walker(std::vector<Issue>& issues, std::vector<std::string> path, std::size_t cap)
        : issues_(issues), path_(std::move(path)), cap_(cap) {}

    void Check(const Node& start, const Json& value) {
        if (Full()) return;
        const Node& node = Target(start);
        if (node.discriminator) {
            CheckDiscriminated(node, value);
            return;
        }
        if (!node.branches.empty()) {
            CheckUnion(node, value);
            return;
        }
        if (value.is_null() && (node.types & kTypeNull)) return;
        if (node.const_value) {
            if (value != *node.const_value) {
                Add(kInvalidEnumValue,
                    "Invalid literal value, expected " + node.const_value->dump());
            }
            return;
        }
        if (node.string_enum && !value.is_string()) {
            Add(kInvalidType, "Expected " + JoinValues(node.enum_values) + ", received " +
                                  ReceivedTypeName(value));
            return;
        }
        if (node.types != 0 && (node.types & JsonTypeBits(value)) == 0) {
            Add(kInvalidType, "Expected " + ExpectedTypeNames(node.types) + ", received " +
                                  ReceivedTypeName(value));
            return;
        }
        if (!node.enum_values.empty()) {
            if (std::find(node.enum_values.begin(), node.enum_values.end(), value) ==
                node.enum_values.end()) {
                Add(kInvalidEnumValue, "Invalid enum value. Expected " +
                                           JoinValues(node.enum_values) + ", received '" +
                                           ValueText(value) + "'");
            }
            return;
        }
        switch (value.type()) {
            case Json::value_t::string:
                CheckString(node, value.get_ref<const std::string&>());
                break;
            case Json::value_t::number_integer:
            case Json::value_t::number_unsigned:
            case Json::value_t::number_float:
                CheckNumber(node, value);
                break;
            case Json::value_t::object:
                CheckObject(node, value);
                break;
            case Json::value_t::array:
                CheckArray(node, value);
                break;
            default:
                break;
        }
    }

  private:
    bool Full() const { return issues_.size() >= cap_; }

    void Add(const char* code, std::string message) { AddAt({}, code, std::move(message)); }

    void AddAt(const std::vector<std::string>& suffix, const char* code, std::string message) {
        if (Full()) return;
        Issue issue{code, path_, std::move(message)};
        issue.path.insert(issue.path.end(), suffix.begin(), suffix.end());
        issues_.push_back(std::move(issue));
    }

    void CheckString(const Node& node, const std::string& s) {
        // Only count when a bound needs it: the count is linear, but so is the input.
        bool too_long = false;
        if (node.min_length || node.max_length) {
            const std::size_t length = Utf16Length(s);
            if (node.min_length && length < *node.min_length) {
                Add(kTooSmall, "String must contain at least " + std::to_string(*node.min_length) +
                                   " character(s)");
            }
            if (node.max_length && length > *node.max_length) {
                too_long = true;
                Add(kTooBig, "String must contain at most " + std::to_string(*node.max_length) +
                                 " character(s)");
            }
        }
        // The compiler only accepts a pattern beside a small maxLength, and it is never run on
        // a string longer than that: std::regex backtracks and recurses per character.
        if (node.pattern && !too_long && !node.pattern->Search(s)) {
            Add(kInvalidString, node.pattern_message.empty() ? "Invalid" : node.pattern_message);
        }
        if (node.format != Format::kNone) {
            if (auto failure = CheckFormat(node.format, node.media_kind, s)) {
                Add(failure->code, std::move(failure->message));
            }
        }
    }

    void CheckNumber(const Node& node, const Json& value) {
        if ((node.types & kTypeInteger) && !(node.types & kTypeNumber) && !IsIntegral(value)) {
            Add(kInvalidType, "Expected integer, received float");
        }
        const double d = value.get<double>();
        if (node.minimum && d < node.minimum->value) {
            Add(kTooSmall, "Number must be greater than or equal to " + node.minimum->text);
        }
        if (node.exclusive_minimum && d <= node.exclusive_minimum->value) {
            Add(kTooSmall, "Number must be greater than " + node.exclusive_minimum->text);
        }
        if (node.maximum && d > node.maximum->value) {
            Add(kTooBig, "Number must be less than or equal to " + node.maximum->text);
        }
        if (node.exclusive_maximum && d >= node.exclusive_maximum->value) {
            Add(kTooBig, "Number must be less than " + node.exclusive_maximum->text);
        }
    }

    void CheckObject(const Node& node, const Json& value) {
        const std::size_t first_issue = issues_.size();
        for (const Property& property : node.properties) {
            if (Full()) return;
            const auto it = value.find(property.name);
            if (it == value.end()) {
                if (property.required) AddAt({property.name}, kInvalidType, "Required");
                continue;
            }
            path_.push_back(property.name);
            Check(*property.schema, *it);
            path_.pop_back();
        }
        if (node.additional != Additional::kAllow) {
            std::vector<std::string> unknown;
            std::size_t unknown_count = 0;
            for (const auto& entry : value.items()) {
                const std::string& key = entry.key();
                const Json& item = entry.value();
                const bool declared =
                    std::any_of(node.properties.begin(), node.properties.end(),
                                [&key](const Property& p) { return p.name == key; });
                if (declared) continue;
                if (node.additional == Additional::kSchema) {
                    if (Full()) return;
                    path_.push_back(key);
                    Check(*node.additional_schema, item);
                    path_.pop_back();
                    continue;
                }
                if (++unknown_count <= kMaxListedKeys) unknown.push_back("'" + Echo(key) + "'");
            }
            if (unknown_count > 0) {
                std::string message = "Unrecognized key(s) in object: ";
                for (std::size_t i = 0; i < unknown.size(); ++i) {
                    if (i > 0) message += ", ";
                    message += unknown[i];
                }
                if (unknown_count > unknown.size()) {
                    message += " and " + std::to_string(unknown_count - unknown.size()) + " more";
                }
                Add(kUnrecognizedKeys, std::move(message));
            }
        }
        const std::size_t structural_end = issues_.size();
        for (const Rule& rule : node.rules) {
            if (Full()) return;
            if (ReadsBrokenPath(rule, first_issue, structural_end)) continue;
            if (rule.when && !Evaluate(*rule.when, &value)) continue;
            if (!Evaluate(rule.require, &value)) AddAt(rule.path, kCustom, rule.message);
        }
    }

    bool ReadsBrokenPath(const Rule& rule, std::size_t first, std::size_t end) const {
        for (std::size_t i = first; i < end; ++i) {
            const Issue& issue = issues_[i];
            if (issue.code == kUnrecognizedKeys || issue.code == kCustom) continue;
            const std::span<const std::string> relative =
                std::span<const std::string>(issue.path).subspan(path_.size());
            for (const RuleRead& read : rule.reads) {
                if (Overlaps(relative, read)) return true;
            }
        }
        return false;
    }

    void CheckArray(const Node& node, const Json& value) {
        const std::size_t size = value.size();
        if (node.min_items && size < *node.min_items) {
            Add(kTooSmall,
                "Array must contain at least " + std::to_string(*node.min_items) + " element(s)");
        }
        std::size_t walk = size;
        if (node.max_items && size > *node.max_items) {
            Add(kTooBig,
                "Array must contain at most " + std::to_string(*node.max_items) + " element(s)");
            walk = *node.max_items;  // the items past the bound are not looked at
        }
        if (node.items == nullptr) return;
        for (std::size_t i = 0; i < walk && !Full(); ++i) {
            path_.push_back(std::to_string(i));
            Check(*node.items, value[i]);
            path_.pop_back();
        }
    }

    void CheckDiscriminated(const Node& node, const Json& value) {
        const Discriminator& d = *node.discriminator;
        if (!value.is_object()) {
            Add(kInvalidType, std::string("Expected object, received ") + ReceivedTypeName(value));
            return;
        }
        const auto it = value.find(d.property);
        if (it != value.end() && it->is_string()) {
            const auto& tag = it->get_ref<const std::string&>();
            for (const auto& [name, branch] : d.branches) {
                if (name == tag) {
                    Check(*branch, value);
                    return;
                }
            }
        }
        std::vector<std::string> names;
        names.reserve(d.branches.size());
        for (const auto& branch : d.branches) names.push_back(branch.first);
        std::string message = "Invalid discriminator value. Expected " + JoinStrings(names);
        if (it != value.end() && it->is_string()) {
            const auto& tag = it->get_ref<const std::string&>();
            for (const auto& [name, hint] : d.retired) {
                if (name != tag) continue;
                message = d.property == "model" ? "Model '" : "Value '";
                message += name;
                message += "' has been retired (";
                message += hint;
                message += "). Expected ";
                message += JoinStrings(names);
            }
        }
        AddAt({d.property}, kInvalidUnionDiscriminator, std::move(message));
    }

    void CheckUnion(const Node& node, const Json& value) {
        const TypeMask bits = JsonTypeBits(value);
        std::vector<const Node*> candidates;
        for (const Node* branch : node.branches) {
            const TypeMask accepts = Target(*branch).accepts;
            if (accepts == 0 || (accepts & bits) != 0) candidates.push_back(branch);
        }
        if (candidates.empty()) {
            Add(kInvalidType, "Expected " + ExpectedTypeNames(node.accepts) + ", received " +
                                  ReceivedTypeName(value));
            return;
        }
        if (candidates.size() == 1) {
            Check(*candidates.front(), value);
            return;
        }
        // Several branches take this JSON type: the first that accepts the value wins (zod's
        // union); if none does, report the branch that came closest (fewest issues).
        std::vector<Issue> best;
        bool have_best = false;
        const std::size_t room = cap_ - issues_.size();
        for (const Node* branch : candidates) {
            std::vector<Issue> trial = CollectIssues(*branch, value, room, path_);
            if (trial.empty()) return;
            if (!have_best || trial.size() < best.size()) {
                best = std::move(trial);
                have_best = true;
            }
        }
        for (Issue& issue : best) {
            if (Full()) break;
            issues_.push_back(std::move(issue));
        }
    }

    std::vector<Issue>& issues_;
    std::vector<std::string> path_;
    std::size_t cap_;
};

}  // namespace

std::vector<Issue> CollectIssues(const Node& node, const Json& value, std::size_t cap,
                                 const std::vector<std::string>& base_path) {
    std::vector<Issue> issues;
    Walker walker(issues, base_path, cap);
    walker.Check(node, value);
    return issues;
}

void FillDefaults(const Node& start, Json& value) {
    const Node& node = Target(start);
    if (node.discriminator) {
        if (!value.is_object()) return;
        const auto it = value.find(node.discriminator->property);
        if (it == value.end() || !it->is_string()) return;
        for (const auto& [name, branch] : node.discriminator->branches) {
            if (name == it->get_ref<const std::string&>()) FillDefaults(*branch, value);
        }
        return;
    }
    if (!node.branches.empty()) {
        for (const Node* branch : node.branches) {
            if (CollectIssues(*branch, value, 1).empty()) {
                FillDefaults(*branch, value);
                return;
            }
        }
        return;
    }
    if (value.is_object()) {
        for (const Property& property : node.properties) {
            const auto it = value.find(property.name);
            if (it != value.end()) {
                FillDefaults(*property.schema, *it);
            } else if (const Json* fallback = EffectiveDefault(*property.schema)) {
                value[property.name] = *fallback;
            }
        }
        for (const ConditionalDefault& conditional : node.conditional_defaults) {
            if (value.contains(conditional.property)) continue;
            if (conditional.when && !Evaluate(*conditional.when, &value)) continue;
            value[conditional.property] = conditional.value;
        }
        return;
    }
    if (value.is_array() && node.items != nullptr) {
        for (Json& item : value) FillDefaults(*node.items, item);
    }
}

}  // namespace genhost::validate::detail
