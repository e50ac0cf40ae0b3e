#include "capabilities.hpp"

#include "strict_json.hpp"

#include <algorithm>
#include <set>

namespace genhost::catalog::detail {

using nlohmann::json;

namespace {

const std::set<std::string, std::less<>> kModalities = {"video", "image", "audio"};
const std::set<std::string, std::less<>> kMediaKinds = {"image", "video", "audio"};

// CheckStringEnum: {"values": [strings], "default"?: one of them}.
void CheckStringEnum(const json& v, const std::string& where) {
    CheckObject(v, {"values", "default"}, where);
    const auto values = GetStringList(Require(v, "values", where), Child(where, "values"));
    if (const json* d = Find(v, "default")) {
        const auto def = GetString(*d, Child(where, "default"));
        if (std::find(values.begin(), values.end(), def) == values.end()) {
            Fail(Child(where, "default"), "\"" + def + "\" is not one of the values");
        }
    }
}

// CheckNumberEnum: {"values": [numbers], "default"?: one of them}.
void CheckNumberEnum(const json& v, const std::string& where) {
    CheckObject(v, {"values", "default"}, where);
    const json& values = Require(v, "values", where);
    if (!values.is_array() || values.empty()) {
        Fail(Child(where, "values"), "must be a non-empty array of numbers");
    }
    std::set<double> seen;
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (!seen.insert(GetPositive(values[i], Child(Child(where, "values"), i))).second) {
            Fail(Child(Child(where, "values"), i), "duplicate value");
        }
    }
    if (const json* d = Find(v, "default")) {
        if (!seen.contains(GetNumber(*d, Child(where, "default")))) {
            Fail(Child(where, "default"), "is not one of the values");
        }
    }
}

void CheckDurations(const json& v, const std::string& where) {
    CheckObject(v, {"min", "max", "default", "values", "integer", "auto"}, where);
    bool integer = true;
    if (const json* i = Find(v, "integer")) integer = GetBool(*i, Child(where, "integer"));
    if (const json* a = Find(v, "auto")) GetBool(*a, Child(where, "auto"));
    const auto check_value = [&](const json& x, const std::string& at) {
        const double d = GetPositive(x, at);
        if (integer && !x.is_number_integer()) Fail(at, "must be an integer (durations.integer)");
        return d;
    };
    std::set<double> values;
    double lo = 0;
    double hi = 0;
    if (const json* list = Find(v, "values")) {
        if (Find(v, "min") != nullptr || Find(v, "max") != nullptr) {
            Fail(where, "give either \"values\" or \"min\" and \"max\", not both");
        }
        if (!list->is_array() || list->empty()) {
            Fail(Child(where, "values"), "must be a non-empty array of numbers");
        }
        for (std::size_t i = 0; i < list->size(); ++i) {
            const auto at = Child(Child(where, "values"), i);
            if (!values.insert(check_value((*list)[i], at)).second) Fail(at, "duplicate value");
        }
    } else {
        lo = check_value(Require(v, "min", where), Child(where, "min"));
        hi = check_value(Require(v, "max", where), Child(where, "max"));
        if (lo > hi) Fail(where, "min is greater than max");
    }
    if (const json* d = Find(v, "default")) {
        const double def = check_value(*d, Child(where, "default"));
        const bool ok = values.empty() ? (def >= lo && def <= hi) : values.contains(def);
        if (!ok) Fail(Child(where, "default"), "is outside the allowed durations");
    }
}

void CheckAudio(const json& v, const std::string& where) {
    CheckObject(v, {"output", "toggle", "default"}, where);
    const bool output = GetBool(Require(v, "output", where), Child(where, "output"));
    bool toggle = false;
    if (const json* t = Find(v, "toggle")) toggle = GetBool(*t, Child(where, "toggle"));
    if (toggle && !output) Fail(Child(where, "toggle"), "needs output true");
    if (const json* d = Find(v, "default")) {
        GetBool(*d, Child(where, "default"));
        if (!toggle) Fail(Child(where, "default"), "needs toggle true");
    }
}

void CheckOutputCount(const json& v, const std::string& where) {
    CheckObject(v, {"max", "values"}, where);
    const json* max = Find(v, "max");
    const json* values = Find(v, "values");
    if ((max == nullptr) == (values == nullptr)) Fail(where, "give exactly one of max and values");
    if (max != nullptr && GetInt(*max, Child(where, "max")) < 1) {
        Fail(Child(where, "max"), "must be at least 1");
    }
    if (values != nullptr) {
        if (!values->is_array() || values->empty()) {
            Fail(Child(where, "values"), "must be a non-empty array of integers");
        }
        for (std::size_t i = 0; i < values->size(); ++i) {
            if (GetInt((*values)[i], Child(Child(where, "values"), i)) < 1) {
                Fail(Child(Child(where, "values"), i), "must be at least 1");
            }
        }
    }
}

void CheckInput(const json& v, const std::string& where) {
    CheckObject(
        v,
        {"kind", "required", "max_items", "min_seconds", "max_seconds", "max_seconds_exclusive",
         "combined_with", "positions", "unpositioned_are_references", "needs_audio", "note"},
        where);
    const json& kind = Require(v, "kind", where);
    const auto kinds = kind.is_array()
                           ? GetStringList(kind, Child(where, "kind"))
                           : std::vector<std::string>{GetString(kind, Child(where, "kind"))};
    for (const auto& k : kinds) {
        if (!kMediaKinds.contains(k))
            Fail(Child(where, "kind"), "unknown media kind \"" + k + "\"");
    }
    if (const json* r = Find(v, "required")) GetBool(*r, Child(where, "required"));
    if (const json* n = Find(v, "max_items")) {
        if (GetInt(*n, Child(where, "max_items")) < 1) {
            Fail(Child(where, "max_items"), "must be at least 1");
        }
    }
    double lo = 0;
    if (const json* s = Find(v, "min_seconds")) lo = GetPositive(*s, Child(where, "min_seconds"));
    if (const json* s = Find(v, "max_seconds")) {
        if (GetPositive(*s, Child(where, "max_seconds")) < lo) {
            Fail(Child(where, "max_seconds"), "is less than min_seconds");
        }
    }
    if (const json* x = Find(v, "max_seconds_exclusive")) {
        GetBool(*x, Child(where, "max_seconds_exclusive"));
        if (Find(v, "max_seconds") == nullptr) {
            Fail(Child(where, "max_seconds_exclusive"), "needs max_seconds");
        }
    }
    if (const json* c = Find(v, "combined_with")) {
        GetStringList(*c, Child(where, "combined_with"));
        if (Find(v, "max_seconds") == nullptr) {
            Fail(Child(where, "combined_with"), "needs max_seconds");
        }
    }
    if (const json* p = Find(v, "positions")) GetStringList(*p, Child(where, "positions"));
    if (const json* u = Find(v, "unpositioned_are_references")) {
        GetBool(*u, Child(where, "unpositioned_are_references"));
        if (Find(v, "positions") == nullptr) {
            Fail(Child(where, "unpositioned_are_references"), "needs positions");
        }
    }
    if (const json* a = Find(v, "needs_audio")) GetBool(*a, Child(where, "needs_audio"));
    if (const json* n = Find(v, "note")) GetString(*n, Child(where, "note"));
}

// CheckOne validates one capabilities object (the base without by_endpoint, or an effective
// one).
void CheckOne(const json& caps, const std::string& where) {
    CheckObject(caps,
                {"modality", "ratios", "ratio_resolutions", "resolutions", "durations", "audio",
                 "seed", "negative_prompt", "inputs", "output_formats", "output_count", "modes",
                 "qualities", "scale_factors", "sample_rates", "voices", "note", "by_endpoint"},
                where);
    const auto modality = GetString(Require(caps, "modality", where), Child(where, "modality"));
    if (!kModalities.contains(modality)) {
        Fail(Child(where, "modality"), "must be video, image or audio");
    }
    std::vector<std::string> ratios;
    if (const json* r = Find(caps, "ratios")) ratios = GetStringList(*r, Child(where, "ratios"));
    if (const json* rr = Find(caps, "ratio_resolutions")) {
        const auto at = Child(where, "ratio_resolutions");
        if (!rr->is_object()) Fail(at, "must be an object");
        if (ratios.empty()) Fail(at, "needs ratios");
        for (const auto& item : rr->items()) {
            if (std::find(ratios.begin(), ratios.end(), item.key()) == ratios.end()) {
                Fail(at, "\"" + item.key() + "\" is not one of the ratios");
            }
            GetString(item.value(), Child(at, item.key()));
        }
        for (const auto& r : ratios) {
            if (!rr->contains(r)) Fail(at, "ratio \"" + r + "\" has no resolution");
        }
    }
    for (std::string_view key : {"resolutions", "output_formats", "modes", "qualities"}) {
        if (const json* e = Find(caps, key)) CheckStringEnum(*e, Child(where, key));
    }
    for (std::string_view key : {"scale_factors", "sample_rates"}) {
        if (const json* e = Find(caps, key)) CheckNumberEnum(*e, Child(where, key));
    }
    if (const json* d = Find(caps, "durations")) CheckDurations(*d, Child(where, "durations"));
    if (const json* a = Find(caps, "audio")) CheckAudio(*a, Child(where, "audio"));
    for (std::string_view key : {"seed", "negative_prompt"}) {
        if (const json* b = Find(caps, key)) GetBool(*b, Child(where, key));
    }
    if (const json* c = Find(caps, "output_count")) {
        CheckOutputCount(*c, Child(where, "output_count"));
    }
    if (const json* voices = Find(caps, "voices")) {
        const auto at = Child(where, "voices");
        CheckObject(*voices, {"preset", "clone", "default_preset"}, at);
        const bool preset = GetBool(Require(*voices, "preset", at), Child(at, "preset"));
        GetBool(Require(*voices, "clone", at), Child(at, "clone"));
        if (const json* d = Find(*voices, "default_preset")) {
            GetString(*d, Child(at, "default_preset"));
            if (!preset) Fail(Child(at, "default_preset"), "needs preset");
        }
    }
    if (const json* inputs = Find(caps, "inputs")) {
        const auto at = Child(where, "inputs");
        if (!inputs->is_object()) Fail(at, "must be an object");
        for (const auto& item : inputs->items()) {
            SplitPath(json(item.key()), Child(at, item.key()));
            CheckInput(item.value(), Child(at, item.key()));
        }
    }
    if (const json* n = Find(caps, "note")) GetString(*n, Child(where, "note"));
}

}  // namespace

json EffectiveCapabilities(const json& capabilities, std::string_view endpoint) {
    json out = capabilities;
    out.erase("by_endpoint");
    const json* by = Find(capabilities, "by_endpoint");
    const json* over = by == nullptr ? nullptr : Find(*by, endpoint);
    if (over == nullptr || !over->is_object()) return out;
    for (const auto& item : over->items()) {
        if (item.value().is_null()) {
            out.erase(item.key());
        } else {
            out[item.key()] = item.value();
        }
    }
    return out;
}

void CheckCapabilities(const json& capabilities, const std::vector<std::string>& endpoints,
                       const std::string& where) {
    json base = capabilities;
    if (base.is_object()) base.erase("by_endpoint");
    CheckOne(base, where);
    if (const json* by = Find(capabilities, "by_endpoint")) {
        const auto at = Child(where, "by_endpoint");
        if (!by->is_object()) Fail(at, "must be an object");
        for (const auto& item : by->items()) {
            if (std::find(endpoints.begin(), endpoints.end(), item.key()) == endpoints.end()) {
                Fail(at, "\"" + item.key() + "\" is not an endpoint of this model");
            }
            if (!item.value().is_object()) Fail(Child(at, item.key()), "must be an object");
            if (item.value().contains("by_endpoint")) {
                Fail(Child(at, item.key()), "by_endpoint cannot be nested");
            }
        }
    }
    for (const auto& endpoint : endpoints) {
        CheckOne(EffectiveCapabilities(capabilities, endpoint),
                 where + " (as applied to " + endpoint + ")");
    }
}

std::vector<std::string> EnumFieldValues(const json& caps, std::string_view field) {
    static const std::pair<std::string_view, std::string_view> kEnumFields[] = {
        {"resolution", "resolutions"},
        {"quality", "qualities"},
        {"mode", "modes"},
        {"outputFormat", "output_formats"},
    };
    for (const auto& [name, key] : kEnumFields) {
        if (name != field) continue;
        const json* e = Find(caps, key);
        if (e == nullptr) return {};
        return e->at("values").get<std::vector<std::string>>();
    }
    if (field == "audio") {
        const json* a = Find(caps, "audio");
        const json* t = a == nullptr ? nullptr : Find(*a, "toggle");
        if (t != nullptr && t->get<bool>()) return {"true", "false"};
    }
    return {};
}

}  // namespace genhost::catalog::detail
