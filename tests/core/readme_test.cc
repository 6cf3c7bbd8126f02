// docs/settings.md's table of environment variables must equal the registry's (so docs cannot
// drift).
// Regenerate it with `build/bin/mxlite info --markdown` and paste it between the markers.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/settings.h"

namespace mxlite {
namespace {

TEST(ReadmeTest, VariableTableMatchesRegistry) {
  std::ifstream file(std::string(MXLITE_SOURCE_DIR) + "/docs/settings.md");
  ASSERT_TRUE(file) << "docs/settings.md not found in " << MXLITE_SOURCE_DIR;
  std::stringstream text;
  text << file.rdbuf();
  const std::string readme = text.str();
  const std::string begin_marker = "<!-- settings-table:begin -->\n";
  const std::string end_marker = "<!-- settings-table:end -->";
  size_t begin = readme.find(begin_marker);
  size_t end = readme.find(end_marker);
  ASSERT_NE(begin, std::string::npos) << "docs/settings.md lacks " << begin_marker;
  ASSERT_NE(end, std::string::npos) << "docs/settings.md lacks " << end_marker;
  std::string table = readme.substr(begin + begin_marker.size(), end - begin - begin_marker.size());
  Settings registry(BuiltinSettingSpecs(), BuiltinRecognisedUnusedVariables(), {});
  EXPECT_EQ(table, SettingsMarkdownTable(registry))
      << "docs/settings.md's variable table is out of date: regenerate it with "
         "`build/bin/mxlite info --markdown`";
}

}  // namespace
}  // namespace mxlite
