// POST /v1/recipes/{ad_localization, marketing_stock_image, multi_shot_video, product_ad,
// product_campaign_image, product_swap, product_ugc}: validate the body against its recipe's
// schema document (schemas/recipe_<name>.json), check what the schema cannot say (custom shots
// adding up to `duration`), and store one task of the recipe's model through CreateTask, so
// media preparation, pricing and the tier's limits apply as for any generation. The builtin
// provider runs it (src/providers/pipelines_recipes.cpp, docs/recipes.md).
#include "genhost/api/recipes_routes.hpp"
#include "handlers.hpp"

#include <cmath>
#include <string_view>

namespace genhost::api {

namespace asio = boost::asio;

namespace {

// kShotSumTolerance absorbs decimal fractions that do not add up exactly in binary (3.3 + 3.3 +
// 3.4 is 10.000000000000002).
constexpr double kShotSumTolerance = 1e-3;

// ShotIssues is the 400 issue of custom shots whose durations do not add up to `duration`.
std::vector<Issue> ShotIssues(const nlohmann::json& input) {
    if (input.value("mode", "") != "custom") return {};
    const double duration = input.value("duration", 10.0);
    double sum = 0;
    for (const auto& shot : input.at("shots")) sum += shot.at("duration").get<double>();
    if (std::abs(sum - duration) <= kShotSumTolerance) return {};
    char text[160];
    std::snprintf(text, sizeof text,
                  "The shot durations must add up to duration (%g s); they add up to %g s",
                  duration, sum);
    return {{"custom", {"shots"}, text}};
}

asio::awaitable<http::Response> CreateRecipe(App& app, std::string_view recipe, http::Request& req,
                                             const auth::Principal& who) {
    const std::string endpoint = "recipe_" + std::string(recipe);
    auto checked = co_await CheckedBody(app, std::move(req.body), endpoint, /*defaults=*/true);
    if (!checked) co_return http::Response::Error(checked.error(), app.doc_url);
    if (recipe == "multi_shot_video") {
        auto issues = ShotIssues(*checked);
        if (!issues.empty()) {
            co_return http::Response::Error(
                ApiError::InvalidRequest("Invalid request body", std::move(issues)), app.doc_url);
        }
    }
    // The task's model is the recipe: it is billed, limited and reported under that name.
    (*checked)["model"] = std::string(recipe);
    const auto created = co_await CreateTask(app, endpoint, std::move(*checked), who);
    if (!created) co_return http::Response::Error(created.error(), app.doc_url);
    co_return CreatedTaskResponse(*created);
}

// One handler per recipe: the route kit binds plain functions.
template <const std::string_view& kRecipe>
asio::awaitable<http::Response> Recipe(App& app, http::Request& req, const auth::Principal& who) {
    return CreateRecipe(app, kRecipe, req, who);
}

constexpr std::string_view kAdLocalization = "ad_localization";
constexpr std::string_view kMarketingStockImage = "marketing_stock_image";
constexpr std::string_view kMultiShotVideo = "multi_shot_video";
constexpr std::string_view kProductAd = "product_ad";
constexpr std::string_view kProductCampaignImage = "product_campaign_image";
constexpr std::string_view kProductSwap = "product_swap";
constexpr std::string_view kProductUgc = "product_ugc";

}  // namespace

void RegisterRecipeRoutes(Bindings& b) {
    b.Authed("adLocalization", Recipe<kAdLocalization>);  // POST /v1/recipes/ad_localization
    b.Authed("marketingStockImage",
             Recipe<kMarketingStockImage>);               // POST /v1/recipes/marketing_stock_image
    b.Authed("multiShotVideo", Recipe<kMultiShotVideo>);  // POST /v1/recipes/multi_shot_video
    b.Authed("productAd", Recipe<kProductAd>);            // POST /v1/recipes/product_ad
    b.Authed("productCampaignImage",
             Recipe<kProductCampaignImage>);        // POST /v1/recipes/product_campaign_image
    b.Authed("productSwap", Recipe<kProductSwap>);  // POST /v1/recipes/product_swap
    b.Authed("productUgc", Recipe<kProductUgc>);    // POST /v1/recipes/product_ugc
}

}  // namespace genhost::api
