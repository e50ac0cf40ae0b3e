// The recipes feature (docs/recipes.md): the recipes extra, which needs nothing but App.
#include "genhost/api/recipes_routes.hpp"
#include "genhost/features/node.hpp"

namespace genhost::features {

void WireRecipes(Node& node) { node.Routes(api::RegisterRecipeRoutes); }

}  // namespace genhost::features
