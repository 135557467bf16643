// greeting_plugin: an example third-party kind built with the installed Portico SDK.
// Greeting's processor upper-cases the message when spec.shout is set and refuses a message
// that is only whitespace (a rule its JSON Schema cannot express).
#include <cctype>
#include <string>

#include "portico/sdk/plugin.h"

namespace {

portico::Status ProcessGreeting(const portico::sdk::Object& object, portico::sdk::ProcessContext&,
                                portico::sdk::ProcessResult& result) {
  PORTICO_ASSIGN_OR_RETURN(const rapidjson::Document* doc, object.doc());
  std::string message = portico::json::GetString(*doc, "spec.message");
  if (message.find_first_not_of(" \t") == std::string::npos) {
    return portico::InvalidArgumentError(object.ref().Display() +
                                         ": spec.message: must contain a non-blank character");
  }
  const rapidjson::Value* shout = portico::json::FindPath(*doc, "spec.shout");
  if (shout != nullptr && shout->IsBool() && shout->GetBool()) {
    for (char& c : message) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  rapidjson::Document synced(rapidjson::kObjectType);
  synced.AddMember("message", rapidjson::Value(message.c_str(), synced.GetAllocator()),
                   synced.GetAllocator());
  result.SetSynced(portico::json::Serialize(synced));
  result.SetStatus(R"({"conditions":[{"type":"Accepted","status":"True","reason":"Accepted"}]})");
  return portico::OkStatus();
}

void Setup(portico::sdk::Plugin& plugin) {
  plugin.Kind("example.portico.io", "Greeting").Process(&ProcessGreeting);
}

}  // namespace

PORTICO_PLUGIN(Setup)
