// Every declared setting is read somewhere: a setting in the catalog that no code asks for would
// promise a behaviour mxlite does not have. "Read" means its name is written in the sources
// (core/settings_catalog.cc and tests aside): whole, or as a quoted prefix and a quoted rest in one
// file (memory/pool_config.cc asks for "MXNET_GPU_MEM_" + "POOL_TYPE").
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/settings.h"

namespace mxlite {
namespace {

namespace fs = std::filesystem;

// The text of every library, tool and example source, by path.
std::vector<std::pair<std::string, std::string>> Sources() {
  std::vector<std::pair<std::string, std::string>> sources;
  const fs::path root(MXLITE_SOURCE_DIR);
  for (const char* folder :
       {"core", "memory", "engine", "ops", "scheduler", "tools", "python_stub", "examples"}) {
    for (const auto& entry : fs::recursive_directory_iterator(root / folder)) {
      const std::string extension = entry.path().extension().string();
      if (extension != ".cc" && extension != ".h" && extension != ".cu" && extension != ".py") {
        continue;
      }
      if (entry.path().filename() == "settings_catalog.cc") continue;
      if (entry.path().string().find("/tests/") != std::string::npos) continue;
      std::ifstream in(entry.path());
      std::stringstream text;
      text << in.rdbuf();
      sources.emplace_back(entry.path().string(), text.str());
    }
  }
  return sources;
}

bool Quoted(const std::string& text, const std::string& piece) {
  return text.find('"' + piece + '"') != std::string::npos;
}

// Whether `text` names `setting` whole, or as "PREFIX_" and "REST" (split at an underscore).
bool Names(const std::string& text, const std::string& setting) {
  if (Quoted(text, setting)) return true;
  for (size_t split = setting.find('_'); split != std::string::npos;
       split = setting.find('_', split + 1)) {
    const std::string prefix = setting.substr(0, split + 1);
    if (text.find('"' + prefix + '"') != std::string::npos &&
        Quoted(text, setting.substr(split + 1))) {
      return true;
    }
  }
  return false;
}

TEST(SettingsRead, EveryDeclaredSettingIsReadBySomeCode) {
  const std::vector<std::pair<std::string, std::string>> sources = Sources();
  ASSERT_GT(sources.size(), 100u);
  for (const SettingSpec& spec : BuiltinSettingSpecs()) {
    bool read = false;
    for (const auto& [path, text] : sources) read = read || Names(text, spec.name);
    EXPECT_TRUE(read) << spec.name
                      << " is declared in core/settings_catalog.cc but no code reads it";
  }
}

}  // namespace
}  // namespace mxlite
