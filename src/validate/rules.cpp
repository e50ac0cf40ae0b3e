#include "rules.hpp"

#include <algorithm>
#include <span>

namespace genhost::validate::detail {
namespace {

bool HasWildcard(const RulePath& path) {
    return std::find(path.begin(), path.end(), kWildcard) != path.end();
}

RulePath CompilePath(const OJson& json, const std::string& location) {
    if (!json.is_array()) Fail(location, "\"path\" must be an array of strings");
    RulePath path;
    for (const OJson& segment : json) {
        if (!segment.is_string() || segment.get<std::string>().empty()) {
            Fail(location, "\"path\" must be an array of non-empty strings");
        }
        path.push_back(segment.get<std::string>());
    }
    return path;
}

std::size_t CompileCount(const OJson& json, const std::string& location) {
    if (!json.is_number_unsigned() &&
        !(json.is_number_integer() && json.get<std::int64_t>() >= 0)) {
        Fail(location, "count bounds must be non-negative integers");
    }
    return json.get<std::size_t>();
}

bool IsDigits(const std::string& s) {
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Expand resolves `path` from `value`, appending one slot per match: a value, or nullptr where
// the path leads nowhere. "*" fans out over an array's items (none if it is not an array); a
// decimal segment also indexes an array.
void Expand(const Json* value, std::span<const std::string> path, std::vector<const Json*>& out) {
    if (path.empty()) {
        out.push_back(value);
        return;
    }
    const std::string& segment = path.front();
    const std::span<const std::string> rest = path.subspan(1);
    if (segment == kWildcard) {
        if (value != nullptr && value->is_array()) {
            for (const Json& item : *value) Expand(&item, rest, out);
        }
        return;
    }
    const Json* next = nullptr;
    if (value != nullptr && value->is_object()) {
        const auto it = value->find(segment);
        if (it != value->end()) next = &*it;
    } else if (value != nullptr && value->is_array() && IsDigits(segment) && segment.size() < 10) {
        const std::size_t index = std::stoul(segment);
        if (index < value->size()) next = &(*value)[index];
    }
    Expand(next, rest, out);
}

const Json* Single(const Json* context, const RulePath& path) {
    std::vector<const Json*> slots;
    Expand(context, path, slots);
    return slots.empty() ? nullptr : slots.front();
}

bool Present(const Json* v) { return v != nullptr && !v->is_null(); }

bool Compare(Cond::Op op, double a, double b) {
    switch (op) {
        case Cond::Op::kGt:
            return a > b;
        case Cond::Op::kGte:
            return a >= b;
        case Cond::Op::kLt:
            return a < b;
        case Cond::Op::kLte:
            return a <= b;
    }
    return false;
}

RulePath Join(const RulePath& a, const RulePath& b) {
    RulePath out = a;
    out.insert(out.end(), b.begin(), b.end());
    return out;
}

}  // namespace

void Fail(const std::string& location, const std::string& what) {
    throw SchemaError(location + ": " + what);
}

Json ToJson(const OJson& value) { return Json::parse(value.dump()); }

Cond CompileCond(const OJson& json, const std::string& location) {
    if (!json.is_object()) Fail(location, "a condition must be an object");
    Cond cond;
    for (const char* combinator : {"allOf", "anyOf", "not"}) {
        if (!json.contains(combinator)) continue;
        if (json.size() != 1) {
            Fail(location,
                 std::string("\"") + combinator + "\" must be the only key of its condition");
        }
        const OJson& operand = json.at(combinator);
        const std::string at = location + "/" + combinator;
        if (std::string_view(combinator) == "not") {
            cond.kind = Cond::Kind::kNot;
            cond.children.push_back(CompileCond(operand, at));
            return cond;
        }
        cond.kind =
            std::string_view(combinator) == "allOf" ? Cond::Kind::kAllOf : Cond::Kind::kAnyOf;
        if (!operand.is_array() || operand.empty()) {
            Fail(at, "must be a non-empty array of conditions");
        }
        for (std::size_t i = 0; i < operand.size(); ++i) {
            cond.children.push_back(CompileCond(operand[i], at + "/" + std::to_string(i)));
        }
        return cond;
    }

    const char* op_key = nullptr;
    for (const auto& [key, value] : json.items()) {
        if (key == "path" || key == "where") continue;
        static constexpr std::string_view kOperators[] = {
            "present", "equals", "in", "gt", "gte", "lt", "lte", "count", "any", "all"};
        const auto it = std::find(std::begin(kOperators), std::end(kOperators), key);
        if (it == std::end(kOperators)) Fail(location, "unknown condition key \"" + key + "\"");
        if (op_key != nullptr) {
            Fail(location, "a condition has exactly one operator; found \"" + std::string(op_key) +
                               "\" and \"" + key + "\"");
        }
        op_key = it->data();
    }
    if (op_key == nullptr) Fail(location, "a condition needs an operator (present, equals, ...)");
    if (json.contains("path")) cond.path = CompilePath(json.at("path"), location + "/path");
    const std::string op(op_key);
    const OJson& operand = json.at(op);
    const std::string at = location + "/" + op;
    if (json.contains("where") && op != "count")
        Fail(location, "\"where\" only goes with \"count\"");
    if (HasWildcard(cond.path) && op != "count" && op != "any" && op != "all") {
        Fail(location, "a path with \"*\" needs count, any or all");
    }

    if (op == "present") {
        if (!operand.is_boolean()) Fail(at, "must be true or false");
        cond.kind = Cond::Kind::kPresent;
        cond.present = operand.get<bool>();
    } else if (op == "equals") {
        cond.kind = Cond::Kind::kEquals;
        cond.value = ToJson(operand);
    } else if (op == "in") {
        if (!operand.is_array() || operand.empty()) Fail(at, "must be a non-empty array");
        cond.kind = Cond::Kind::kIn;
        cond.value = ToJson(operand);
    } else if (op == "gt" || op == "gte" || op == "lt" || op == "lte") {
        cond.kind = Cond::Kind::kCompare;
        cond.op = op == "gt"    ? Cond::Op::kGt
                  : op == "gte" ? Cond::Op::kGte
                  : op == "lt"  ? Cond::Op::kLt
                                : Cond::Op::kLte;
        if (operand.is_number()) {
            cond.operand = operand.get<double>();
        } else if (operand.is_object() && operand.size() == 1 && operand.contains("path")) {
            cond.operand_path = CompilePath(operand.at("path"), at + "/path");
            if (HasWildcard(cond.operand_path)) Fail(at, "an operand path cannot contain \"*\"");
        } else {
            Fail(at, "must be a number or {\"path\": [...]}");
        }
    } else if (op == "count") {
        cond.kind = Cond::Kind::kCount;
        if (!operand.is_object() || operand.empty()) Fail(at, "must be {\"min\": n, \"max\": m}");
        for (const auto& [key, value] : operand.items()) {
            if (key == "min") {
                cond.min = CompileCount(value, at + "/min");
            } else if (key == "max") {
                cond.max = CompileCount(value, at + "/max");
            } else {
                Fail(at, "unknown count bound \"" + key + "\"");
            }
        }
        if (json.contains("where")) {
            cond.children.push_back(CompileCond(json.at("where"), location + "/where"));
        }
    } else {
        cond.kind = op == "any" ? Cond::Kind::kAny : Cond::Kind::kAll;
        cond.children.push_back(CompileCond(operand, at));
    }
    return cond;
}

bool Evaluate(const Cond& cond, const Json* context) {
    switch (cond.kind) {
        case Cond::Kind::kAllOf:
            return std::all_of(cond.children.begin(), cond.children.end(),
                               [context](const Cond& c) { return Evaluate(c, context); });
        case Cond::Kind::kAnyOf:
            return std::any_of(cond.children.begin(), cond.children.end(),
                               [context](const Cond& c) { return Evaluate(c, context); });
        case Cond::Kind::kNot:
            return !Evaluate(cond.children.front(), context);
        case Cond::Kind::kPresent:
            return Present(Single(context, cond.path)) == cond.present;
        case Cond::Kind::kEquals: {
            const Json* v = Single(context, cond.path);
            return v != nullptr && *v == cond.value;
        }
        case Cond::Kind::kIn: {
            const Json* v = Single(context, cond.path);
            return v != nullptr &&
                   std::find(cond.value.begin(), cond.value.end(), *v) != cond.value.end();
        }
        case Cond::Kind::kCompare: {
            const Json* v = Single(context, cond.path);
            if (v == nullptr || !v->is_number()) return false;
            double operand = 0;
            if (cond.operand) {
                operand = *cond.operand;
            } else {
                const Json* other = Single(context, cond.operand_path);
                if (other == nullptr || !other->is_number()) return false;
                operand = other->get<double>();
            }
            return Compare(cond.op, v->get<double>(), operand);
        }
        case Cond::Kind::kCount: {
            std::vector<const Json*> slots;
            Expand(context, cond.path, slots);
            std::size_t n = 0;
            for (const Json* slot : slots) {
                if (!Present(slot)) continue;
                if (!cond.children.empty() && !Evaluate(cond.children.front(), slot)) continue;
                ++n;
            }
            return (!cond.min || n >= *cond.min) && (!cond.max || n <= *cond.max);
        }
        case Cond::Kind::kAny:
        case Cond::Kind::kAll: {
            std::vector<const Json*> slots;
            Expand(context, cond.path, slots);
            const Cond& inner = cond.children.front();
            const auto holds = [&inner](const Json* slot) { return Evaluate(inner, slot); };
            return cond.kind == Cond::Kind::kAny ? std::any_of(slots.begin(), slots.end(), holds)
                                                 : std::all_of(slots.begin(), slots.end(), holds);
        }
    }
    return false;
}

void CollectReads(const Cond& cond, const RulePath& prefix, std::vector<RuleRead>& out) {
    const RulePath here = Join(prefix, cond.path);
    switch (cond.kind) {
        case Cond::Kind::kAllOf:
        case Cond::Kind::kAnyOf:
        case Cond::Kind::kNot:
            for (const Cond& child : cond.children) CollectReads(child, prefix, out);
            return;
        case Cond::Kind::kPresent:
            out.push_back({here, false});
            return;
        case Cond::Kind::kEquals:
        case Cond::Kind::kIn:
            out.push_back({here, true});
            return;
        case Cond::Kind::kCompare:
            out.push_back({here, true});
            if (!cond.operand) out.push_back({Join(prefix, cond.operand_path), true});
            return;
        case Cond::Kind::kCount:
        case Cond::Kind::kAny:
        case Cond::Kind::kAll:
            out.push_back({here, false});
            for (const Cond& child : cond.children) CollectReads(child, here, out);
            return;
    }
}

void FirstSegments(const Cond& cond, std::vector<std::string>& out) {
    switch (cond.kind) {
        case Cond::Kind::kAllOf:
        case Cond::Kind::kAnyOf:
        case Cond::Kind::kNot:
            for (const Cond& child : cond.children) FirstSegments(child, out);
            return;
        default:
            if (!cond.path.empty()) out.push_back(cond.path.front());
            if (cond.kind == Cond::Kind::kCompare && !cond.operand && !cond.operand_path.empty()) {
                out.push_back(cond.operand_path.front());
            }
            return;
    }
}

}  // namespace genhost::validate::detail
