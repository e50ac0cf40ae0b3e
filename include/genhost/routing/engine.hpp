// genhost/routing/engine.hpp
//
// Provides Engine: the selection engine of routed generation (POST /v1/generate/{video,image,
// audio}, docs/routers.md). Route is a pure function of (router settings, the model-agnostic
// input, the catalog and request schemas the engine was built from, a capacity and latency
// snapshot): the same arguments always give the same decision, so a dry run picks exactly what
// the real call picks in the same state.
//
// For every model that serves the modality's endpoints, the input is mapped onto that model's
// own request body; the model is then kept or excluded by five filters, in this order:
//   capability     the model supports every option the input asks for (reference roles and
//                  counts, source video, keyframes, reference audio, duration, aspect ratio to one
//                  of its concrete ratios, resolution, audio output, outputCount, seed, voice);
//   prompt_length  promptText fits the model's limit;
//   input_support  the mapped body passes the model's request schema (inputs the model requires,
//                  cross-field rules);
//   allow_deny     the router's allow or deny list;
//   price          the estimated credits per output stay within the modality's cap.
// The survivors are ranked by the router's optimizeFor (cost: estimated credits; latency: the
// catalog prior blended with the measured EWMA; quality: the catalog score), ties broken by the
// other two criteria and then the model id. With fallback.onCapacity, models whose concurrency
// group is at the organization's limit are skipped; if all are, the best-ranked is used.
//
// Thread-safety: an Engine is immutable after construction and may be shared by all threads.
#pragma once

#include "genhost/catalog/catalog.hpp"
#include "genhost/validate/schema_set.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace genhost::routing {

enum class Modality { kVideo, kImage, kAudio };
enum class OptimizeFor { kCost, kLatency, kQuality };
enum class Filter { kCapability, kPromptLength, kInputSupport, kAllowDeny, kPrice };

std::string_view ModalityName(Modality m);        // video | image | audio
std::string_view OptimizeForName(OptimizeFor o);  // cost | latency | quality
std::string_view FilterName(Filter f);  // capability | prompt_length | input_support | ...

// Settings are a router's effective settings (the stored form of api/routers.cpp).
struct Settings {
    OptimizeFor optimize_for = OptimizeFor::kCost;
    bool allowlist_only = false;  // false: allow_new_except (ids are denied)
    std::set<std::string, std::less<>> ids;
    std::map<Modality, double> caps;  // maxCreditsPerGeneration per modality
    bool on_capacity = false;         // fallback.onCapacity

    // FromJson reads the stored effective settings; throws std::runtime_error on a wrong shape.
    static Settings FromJson(const nlohmann::json& settings);
    std::optional<double> CapFor(Modality m) const;
};

// LatencySample is the measured latency of one model's recent tasks.
struct LatencySample {
    double ewma_seconds = 0;
    long long samples = 0;
};

// Snapshot is the state the decision depends on besides the request: which models are at the
// organization's concurrency limit, and measured latencies.
struct Snapshot {
    std::set<std::string, std::less<>> at_limit;  // model ids
    std::map<std::string, LatencySample, std::less<>> latency;
};

// Exclusion is why one model left the pool.
struct Exclusion {
    std::string model;
    Filter filter;
    std::string why;  // e.g. "duration 12 s is not one of 4, 6, 8"
};

// Candidate is a model that passed every filter.
struct Candidate {
    std::string model;
    std::string provider;
    std::string endpoint;
    nlohmann::json body;  // the model's request, defaults applied
    double credits = 0;   // estimated credits of `body`
    double per_output = 0;
    double latency = 0;  // blended seconds
    int quality = 0;
    nlohmann::json resolved;  // resolvedInput
};

struct Decision {
    Modality modality = Modality::kVideo;
    OptimizeFor optimize_for = OptimizeFor::kCost;
    std::optional<double> price_ceiling;
    std::vector<Exclusion> excluded;    // in catalog order
    std::vector<Candidate> ranked;      // eligible models, best first
    std::optional<std::size_t> chosen;  // index into ranked; empty: no eligible model
    std::vector<std::string> skipped;   // passed over for capacity
    bool all_exhausted = false;
    bool capacity_mattered = false;    // onCapacity and (skipped or all exhausted)
    std::optional<Filter> emptied_by;  // the filter that left no model
    std::string reason_code;   // lowest_cost | best_latency | best_quality | only_eligible_model |
                               // filter_order_fallback; empty without a choice
    std::string rank_outcome;  // cost | selected | fallback | single_candidate; empty without
    std::string reason;        // prose naming each excluded model's filter and value
    nlohmann::json pipeline;   // CLIENTS.md 3.7 steps

    const Candidate* Chosen() const { return chosen ? &ranked[*chosen] : nullptr; }
};

// BlendedLatency is the ranking latency: the catalog prior weighted as 3 samples, blended with
// up to 20 measured ones.
double BlendedLatency(double prior_seconds, const LatencySample* measured);

class Engine {
  public:
    // Builds the per-model profiles from the catalog and the request schemas; throws
    // std::runtime_error when a routable model has no schema variant.
    Engine(std::shared_ptr<const catalog::Catalog> catalog,
           std::shared_ptr<const validate::SchemaSet> schemas);
    ~Engine();

    // Route decides. `input` is the routed input, valid against schemas/generate_<modality>.json.
    Decision Route(Modality modality, const Settings& settings, const nlohmann::json& input,
                   const Snapshot& snapshot) const;

    // Models lists the model ids a modality routes among, in catalog order.
    const std::vector<std::string>& Models(Modality modality) const;

    struct Profile;

  private:
    std::shared_ptr<const catalog::Catalog> catalog_;
    std::shared_ptr<const validate::SchemaSet> schemas_;
    std::vector<Profile> profiles_;
    std::vector<std::string> models_[3];  // by Modality, in catalog order
};

}  // namespace genhost::routing
