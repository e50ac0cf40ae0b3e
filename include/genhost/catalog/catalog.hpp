// genhost/catalog/catalog.hpp
//
// Provides Catalog: the model catalog (schemas/models.json) and the usage-tier table
// (schemas/tiers.json) as immutable data. Every price and limit of genhost lives in these files,
// never in handler code; prices default to LIMITS_AND_PRICES.md.
//
// The catalog format, the price-rule language that EstimateCredits interprets and the tier table
// are described in docs/catalog.md. Load validates both documents strictly (unknown keys, wrong
// types, dangling references between a price rule and the capabilities it reads), so a typo in the
// data fails at start, never at request time.
//
// Thread-safety: a loaded Catalog is immutable and may be shared by all threads.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace genhost::catalog {

namespace detail {
struct PriceBook;  // the compiled price rules (src/catalog/price_rule.hpp)
}  // namespace detail

// ModelInfo is one model's entry.
struct ModelInfo {
    std::string id;                      // public model id, e.g. "gen4_image"
    std::vector<std::string> endpoints;  // endpoint names, e.g. {"text_to_image"}
    std::string concurrency_group;       // models sharing a group share a concurrency limit;
                                         // never empty (the id when the entry names none)
    std::string provider;                // "builtin" or the name of a configured provider
    double typical_latency_seconds = 0;  // how long the hosted model usually takes
    int quality = 0;                     // 0..100, higher is better (router ranking)
    bool price_is_estimate = false;      // no public price: genhost's own default
    nlohmann::json price;                // the price rule (docs/catalog.md)
    nlohmann::json capabilities;         // ratios, resolutions, durations, audio, references

    // ServesEndpoint reports whether `endpoint` is one of `endpoints`.
    bool ServesEndpoint(std::string_view endpoint) const;

    // CapabilitiesFor returns the capabilities as they apply to `endpoint`: `capabilities` with
    // its "by_endpoint" entry for `endpoint` laid over it (a null value removes a key) and the
    // "by_endpoint" key itself removed. Returns an empty object if the model does not serve
    // `endpoint`.
    nlohmann::json CapabilitiesFor(std::string_view endpoint) const;

    // PriceIsEstimateFor returns whether the price charged on `endpoint` is genhost's own
    // estimate: the endpoint's "price_is_estimate" override in the price rule, else
    // `price_is_estimate`.
    bool PriceIsEstimateFor(std::string_view endpoint) const;
};

// TierLimits are the per-model limits of a tier.
struct TierLimits {
    int max_concurrent_generations = 0;  // running tasks per model (per concurrency group)
    int max_daily_generations = 0;       // task creations per model per rolling 24 hours
};

// Tier is one usage tier's limits, per model per organization.
struct Tier {
    int tier = 0;
    int max_concurrent_generations = 0;
    int max_daily_generations = 0;
    std::int64_t max_monthly_spend_usd = 0;
    // model_overrides replaces the tier's limits for the named models (model id → limits; a
    // field the override leaves out keeps the tier's value).
    std::map<std::string, TierLimits, std::less<>> model_overrides;

    // LimitsFor returns the limits of model `model_id` in this tier: its override, if any, else
    // the tier's own limits.
    TierLimits LimitsFor(std::string_view model_id) const;
};

// MediaFacts is what probing one media input of a request found. Every field is optional.
struct MediaFacts {
    std::optional<double> duration_seconds;
    std::optional<double> frames_per_second;
    std::optional<int> width;
    std::optional<int> height;
};

// InputFacts are probed facts about a request's media inputs, keyed by the JSON pointer of the
// string that holds the medium in the request: "/videoUri", "/reference/uri", "/speech/audio",
// "/referenceVideos/0/uri", "/promptImage" (a bare media string) or "/promptImage/1/uri". Pass
// facts for every media input of a field or for none of them: a field with no facts is billed at
// the maximum its capabilities allow.
struct InputFacts {
    std::map<std::string, MediaFacts, std::less<>> media;
};

class Catalog {
  public:
    // Load parses both documents; throws std::runtime_error describing the first problem (the
    // document, the model or tier, and the field).
    static std::shared_ptr<const Catalog> Load(std::string_view models_json,
                                               std::string_view tiers_json);

    // LoadEmbedded loads schemas/models.json and schemas/tiers.json as compiled into the binary
    // (genhost::FindResource); throws std::runtime_error if either is missing or invalid.
    static std::shared_ptr<const Catalog> LoadEmbedded();

    // FindModel returns the model called `id`, or nullptr.
    const ModelInfo* FindModel(std::string_view id) const;

    // Models returns every model, sorted by id.
    const std::vector<ModelInfo>& Models() const { return models_; }

    // EstimateCredits returns the most credits the validated (defaults applied) request `input`
    // to `endpoint` may charge, per the model's price rule: the `estimatedCost.credits` of
    // SPEC.md. Throws std::invalid_argument if the model is unknown.
    //
    // The model is `input["model"]`. Inputs whose media the rule bills by length or size (input
    // seconds, frames, image size) are billed at the maximum the model's capabilities allow; the
    // overload below takes probed facts instead. Also throws std::invalid_argument if `input` is
    // not an object with a string "model" or the model does not serve `endpoint`. Credits may be
    // fractional; representation noise below 1e-6 is removed.
    double EstimateCredits(std::string_view endpoint, const nlohmann::json& input) const;

    // EstimateCredits (with facts) is the same, but media listed in `facts` are billed by their
    // probed duration, frame rate and size.
    double EstimateCredits(std::string_view endpoint, const nlohmann::json& input,
                           const InputFacts& facts) const;

    // FindTier returns tier `tier`, or nullptr.
    const Tier* FindTier(int tier) const;

    // Tiers returns every tier, sorted by number.
    const std::vector<Tier>& Tiers() const { return tiers_; }

  private:
    std::vector<ModelInfo> models_;
    std::map<std::string, std::size_t, std::less<>> by_id_;
    std::vector<Tier> tiers_;
    std::shared_ptr<const detail::PriceBook> prices_;
};

}  // namespace genhost::catalog
