// kind_id.h: KindId, the (group, kind) identity of a resource kind (portico/sdk/kind_id.h: the
// hosts and the SDK's fake host share one definition).
#ifndef PORTICO_CORE_PLUGIN_KIND_ID_H_
#define PORTICO_CORE_PLUGIN_KIND_ID_H_

#include "portico/sdk/kind_id.h"

namespace portico::core {

using KindId = sdk::KindId;

}  // namespace portico::core

#endif  // PORTICO_CORE_PLUGIN_KIND_ID_H_
