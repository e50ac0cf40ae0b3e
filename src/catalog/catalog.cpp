#include "genhost/catalog/catalog.hpp"

#include "genhost/core/resources.hpp"

#include "capabilities.hpp"
#include "price_rule.hpp"
#include "strict_json.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

namespace genhost::catalog {

using detail::Child;
using detail::Fail;
using detail::Find;
using detail::Require;
using nlohmann::json;

namespace {

constexpr std::string_view kModelsPath = "schemas/models.json";
constexpr std::string_view kTiersPath = "schemas/tiers.json";

bool IsModelId(std::string_view id) {
    return !id.empty() && std::all_of(id.begin(), id.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
    });
}

ModelInfo ParseModel(const json& m, const std::set<std::string, std::less<>>& known_endpoints,
                     const std::string& at_index) {
    if (!m.is_object()) Fail(at_index, "must be an object");
    ModelInfo info;
    info.id = detail::GetString(Require(m, "id", at_index), Child(at_index, "id"));
    if (!IsModelId(info.id)) {
        Fail(Child(at_index, "id"), "\"" + info.id + "\" is not a model id ([A-Za-z0-9._-]+)");
    }
    const std::string where = "models.json: model \"" + info.id + "\"";
    detail::CheckObject(
        m,
        {"id", "endpoints", "concurrency_group", "provider", "typical_latency_seconds", "quality",
         "price_is_estimate", "price", "capabilities", "note"},
        where);
    info.endpoints = detail::GetStringList(Require(m, "endpoints", where), where + ": endpoints");
    for (const auto& e : info.endpoints) {
        if (!known_endpoints.contains(e)) {
            Fail(where + ": endpoints", "\"" + e + "\" is not in the document's endpoint list");
        }
    }
    info.concurrency_group = info.id;
    if (const json* g = Find(m, "concurrency_group")) {
        info.concurrency_group = detail::GetString(*g, where + ": concurrency_group");
    }
    info.provider = "builtin";
    if (const json* p = Find(m, "provider")) {
        info.provider = detail::GetString(*p, where + ": provider");
    }
    info.typical_latency_seconds = detail::GetPositive(Require(m, "typical_latency_seconds", where),
                                                       where + ": typical_latency_seconds");
    info.quality = detail::GetInt(Require(m, "quality", where), where + ": quality");
    if (info.quality < 0 || info.quality > 100) Fail(where + ": quality", "must be 0..100");
    info.price_is_estimate =
        detail::GetBool(Require(m, "price_is_estimate", where), where + ": price_is_estimate");
    if (const json* n = Find(m, "note")) detail::GetString(*n, where + ": note");
    info.price = Require(m, "price", where);
    info.capabilities = Require(m, "capabilities", where);
    return info;
}

Tier ParseTier(const json& t, const Catalog& catalog, const std::string& at_index) {
    if (!t.is_object()) Fail(at_index, "must be an object");
    Tier tier;
    tier.tier = detail::GetInt(Require(t, "tier", at_index), Child(at_index, "tier"));
    if (tier.tier < 1) Fail(Child(at_index, "tier"), "must be at least 1");
    const std::string where = "tiers.json: tier " + std::to_string(tier.tier);
    detail::CheckObject(t,
                        {"tier", "max_concurrent_generations", "max_daily_generations",
                         "max_monthly_spend_usd", "model_overrides", "note"},
                        where);
    const auto positive_int = [&](const json& obj, std::string_view key, const std::string& at) {
        const int v = detail::GetInt(Require(obj, key, at), Child(at, key));
        if (v < 1) Fail(Child(at, key), "must be at least 1");
        return v;
    };
    tier.max_concurrent_generations = positive_int(t, "max_concurrent_generations", where);
    tier.max_daily_generations = positive_int(t, "max_daily_generations", where);
    const json& spend = Require(t, "max_monthly_spend_usd", where);
    if (!spend.is_number_integer() || spend.get<std::int64_t>() < 1) {
        Fail(where + ".max_monthly_spend_usd", "must be a positive integer");
    }
    tier.max_monthly_spend_usd = spend.get<std::int64_t>();
    if (const json* n = Find(t, "note")) detail::GetString(*n, where + ".note");
    if (const json* overrides = Find(t, "model_overrides")) {
        const auto at = where + ".model_overrides";
        if (!overrides->is_object()) Fail(at, "must be an object");
        for (const auto& item : overrides->items()) {
            const auto m_at = Child(at, item.key());
            if (catalog.FindModel(item.key()) == nullptr) {
                Fail(m_at, "\"" + item.key() + "\" is not a model of models.json");
            }
            detail::CheckObject(item.value(),
                                {"max_concurrent_generations", "max_daily_generations", "note"},
                                m_at);
            TierLimits limits{tier.max_concurrent_generations, tier.max_daily_generations};
            bool any = false;
            if (Find(item.value(), "max_concurrent_generations") != nullptr) {
                limits.max_concurrent_generations =
                    positive_int(item.value(), "max_concurrent_generations", m_at);
                any = true;
            }
            if (Find(item.value(), "max_daily_generations") != nullptr) {
                limits.max_daily_generations =
                    positive_int(item.value(), "max_daily_generations", m_at);
                any = true;
            }
            if (!any) Fail(m_at, "overrides no limit");
            tier.model_overrides.emplace(item.key(), limits);
        }
    }
    return tier;
}

}  // namespace

bool ModelInfo::ServesEndpoint(std::string_view endpoint) const {
    return std::find(endpoints.begin(), endpoints.end(), endpoint) != endpoints.end();
}

json ModelInfo::CapabilitiesFor(std::string_view endpoint) const {
    if (!ServesEndpoint(endpoint)) return json::object();
    return detail::EffectiveCapabilities(capabilities, endpoint);
}

bool ModelInfo::PriceIsEstimateFor(std::string_view endpoint) const {
    const json* by = Find(price, "by_endpoint");
    const json* over = by == nullptr ? nullptr : Find(*by, endpoint);
    const json* flag = over == nullptr ? nullptr : Find(*over, "price_is_estimate");
    return flag != nullptr ? flag->get<bool>() : price_is_estimate;
}

TierLimits Tier::LimitsFor(std::string_view model_id) const {
    const auto it = model_overrides.find(model_id);
    if (it != model_overrides.end()) return it->second;
    return {max_concurrent_generations, max_daily_generations};
}

std::shared_ptr<const Catalog> Catalog::Load(std::string_view models_json,
                                             std::string_view tiers_json) {
    auto catalog = std::make_shared<Catalog>();
    auto book = std::make_shared<detail::PriceBook>();

    const json models_doc = detail::ParseStrict(models_json, "models.json");
    detail::CheckObject(models_doc, {"endpoints", "models", "note"}, "models.json");
    const auto endpoint_list = detail::GetStringList(
        Require(models_doc, "endpoints", "models.json"), "models.json: endpoints");
    const std::set<std::string, std::less<>> known_endpoints(endpoint_list.begin(),
                                                             endpoint_list.end());
    const json& models = Require(models_doc, "models", "models.json");
    if (!models.is_array() || models.empty()) {
        Fail("models.json: models", "must be a non-empty array");
    }
    std::set<std::string, std::less<>> served;
    for (std::size_t i = 0; i < models.size(); ++i) {
        ModelInfo info = ParseModel(models[i], known_endpoints, Child("models.json: models", i));
        const std::string where = "models.json: model \"" + info.id + "\"";
        if (catalog->by_id_.contains(info.id)) Fail(where, "duplicate model id");
        detail::CheckCapabilities(info.capabilities, info.endpoints, where + ": capabilities");
        detail::CheckPriceShape(info.price, info.endpoints, where + ": price");
        auto& rules = book->rules[info.id];
        for (const auto& endpoint : info.endpoints) {
            rules.emplace(endpoint, detail::CompilePriceRule(info.price, endpoint,
                                                             info.CapabilitiesFor(endpoint),
                                                             where + ": price"));
            served.insert(endpoint);
        }
        catalog->by_id_.emplace(info.id, i);
        catalog->models_.push_back(std::move(info));
    }
    for (const auto& e : known_endpoints) {
        if (!served.contains(e)) Fail("models.json: endpoints", "no model serves \"" + e + "\"");
    }
    std::sort(catalog->models_.begin(), catalog->models_.end(),
              [](const ModelInfo& a, const ModelInfo& b) { return a.id < b.id; });
    for (std::size_t i = 0; i < catalog->models_.size(); ++i) {
        catalog->by_id_[catalog->models_[i].id] = i;
    }
    catalog->prices_ = std::move(book);

    const json tiers_doc = detail::ParseStrict(tiers_json, "tiers.json");
    detail::CheckObject(tiers_doc, {"tiers", "note"}, "tiers.json");
    const json& tiers = Require(tiers_doc, "tiers", "tiers.json");
    if (!tiers.is_array() || tiers.empty()) Fail("tiers.json: tiers", "must be a non-empty array");
    for (std::size_t i = 0; i < tiers.size(); ++i) {
        Tier tier = ParseTier(tiers[i], *catalog, Child("tiers.json: tiers", i));
        if (catalog->FindTier(tier.tier) != nullptr) {
            Fail("tiers.json: tier " + std::to_string(tier.tier), "duplicate tier number");
        }
        catalog->tiers_.push_back(std::move(tier));
    }
    std::sort(catalog->tiers_.begin(), catalog->tiers_.end(),
              [](const Tier& a, const Tier& b) { return a.tier < b.tier; });
    return catalog;
}

std::shared_ptr<const Catalog> Catalog::LoadEmbedded() {
    const auto models = FindResource(kModelsPath);
    const auto tiers = FindResource(kTiersPath);
    if (!models || !tiers) {
        throw std::runtime_error("the binary embeds no schemas/models.json or schemas/tiers.json");
    }
    return Load(*models, *tiers);
}

const ModelInfo* Catalog::FindModel(std::string_view id) const {
    const auto it = by_id_.find(id);
    return it == by_id_.end() ? nullptr : &models_[it->second];
}

double Catalog::EstimateCredits(std::string_view endpoint, const json& input) const {
    return EstimateCredits(endpoint, input, InputFacts{});
}

double Catalog::EstimateCredits(std::string_view endpoint, const json& input,
                                const InputFacts& facts) const {
    const json* model = Find(input, "model");
    if (model == nullptr || !model->is_string()) {
        throw std::invalid_argument("the request has no string \"model\"");
    }
    const auto& id = model->get_ref<const std::string&>();
    // prices_ is null only in a default-constructed Catalog, which knows no model.
    const auto by_model =
        prices_ == nullptr ? decltype(prices_->rules)::const_iterator{} : prices_->rules.find(id);
    if (prices_ == nullptr || by_model == prices_->rules.end()) {
        throw std::invalid_argument("unknown model \"" + id + "\"");
    }
    const auto rule = by_model->second.find(endpoint);
    if (rule == by_model->second.end()) {
        throw std::invalid_argument("model \"" + id + "\" does not serve " + std::string(endpoint));
    }
    return detail::Evaluate(rule->second, input, facts);
}

const Tier* Catalog::FindTier(int tier) const {
    const auto it =
        std::find_if(tiers_.begin(), tiers_.end(), [&](const Tier& t) { return t.tier == tier; });
    return it == tiers_.end() ? nullptr : &*it;
}

}  // namespace genhost::catalog
