#include "price_rule.hpp"

#include "capabilities.hpp"
#include "strict_json.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>

namespace genhost::catalog::detail {

using nlohmann::json;

namespace {

// Where a value expression is used decides which forms it may take.
enum class Usage {
    kQuantity,  // a component's "per": must yield a number
    kTableKey,  // a rate table's "by": yields a key
    kStepKey,   // a rate's steps "by": yields a number, or nothing (→ the highest rate)
};

std::string Pointer(const FieldPath& path) {
    std::string out;
    for (const auto& key : path) out += "/" + key;  // keys are [A-Za-z0-9_]: nothing to escape
    return out;
}

std::string JoinPath(const FieldPath& path) {
    std::string out;
    for (const auto& key : path) out += (out.empty() ? "" : ".") + key;
    return out;
}

// Lookup returns the request value at `path`, or nullptr when absent or null.
const json* Lookup(const json& input, const FieldPath& path) {
    const json* cur = &input;
    for (const auto& key : path) {
        if (!cur->is_object()) return nullptr;
        const auto it = cur->find(key);
        if (it == cur->end()) return nullptr;
        cur = &*it;
    }
    return cur->is_null() ? nullptr : cur;
}

// KeyOf writes a request value as a price-table key: strings as they are, booleans as
// "true"/"false", whole numbers without a fraction.
std::string KeyOf(const json& v) {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
    if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
    if (v.is_number_float()) {
        const double d = v.get<double>();
        if (std::trunc(d) == d && std::abs(d) < 1e15) {
            return std::to_string(static_cast<std::int64_t>(d));
        }
    }
    return v.dump();
}

std::string Quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

MediaInput CompileMedia(const json& path_json, const json& caps, bool need_seconds,
                        const std::string& where) {
    MediaInput m;
    m.path = SplitPath(path_json, where);
    const std::string name = JoinPath(m.path);
    m.pointer = Pointer(m.path);
    const json* inputs = Find(caps, "inputs");
    const json* input = inputs == nullptr ? nullptr : Find(*inputs, name);
    if (input == nullptr) {
        Fail(where, Quote(name) + " is not in the capabilities' inputs for this endpoint");
    }
    if (const json* s = Find(*input, "max_seconds")) {
        m.max_seconds = s->get<double>();
    } else if (need_seconds) {
        Fail(where, "input " + Quote(name) + " has no max_seconds to bill when not probed");
    }
    return m;
}

Value CompileValue(const json& v, Usage usage, const json& caps, const std::string& where) {
    if (!v.is_object()) Fail(where, "must be an object with a \"kind\"");
    Value out;
    const auto kind = GetString(Require(v, "kind", where), Child(where, "kind"));
    const bool numeric = usage != Usage::kTableKey;
    std::set<std::string_view> allowed = {"kind"};
    if (numeric) allowed.insert({"cap", "unit", "round"});

    if (kind == "field") {
        out.kind = ValueKind::kField;
        allowed.insert({"field", "missing"});
        if (usage == Usage::kTableKey) allowed.insert("via");
        out.field = SplitPath(Require(v, "field", where), Child(where, "field"));
        if (const json* m = Find(v, "missing")) {
            if (numeric) GetNumber(*m, Child(where, "missing"));
            if (m->is_null() || m->is_object() || m->is_array()) {
                Fail(Child(where, "missing"), "must be a string, number or boolean");
            }
            out.missing = *m;
        } else if (usage == Usage::kQuantity) {
            Fail(where, "a field used as a quantity needs \"missing\" (the value when absent)");
        }
        if (const json* via = Find(v, "via"); via != nullptr && usage == Usage::kTableKey) {
            const auto name = GetString(*via, Child(where, "via"));
            const json* map = Find(caps, name);
            if (map == nullptr || !map->is_object()) {
                Fail(Child(where, "via"),
                     Quote(name) + " is not an object of the capabilities for this endpoint");
            }
            out.via.emplace();
            for (const auto& item : map->items()) {
                if (!item.value().is_string()) {
                    Fail(Child(where, "via"), "capability " + Quote(name) + " must map to strings");
                }
                out.via->emplace(item.key(), item.value().get<std::string>());
            }
        }
    } else if (kind == "duration") {
        out.kind = ValueKind::kDuration;
        allowed.insert("field");
        out.field = {"duration"};
        if (const json* f = Find(v, "field")) out.field = SplitPath(*f, Child(where, "field"));
        const json* d = Find(caps, "durations");
        if (d == nullptr) Fail(where, "the capabilities for this endpoint have no durations");
        const json* def = Find(*d, "default");
        if (def == nullptr) Fail(where, "the capabilities' durations have no default");
        out.duration_default = def->get<double>();
        if (const json* values = Find(*d, "values")) {
            for (const auto& x : *values) {
                out.duration_max = std::max(out.duration_max, x.get<double>());
            }
        } else {
            out.duration_max = d->at("max").get<double>();
        }
        if (const json* a = Find(*d, "auto")) out.duration_auto = a->get<bool>();
    } else if (kind == "media_seconds") {
        out.kind = ValueKind::kMediaSeconds;
        allowed.insert("media");
        const json& media = Require(v, "media", where);
        const auto at = Child(where, "media");
        if (!media.is_array() || media.empty()) Fail(at, "must be a non-empty array of fields");
        for (std::size_t i = 0; i < media.size(); ++i) {
            out.media.push_back(CompileMedia(media[i], caps, true, Child(at, i)));
        }
    } else if (kind == "frames") {
        out.kind = ValueKind::kFrames;
        allowed.insert({"media", "default_fps"});
        out.media.push_back(
            CompileMedia(Require(v, "media", where), caps, true, Child(where, "media")));
        out.default_fps =
            GetPositive(Require(v, "default_fps", where), Child(where, "default_fps"));
    } else if (kind == "characters" || kind == "text_seconds") {
        out.kind = kind == "characters" ? ValueKind::kCharacters : ValueKind::kTextSeconds;
        allowed.insert("field");
        out.field = SplitPath(Require(v, "field", where), Child(where, "field"));
        if (out.kind == ValueKind::kTextSeconds) {
            allowed.insert("characters_per_second");
            out.characters_per_second = GetPositive(Require(v, "characters_per_second", where),
                                                    Child(where, "characters_per_second"));
        }
    } else if (kind == "count") {
        out.kind = ValueKind::kCount;
        allowed.insert({"field", "without_key"});
        out.field = SplitPath(Require(v, "field", where), Child(where, "field"));
        if (const json* w = Find(v, "without_key")) {
            out.without_key = GetString(*w, Child(where, "without_key"));
        }
    } else if (kind == "media_long_side") {
        out.kind = ValueKind::kMediaLongSide;
        if (usage != Usage::kStepKey) Fail(where, "media_long_side can only key rate steps");
        allowed.insert({"media", "times_field", "times_missing"});
        out.media.push_back(
            CompileMedia(Require(v, "media", where), caps, false, Child(where, "media")));
        if (const json* t = Find(v, "times_field")) {
            out.times_field = SplitPath(*t, Child(where, "times_field"));
        }
        if (const json* t = Find(v, "times_missing")) {
            out.times_missing = GetPositive(*t, Child(where, "times_missing"));
        }
    } else {
        Fail(Child(where, "kind"), "unknown value kind " + Quote(kind));
    }
    if (usage == Usage::kTableKey && out.kind != ValueKind::kField) {
        Fail(where, "a rate table is keyed by a field (kind \"field\")");
    }

    for (const auto& item : v.items()) {
        if (!allowed.contains(item.key())) {
            Fail(where, "unknown key " + Quote(item.key()) + " for kind " + Quote(kind));
        }
    }
    if (const json* c = Find(v, "cap")) out.cap = GetPositive(*c, Child(where, "cap"));
    if (const json* u = Find(v, "unit")) out.unit = GetPositive(*u, Child(where, "unit"));
    if (const json* r = Find(v, "round")) {
        const auto mode = GetString(*r, Child(where, "round"));
        if (mode != "up" && mode != "none") Fail(Child(where, "round"), "must be up or none");
        out.round_up = mode == "up";
    }
    return out;
}

Rate CompileRate(const json& r, const json& caps, const std::string& where) {
    Rate out;
    if (r.is_number()) {
        out.kind = Rate::Kind::kFixed;
        out.fixed = out.highest = GetNonNegative(r, where);
        return out;
    }
    if (!r.is_object()) Fail(where, "must be a number or an object with \"table\" or \"steps\"");
    if (Find(r, "table") != nullptr) {
        CheckObject(r, {"by", "table"}, where);
        out.kind = Rate::Kind::kTable;
        out.by = CompileValue(Require(r, "by", where), Usage::kTableKey, caps, Child(where, "by"));
        const json& table = r.at("table");
        const auto at = Child(where, "table");
        if (!table.is_object() || table.empty()) Fail(at, "must be a non-empty object");
        for (const auto& item : table.items()) {
            const double rate = GetNonNegative(item.value(), Child(at, item.key()));
            out.table.emplace(item.key(), rate);
            out.highest = std::max(out.highest, rate);
        }
        // The keys must be exactly the values the request can produce, so a typo in either the
        // table or the capabilities fails here instead of billing the highest rate forever.
        std::set<std::string> expected;
        if (out.by.via) {
            for (const auto& [value, key] : *out.by.via) expected.insert(key);
        } else if (out.by.field.size() == 1) {
            for (auto& value : EnumFieldValues(caps, out.by.field[0])) expected.insert(value);
        }
        if (!expected.empty()) {
            for (const auto& key : expected) {
                if (!out.table.contains(key)) Fail(at, "no rate for " + Quote(key));
            }
            for (const auto& [key, rate] : out.table) {
                if (!expected.contains(key)) Fail(at, Quote(key) + " can never be selected");
            }
        }
        if (out.by.missing) {
            std::string key = KeyOf(*out.by.missing);
            if (out.by.via) {
                const auto it = out.by.via->find(key);
                if (it == out.by.via->end()) {
                    Fail(Child(Child(where, "by"), "missing"),
                         Quote(key) + " is not a key of the \"via\" capability");
                }
                key = it->second;
            }
            if (!out.table.contains(key)) {
                Fail(Child(Child(where, "by"), "missing"), Quote(key) + " has no rate");
            }
        }
        return out;
    }
    CheckObject(r, {"by", "steps"}, where);
    out.kind = Rate::Kind::kSteps;
    out.by = CompileValue(Require(r, "by", where), Usage::kStepKey, caps, Child(where, "by"));
    const json& steps = Require(r, "steps", where);
    const auto at = Child(where, "steps");
    if (!steps.is_array() || steps.empty()) Fail(at, "must be a non-empty array");
    for (std::size_t i = 0; i < steps.size(); ++i) {
        const auto step_at = Child(at, i);
        CheckObject(steps[i], {"up_to", "rate"}, step_at);
        Step step;
        step.rate = GetNonNegative(Require(steps[i], "rate", step_at), Child(step_at, "rate"));
        const json* up_to = Find(steps[i], "up_to");
        const bool last = i + 1 == steps.size();
        if (last && up_to != nullptr) Fail(step_at, "the last step has no up_to (it is the rest)");
        if (!last && up_to == nullptr) Fail(step_at, "every step but the last needs up_to");
        if (up_to != nullptr) {
            step.up_to = GetNumber(*up_to, Child(step_at, "up_to"));
            if (!out.steps.empty() && *step.up_to <= *out.steps.back().up_to) {
                Fail(Child(step_at, "up_to"), "must be greater than the previous step's");
            }
        }
        out.highest = std::max(out.highest, step.rate);
        out.steps.push_back(step);
    }
    return out;
}

Condition CompileCondition(const json& c, const std::string& where) {
    CheckObject(c, {"field", "equals", "in", "missing"}, where);
    Condition out;
    out.field = SplitPath(Require(c, "field", where), Child(where, "field"));
    const json* equals = Find(c, "equals");
    const json* in = Find(c, "in");
    if ((equals == nullptr) == (in == nullptr)) Fail(where, "give exactly one of equals and in");
    if (equals != nullptr) {
        out.any_of.push_back(*equals);
    } else {
        if (!in->is_array() || in->empty()) Fail(Child(where, "in"), "must be a non-empty array");
        out.any_of.assign(in->begin(), in->end());
    }
    if (const json* m = Find(c, "missing")) out.missing = *m;
    return out;
}

Component CompileComponent(const json& c, const json& caps, const std::string& where) {
    CheckObject(c, {"rate", "per", "when", "multipliers", "note"}, where);
    Component out;
    out.rate = CompileRate(Require(c, "rate", where), caps, Child(where, "rate"));
    if (const json* per = Find(c, "per")) {
        out.per = CompileValue(*per, Usage::kQuantity, caps, Child(where, "per"));
    }
    if (const json* when = Find(c, "when")) {
        out.when = CompileCondition(*when, Child(where, "when"));
    }
    if (const json* ms = Find(c, "multipliers")) {
        const auto at = Child(where, "multipliers");
        if (!ms->is_array() || ms->empty()) Fail(at, "must be a non-empty array");
        for (std::size_t i = 0; i < ms->size(); ++i) {
            const auto m_at = Child(at, i);
            CheckObject((*ms)[i], {"when", "factor"}, m_at);
            out.multipliers.push_back(
                {CompileCondition(Require((*ms)[i], "when", m_at), Child(m_at, "when")),
                 GetPositive(Require((*ms)[i], "factor", m_at), Child(m_at, "factor"))});
        }
    }
    if (const json* n = Find(c, "note")) GetString(*n, Child(where, "note"));
    return out;
}

void CheckComponentList(const json& components, const std::string& where) {
    if (!components.is_array() || components.empty()) {
        Fail(where, "must be a non-empty array of components");
    }
}

// ---- evaluation --------------------------------------------------------------------------------

bool Holds(const Condition& c, const json& input) {
    const json* v = Lookup(input, c.field);
    if (v == nullptr) {
        if (!c.missing) return false;
        v = &*c.missing;
    }
    return std::any_of(c.any_of.begin(), c.any_of.end(), [&](const json& x) { return x == *v; });
}

// FactsUnder returns the probed facts of every medium at or below `pointer`.
std::vector<const MediaFacts*> FactsUnder(const InputFacts& facts, const std::string& pointer) {
    std::vector<const MediaFacts*> out;
    for (auto it = facts.media.lower_bound(pointer); it != facts.media.end(); ++it) {
        const std::string& key = it->first;
        if (key.compare(0, pointer.size(), pointer) != 0) break;
        if (key.size() == pointer.size() || key[pointer.size()] == '/') out.push_back(&it->second);
    }
    return out;
}

// MediaSeconds returns the seconds of one media field: 0 when absent, the probed total when
// probed, else the field's maximum.
double MediaSeconds(const MediaInput& m, const json& input, const InputFacts& facts) {
    if (Lookup(input, m.path) == nullptr) return 0;
    double total = 0;
    bool probed = false;
    for (const MediaFacts* f : FactsUnder(facts, m.pointer)) {
        if (f->duration_seconds) {
            total += *f->duration_seconds;
            probed = true;
        }
    }
    return probed ? total : m.max_seconds;
}

std::optional<double> Raw(const Value& v, const json& input, const InputFacts& facts) {
    switch (v.kind) {
        case ValueKind::kField: {
            const json* x = Lookup(input, v.field);
            if (x == nullptr || !x->is_number()) {
                if (v.missing && v.missing->is_number()) return v.missing->get<double>();
                return std::nullopt;
            }
            return x->get<double>();
        }
        case ValueKind::kDuration: {
            const json* x = Lookup(input, v.field);
            if (x == nullptr) return v.duration_default;
            if (x->is_number()) return x->get<double>();
            return v.duration_max;  // "auto" (or anything unreadable) bills the maximum
        }
        case ValueKind::kMediaSeconds: {
            double total = 0;
            for (const auto& m : v.media) total += MediaSeconds(m, input, facts);
            return total;
        }
        case ValueKind::kFrames: {
            const MediaInput& m = v.media.front();
            const double seconds = MediaSeconds(m, input, facts);
            double fps = v.default_fps;
            for (const MediaFacts* f : FactsUnder(facts, m.pointer)) {
                if (f->frames_per_second) fps = *f->frames_per_second;
            }
            return seconds * fps;
        }
        case ValueKind::kCharacters:
        case ValueKind::kTextSeconds: {
            const json* x = Lookup(input, v.field);
            const double n =
                x != nullptr && x->is_string()
                    ? static_cast<double>(Utf16Length(x->get_ref<const std::string&>()))
                    : 0.0;
            return v.kind == ValueKind::kCharacters ? n : n / v.characters_per_second;
        }
        case ValueKind::kCount: {
            const json* x = Lookup(input, v.field);
            if (x == nullptr) return 0.0;
            if (!x->is_array()) return v.without_key.empty() ? 1.0 : 0.0;
            if (v.without_key.empty()) return static_cast<double>(x->size());
            return static_cast<double>(std::count_if(x->begin(), x->end(), [&](const json& item) {
                return item.is_object() && !item.contains(v.without_key);
            }));
        }
        case ValueKind::kMediaLongSide: {
            const MediaInput& m = v.media.front();
            if (Lookup(input, m.path) == nullptr) return std::nullopt;
            for (const MediaFacts* f : FactsUnder(facts, m.pointer)) {
                if (f->width && f->height) {
                    const json* t = v.times_field.empty() ? nullptr : Lookup(input, v.times_field);
                    const double times =
                        t != nullptr && t->is_number() ? t->get<double>() : v.times_missing;
                    return std::max(*f->width, *f->height) * times;
                }
            }
            return std::nullopt;  // not probed: the caller bills the highest step
        }
    }
    return std::nullopt;
}

std::optional<double> Number(const Value& v, const json& input, const InputFacts& facts) {
    std::optional<double> x = Raw(v, input, facts);
    if (!x) return x;
    if (v.cap) x = std::min(*x, *v.cap);
    *x /= v.unit;
    // Tolerate representation noise so 100 / 50 stays 2 rather than rounding up to 3.
    if (v.round_up) x = std::ceil(*x - 1e-9);
    return x;
}

double RateFor(const Rate& r, const json& input, const InputFacts& facts) {
    switch (r.kind) {
        case Rate::Kind::kFixed:
            return r.fixed;
        case Rate::Kind::kTable: {
            const json* x = Lookup(input, r.by.field);
            if (x == nullptr) {
                if (!r.by.missing) return r.highest;
                x = &*r.by.missing;
            }
            std::string key = KeyOf(*x);
            if (r.by.via) {
                const auto it = r.by.via->find(key);
                if (it == r.by.via->end()) return r.highest;
                key = it->second;
            }
            const auto it = r.table.find(key);
            return it == r.table.end() ? r.highest : it->second;
        }
        case Rate::Kind::kSteps: {
            const std::optional<double> x = Number(r.by, input, facts);
            if (!x) return r.highest;
            for (const Step& s : r.steps) {
                if (!s.up_to || *x <= *s.up_to) return s.rate;
            }
            return r.highest;
        }
    }
    return r.highest;
}

}  // namespace

void CheckPriceShape(const json& price, const std::vector<std::string>& endpoints,
                     const std::string& where) {
    CheckObject(price, {"components", "minimum", "by_endpoint", "note"}, where);
    CheckComponentList(Require(price, "components", where), Child(where, "components"));
    if (const json* m = Find(price, "minimum")) GetNonNegative(*m, Child(where, "minimum"));
    if (const json* n = Find(price, "note")) GetString(*n, Child(where, "note"));
    const json* by = Find(price, "by_endpoint");
    if (by == nullptr) return;
    const auto at = Child(where, "by_endpoint");
    if (!by->is_object() || by->empty()) Fail(at, "must be a non-empty object");
    const bool base_used = std::any_of(endpoints.begin(), endpoints.end(), [&](const auto& e) {
        const json* over = Find(*by, e);
        return over == nullptr || Find(*over, "components") == nullptr;
    });
    if (!base_used) {
        Fail(Child(where, "components"), "every endpoint replaces them: they apply to nothing");
    }
    for (const auto& item : by->items()) {
        const auto e_at = Child(at, item.key());
        if (std::find(endpoints.begin(), endpoints.end(), item.key()) == endpoints.end()) {
            Fail(at, Quote(item.key()) + " is not an endpoint of this model");
        }
        CheckObject(item.value(), {"components", "minimum", "price_is_estimate", "note"}, e_at);
        if (item.value().size() == 0) Fail(e_at, "overrides nothing");
        if (const json* c = Find(item.value(), "components")) {
            CheckComponentList(*c, Child(e_at, "components"));
        }
        if (const json* m = Find(item.value(), "minimum"); m != nullptr && !m->is_null()) {
            GetNonNegative(*m, Child(e_at, "minimum"));
        }
        if (const json* e = Find(item.value(), "price_is_estimate")) {
            GetBool(*e, Child(e_at, "price_is_estimate"));
        }
        if (const json* n = Find(item.value(), "note")) GetString(*n, Child(e_at, "note"));
    }
}

PriceRule CompilePriceRule(const json& price, std::string_view endpoint, const json& caps,
                           const std::string& where) {
    const json* components = &price.at("components");
    const json* minimum = Find(price, "minimum");
    std::string at = where;
    if (const json* by = Find(price, "by_endpoint")) {
        if (const json* over = Find(*by, endpoint)) {
            const std::string over_at = Child(Child(where, "by_endpoint"), endpoint);
            if (const json* c = Find(*over, "components")) {
                components = c;
                at = over_at;
            }
            if (over->contains("minimum")) minimum = &over->at("minimum");
        }
    }
    PriceRule rule;
    at = Child(at, "components");
    for (std::size_t i = 0; i < components->size(); ++i) {
        rule.components.push_back(CompileComponent(
            (*components)[i], caps, Child(at, i) + " (for " + std::string(endpoint) + ")"));
    }
    if (minimum != nullptr && !minimum->is_null()) rule.minimum = minimum->get<double>();
    return rule;
}

double Evaluate(const PriceRule& rule, const json& input, const InputFacts& facts) {
    double total = 0;
    for (const Component& c : rule.components) {
        if (c.when && !Holds(*c.when, input)) continue;
        double amount = RateFor(c.rate, input, facts);
        if (c.per) amount *= Number(*c.per, input, facts).value_or(0.0);
        for (const Multiplier& m : c.multipliers) {
            if (Holds(m.when, input)) amount *= m.factor;
        }
        total += amount;
    }
    total = std::max(total, rule.minimum);
    // Credits are decimal amounts; drop binary representation noise (0.7 × 720 = 503.99999...).
    return std::round(total * 1e6) / 1e6;
}

std::size_t Utf16Length(std::string_view s) {
    std::size_t n = 0;
    for (unsigned char c : s) {
        if ((c & 0xC0) == 0x80) continue;  // continuation byte
        n += c >= 0xF0 ? 2 : 1;            // a 4-byte sequence is a surrogate pair in UTF-16
    }
    return n;
}

}  // namespace genhost::catalog::detail
