#include "genhost/providers/provider_config.hpp"

#include "provider_http.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>

namespace genhost::providers {

namespace {

using nlohmann::json;

std::string Trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return std::string(s);
}

// Entries splits "a=b,c=d" into pairs; empty entries are skipped.
std::vector<std::pair<std::string, std::string>> Entries(std::string_view list,
                                                         const std::string& setting) {
    std::vector<std::pair<std::string, std::string>> out;
    while (!list.empty()) {
        const auto comma = list.find(',');
        const std::string entry = Trim(list.substr(0, comma));
        list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
        if (entry.empty()) continue;
        const auto eq = entry.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == entry.size()) {
            throw std::invalid_argument(setting + ": expected name=value, got \"" + entry + "\"");
        }
        out.emplace_back(Trim(entry.substr(0, eq)), Trim(entry.substr(eq + 1)));
    }
    return out;
}

bool ValidName(std::string_view name) {
    return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
    });
}

void CheckUrl(const std::string& where, const std::string& url) {
    const auto parsed = detail::ParseUrl(url);
    if (!parsed || parsed->has_query) {
        throw std::invalid_argument(where +
                                    ": url must be http:// or https:// without a query: " + url);
    }
}

std::chrono::milliseconds Seconds(const json& v, const std::string& where) {
    if (!v.is_number() || !(v.get<double>() > 0) || v.get<double>() > 7 * 24 * 3600.0) {
        throw std::invalid_argument(where + " must be a number of seconds > 0");
    }
    return std::chrono::milliseconds(std::max<long long>(1, std::llround(v.get<double>() * 1000)));
}

std::uint64_t Count(const json& v, const std::string& where, std::uint64_t min, std::uint64_t max) {
    if (!v.is_number_integer() ||
        (v.is_number_integer() && !v.is_number_unsigned() && v.get<std::int64_t>() < 0)) {
        throw std::invalid_argument(where + " must be a non-negative integer");
    }
    const auto n = v.get<std::uint64_t>();
    if (n < min || n > max) {
        throw std::invalid_argument(where + " must be between " + std::to_string(min) + " and " +
                                    std::to_string(max));
    }
    return n;
}

HttpProviderOptions FromJson(const std::string& name, const json& entry) {
    const std::string where = "GENHOST_PROVIDERS_FILE: provider " + name;
    if (!entry.is_object()) throw std::invalid_argument(where + " must be an object");
    HttpProviderOptions o;
    o.name = name;
    for (const auto& [key, v] : entry.items()) {
        const std::string at = where + ": " + key;
        if (key == "url") {
            if (!v.is_string()) throw std::invalid_argument(at + " must be a string");
            o.url = v.get<std::string>();
        } else if (key == "poll_interval") {
            o.poll_interval = Seconds(v, at);
        } else if (key == "request_timeout") {
            o.request_timeout = Seconds(v, at);
        } else if (key == "task_timeout") {
            o.task_timeout = Seconds(v, at);
        } else if (key == "download_timeout") {
            o.download_timeout = Seconds(v, at);
        } else if (key == "backoff") {
            o.backoff = Seconds(v, at);
        } else if (key == "retries") {
            o.retries = static_cast<int>(Count(v, at, 0, 20));
        } else if (key == "max_outputs") {
            o.max_outputs = static_cast<int>(Count(v, at, 1, 1000));
        } else if (key == "max_output_bytes") {
            o.max_output_bytes = Count(v, at, 1, std::uint64_t{1} << 40);
        } else if (key == "max_inline_input_bytes") {
            o.max_inline_input_bytes = Count(v, at, 0, std::uint64_t{1} << 32);
        } else if (key == "ca_file") {
            if (!v.is_string()) throw std::invalid_argument(at + " must be a string");
            o.ca_file = v.get<std::string>();
        } else if (key == "headers") {
            if (!v.is_object()) throw std::invalid_argument(at + " must be an object of strings");
            for (const auto& [header, value] : v.items()) {
                if (!value.is_string()) {
                    throw std::invalid_argument(at + ": " + header + " must be a string");
                }
                o.headers.emplace_back(header, value.get<std::string>());
            }
        } else if (key != "note") {
            throw std::invalid_argument(where + ": unknown key \"" + key + "\"");
        }
    }
    if (o.url.empty()) throw std::invalid_argument(where + ": url is required");
    CheckUrl(where, o.url);
    return o;
}

}  // namespace

std::vector<HttpProviderOptions> ParseProviders(std::string_view list, std::string_view file_json) {
    std::vector<HttpProviderOptions> out;
    auto add = [&](HttpProviderOptions o, const std::string& setting) {
        if (!ValidName(o.name) || o.name == "builtin") {
            throw std::invalid_argument(setting + ": invalid provider name \"" + o.name +
                                        "\" (letters, digits, . _ -; not builtin)");
        }
        for (const auto& other : out) {
            if (other.name == o.name) {
                throw std::invalid_argument(setting + ": provider \"" + o.name +
                                            "\" is configured twice");
            }
        }
        out.push_back(std::move(o));
    };
    for (auto& [name, url] : Entries(list, "GENHOST_PROVIDERS")) {
        CheckUrl("GENHOST_PROVIDERS: provider " + name, url);
        HttpProviderOptions o;
        o.name = name;
        o.url = url;
        add(std::move(o), "GENHOST_PROVIDERS");
    }
    if (!Trim(file_json).empty()) {
        const json doc = json::parse(file_json, nullptr, false);
        if (doc.is_discarded() || !doc.is_object()) {
            throw std::invalid_argument("GENHOST_PROVIDERS_FILE: not a JSON object");
        }
        for (const auto& [key, v] : doc.items()) {
            if (key != "providers" && key != "note") {
                throw std::invalid_argument("GENHOST_PROVIDERS_FILE: unknown key \"" + key + "\"");
            }
        }
        const auto providers = doc.find("providers");
        if (providers == doc.end() || !providers->is_object()) {
            throw std::invalid_argument(
                "GENHOST_PROVIDERS_FILE: \"providers\" must be an object of name → provider");
        }
        for (const auto& [name, entry] : providers->items()) {
            add(FromJson(name, entry), "GENHOST_PROVIDERS_FILE");
        }
    }
    return out;
}

std::map<std::string, std::string> ParseModelRoutes(std::string_view list) {
    std::map<std::string, std::string> routes;
    for (auto& [model, provider] : Entries(list, "GENHOST_MODEL_PROVIDERS")) {
        if (!ValidName(provider)) {
            throw std::invalid_argument("GENHOST_MODEL_PROVIDERS: invalid provider name \"" +
                                        provider + "\"");
        }
        if (!routes.emplace(model, provider).second) {
            throw std::invalid_argument("GENHOST_MODEL_PROVIDERS: model \"" + model +
                                        "\" is routed twice");
        }
    }
    return routes;
}

std::string RouteModels(std::string_view models_json,
                        const std::map<std::string, std::string>& routes) {
    if (routes.empty()) return std::string(models_json);
    json doc = json::parse(models_json);
    std::map<std::string, std::string> left = routes;
    for (auto& model : doc.at("models")) {
        const auto it = left.find(model.at("id").get<std::string>());
        if (it == left.end()) continue;
        model["provider"] = it->second;
        left.erase(it);
    }
    if (!left.empty()) {
        throw std::invalid_argument("GENHOST_MODEL_PROVIDERS: no model \"" + left.begin()->first +
                                    "\" in the catalog");
    }
    return doc.dump();
}

std::vector<std::pair<std::string, std::string>> UnservedModels(
    const catalog::Catalog& catalog, const std::set<std::string>& names) {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& model : catalog.Models()) {
        if (names.count(model.provider) == 0) out.emplace_back(model.id, model.provider);
    }
    return out;
}

}  // namespace genhost::providers
