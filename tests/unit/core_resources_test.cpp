// Tests for genhost/core/resources.hpp: the migrations, schemas and error docs compiled into the
// binary are all present, byte-identical to the source tree, unique and in path order.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "genhost/core/resources.hpp"

namespace genhost {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string ReadSource(const std::string& relative) {
    std::ifstream in(fs::path(GENHOST_SOURCE_DIR) / relative, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

TEST(FindResource, FindsTheFirstMigration) {
    const auto sql = FindResource("migrations/0001_init.sql");
    ASSERT_TRUE(sql.has_value());
    EXPECT_FALSE(sql->empty());
    EXPECT_THAT(std::string(*sql), HasSubstr("CREATE"));
    EXPECT_EQ(*sql, ReadSource("migrations/0001_init.sql"));
}

TEST(FindResource, FindsTheTextToImageSchema) {
    const auto schema = FindResource("schemas/text_to_image.json");
    ASSERT_TRUE(schema.has_value());
    EXPECT_EQ(*schema, ReadSource("schemas/text_to_image.json"));
    EXPECT_TRUE(nlohmann::json::parse(*schema).is_object());
}

TEST(FindResource, FindsTheCatalogDocuments) {
    EXPECT_TRUE(FindResource("schemas/models.json").has_value());
    EXPECT_TRUE(FindResource("schemas/tiers.json").has_value());
}

TEST(FindResource, MissesUnknownPaths) {
    EXPECT_EQ(FindResource("schemas/nope.json"), std::nullopt);
    EXPECT_EQ(FindResource(""), std::nullopt);
    EXPECT_EQ(FindResource("text_to_image.json"), std::nullopt);           // needs its folder
    EXPECT_EQ(FindResource("/schemas/text_to_image.json"), std::nullopt);  // relative paths only
    EXPECT_EQ(FindResource("schemas/text_to_image.jso"), std::nullopt);
    EXPECT_EQ(FindResource("SCHEMAS/TEXT_TO_IMAGE.JSON"), std::nullopt);
}

TEST(EmbeddedResources, IsNonEmptyAndHoldsEveryMigrationAndSchema) {
    const auto all = EmbeddedResources();
    ASSERT_FALSE(all.empty());
    std::set<std::string> embedded;
    for (const auto& r : all) embedded.insert(std::string(r.path));
    for (const char* dir : {"migrations", "schemas"}) {
        for (const auto& entry : fs::directory_iterator(fs::path(GENHOST_SOURCE_DIR) / dir)) {
            const std::string ext = entry.path().extension().string();
            if (ext != ".sql" && ext != ".json") continue;
            const std::string rel = std::string(dir) + "/" + entry.path().filename().string();
            EXPECT_TRUE(embedded.count(rel)) << rel << " is not embedded";
        }
    }
}

TEST(EmbeddedResources, ContentMatchesTheSourceTree) {
    for (const auto& r : EmbeddedResources()) {
        EXPECT_FALSE(r.content.empty()) << r.path;
        EXPECT_EQ(r.content, ReadSource(std::string(r.path))) << r.path;
        EXPECT_EQ(FindResource(r.path), r.content) << r.path;
    }
}

TEST(EmbeddedResources, PathsAreRelativeAndUnique) {
    std::set<std::string_view> seen;
    for (const auto& r : EmbeddedResources()) {
        EXPECT_FALSE(r.path.empty());
        EXPECT_NE(r.path.front(), '/') << r.path;
        EXPECT_EQ(r.path.find(".."), std::string_view::npos) << r.path;
        EXPECT_TRUE(seen.insert(r.path).second) << "duplicate " << r.path;
    }
}

TEST(EmbeddedResources, MigrationsAreInNumberOrder) {
    std::vector<std::string_view> migrations;
    for (const auto& r : EmbeddedResources()) {
        if (r.path.starts_with("migrations/")) migrations.push_back(r.path);
    }
    ASSERT_FALSE(migrations.empty());
    EXPECT_EQ(migrations.front(), "migrations/0001_init.sql");
    EXPECT_TRUE(std::is_sorted(migrations.begin(), migrations.end()));
}

TEST(EmbeddedResources, AreInPathOrder) {
    // resources.hpp promises path order.
    const auto all = EmbeddedResources();
    std::vector<std::string_view> paths;
    for (const auto& r : all) paths.push_back(r.path);
    std::vector<std::string_view> sorted = paths;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(paths, sorted);
}

TEST(EmbeddedResources, ContentIsNulTerminatedInStorage) {
    // Each resource is stored with a trailing NUL outside the view, so passing data() to C APIs
    // that expect a C string is safe.
    for (const auto& r : EmbeddedResources()) {
        EXPECT_EQ(r.content.data()[r.content.size()], '\0') << r.path;
    }
}

}  // namespace
}  // namespace genhost
