#include "controller/reconcile/object_render.h"

#include "controller/reconcile/conditions.h"
#include "controller/reconcile/object_json.h"

namespace portico::controller {

RenderedObject RenderObject(const RenderInput& input, std::string_view now) {
  auto status =
      std::make_shared<rapidjson::Document>(AggregateStatus(input.status, input.contributions));
  if (input.feedback.has_value()) {
    if (!status->IsObject()) status->SetObject();
    ApplySyncFeedback(*input.feedback, *status, status->GetAllocator());
  }
  if (input.refusal.has_value()) {
    ApplyRefusal(*input.refusal, input.generation, *status, status->GetAllocator());
  }
  StampConditions(*status, status->GetAllocator(), input.previous_status.get(), input.generation,
                  now);
  const bool with_status = input.status.has_value() || !input.contributions.empty() ||
                           input.feedback.has_value() || input.refusal.has_value();
  if (IsSecret(input.ref) || !input.doc->IsObject()) {
    rapidjson::Document view;
    view.CopyFrom(*input.doc, view.GetAllocator());
    if (view.IsObject()) {
      view.RemoveMember("status");
      if (with_status) {
        view.AddMember("status", rapidjson::Value(*status, view.GetAllocator()),
                       view.GetAllocator());
      }
      RedactSecret(view, view.GetAllocator());
    }
    return RenderedObject{std::move(status), json::Serialize(view)};
  }
  // The common case writes the document and the status side by side, without copying either.
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  for (const auto& m : input.doc->GetObject()) {
    if (std::string_view(m.name.GetString(), m.name.GetStringLength()) == "status") continue;
    w.Key(m.name.GetString(), m.name.GetStringLength());
    m.value.Accept(w);
  }
  if (with_status) {
    w.Key("status");
    status->Accept(w);
  }
  w.EndObject();
  return RenderedObject{std::move(status), std::string(buffer.GetString(), buffer.GetSize())};
}

std::string RenderRaw(const sdk::ObjectRef& ref, const rapidjson::Value& raw, int64_t generation,
                      std::string_view creation_timestamp, const Refusal* refusal) {
  rapidjson::Document view;
  view.CopyFrom(raw, view.GetAllocator());
  if (view.IsObject()) {
    view.RemoveMember("status");
    SetMetadataStamps(view, view.GetAllocator(), generation, creation_timestamp);
    if (refusal != nullptr) {
      rapidjson::Value status(rapidjson::kObjectType);
      ApplyRefusal(*refusal, 0, status, view.GetAllocator());
      view.AddMember("status", status, view.GetAllocator());
    }
    if (IsSecret(ref)) RedactSecret(view, view.GetAllocator());
  }
  return json::Serialize(view);
}

}  // namespace portico::controller
